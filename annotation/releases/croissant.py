"""``croissant.json``: MLCommons Croissant 1.0 metadata that carries the release's data.

Written by hand as JSON-LD (no runtime dependency on ``mlcroissant``; the
tests read every record set with it and compare each value with the JSONL
files). One ``FileObject`` per file, with its SHA-256, and one ``RecordSet``
per config and non-empty split (``rows_train``, ``itp_test``...), whose
fields name every key a reader or a model needs:

- ``rows_<split>``: one clip per record (``data/<split>.jsonl``), with
  ``participants`` and its ``rows`` as nested records holding every scalar
  and list-of-scalars key of a row;
- ``row_records_<split>``: one row per record (``data/row_records/<split>.jsonl``,
  the same rows with their clip's ``sample_id`` and ``scenario``), holding
  every key of the six dimensions, the list-of-records ones (emotions,
  viewpoints, strategies...) as nested records. They are here, not inside
  the clip records, because a record nested inside a nested record is not
  read by ``mlcroissant`` (it reads one level of nested records, with lists
  of values inside them);
- ``<task>_<split>``: the task instances with their context rows,
  candidates, task inputs, gold and split.

Field types come from the row schema (``annotation.schema``): one definition.
"""

from __future__ import annotations

import json
import types
import typing

from pydantic import BaseModel

from tasks.rules import ALL_TASKS, CONTEXT_KEYS, RPP_ANY_SPEAKER, TITLES

from ..rescue_format.exporter import dumps_row
from ..schema import Row
from .manifest import Digests
from .splits import SPLITS

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
# The standard Croissant 1.0 context (mlcroissant warns about any other).
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
ENCODINGS = {
    ".jsonl": "application/jsonlines",
    ".json": "application/json",
    ".md": "text/markdown",
    ".png": "image/png",
}

TEXT, INTEGER, FLOAT = "sc:Text", "sc:Integer", "sc:Float"
SCALAR_TYPES = {str: TEXT, int: INTEGER, float: FLOAT}

ROW_RECORDS = "row_records"  # the config of one row per record


def row_records_path(split: str) -> str:
    return f"data/{ROW_RECORDS}/{split}.jsonl"


# What each key holds, for the field descriptions (ROW_SCHEMA.md says more).
DESCRIPTIONS = {
    "sample_id": "Clip id: <relationship group>/<clip> (family clips: family_therapy/<NNN>/merged).",
    "scenario": "couple or family; decides the label sets.",
    "participants": "The on-screen people of the clip, without the therapist.",
    "source_file": "Where the clip's annotation came from.",
    "rows": "The clip's rows in time order.",
    "start_time": "Start of the row, in seconds from the start of the clip.",
    "end_time": "End of the row, in seconds.",
    "primary_speaker": "Who speaks: a participant, Therapist, or the group label.",
    "target": "Whom the row addresses (never the speaker).",
    "dialogue_cleaned": "What is said, as transcribed.",
    "utterance_type": "Function of a client's utterance; empty on therapist rows.",
    "background_dialogue": "Overlapping speech: {speaker, target, content}.",
    "tone_of_voice": "Tone of voice, a short phrase.",
    "body_posture": "Body posture per person: {person, description}.",
    "facial_expressions": "Facial expression per person: {person, description}.",
    "self_directed_behavior": "Self-directed behaviour per person: {person, description}.",
    "interaction_behavior": "Observable nonverbal moves toward others: {initiator, target, description}.",
    "internal_emotion": "Inferred emotion per person: {person, emotion_description, intensity 0-10}.",
    "viewpoints_attitudes": "Directed stance toward another person: {source, target, viewpoint, attitude}.",
    "support_strategy": (
        "The therapist's support strategies (therapist rows only): {provider, target, strategy_type, strategy_content}."
    ),
    "relation_pattern": (
        "Relation-pattern label as annotated on the row; empty = no clear pattern; null = not annotated."
    ),
    "relation_pattern_reason": "Short evidence-based reason for relation_pattern.",
    "relation_pattern_evidence_rows": "1-based rows of the same clip that relation_pattern rests on.",
    "relation_cycle_state": (
        "Older key of the relation-pattern label (therapist rows of the public release; mirrored on platform clips)."
    ),
    "relation_cycle_reason": "Reason for relation_cycle_state.",
    "relation_cycle_evidence_rows": "Evidence rows for relation_cycle_state.",
    "row_index": "1-based position of the row in its clip.",
}

INSTANCE_FIELDS = (
    ("id", TEXT, "Stable instance id: <task>:<sample_id>:<row_index>."),
    ("task", TEXT, "The task's short name."),
    ("clip_id", TEXT, "The clip (sample_id) the instance comes from."),
    ("row_index", INTEGER, "1-based row of the decision point in the clip."),
    ("scenario", TEXT, "couple or family."),
    ("split", TEXT, "train, validation or test."),
)
# Task inputs besides the context (as tasks.instances builds them).
CANDIDATES = ("candidates", list[str], "The answers to choose from, in a fixed order.")
TASK_INPUTS = {
    "itp": (),
    "rpp": (CANDIDATES,),
    RPP_ANY_SPEAKER: (CANDIDATES,),
    "stp": (CANDIDATES,),
    "ssp": (("target", str, "The support target, given as input."), CANDIDATES),
    "er": (("speaker", str, "Whose emotion is asked for."),),
    "vp": (("speaker", str, "Whose viewpoints are asked for."), CANDIDATES),
}


class _Emotion(BaseModel):
    emotion_description: str
    intensity: int


class _Viewpoint(BaseModel):
    source: str
    target: str
    viewpoint: str


TASK_GOLD = {
    "itp": (str, "yes if the therapist speaks next, else no."),
    "rpp": (str, "Relation-pattern label of the row."),
    RPP_ANY_SPEAKER: (str, "Relation-pattern label of the row."),
    "stp": (str, "The therapist's support target (a participant or the group label)."),
    "ssp": (str, "The therapist's support strategy."),
    "er": (_Emotion, "The speaker's gold emotion: description and intensity 0-10."),
    "vp": (list[_Viewpoint], "Every gold viewpoint of the speaker in the row: {source, target, viewpoint}."),
}


# --- field declarations from types ----------------------------------------------------------


def _shape(annotation) -> tuple[type, bool]:
    """(the element type, whether it is a list) of a schema annotation; ``X | None`` is X."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        origin = typing.get_origin(annotation)
    if origin is list:
        return typing.get_args(annotation)[0], True
    return annotation, False


def _is_record(kind) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _field(field_id: str, name: str, annotation, description: str, source: dict) -> dict:
    """A field for a value of type ``annotation`` read from ``source``; records get subFields
    read from the same column through a ``jsonPath`` on each record."""
    kind, repeated = _shape(annotation)
    out = {"@type": "cr:Field", "@id": field_id, "name": name, "description": description}
    if repeated:
        out["repeated"] = True
    if _is_record(kind):
        out["subField"] = [
            _field(f"{field_id}/{key}", key, info.annotation, f"{key} of each {name} entry.", _nested(source, key))
            for key, info in kind.model_fields.items()
        ]
    else:
        out["dataType"] = SCALAR_TYPES[kind]
        out["source"] = source
    return out


def _column(file_id: str, column: str) -> dict:
    return {"fileObject": {"@id": file_id}, "extract": {"column": column}}


def _nested(source: dict, key: str) -> dict:
    """The same column, each record's ``key``."""
    return {**source, "transform": {"jsonPath": key}}


def _clip_fields(record_set: str, file_id: str) -> list[dict]:
    """One clip per record: its rows as nested records with every key that is a value or a list of values."""
    flat_keys = [
        (k, info.annotation) for k, info in Row.model_fields.items() if not _is_record(_shape(info.annotation)[0])
    ]
    rows_id = f"{record_set}/rows"
    rows = {
        "@type": "cr:Field",
        "@id": rows_id,
        "name": "rows",
        "description": (
            "The clip's rows in time order. Keys whose values are lists of records (background_dialogue, body_posture, "
            "facial_expressions, self_directed_behavior, interaction_behavior, internal_emotion, "
            "viewpoints_attitudes, "
            f"support_strategy) are in the {ROW_RECORDS} record set of the same split, one row per record."
        ),
        "repeated": True,
        "subField": [
            _field(f"{rows_id}/{k}", k, a, DESCRIPTIONS[k], _nested(_column(file_id, "rows"), k)) for k, a in flat_keys
        ],
    }
    head = [("sample_id", str), ("scenario", str), ("participants", list[str]), ("source_file", str)]
    return [*(_field(f"{record_set}/{k}", k, a, DESCRIPTIONS[k], _column(file_id, k)) for k, a in head), rows]


def _carries_key(data: bytes, key: str) -> bool:
    """Whether some line of a JSONL file of flat-keyed rows has the top-level ``key``.

    A search for ``"key": `` is exact here: inside a JSON string every quote is
    escaped, so the closing ``": `` cannot occur there, and no nested record of a
    row has a key named like a row key that is optional.
    """
    return f'"{key}": '.encode() in data


def _row_fields(record_set: str, file_id: str, data: bytes) -> list[dict]:
    """One row per record, every key of the six dimensions, with its clip's id and scenario.

    The optional keys (the relation-pattern families, which imported rows may
    lack) are declared when some row of the file carries them: a reader looks
    for a declared key in the file, and a row without it reads as null.
    """
    keys = [("sample_id", str), ("scenario", str)]
    keys += [
        (k, info.annotation) for k, info in Row.model_fields.items() if info.is_required() or _carries_key(data, k)
    ]
    return [_field(f"{record_set}/{k}", k, a, DESCRIPTIONS[k], _column(file_id, k)) for k, a in keys]


def _instance_fields(task: str, record_set: str, file_id: str, data: bytes = b"") -> list[dict]:
    context_types = {k: Row.model_fields[k].annotation for k in CONTEXT_KEYS}
    description = "The rows the model sees, in order: only what is observable (who speaks to whom, when, what is said)."
    # The rescue-v1 profile's context rows carry the background dialogue too (tasks.profiles): a list of records,
    # which cannot be declared inside the repeated context (as for the rows record set); the description says so.
    # No instance key but a context row's is named background_dialogue, so the search is exact here too.
    if _carries_key(data, "background_dialogue"):
        description += (
            " Each row also holds background_dialogue (overlapping speech: {speaker, target, content}), not "
            "declared here."
        )
    context = {
        "@type": "cr:Field",
        "@id": f"{record_set}/context",
        "name": "context",
        "description": description,
        "repeated": True,
        "subField": [
            _field(f"{record_set}/context/{k}", k, a, DESCRIPTIONS[k], _nested(_column(file_id, "context"), k))
            for k, a in context_types.items()
        ],
    }
    gold_type, gold_description = TASK_GOLD[task]
    return [
        *(
            _field(f"{record_set}/{name}", name, {TEXT: str, INTEGER: int}[kind], text, _column(file_id, name))
            for name, kind, text in INSTANCE_FIELDS
        ),
        _field(
            f"{record_set}/participants",
            "participants",
            list[str],
            DESCRIPTIONS["participants"],
            _column(file_id, "participants"),
        ),
        context,
        *(
            _field(f"{record_set}/{name}", name, kind, text, _column(file_id, name))
            for name, kind, text in TASK_INPUTS[task]
        ),
        _field(f"{record_set}/gold", "gold", gold_type, gold_description, _column(file_id, "gold")),
    ]


# --- files and the document ------------------------------------------------------------------


def _file_id(path: str) -> str:
    return path.replace("/", "_").replace(".", "_")


def config_files(files: dict[str, bytes]) -> dict[str, dict[str, str]]:
    """{config: {split: path}} of the JSONL files that hold records."""
    out: dict[str, dict[str, str]] = {
        "rows": {s: f"data/{s}.jsonl" for s in SPLITS},
        ROW_RECORDS: {s: row_records_path(s) for s in SPLITS},
    }
    for task in ALL_TASKS:
        out[task] = {s: f"tasks/{task}/{s}.jsonl" for s in SPLITS}
    return {config: {s: p for s, p in splits.items() if p in files} for config, splits in out.items()}


def row_record_files(
    clips: list[dict], splits: dict[str, str], row_texts: list[list[str]] | None = None
) -> dict[str, bytes]:
    """``data/row_records/<split>.jsonl``: each clip's rows, one per line, each with the clip's
    ``sample_id`` and ``scenario`` first, then the row's keys in the row's own order.

    A record is the head's keys written before the row's text (``exporter.dumps_row``; ``row_texts``: per clip,
    its rows already spelt), the text ``json.dumps`` gives the merged dict."""
    lines: dict[str, list[str]] = {s: [] for s in SPLITS}
    for index, clip in enumerate(clips):
        head = {"sample_id": clip["sample_id"], "scenario": clip["scenario"]}
        spelt = row_texts[index] if row_texts is not None else map(dumps_row, clip["rows"])
        opening = json.dumps(head, ensure_ascii=False)[:-1]
        out = lines[splits[clip["sample_id"]]]
        for row, text in zip(clip["rows"], spelt):
            if not row or "sample_id" in row or "scenario" in row:  # not a head before the row's own keys
                out.append(json.dumps({**head, **row}, ensure_ascii=False) + "\n")
            else:
                out.append(opening + ", " + text[1:] + "\n")
    return {row_records_path(s): "".join(lines[s]).encode("utf-8") for s in SPLITS}


def _record_set(config: str, split: str, path: str, data: bytes) -> dict:
    record_set, file_id = f"{config}_{split}", _file_id(path)
    if config == "rows":
        title, fields = "Benchmark clips: one clip per record, its rows nested", _clip_fields(record_set, file_id)
    elif config == ROW_RECORDS:
        title, fields = (
            "Benchmark rows: one row per record, every key of the six dimensions",
            _row_fields(record_set, file_id, data),
        )
    else:
        title, fields = TITLES[config], _instance_fields(config, record_set, file_id, data)
    return {
        "@type": "cr:RecordSet",
        "@id": record_set,
        "name": record_set,
        "description": f"{title} ({split} split).",
        "field": fields,
    }


def build_croissant(
    *,
    files: dict[str, bytes],
    name: str,
    description: str,
    version: str,
    license_text: str,
    date_published: str,
    cite_as: str,
    rai: dict[str, str],
    digests: dict[str, str] | None = None,
) -> dict:
    """The Croissant document; ``digests`` ({path: SHA-256}, e.g. ``manifest.Digests``) saves hashing the files
    again."""
    digests = Digests(files) if digests is None else digests
    distribution = [
        {
            "@type": "cr:FileObject",
            "@id": _file_id(path),
            "name": path,
            "contentUrl": path,
            "encodingFormat": ENCODINGS["." + path.rsplit(".", 1)[-1]],
            "contentSize": f"{len(files[path])} B",
            "sha256": digests[path],
        }
        for path in sorted(files)
    ]
    record_sets = [
        _record_set(config, split, path, files[path])
        for config, splits in config_files(files).items()
        for split, path in splits.items()
        if files[path]  # an empty split file has no records to read
    ]
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": name,
        "description": description,
        "conformsTo": CONFORMS_TO,
        "citeAs": cite_as,
        "license": license_text,
        "version": version,
        "datePublished": date_published,
        "inLanguage": "en",
        "keywords": [
            "couple therapy",
            "family therapy",
            "dialogue",
            "benchmark",
            "relation patterns",
            "support strategies",
        ],
        **{f"rai:{k}": v for k, v in rai.items()},
        "distribution": distribution,
        "recordSet": record_sets,
    }


def croissant_description(stats: dict) -> str:
    """The dataset's description, from ``stats.json``'s counts (the card's numbers, in the card's words)."""
    from .card.markdown import count_noun, therapy_words  # the card's plural rule and scenario words
    from .stats import ALL

    corpus = stats["corpus"]
    total = corpus[ALL][ALL]
    scenarios = ", ".join(f"{corpus[s][ALL]['clips']:,} {s}" for s in corpus if s != ALL)
    return (
        f"Annotated {therapy_words(stats)} dialogue: {count_noun(total['clips'], 'clip')} ({scenarios}) from "
        f"{count_noun(total['groups'], 'couple or family|couples or families')}, {count_noun(total['rows'], 'row')} "
        "annotated along six "
        "dimensions, with instances of six benchmark tasks (intervention timing, relation pattern, support target, "
        "support "
        "strategy, emotion, viewpoint). See README.md."
    )


def croissant_limitations(stats: dict) -> str:
    """Croissant's ``dataLimitations``: the scenario balance as the counts have it, never "few family clips" when there
    are none."""
    from .card.markdown import count_noun
    from .stats import ALL

    corpus = stats["corpus"]
    present = {s: corpus[s][ALL]["clips"] for s in corpus if s != ALL}
    missing = [s for s in ("couple", "family") if s not in present]
    if missing:
        balance = f"one scenario only (no {' or '.join(missing)} clips)"
    else:
        smaller = min(present, key=lambda s: (present[s], s))
        balance = (
            f"scenario imbalance (the {smaller} scenario has {count_noun(present[smaller], 'clip')} of "
            f"{sum(present.values()):,})"
        )
    return f"{balance[0].upper()}{balance[1:]}, long-tailed labels, text only; see README.md."
