"""Request parsers with a bound on JSON nesting.

Python's ``json`` recurses once per nesting level, so a body of 100,000
nested lists raises ``RecursionError``, which no parser catches: the API
answered 500. Every JSON text the platform reads from a request (API bodies,
JSON held in form and multipart fields such as ingest's ``speaker_map``, the
ingest page's hidden field) is measured first and refused past
``MAX_JSON_DEPTH`` levels (setting, default 32; a row document nests 4) with
a 400 that says so, before anything is parsed or written.
"""
from __future__ import annotations

import io
import json
import re

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

# One pass over the text: a JSON string literal (escapes included; brackets inside it do not nest), or a bracket.
# The closing quote is optional so that an unclosed string is read once, to the end: requiring it made the
# engine rescan the rest of the body from every quote, quadratic time for a body of escaped quotes.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


class TooDeep(ValueError):
    """A JSON text nested deeper than the limit (a ValueError, as json's own errors are)."""

    def __init__(self, limit: int, where: str = ""):
        self.limit = limit
        super().__init__(f"{where}JSON nested more than {limit} levels deep; nothing was read or saved")


def max_depth() -> int:
    return settings.MAX_JSON_DEPTH


def exceeds_depth(text: str | bytes, limit: int | None = None) -> bool:
    """Whether ``text`` opens more than ``limit`` arrays/objects inside one another.

    Linear in the length of the text and without recursion; stops at the
    first level past the limit.
    """
    limit = max_depth() if limit is None else limit
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text.count("[") + text.count("{") <= limit:
        return False  # cannot nest deeper than the brackets it has
    depth = 0
    for match in _TOKEN.finditer(text):
        char = match.group()[0]
        if char == '"':
            continue
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def loads(text: str | bytes, *, where: str = "", **kwargs):
    """``json.loads`` that raises ``TooDeep`` instead of recursing past the limit."""
    if exceeds_depth(text):
        raise TooDeep(max_depth(), where)
    return json.loads(text, **kwargs)


class BoundedJSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing bodies nested deeper than ``MAX_JSON_DEPTH``."""

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read() if stream is not None else b""
        if exceeds_depth(body):
            raise ParseError(str(TooDeep(max_depth())))
        return super().parse(io.BytesIO(body), media_type, parser_context)


def _check_fields(data, kind: str) -> None:
    """Refuse a form whose text fields hold JSON nested too deep (DRF's JSONField would parse it)."""
    for key, values in data.lists():
        for value in values:
            if isinstance(value, str) and exceeds_depth(value):
                raise ParseError(str(TooDeep(max_depth(), f"{kind} field {key!r}: ")))


class BoundedFormParser(parsers.FormParser):
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        _check_fields(data, "form")
        return data


class BoundedMultiPartParser(parsers.MultiPartParser):
    def parse(self, stream, media_type=None, parser_context=None):
        result = super().parse(stream, media_type, parser_context)
        _check_fields(result.data, "multipart")
        return result
