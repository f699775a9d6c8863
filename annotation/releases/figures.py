"""PNG figures of a release, drawn from ``stats.json`` with matplotlib's Agg backend.

Drawn on bare ``Figure`` objects (no pyplot global state) under matplotlib's
default style. PNG bytes are deterministic for a given matplotlib
installation: the ``Software`` text chunk is dropped and Agg writes no
creation time.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import partial

from matplotlib import style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from .labels import NOT_ANNOTATED
from .splits import SPLITS

PNG_METADATA = {"Software": None}
# Drawing styles by number. A release records the one it was drawn in (its
# manifest's inputs.figure_style; absent means 1), and reproducing it draws in
# that style again, so that its PNGs come out byte for byte. 1: matplotlib's
# defaults. 2: the same with unhinted text: FreeType's hinting was a third of
# the drawing time, and anti-aliased text at these sizes reads the same.
FIGURE_STYLES: dict[int, dict] = {1: {}, 2: {"text.hinting": "no_hinting"}}
FIGURE_STYLE = 2  # for new releases
DPI = 90
# Fast zlib level: figures are small, and a freeze should not wait on compression.
PIL_OPTIONS = {"compress_level": 3}
SPLIT_COLOURS = {"train": "#1f5fa8", "validation": "#9a5b00", "test": "#2e7d32"}
PANELS = (
    ("relation_pattern", "Relation pattern (rows)"),
    ("support_strategy", "Support strategy (therapist rows)"),
    ("utterance_type", "Utterance type (client rows)"),
)


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata=PNG_METADATA, pil_kwargs=PIL_OPTIONS)
    return buf.getvalue()


def _bars(ax, positions, widths, height: float, colour: str) -> PolyCollection:
    """Horizontal bars as one collection: much cheaper to draw than a patch per bar."""
    verts = [
        [(0, y - height / 2), (w, y - height / 2), (w, y + height / 2), (0, y + height / 2)]
        for y, w in zip(positions, widths)
    ]
    bars = PolyCollection(verts, facecolors=colour, edgecolors="none")
    ax.add_collection(bars)
    return bars


def label_distribution_figure(distributions: dict, scenario: str) -> bytes:
    """Share of each label within each split, one panel per closed field."""
    # Fixed margins rather than a layout engine: one draw instead of two.
    fig = Figure(figsize=(14, 5.5))
    axes = fig.subplots(1, len(PANELS))
    fig.subplots_adjust(left=0.12, right=0.99, top=0.86, bottom=0.1, wspace=0.55)
    handles = []
    for ax, (field, title) in zip(axes, PANELS):
        per_split = distributions[field][scenario]
        labels = [k for k in per_split["all"] if k != NOT_ANNOTATED]
        height = 0.8 / len(SPLITS)
        totals, longest = {}, 0.0
        handles = []
        for n, split in enumerate(SPLITS):
            counts = per_split[split]
            total = totals[split] = sum(counts.get(k, 0) for k in labels)
            shares = [counts.get(k, 0) / total if total else 0 for k in labels]
            longest = max([longest, *shares])
            handles.append(
                _bars(ax, [i + (n - 1) * height for i in range(len(labels))], shares, height, SPLIT_COLOURS[split])
            )
        ax.set_xlim(0, max(longest, 0.05) * 1.05)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.text(
            1.0,
            -0.09,
            "  ".join(f"{s} n={n}" for s, n in totals.items()),
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=7,
        )
    fig.legend(handles, SPLITS, loc="upper right", ncols=len(SPLITS), fontsize=8, frameon=False)
    fig.suptitle(f"Label distributions, {scenario} clips (share of each label within a split)", x=0.02, ha="left")
    return _png(fig)


def transition_figure(matrix: dict, scenario: str) -> bytes:
    """Row-normalised relation-pattern transition matrix (self-transitions excluded)."""
    labels, values, counts = matrix["labels"], matrix["row_normalised"], matrix["counts"]
    fig = Figure(figsize=(8, 7))
    ax = fig.subplots()
    fig.subplots_adjust(left=0.33, right=0.97, top=0.9, bottom=0.26)
    image = ax.imshow(values, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(labels)), [f"{label} (n={sum(row)})" for label, row in zip(labels, counts)], fontsize=8)
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            if i != j:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v > 0.6 else "black")
    ax.set_xlabel("next labelled row")
    ax.set_ylabel("labelled row")
    ax.set_title(
        f"Relation-pattern transitions, {scenario} clips\n(consecutive labelled rows, self-transitions excluded, "
        "row-normalised)",
        fontsize=10,
    )
    fig.colorbar(image, ax=ax, shrink=0.8)
    return _png(fig)


def _plan(stats: dict) -> list[tuple[str, Callable[[], bytes]]]:
    """Every figure of ``stats``, in release order: (relative path, how to draw it)."""
    distributions = stats["label_distributions"]
    return [
        *(
            (f"figures/label_distributions_{s}.png", partial(label_distribution_figure, distributions, s))
            for s in distributions["relation_pattern"]
        ),
        *(
            (f"figures/relation_transitions_{s}.png", partial(transition_figure, m, s))
            for s, m in stats["relation_pattern_transitions"].items()
        ),
    ]


def release_figures(stats: dict, figure_style: int = FIGURE_STYLE) -> dict[str, bytes]:
    """{relative path: PNG bytes} from ``stats`` (its label distributions and transitions),
    drawn in ``FIGURE_STYLES[figure_style]``."""
    # Defaults, whatever another module of this process may have set, then the style.
    with style.context(["default", FIGURE_STYLES[figure_style]]):
        return {path: draw() for path, draw in _plan(stats)}
