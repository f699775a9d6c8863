"""Schemathesis hooks of the deep-and-wide run (tests/test_api_fuzz.py); loaded through SCHEMATHESIS_HOOKS.

Each generated request names the test's real objects in its path (FUZZ_OBJECTS,
a JSON object of path parameter -> value), so that its body gets past the
404 and reaches the parser; and its body carries, in turn, deep or wide JSON:
one value of a JSON body is replaced by 100,000 nested lists or by a list of
100,000 numbers, one field of a form by the same text.
"""

import itertools
import json
import os

import schemathesis

OBJECTS = json.loads(os.environ.get("FUZZ_OBJECTS", "{}"))
DEEP = "[" * 100_000 + "]" * 100_000
WIDE = "[" + ",".join(["7"] * 100_000) + "]"
_turn = itertools.count()


@schemathesis.hook
def map_path_parameters(context, path_parameters):
    return {name: OBJECTS.get(name, value) for name, value in (path_parameters or {}).items()}


@schemathesis.hook
def map_case(context, case):
    body = case.body
    if not isinstance(body, dict) or not body:
        return case
    payload = DEEP if next(_turn) % 2 == 0 else WIDE
    key = sorted(body)[0]
    if case.media_type == "application/json":
        # Raw bytes: json.dumps itself would recurse 100,000 levels deep.
        marker = "@@fuzz-value@@"
        case.body = json.dumps({**body, key: marker}).replace(json.dumps(marker), payload).encode()
    else:
        case.body = {**body, key: payload}
    return case
