"""Template filters for published figures: ``{% load figures %}``.

- ``{{ share|percent }}``: a share 0..1 as ``12.3%`` (``–`` when not computed);
- ``{{ alpha|figure }}``: a figure to three decimals (``–`` when not computed);
- ``{{ ci|interval }}``: a ``[low, high]`` pair as ``[0.412, 0.655]`` (``no interval`` when absent).
"""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def percent(value) -> str:
    return "–" if value is None else f"{float(value):.1%}"


@register.filter
def figure(value) -> str:
    return "–" if value is None else f"{float(value):.3f}"


@register.filter
def interval(value) -> str:
    if not value or value[0] is None:
        return "no interval"
    return f"[{float(value[0]):.3f}, {float(value[1]):.3f}]"
