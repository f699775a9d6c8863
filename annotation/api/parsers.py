"""Request parsers: one decoding path for every body, and a bound on JSON nesting.

Request bodies are UTF-8, the only encoding JSON allows between systems (RFC
8259, section 8.1). A body that declares another charset is refused with 415
(``RequestSizeLimitMiddleware`` does so before anything reads a body; the
parsers here refuse it too when a view is called without the middleware). A
JSON body is decoded exactly once, as UTF-8, and the text the depth check
measures is the text ``json`` parses: measuring the bytes as UTF-8 while the
parser decoded them with a declared charset (``utf-16-le``, ``cp037``) let a
body of 100,000 nested lists reach ``json`` and raise ``RecursionError``.

Python's ``json`` recurses once per nesting level, so every JSON text the
platform reads from a request (API bodies, JSON held in form and multipart
fields such as ingest's ``speaker_map``, the ingest page's hidden field) is
measured first and refused past ``MAX_JSON_DEPTH`` levels (setting, default
32; a row document nests 4) with a 400 that says so, before anything is parsed
or written.
"""

from __future__ import annotations

import codecs
import json
import re

from django.conf import settings
from django.utils.http import parse_header_parameters
from rest_framework import parsers
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.utils import json as drf_json

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


def declared_charset(content_type: str | None) -> str:
    """The charset a Content-Type header declares (lower case), or "" when it declares none."""
    if not content_type:
        return ""
    return (parse_header_parameters(content_type)[1].get("charset") or "").strip().lower()


def charset_refusal(content_type: str | None) -> str:
    """Why a body of ``content_type`` is refused for its declared charset; "" for UTF-8 or no charset."""
    charset = declared_charset(content_type)
    if not charset:
        return ""
    try:
        if codecs.lookup(charset).name == "utf-8":
            return ""
    except LookupError:
        pass
    return (
        f"the request declares charset={charset}; request bodies must be UTF-8 (JSON allows no other encoding, "
        "RFC 8259): send the body encoded as UTF-8 with charset=utf-8 or no charset; nothing was read or saved"
    )


def require_utf8(content_type: str | None) -> None:
    """Raise 415 for a body that declares a charset other than UTF-8."""
    problem = charset_refusal(content_type)
    if problem:
        raise UnsupportedMediaType(content_type, detail=problem[0].upper() + problem[1:])


class BoundedJSONParser(parsers.JSONParser):
    """DRF's JSON parser, decoding the body once as UTF-8 and refusing JSON nested deeper than ``MAX_JSON_DEPTH``."""

    def parse(self, stream, media_type=None, parser_context=None):
        require_utf8(media_type)
        body = stream.read() if stream is not None else b""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(
                f"JSON parse error - the body is not valid UTF-8 (byte {exc.start}); JSON is UTF-8 (RFC 8259)"
            ) from None
        if exceeds_depth(text):
            raise ParseError(str(TooDeep(max_depth())))
        try:
            return drf_json.loads(text, parse_constant=drf_json.strict_constant if self.strict else None)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


def _check_fields(data, kind: str) -> None:
    """Refuse a form whose text fields hold JSON nested too deep (DRF's JSONField would parse it)."""
    for key, values in data.lists():
        for value in values:
            if isinstance(value, str) and exceeds_depth(value):
                raise ParseError(str(TooDeep(max_depth(), f"{kind} field {key!r}: ")))


class BoundedFormParser(parsers.FormParser):
    def parse(self, stream, media_type=None, parser_context=None):
        require_utf8(media_type)
        data = super().parse(stream, media_type, parser_context)
        _check_fields(data, "form")
        return data


class BoundedMultiPartParser(parsers.MultiPartParser):
    """Multipart with its fields decoded as UTF-8 (the only charset accepted) and their JSON bounded.

    Django decodes every field with the request's charset, the one this
    refuses unless it is UTF-8: so the text measured is the text that a
    JSON field (``speaker_map``) parses.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        require_utf8(media_type)
        result = super().parse(stream, media_type, parser_context)
        _check_fields(result.data, "multipart")
        return result
