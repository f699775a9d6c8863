"""PNG figures of a release, drawn from ``stats.json`` with matplotlib's Agg backend.

Drawn on bare ``Figure`` objects (no pyplot global state) under matplotlib's
default style. PNG bytes are deterministic for a given matplotlib
installation: the ``Software`` text chunk is dropped and Agg writes no
creation time.

A large freeze draws them in a child process (``Drawing``): matplotlib holds
the GIL while it renders, so a thread would not run beside the rest of the
freeze, while a process uses another core. The children are forks where that
is safe (they start with matplotlib imported; two share the figures out), else
one new interpreter. If a child fails, the figures are drawn in this process
instead (same bytes: each figure is drawn on its own).
"""
from __future__ import annotations

import base64
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Self

from matplotlib import style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from .background import ChildFailed, Forked, can_fork
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
    verts = [[(0, y - height / 2), (w, y - height / 2), (w, y + height / 2), (0, y + height / 2)] for y, w in zip(positions, widths)]
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
            handles.append(_bars(ax, [i + (n - 1) * height for i in range(len(labels))], shares, height, SPLIT_COLOURS[split]))
        ax.set_xlim(0, max(longest, 0.05) * 1.05)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.text(1.0, -0.09, "  ".join(f"{s} n={n}" for s, n in totals.items()), transform=ax.transAxes, ha="right", va="top", fontsize=7)
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
    ax.set_title(f"Relation-pattern transitions, {scenario} clips\n(consecutive labelled rows, self-transitions excluded, row-normalised)", fontsize=10)
    fig.colorbar(image, ax=ax, shrink=0.8)
    return _png(fig)


def _plan(stats: dict) -> list[tuple[str, Callable[[], bytes]]]:
    """Every figure of ``stats``, in release order: (relative path, how to draw it)."""
    distributions = stats["label_distributions"]
    return [
        *((f"figures/label_distributions_{s}.png", partial(label_distribution_figure, distributions, s)) for s in distributions["relation_pattern"]),
        *((f"figures/relation_transitions_{s}.png", partial(transition_figure, m, s)) for s, m in stats["relation_pattern_transitions"].items()),
    ]


def release_figures(stats: dict, part: int = 0, parts: int = 1, figure_style: int = FIGURE_STYLE) -> dict[str, bytes]:
    """{relative path: PNG bytes} from ``stats`` (its label distributions and transitions),
    drawn in ``FIGURE_STYLES[figure_style]``.

    With ``parts`` > 1, only every ``parts``-th figure from the ``part``-th on:
    each figure is drawn on its own, so the parts together are the whole.
    """
    # Defaults, whatever another module of this process may have set, then the style.
    with style.context(["default", FIGURE_STYLES[figure_style]]):
        return {path: draw() for n, (path, draw) in enumerate(_plan(stats)) if n % parts == part}


def figure_paths(stats: dict) -> list[str]:
    return [path for path, _ in _plan(stats)]


log = logging.getLogger(__name__)
PROJECT_ROOT = Path(__file__).resolve().parents[2]


# A child pays off for large releases: it draws while the freeze builds the rest.
CHILD_MIN_ROWS = 2000
# Forked children share the figures out: the rest of a freeze ends before the
# drawing does, and then two children use both cores.
FORKED_PARTS = 2
CHILD_NICENESS = 10
# How long result() waits for a child before drawing here instead.
CHILD_TIMEOUT = 300.0
FIGURE_KEYS = ("label_distributions", "relation_pattern_transitions")


class Drawing:
    """The release figures, drawn in a child process for releases of ``rows`` rows or more.

    Start it first, ``send(stats)`` once the label counts are known, ``result()``
    to wait for the PNGs. As a context manager, leaving the block ends the
    child. Without a child, ``result()`` draws in this process, and so it does
    when the child fails (same bytes either way).

    The children are forks of this process where that is safe (``background``):
    they have matplotlib imported already, only wait for the data, and draw
    ``FORKED_PARTS`` shares of the figures. Elsewhere the child is one new
    interpreter (``python -m`` this module), which imports matplotlib while the
    freeze reads the gold.
    """

    def __init__(self, *, rows: int, figure_style: int = FIGURE_STYLE):
        self.stats: dict | None = None
        self.figure_style = figure_style
        self.children: list[Forked | _Spawned] = []
        if rows < CHILD_MIN_ROWS:
            return
        try:
            if can_fork():
                for part in range(FORKED_PARTS):
                    self.children.append(Forked(_draw_part, part, FORKED_PARTS, figure_style, takes_input=True, timeout=CHILD_TIMEOUT))
            else:
                self.children.append(_Spawned(figure_style))
        except OSError as exc:
            log.warning("cannot start a process to draw the release figures (%s); drawing them here", exc)
            self.end()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.end()

    def end(self) -> None:
        for child in self.children:
            child.end()
        self.children = []

    def send(self, stats: dict) -> None:
        """Hand over what to draw (``stats`` or ``stats.figure_data(...)``)."""
        self.stats = stats
        for child in self.children:
            child.send({k: stats[k] for k in FIGURE_KEYS})

    def result(self) -> dict[str, bytes]:
        if self.children:
            try:
                drawn = {}
                for child in self.children:
                    drawn.update(child.receive())
                return {path: drawn[path] for path in figure_paths(self.stats)}
            except (ChildFailed, KeyError) as exc:
                log.warning("the figure process failed (%s); drawing the figures here", exc)
        return release_figures(self.stats, figure_style=self.figure_style)


def _draw_part(part: int, parts: int, figure_style: int, stats: dict) -> dict[str, bytes]:
    # Below the freeze and the agreement report in the scheduler's eyes: the
    # figures are wanted last, and on a busy machine the others are the critical path.
    os.nice(CHILD_NICENESS)
    return release_figures(stats, part, parts, figure_style)


class _Spawned:
    """A new interpreter running this module: a JSON file's path on its stdin."""

    def __init__(self, figure_style: int):
        self.input: Path | None = None
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(figure_style)],
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "MPLBACKEND": "Agg"},
        )

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def send(self, data: dict) -> None:
        # Through a file, so that the pipe never has to hold the data.
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
            json.dump(data, fh)
        self.input = Path(fh.name)
        stdin, self.proc.stdin = self.proc.stdin, None  # communicate() must not touch it once closed
        try:
            stdin.write(str(self.input).encode("utf-8") + b"\n")
            stdin.close()
        except OSError:  # the child is gone; receive() says why
            pass

    def receive(self) -> dict[str, bytes]:
        try:
            out, err = self.proc.communicate(timeout=CHILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.end()
            raise ChildFailed(f"no answer within {CHILD_TIMEOUT:.0f} s") from None
        if self.proc.returncode != 0:
            raise ChildFailed(err.decode("utf-8", "replace")[-2000:])
        return {path: base64.b64decode(data) for path, data in json.loads(out).items()}

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        if self.input is not None:
            self.input.unlink(missing_ok=True)


if __name__ == "__main__":  # the spawned child of Drawing (argument: the style): a JSON file's path on stdin, {path: base64 PNG} on stdout
    source = Path(sys.stdin.readline().strip())
    drawn = release_figures(json.loads(source.read_text(encoding="utf-8")), figure_style=int(sys.argv[1]))
    sys.stdout.write(json.dumps({path: base64.b64encode(data).decode("ascii") for path, data in drawn.items()}))
