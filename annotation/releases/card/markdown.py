"""The card's template filters: counts with their nouns, durations, figures and Markdown table cells."""

from __future__ import annotations

import json

from django import template

register = template.Library()


def count_noun(count: int, nouns: str) -> str:
    """``1 clip``, ``2 clips``; ``nouns`` is ``"clip"`` or ``"couple or family|couples or families"``."""
    singular, _, plural = nouns.partition("|")
    return f"{count:,} {singular if count == 1 else (plural or singular + 's')}"


@register.filter(name="n")
def n_filter(count, nouns: str) -> str:
    return count_noun(int(count), nouns)


@register.filter
def plural(count, forms: str = "s") -> str:
    """The ending (or word) for ``count``: ``{{ n|plural }}`` → "s"; ``{{ n|plural:"was,were" }}``."""
    if "," in forms:
        one, many = forms.split(",", 1)
        return one if int(count) == 1 else many
    return "" if int(count) == 1 else forms


def duration_words(seconds: float) -> str:
    """Below a minute ``36 s``, below an hour ``1 min 36 s``, from an hour on ``1.5 h``."""
    seconds = float(seconds or 0)
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    whole = round(seconds)
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


@register.filter
def duration(seconds) -> str:
    return duration_words(seconds)


def figure_words(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{int(digits)}f}"


@register.filter
def fig(value, digits=3) -> str:
    return figure_words(value, digits)


@register.filter
def percent(share, digits=1) -> str:
    return "–" if share is None else f"{100 * share:.{int(digits)}f}%"


@register.filter
def thousands(value) -> str:
    return f"{int(value):,}"


@register.filter
def cell(value) -> str:
    """One Markdown table cell: floats to three places, pipes escaped, no line breaks."""
    if isinstance(value, float):
        value = f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


@register.filter
def yaml_str(value) -> str:
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a valid YAML scalar


@register.filter
def interval(pair) -> str:
    if not pair or pair[0] is None:
        return "(no interval)"
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


@register.filter
def get(mapping, key):
    return (mapping or {}).get(key)


@register.filter
def columns(text: str) -> list[str]:
    """A table header written in a template: ``"field;alpha;units"``."""
    return text.split(";")


def therapy_words(stats: dict) -> str:
    """ "couple- and family-therapy", "couple-therapy": the scenarios this release holds."""
    present = [s for s in stats["corpus"] if s != "all"]  # stats.json's corpus: one entry per scenario, and "all"
    return (
        (" and ".join(f"{s}-" for s in present[:-1]) + (" and " if len(present) > 1 else "") + f"{present[-1]}-therapy")
        if present
        else "therapy"
    )
