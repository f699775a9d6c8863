"""``croissant.json``: MLCommons Croissant 1.0 metadata for the release files.

Written by hand as JSON-LD (no runtime dependency on ``mlcroissant``; the
tests validate the output with it). One ``FileObject`` per file, with its
SHA-256; one ``RecordSet`` per config and non-empty split (``rows_train``,
``itp_test``...) declaring the flat fields of each record. Nested parts (a
clip's rows, an instance's context) are described in the dataset card.
"""
from __future__ import annotations

from tasks.rules import ALL_TASKS, TITLES

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
ENCODINGS = {".jsonl": "application/jsonlines", ".json": "application/json", ".md": "text/markdown", ".png": "image/png"}

TEXT, INTEGER = "sc:Text", "sc:Integer"
ROW_FIELDS = (
    ("sample_id", TEXT, "Clip id: <relationship group>/<clip>.", None),
    ("scenario", TEXT, "couple or family.", None),
    ("source_file", TEXT, "Where the clip's annotation came from.", None),
)
INSTANCE_FIELDS = (
    ("id", TEXT, "Stable instance id: <task>:<sample_id>:<row_index>.", None),
    ("clip_id", TEXT, "The clip (sample_id) the instance comes from.", None),
    ("row_index", INTEGER, "1-based row of the decision point in the clip.", None),
    ("scenario", TEXT, "couple or family.", None),
    ("split", TEXT, "train, validation or test.", None),
)
TASK_FIELDS = {
    "itp": (("gold", TEXT, "yes if the therapist speaks next, else no.", None),),
    "rpp": (("gold", TEXT, "Relation-pattern label of the row.", None),),
    "rpp_any_speaker": (("gold", TEXT, "Relation-pattern label of the row.", None),),
    "stp": (("gold", TEXT, "The therapist's support target (a participant or the group label).", None),),
    "ssp": (
        ("target", TEXT, "The support target, given as input.", None),
        ("gold", TEXT, "The therapist's support strategy.", None),
    ),
    "er": (
        ("speaker", TEXT, "Whose emotion is asked for.", None),
        ("gold_emotion", TEXT, "Gold emotion description.", ("gold", "emotion_description")),
        ("gold_intensity", INTEGER, "Gold intensity, 0-10.", ("gold", "intensity")),
    ),
    "vp": (("speaker", TEXT, "Whose viewpoints are asked for.", None),),
}


def _file_id(path: str) -> str:
    return path.replace("/", "_").replace(".", "_")


def _field(record_set: str, file_id: str, name: str, data_type: str, description: str, nested) -> dict:
    source: dict = {"fileObject": {"@id": file_id}}
    if nested:
        column, key = nested
        source["extract"] = {"column": column}
        source["transform"] = {"jsonPath": key}
    else:
        source["extract"] = {"column": name}
    return {"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name, "description": description, "dataType": data_type, "source": source}


def config_files(files: dict[str, bytes]) -> dict[str, dict[str, str]]:
    """{config: {split: path}} of the JSONL files that hold records."""
    out: dict[str, dict[str, str]] = {"rows": {s: f"data/{s}.jsonl" for s in SPLITS}}
    for task in ALL_TASKS:
        out[task] = {s: f"tasks/{task}/{s}.jsonl" for s in SPLITS}
    return {config: {s: p for s, p in splits.items() if p in files} for config, splits in out.items()}


def build_croissant(
    *, files: dict[str, bytes], name: str, description: str, version: str, license_text: str, date_published: str, cite_as: str, rai: dict[str, str], digests: dict[str, str] | None = None
) -> dict:
    """The Croissant document; ``digests`` ({path: SHA-256}, e.g. ``manifest.Digests``) saves hashing the files again."""
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
    record_sets = []
    for config, splits in config_files(files).items():
        fields = ROW_FIELDS if config == "rows" else (*INSTANCE_FIELDS, *TASK_FIELDS[config])
        title = "Benchmark rows: one clip per record" if config == "rows" else TITLES[config]
        for split, path in splits.items():
            if not files[path]:
                continue  # an empty split file has no records to read
            record_set = f"{config}_{split}"
            record_sets.append(
                {
                    "@type": "cr:RecordSet",
                    "@id": record_set,
                    "name": record_set,
                    "description": f"{title} ({split} split).",
                    "field": [_field(record_set, _file_id(path), *spec) for spec in fields],
                }
            )
    doc = {
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
        "keywords": ["couple therapy", "family therapy", "dialogue", "benchmark", "relation patterns", "support strategies"],
        **{f"rai:{k}": v for k, v in rai.items()},
        "distribution": distribution,
        "recordSet": record_sets,
    }
    return doc
