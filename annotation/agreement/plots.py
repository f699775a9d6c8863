"""The dashboard's plots, drawn server-side with matplotlib as self-contained SVG.

Figures are built with the object-oriented API (``matplotlib.figure.Figure``,
no pyplot state, no GUI backend), with fonts drawn as paths and a fixed hash
salt and no date, so the same report gives byte-identical SVG. The page embeds
each one as an image (``<img>``): no external asset, and nothing in the SVG can
reach the page's DOM. The page fetches each plot as an image of its own
(``plot_list`` names them, ``draw`` draws one), so that the page itself
never waits for matplotlib.
"""

from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")  # never a GUI backend on a server (no-op when already set)

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

from ..labels import measure_label

RC = {"svg.fonttype": "none", "svg.hashsalt": "rescue-agreement", "font.size": 9, "axes.titlesize": 10}
THRESHOLDS = ((0.667, "tentative 0.667"), (0.800, "reliable 0.800"))
ANNOTATORS_COLOUR, LLM_COLOUR = "#1f5f99", "#c0601a"


def _text(s: str) -> str:
    # "$" would start matplotlib's math mode.
    return str(s).replace("$", r"\$")


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    with rc_context(RC):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    svg = buf.getvalue()
    return svg[svg.index("<svg") :]


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def alpha_chart(slice_entry: dict, measures: list[dict]) -> str:
    """Alpha per measure with its 95% interval: annotators, and annotators + LLM draft."""
    rows = [m for m in measures if m["key"] in slice_entry["measures"]]
    with rc_context(RC):
        fig = Figure(figsize=(7.5, 0.38 * len(rows) + 1.2), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(rows))[::-1]
        for offset, which, colour, label in (
            (0.15, "humans", ANNOTATORS_COLOUR, "annotators"),
            (-0.15, "with_llm", LLM_COLOUR, "annotators + LLM draft"),
        ):
            first = True
            for yi, m in zip(y, rows):
                fig_ = slice_entry["measures"][m["key"]][which]
                if not fig_ or fig_["alpha"] is None:
                    if which == "humans":
                        ax.text(
                            0.02,
                            yi + offset,
                            "undefined",
                            va="center",
                            fontsize=8,
                            color="#777",
                            transform=ax.get_yaxis_transform(),
                        )
                    continue
                low, high = fig_["ci95"]
                ax.errorbar(
                    fig_["alpha"],
                    yi + offset,
                    xerr=[[fig_["alpha"] - low], [high - fig_["alpha"]]],
                    fmt="o",
                    color=colour,
                    ms=4,
                    capsize=2,
                    label=label if first else None,
                )
                first = False
        for value, name in THRESHOLDS:
            ax.axvline(value, color="#999", lw=0.8, ls="--")
            ax.text(
                value,
                1.0,
                name,
                rotation=90,
                va="top",
                ha="right",
                fontsize=7,
                color="#777",
                transform=ax.get_xaxis_transform(),
            )
        ax.set_yticks(y, [_text(measure_label(m)) for m in rows])
        ax.set_xlim(min([-0.1, *(f["ci95"][0] for m in rows for f in _defined(slice_entry, m))]) - 0.02, 1.02)
        ax.set_xlabel("Krippendorff's alpha (95% bootstrap interval)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="lower left", fontsize=8, frameon=False)
        ax.grid(axis="x", color="#eee")
        return _svg(fig)


def _defined(slice_entry: dict, m: dict):
    item = slice_entry["measures"][m["key"]]
    return [f for f in (item["humans"], item["with_llm"]) if f and f["alpha"] is not None]


def _heatmap(ax, matrix: np.ndarray, xlabels, ylabels, *, fmt: str, cmap: str, vmin=None, vmax=None, annotate=True):
    masked = np.ma.masked_invalid(matrix)
    image = ax.imshow(masked, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(xlabels)), [_text(x) for x in xlabels], rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(ylabels)), [_text(y) for y in ylabels], fontsize=7)
    if annotate and matrix.size <= 196:
        low = vmin if vmin is not None else 0.0
        high = vmax if vmax is not None else (np.nanmax(matrix) if np.isfinite(matrix).any() else 1.0)
        for (i, j), v in np.ndenumerate(matrix):
            if np.isfinite(v):
                dark = v > low + 0.6 * (high - low)
                ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=6, color="white" if dark else "black")
    return image


def confusion_chart(label: str, item: dict, coders: list[str]) -> str:
    """Left: alpha for every pair of coders. Right: which values the annotators paired within units."""
    with rc_context(RC):
        fig = Figure(figsize=(9, 3.8))
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4], "wspace": 0.55})
        pairwise = _pairwise(item, {c: i for i, c in enumerate(coders)})
        image = _heatmap(left, pairwise, coders, coders, fmt=".2f", cmap="RdYlGn", vmin=-0.2, vmax=1.0)
        fig.colorbar(image, ax=left, shrink=0.8)
        left.set_title("alpha by pair of coders")
        confusion = item.get("confusion")
        if confusion:
            matrix = np.asarray(confusion["matrix"], dtype=float)
            image = _heatmap(right, matrix, confusion["labels"], confusion["labels"], fmt=".0f", cmap="Blues")
            fig.colorbar(image, ax=right, shrink=0.8)
            right.set_title("annotators' values paired within units")
        else:
            right.axis("off")
            right.text(0.5, 0.5, "no pairable values", ha="center", va="center")
        fig.suptitle(_text(label))
        return _svg(fig)


def presence_chart(items: list[tuple[str, dict]], coders: list[str]) -> str:
    """The sparse-list presence fields side by side: alpha by pair of coders (top), present/absent pairing (bottom)."""
    with rc_context(RC):
        fig = Figure(figsize=(2.3 * len(items), 5.2))
        axes = fig.subplots(2, len(items), squeeze=False, gridspec_kw={"hspace": 0.9, "wspace": 0.9})
        pos = {c: i for i, c in enumerate(coders)}
        for col, (label, item) in enumerate(items):
            top, bottom = axes[0][col], axes[1][col]
            _heatmap(
                top,
                _pairwise(item, pos),
                coders,
                coders if col == 0 else [""] * len(coders),
                fmt=".2f",
                cmap="RdYlGn",
                vmin=-0.2,
                vmax=1.0,
            )
            top.set_title(_text(label.replace(" present", "")), fontsize=8)
            confusion = item.get("confusion")
            if confusion:
                _heatmap(
                    bottom,
                    np.asarray(confusion["matrix"], dtype=float),
                    confusion["labels"],
                    confusion["labels"],
                    fmt=".0f",
                    cmap="Blues",
                )
            else:
                bottom.axis("off")
        fig.suptitle(
            "presence of each sparse list: alpha by pair of coders (top), annotators' present/absent pairs (bottom)",
            fontsize=9,
        )
        return _svg(fig)


def _pairwise(item: dict, pos: dict) -> np.ndarray:
    matrix = np.full((len(pos), len(pos)), np.nan)
    for pair in item["pairs"]:
        a, b = pair["pair"]
        if a in pos and b in pos and pair["alpha"] is not None:
            matrix[pos[a], pos[b]] = matrix[pos[b], pos[a]] = pair["alpha"]
    return matrix


def edit_rate_chart(slice_entry: dict, measures: list[dict]) -> str | None:
    """Share of each annotator's values that differ from the LLM draft, per measure and for any field."""
    annotators = sorted(slice_entry.get("edit_rates", {}))
    if not annotators:
        return None
    columns = [m for m in measures if m["level"] != "masi"]
    matrix = np.full((len(annotators), len(columns) + 1), np.nan)
    for i, name in enumerate(annotators):
        for j, m in enumerate(columns):
            changed = slice_entry["measures"][m["key"]]["changed_from_draft"]
            if changed and name in changed["by_annotator"]:
                matrix[i, j] = changed["by_annotator"][name]
        matrix[i, -1] = slice_entry["edit_rates"][name]["any_field"]
    with rc_context(RC):
        fig = Figure(figsize=(9, 0.45 * len(annotators) + 2.6), layout="constrained")
        ax = fig.subplots()
        image = _heatmap(
            ax,
            matrix,
            [measure_label(m) for m in columns] + ["any field"],
            annotators,
            fmt=".0%",
            cmap="Oranges",
            vmin=0,
            vmax=1,
        )
        fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
        ax.set_title("share of values changed from the LLM draft, per annotator")
        return _svg(fig)


def _slice(report: dict, slice_key: str) -> dict | None:
    entry = next((s for s in report["slices"] if s["key"] == slice_key), None)
    return None if entry is None or entry.get("empty") else entry


def plot_list(report: dict, slice_key: str) -> list[dict]:
    """The plots of one slice, without drawing them: {name, title, alt} (``draw`` draws one by name).

    The page lists them at once and the browser fetches each drawing on its
    own: drawing all of a slice's plots takes seconds at full scale.
    """
    entry = _slice(report, slice_key)
    if entry is None:
        return []
    measures = report["measures"]
    plots = [
        {
            "name": "alpha",
            "title": "Alpha per field",
            "alt": (
                "Alpha per field with 95% bootstrap intervals, for the annotators and with the LLM draft "
                "as one more coder; the table above has the same numbers."
            ),
        }
    ]
    if entry.get("edit_rates"):
        plots.append(
            {
                "name": "edits",
                "title": "Edit rate against the LLM draft",
                "alt": "Heatmap of the share of values each annotator changed from the draft, per field.",
            }
        )
    for m in measures:
        if m["level"] == "nominal" and not m["key"].startswith("presence_"):
            plots.append(
                {
                    "name": f"confusion-{m['key']}",
                    "title": f"Confusion: {measure_label(m)}",
                    "alt": (
                        f"{measure_label(m)}: alpha for each pair of coders, and which values annotators paired in "
                        "units."
                    ),
                }
            )
    if any(m["key"].startswith("presence_") for m in measures):
        plots.append(
            {
                "name": "presence",
                "title": "Confusion: presence of each sparse list",
                "alt": (
                    "For each sparse list, alpha for each pair of coders and how often annotators "
                    "paired present and absent within a row."
                ),
            }
        )
    return plots


def draw(report: dict, slice_key: str, name: str) -> str | None:
    """The SVG of plot ``name`` (from ``plot_list``) of one slice; None when the slice has no such plot."""
    entry = _slice(report, slice_key)
    if entry is None or name not in {p["name"] for p in plot_list(report, slice_key)}:
        return None
    measures = report["measures"]
    if name == "alpha":
        return alpha_chart(entry, measures)
    if name == "edits":
        return edit_rate_chart(entry, measures)
    coders = [*entry["annotators"], *([report["llm_coder"]] if entry.get("with_llm") else [])]
    if name == "presence":
        presence = [
            (measure_label(m), entry["measures"][m["key"]]) for m in measures if m["key"].startswith("presence_")
        ]
        return presence_chart(presence, coders)
    measure = next(m for m in measures if f"confusion-{m['key']}" == name)
    return confusion_chart(measure_label(measure), entry["measures"][measure["key"]], coders)


def slice_plots(report: dict, slice_key: str) -> list[dict]:
    """Every plot of one slice, drawn: {name, title, alt, uri} with the SVG as a ``data:`` URI."""
    return [{**p, "uri": data_uri(draw(report, slice_key, p["name"]))} for p in plot_list(report, slice_key)]
