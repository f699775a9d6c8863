"""Template filters for people-facing words: ``{% load people %}``.

- ``{{ clip.state|state_label }}``: a state as words (``in review``, never ``in_review``);
- ``{{ path|field_label }}``: a field path as the editor names it (``Relation pattern › evidence rows, entry 3``);
- ``{{ measure|measure_label }}``: an agreement measure (``Internal emotion present``);
- ``{{ value|change_value:field }}``: an audit-trail value, a state as words where the field holds one;
- ``{{ when|local_time }}``: a date and time the reader's browser shows in their own locale and time zone;
- ``{{ clip.sample_id|breakable }}``: a long identifier that may wrap after ``/`` and ``_`` (not inside words).

The mappings live in ``annotation.labels``.
"""

from __future__ import annotations

import datetime as dt

from django import template
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from .. import labels

register = template.Library()

_STATE_FIELDS = frozenset({"state", "status"})
_STYLES = {"datetime": "%Y-%m-%d %H:%M UTC", "seconds": "%Y-%m-%d %H:%M:%S UTC", "date": "%Y-%m-%d"}


@register.filter
def state_label(value) -> str:
    return labels.state_label(value)


@register.filter
def field_label(path) -> str:
    return labels.field_label(str(path or ""))


@register.filter
def measure_label(measure) -> str:
    return labels.measure_label(measure) if isinstance(measure, dict) else str(measure)


@register.filter
def change_value(value, field: str):
    return labels.state_label(value) if field in _STATE_FIELDS and value else value


@register.filter
def breakable(value) -> str:
    """``demo_maya/001_session`` with a line-break opportunity (``<wbr>``) after each ``/`` and ``_``."""
    return mark_safe(escape(value).replace("/", "/<wbr>").replace("_", "_<wbr>"))


@register.filter(is_safe=True)
def local_time(value, style: str = "datetime"):
    """``<time datetime="2026-12-01T14:39:53Z" data-local-time="datetime">2026-12-01 14:39 UTC</time>``.

    The server does not know the reader's time zone or locale, so it writes
    the instant in UTC and ``static/base/local-time.js`` rewrites the text
    with the browser's ``Intl.DateTimeFormat``; without script the UTC text
    stays, marked as UTC. ``style`` is ``datetime`` (the default), ``seconds`` (to the second) or ``date``.
    Accepts datetimes and ISO 8601 strings; anything else is shown as it is.
    """
    if isinstance(value, str):
        value = parse_datetime(value) or value
    if not isinstance(value, dt.datetime):
        return value if value not in (None, "") else ""
    if timezone.is_naive(value):
        value = timezone.make_aware(value, dt.UTC)
    utc = value.astimezone(dt.UTC)
    style = style if style in _STYLES else "datetime"
    return format_html(
        '<time datetime="{}" data-local-time="{}" title="{}">{}</time>',
        utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
        style,
        utc.strftime("%Y-%m-%d %H:%M:%S UTC"),
        utc.strftime(_STYLES[style]),
    )


@register.filter
def task_title(code) -> str:
    """``itp`` -> ``Intervention timing prediction``: a benchmark task in words (the code goes beside it)."""
    from tasks.rules import TITLES

    return TITLES.get(str(code), str(code))
