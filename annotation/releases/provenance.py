"""How the released data was made, from what the database records, and the card's words for it.

``collect_provenance`` reads the facts at freeze time (they go into
``stats.json`` under ``provenance``): where each released clip and its rows
came from, which drafts exist and from which run, who was assigned and how,
where each row's gold came from, which released gold was corrected, and
which clips carry the finished work of two or more coders. Every count
comes from a recorded fact (an import record, a draft's source and
provenance, an assignment, an adjudication decision); a kind of document
being present is never taken as evidence of how it was made. What is not
recorded is counted as such.

``provenance_sentences`` and ``agreement_sentences`` turn the facts into the
card's sentences; the card renders them (``card`` package), and the tests compare
them one by one with facts they count themselves.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from django.contrib.auth import get_user_model
from django.db.models import Count, Q

from ..adjudication.gold_sources import gold_sources
from ..models import (
    Assignment,
    AssignmentMode,
    AssignmentState,
    Clip,
    Draft,
    DraftSource,
    Gold,
    ImportKind,
    ImportRecord,
    Project,
)
from ..roles import LEAD
from ..taxonomy import SCENARIOS, load_taxonomy

# Provenance keys that describe a pre-annotation run rather than one row.
DRAFT_DETAIL_KEYS = ("provider", "model", "model_version", "prompt_version", "generator")
# How a released clip came into the platform.
CLIP_IMPORTED, CLIP_INGESTED, CLIP_GENERATED, NOT_RECORDED = "imported", "ingested", "generated", "not_recorded"
# Who made a coder's work on a clip.
PLATFORM, IMPORTED, GENERATED, MIXED = "platform", "imported", "generated", "mixed"
# Where a row's gold came from.
GOLD_ADJUDICATED, GOLD_IMPORTED = "adjudicated", "imported"
UNANIMOUS_SOURCE = "unanimous"  # adjudication.services.UNANIMOUS
FILES_NAMED = 3  # imports named one by one in a sentence; more are summarised (all are in stats.json)


def _day(moment) -> str:
    return moment.date().isoformat()


def _import_ref(record: ImportRecord) -> dict:
    return {
        "file": record.file_name,
        "sha256": record.sha256,
        "date": _day(record.created_at),
        "by": record.imported_by.username if record.imported_by else None,
    }


def collect_provenance(project: Project, clip_pks: list[int]) -> dict:
    """The facts of how the clips ``clip_pks`` (the release's) were made, JSON-ready and sorted."""
    clips = list(Clip.objects.filter(pk__in=clip_pks).annotate(row_count=Count("rows")).order_by("sample_id"))
    by_pk = {c.pk: c for c in clips}
    released_ids = {c.sample_id for c in clips}
    rows_of = {c.sample_id: c.row_count for c in clips}
    synthetic = set(
        Draft.objects.filter(row__clip_id__in=clip_pks, source=DraftSource.SYNTHETIC)
        .values_list("row__clip__sample_id", flat=True)
        .distinct()
    )
    records = [
        r
        for r in ImportRecord.objects.filter(project=project)
        .select_related("imported_by", "annotator")
        .order_by("created_at", "id")
        if released_ids & set(r.sample_ids)
    ]
    # The latest import of each kind (and annotator) that covers a clip is what the clip holds now:
    # an import replaces that kind of document on every row of the clip.
    latest: dict[tuple, ImportRecord] = {}
    for record in records:
        for sample_id in set(record.sample_ids) & released_ids:
            latest[record.kind, record.annotator_id if record.kind == ImportKind.REVISION else None, sample_id] = record

    facts = {
        "note": "From the platform's database at freeze time, not recomputable from the files.",
        "synthetic": bool(synthetic),
        "clips": len(clips),
        "rows": sum(rows_of.values()),
        "clip_origin": _clip_origin(clips, records, synthetic),
        # Clips with a recording on the platform (a file or an address): the card says what the coders could see.
        "clips_with_media": sum(1 for c in clips if c.media or c.media_url),
        "imports": [
            {
                **_import_ref(r),
                "kind": r.kind,
                "clips": len(set(r.sample_ids) & released_ids),
                "correction": bool(r.correction),
            }
            for r in records
        ],
        "drafts": _drafts(clip_pks, latest, rows_of),
        "coders": _coders(clip_pks, latest, synthetic),
        "gold": _gold(clip_pks, by_pk, latest, synthetic),
        # How much of the gold is human: each gold value against the coded work and the draft
        # (adjudication.gold_sources).
        "gold_sources": gold_sources(clip_pks, project.work_scope),
        "corrections": _corrections(records, released_ids),
        "project_clips_not_released": dict(
            project.clips.exclude(pk__in=clip_pks).values_list("state").annotate(n=Count("id")).order_by("state")
        ),
        "taxonomy": _taxonomy_sizes(project.taxonomy_version, {c.scenario for c in clips}),
    }
    return facts


def _clip_origin(clips: list[Clip], records: list[ImportRecord], synthetic: set[str]) -> dict:
    created_by: dict[str, ImportRecord] = {}
    for record in records:
        for sample_id in record.created_sample_ids:
            created_by.setdefault(sample_id, record)
    counts: Counter = Counter()
    files: dict[tuple, dict] = {}
    for clip in clips:
        if clip.sample_id in synthetic:
            counts[CLIP_GENERATED] += 1
        elif clip.sample_id in created_by:
            counts[CLIP_IMPORTED] += 1
            ref = _import_ref(created_by[clip.sample_id])
            files.setdefault((ref["date"], ref["file"], ref["sha256"]), ref)
        elif clip.ingest_report:
            counts[CLIP_INGESTED] += 1
        else:
            counts[NOT_RECORDED] += 1
    return {
        "counts": {k: counts[k] for k in (CLIP_IMPORTED, CLIP_INGESTED, CLIP_GENERATED, NOT_RECORDED) if counts[k]},
        "import_files": [files[k] for k in sorted(files)],
    }


def _drafts(clip_pks: list[int], latest: dict, rows_of: dict[str, int]) -> dict:
    """Rows with a draft, grouped by source and run; imported drafts by the file they came from."""
    grouped = (
        Draft.objects.filter(row__clip_id__in=clip_pks)
        .values("source", "row__clip__sample_id", *(f"provenance__{k}" for k in DRAFT_DETAIL_KEYS))
        .annotate(n=Count("id"))
        .order_by()
    )
    runs: Counter = Counter()
    for entry in grouped:
        details = tuple(
            (k, str(entry[f"provenance__{k}"]))
            for k in DRAFT_DETAIL_KEYS
            if entry[f"provenance__{k}"] not in (None, "")
        )
        if entry["source"] == DraftSource.IMPORT:
            record = latest.get((ImportKind.DRAFT, None, entry["row__clip__sample_id"]))
            details = (("file", record.file_name), ("date", _day(record.created_at))) if record else (("file", None),)
        runs[entry["source"], details] += entry["n"]
    return {
        "rows": sum(runs.values()),
        "of_rows": sum(rows_of.values()),
        "runs": [
            {"source": source, "details": dict(details), "rows": n}
            for (source, details), n in sorted(
                runs.items(), key=lambda kv: (-kv[1], kv[0][0], [(k, str(v)) for k, v in kv[0][1]])
            )
        ],
    }


def _coders(clip_pks: list[int], latest: dict, synthetic: set[str]) -> dict:
    """Each (clip, annotator) pair by who made the work: the platform's assignment, an import, the generator."""
    pairs = Assignment.objects.filter(clip_id__in=clip_pks).values_list(
        "clip__sample_id", "annotator_id", "annotator__username", "mode", "state", "design"
    )
    platform = {"assignments": 0, "annotators": set(), "clips": set(), "modes": Counter(), "states": Counter()}
    # How each platform assignment's mode was chosen, as the assignment records it (``Assignment.design``).
    chosen: Counter = Counter()
    imported = {"annotators": set(), "clips": set(), "files": {}}
    generated = {"annotators": set(), "clips": set()}
    finished: dict[str, Counter] = defaultdict(Counter)  # clip -> {origin: coders with finished work}
    for sample_id, annotator_id, username, mode, state, design in pairs:
        if sample_id in synthetic:
            generated["annotators"].add(username)
            generated["clips"].add(sample_id)
            finished[sample_id][GENERATED] += state == AssignmentState.SUBMITTED
            continue
        record = latest.get((ImportKind.REVISION, annotator_id, sample_id))
        if record is not None:
            imported["annotators"].add(username)
            imported["clips"].add(sample_id)
            ref = _import_ref(record)
            imported["files"].setdefault((ref["date"], ref["file"], ref["sha256"]), ref)
            # Finished work from elsewhere while its assignment stays submitted (a lead may reopen it): the rule
            # agreement counts by (agreement/scope.py), so the card and agreement.json speak of the same work.
            finished[sample_id][IMPORTED] += state == AssignmentState.SUBMITTED
            continue
        platform["assignments"] += 1
        platform["annotators"].add(username)
        platform["clips"].add(sample_id)
        platform["modes"][mode] += 1
        platform["states"][state] += 1
        design = design or {}
        if design.get("by") == "design":
            chosen[("design", float(design.get("share", 0)), int(design.get("seed", 0)), mode)] += 1
        else:
            chosen[("lead" if design.get("by") == "lead" else NOT_RECORDED, None, None, mode)] += 1
        finished[sample_id][PLATFORM] += state == AssignmentState.SUBMITTED
    per_clip = Counter(sum(c.values()) for c in finished.values())
    # Clips with two or more coders' finished work, by where those coders' work came from.
    two: Counter = Counter()
    for counts in finished.values():
        if sum(counts.values()) >= 2:
            origins = [o for o in (PLATFORM, IMPORTED, GENERATED) if counts[o]]
            two[origins[0] if len(origins) == 1 else MIXED] += 1
    leads = (
        get_user_model()
        .objects.filter(Q(groups__name=LEAD) | Q(is_superuser=True), username__in=platform["annotators"])
        .distinct()
        .count()
    )
    return {
        PLATFORM: {
            "assignments": platform["assignments"],
            "annotators": len(platform["annotators"]),
            "leads": leads,  # leads read every coder's work: a lead's own coding is not blind
            "clips": len(platform["clips"]),
            "modes": {m: platform["modes"][m] for m in AssignmentMode.values if platform["modes"][m]},
            "states": {s: platform["states"][s] for s in AssignmentState.values if platform["states"][s]},
            "mode_choice": _mode_choice(chosen),
        },
        IMPORTED: {
            "annotators": len(imported["annotators"]),
            "clips": len(imported["clips"]),
            "files": [imported["files"][k] for k in sorted(imported["files"])],
        },
        GENERATED: {"annotators": len(generated["annotators"]), "clips": len(generated["clips"])},
        # Clips by how many coders' finished work they carry (submitted on the platform, or imported).
        "finished_coders_per_clip": {str(n): per_clip[n] for n in sorted(per_clip)},
        "clips_with_two_finished_coders": {
            "any": sum(two.values()),
            **{k: two[k] for k in (PLATFORM, IMPORTED, GENERATED, MIXED)},
        },
    }


def _mode_choice(chosen: Counter) -> list[dict]:
    """[{"by": "design"|"lead"|"not_recorded", "share", "seed", "assignments", "from_empty"}], design runs first."""
    runs: dict[tuple, dict] = {}
    for (by, share, seed, mode), n in chosen.items():
        entry = runs.setdefault(
            (by, share, seed), {"by": by, "share": share, "seed": seed, "assignments": 0, "from_empty": 0}
        )
        entry["assignments"] += n
        entry["from_empty"] += n if mode == AssignmentMode.FROM_EMPTY else 0
    order = {"design": 0, "lead": 1, NOT_RECORDED: 2}
    return [runs[k] for k in sorted(runs, key=lambda k: (order[k[0]], k[1] or 0, k[2] or 0))]


def _gold(clip_pks: list[int], by_pk: dict[int, Clip], latest: dict, synthetic: set[str]) -> dict:
    """Each released row's gold by its recorded origin: adjudication decisions, an import, the generator, or nothing
    recorded."""
    rows: Counter = Counter()
    clips: dict[str, set] = defaultdict(set)
    decisions, unanimous, leads = 0, 0, set()
    files: dict[tuple, dict] = {}
    for clip_id, entries in (
        Gold.objects.filter(row__clip_id__in=clip_pks)
        .values_list("row__clip_id", "decisions")
        .iterator(chunk_size=2000)
    ):
        sample_id = by_pk[clip_id].sample_id
        record = latest.get((ImportKind.GOLD, None, sample_id))
        if entries:
            origin = GOLD_ADJUDICATED
            decisions += len(entries)
            unanimous += sum(1 for d in entries.values() if isinstance(d, dict) and d.get("source") == UNANIMOUS_SOURCE)
            leads.update(d["by"] for d in entries.values() if isinstance(d, dict) and d.get("by"))
        elif record is not None:
            origin = GOLD_IMPORTED
            ref = _import_ref(record)
            files.setdefault((ref["date"], ref["file"], ref["sha256"]), ref)
        elif sample_id in synthetic:
            origin = GENERATED
        else:
            origin = NOT_RECORDED
        rows[origin] += 1
        clips[origin].add(sample_id)
    return {
        "rows": {k: rows[k] for k in (GOLD_ADJUDICATED, GOLD_IMPORTED, GENERATED, NOT_RECORDED) if rows[k]},
        "clips": {k: len(clips[k]) for k in (GOLD_ADJUDICATED, GOLD_IMPORTED, GENERATED, NOT_RECORDED) if clips[k]},
        "decisions": decisions,
        "unanimous_decisions": unanimous,
        "leads": len(leads),
        "import_files": [files[k] for k in sorted(files)],
    }


def _corrections(records: list[ImportRecord], released_ids: set[str]) -> list[dict]:
    """Recorded corrections of released gold that touch these clips, oldest first."""
    out = []
    for record in records:
        clips = [c for c in record.correction.get("clips", []) if c["sample_id"] in released_ids]
        if not clips:
            continue
        out.append(
            {
                **_import_ref(record),
                "releases": list(dict.fromkeys(v for c in clips for v in c["releases"])),  # oldest first, as recorded
                "clips": [{"sample_id": c["sample_id"], "rows": [r["row_index"] for r in c["rows"]]} for c in clips],
                "rows_changed": sum(len(c["rows"]) for c in clips),
            }
        )
    return out


def _taxonomy_sizes(version: str, scenarios: set[str]) -> dict:
    sizes = {}
    for scenario in SCENARIOS:
        if scenario in scenarios:
            tax = load_taxonomy(scenario, version)
            sizes[scenario] = {
                "relation_patterns": len(tax.relation_patterns),
                "support_strategies": len(tax.support_strategies),
                "utterance_types": len(tax.utterance_types),
            }
    return {"version": version, "scenarios": sizes}


# --- the card's sentences ---------------------------------------------------------------------


def _n(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else (plural or singular + 's')}"


def _was(count: int) -> str:
    return "was" if count == 1 else "were"


def _their(count: int) -> str:
    return "its" if count == 1 else "their"


def _files(refs: list[dict], verb: str = "imported") -> str:
    """The import files, named (up to FILES_NAMED), or summarised."""
    if not refs:
        return "a file that is not recorded"
    if len(refs) <= FILES_NAMED:
        named = [f"`{r['file']}` ({verb} {r['date']}, SHA-256 `{r['sha256'][:12]}…`)" for r in refs]
        return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    dates = sorted(r["date"] for r in refs)
    when = dates[0] if dates[0] == dates[-1] else f"between {dates[0]} and {dates[-1]}"
    return f"{len(refs)} files {verb} {when} (every file's name and SHA-256 is in `stats.json`)"


def _list(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


DRAFT_SOURCES = {
    DraftSource.LLM: "the LLM pre-annotation",
    DraftSource.OFFLINE: "the offline skeleton (no LLM)",
    DraftSource.SYNTHETIC: "the synthetic generator",
}
DETAIL_NAMES = {
    "provider": "provider",
    "model": "model",
    "model_version": "model version",
    "prompt_version": "prompt version",
}
MODE_NAMES = {
    AssignmentMode.FROM_DRAFT: "anchored (starting from the clip's draft)",
    AssignmentMode.FROM_EMPTY: "calibration (starting empty)",
}


def _draft_run(run: dict) -> str:
    rows = _n(run["rows"], "row")
    details = run["details"]
    if run["source"] == DraftSource.IMPORT:
        if details.get("file"):
            return f"{rows} imported as drafts from `{details['file']}` (imported {details['date']})"
        return f"{rows} imported as drafts from a file that is not recorded"
    named = ", ".join(f"{DETAIL_NAMES[k]} {v}" for k, v in details.items() if k in DETAIL_NAMES)
    return f"{rows} from {DRAFT_SOURCES.get(run['source'], run['source'])}" + (f" ({named})" if named else "")


def provenance_sentences(facts: dict) -> list[list[str]]:
    """The card's account of how the data was made: paragraphs of sentences, each from a recorded fact."""
    clips, rows = facts["clips"], facts["rows"]
    paragraphs: list[list[str]] = []

    origin = facts["clip_origin"]["counts"]
    said = []
    if origin.get(CLIP_IMPORTED):
        said.append(
            f"{_n(origin[CLIP_IMPORTED], 'clip')} came into the platform, with {_their(origin[CLIP_IMPORTED])} rows, "
            f"by import from {_files(facts['clip_origin']['import_files'])}."
        )
    if origin.get(CLIP_INGESTED):
        said.append(
            f"{_n(origin[CLIP_INGESTED], 'clip')} {_was(origin[CLIP_INGESTED])} ingested from transcript files on this "
            f"platform, and {_their(origin[CLIP_INGESTED])} rows were made there."
        )
    if origin.get(CLIP_GENERATED):
        said.append(
            f"{_n(origin[CLIP_GENERATED], 'clip')} {_was(origin[CLIP_GENERATED])} made by the platform's synthetic "
            "generator (invented people and dialogue)."
        )
    if origin.get(NOT_RECORDED):
        said.append(
            f"For {_n(origin[NOT_RECORDED], 'clip')}, how {'it' if origin[NOT_RECORDED] == 1 else 'they'} came into "
            "the platform is not recorded."
        )
    paragraphs.append([f"**Clips and rows.** This release holds {_n(clips, 'clip')} and {_n(rows, 'row')}.", *said])

    drafts = facts["drafts"]
    if drafts["rows"]:
        paragraphs.append(
            [
                f"**Drafts.** A draft annotation is recorded for {drafts['rows']:,} of the {rows:,} rows: "
                + "; ".join(_draft_run(r) for r in drafts["runs"])
                + "."
            ]
        )
    else:
        paragraphs.append([f"**Drafts.** No draft annotation is recorded for any of the {rows:,} rows."])

    coders = facts["coders"]
    said = []
    platform = coders[PLATFORM]
    if platform["assignments"]:
        modes = _list([f"{n:,} {MODE_NAMES.get(m, m)}" for m, n in platform["modes"].items()])
        states = platform["states"]
        submitted = states.get(AssignmentState.SUBMITTED, 0)
        open_states = [f"{n:,} {s.replace('_', ' ')}" for s, n in states.items() if s != AssignmentState.SUBMITTED]
        said.append(
            f"The platform assigned {_n(platform['clips'], 'clip')} to {_n(platform['annotators'], 'annotator')} in "
            f"{_n(platform['assignments'], 'assignment')}: {modes}."
        )
        said.append(
            f"{submitted:,} of these assignments {_was(submitted)} submitted"
            + (f"; not submitted: {', '.join(open_states)}." if open_states else ".")
        )
        said.append(
            "The platform assigned them blind: it shows an annotator only their own assignments and revisions, "
            "and a clip's rows are locked once it is assigned, so every coder of a clip annotated the same rows."
        )
        if platform.get("leads"):
            n = platform["leads"]
            said.append(
                "1 of these coders is a lead, who can read every coder's work: that coding was not blind."
                if n == 1
                else f"{n:,} of these coders are leads, who can read every coder's work: their coding was not blind."
            )
    imported = coders[IMPORTED]
    if imported["annotators"]:
        said.append(
            f"Revisions of {_n(imported['annotators'], 'coder')} on {_n(imported['clips'], 'clip')} were made "
            "elsewhere and imported from "
            f"{_files(imported['files'])}. The platform did not assign these coders, so whether they worked blind to "
            "and "
            "independently of each other is not recorded."
        )
    generated = coders[GENERATED]
    if generated["annotators"]:
        said.append(
            f"The revisions of {_n(generated['annotators'], 'simulated annotator')} on "
            f"{_n(generated['clips'], 'clip')} were "
            "written by the synthetic generator; no person annotated them."
        )
    if not said:
        said.append(
            "No coder's work is recorded for these clips: nobody was assigned to them on this platform, and no "
            "revisions were imported."
        )
    paragraphs.append(["**Coders.** " + said[0], *said[1:]])

    gold = facts["gold"]
    said = []
    g_rows, g_clips = gold["rows"], gold["clips"]
    if g_rows.get(GOLD_ADJUDICATED):
        leads = _n(gold["leads"], "lead")
        said.append(
            f"The gold of {_n(g_rows[GOLD_ADJUDICATED], 'row')} ({_n(g_clips[GOLD_ADJUDICATED], 'clip')}) was decided "
            "on this platform "
            f"by adjudication: {_n(gold['decisions'], 'field decision')} recorded by {leads}, "
            f"{gold['unanimous_decisions']:,} of them accepting a value every coder had given."
        )
    if g_rows.get(GOLD_IMPORTED):
        said.append(
            f"The gold of {_n(g_rows[GOLD_IMPORTED], 'row')} ({_n(g_clips[GOLD_IMPORTED], 'clip')}) was imported as "
            "gold, "
            f"from {_files(gold['import_files'])}; how it was decided is not recorded on this platform."
        )
    if g_rows.get(GENERATED):
        said.append(
            f"The gold of {_n(g_rows[GENERATED], 'row')} ({_n(g_clips[GENERATED], 'clip')}) was written by the "
            "synthetic generator."
        )
    if g_rows.get(NOT_RECORDED):
        said.append(
            f"For the gold of {_n(g_rows[NOT_RECORDED], 'row')} ({_n(g_clips[NOT_RECORDED], 'clip')}), neither an "
            "adjudication "
            "decision nor an import is recorded."
        )
    for c in facts["corrections"]:
        by = f" by {c['by']}" if c["by"] else ""
        said.append(
            f"Gold already released in {_list(c['releases'])} was corrected on {c['date']}{by} from `{c['file']}` "
            f"(SHA-256 `{c['sha256'][:12]}…`): {_n(len(c['clips']), 'clip')}, {_n(c['rows_changed'], 'row')} changed."
        )
    said.append(
        "Only clips in an adjudicated (or previously released) state, not discarded, with gold on every row, are "
        "released."
    )
    paragraphs.append(["**Gold.** " + said[0], *said[1:]])

    excluded = facts.get("project_clips_not_released") or {}
    tail = []
    if excluded:
        tail.append(
            "Clips of the project not in this release, by state: "
            + ", ".join(f"{state} {n}" for state, n in excluded.items())
            + "."
        )
    taxonomy = facts["taxonomy"]
    if taxonomy["scenarios"]:
        parts = [
            f"{s}: {t['relation_patterns']} relation patterns, {t['support_strategies']} support strategies, "
            f"{t['utterance_types']} utterance types"
            for s, t in taxonomy["scenarios"].items()
        ]
        tail.append(f"Labels follow taxonomy version {taxonomy['version']} ({'; '.join(parts)}).")
    if tail:
        paragraphs.append(tail)
    return paragraphs


def reliability_computable(facts: dict, agreement: dict) -> tuple[bool, str]:
    """(whether the card shows agreement figures, and if not the reason, as a sentence).

    From the database facts first (are there clips with the finished work of two or
    more coders?), then from the report (does it hold pairable units?).
    """
    if not agreement.get("available"):
        return False, agreement.get("reason", "Agreement figures are not available for this release.")
    coders = facts["coders"]
    if not coders["clips_with_two_finished_coders"]["any"]:
        recorded = coders[PLATFORM]["assignments"] or coders[IMPORTED]["annotators"] or coders[GENERATED]["annotators"]
        if not recorded:
            why = (
                "no coder's work is recorded for its clips (see how the data was made), so there are no independent "
                "codings to compare"
            )
        else:
            one = coders["finished_coders_per_clip"].get("1", 0)
            platform = coders[PLATFORM]
            unsubmitted = platform["assignments"] - platform["states"].get(AssignmentState.SUBMITTED, 0)
            why = "no clip carries the finished work of two or more coders"
            details = []
            if one:
                details.append(f"{_n(one, 'clip')} carry one coder's")
            if unsubmitted:
                details.append(
                    f"{_n(unsubmitted, 'assignment')} on the platform were not submitted, and agreement counts "
                    "finished work only"
                )
            if details:
                why += " (" + "; ".join(details) + ")"
        return False, (
            f"Reliability cannot be computed from this release: {why}. A reliability figure for these labels needs a "
            "second, independent coding of at least part of the clips."
        )
    summary = (agreement.get("report") or {}).get("summary")
    has_units = isinstance(summary, list) and any(isinstance(e, dict) and (e.get("units") or 0) > 0 for e in summary)
    if not has_units:
        n = coders["clips_with_two_finished_coders"]["any"]
        return False, (
            f"Reliability cannot be computed from this release: {_n(n, 'clip')} carry the finished work of two or more "
            "coders, but the agreement report over the released clips holds no pairable values."
        )
    return True, ""


def coder_origin_sentence(facts: dict) -> str:
    """Whose work the agreement figures compare, by how the coders came to the clips."""
    two = facts["coders"]["clips_with_two_finished_coders"]
    kinds = {
        PLATFORM: "coders the platform assigned, blind to each other",
        IMPORTED: "imported revisions (whether those coders worked independently is not recorded)",
        GENERATED: (
            "the synthetic generator's simulated annotators (these figures test the pipeline, not human reliability)"
        ),
        MIXED: "a mix of coders the platform assigned and imported or simulated ones",
    }
    present = [k for k in kinds if two[k]]
    if len(present) == 1:
        described = kinds[present[0]]
    else:
        described = "; ".join(f"on {_n(two[k], 'clip')}, {kinds[k]}" for k in present)
    return f"The figures compare the finished work of two or more coders on {_n(two['any'], 'clip')}: {described}."


def _plain(sentences: list[str]) -> str:
    """Sentences without the card's Markdown (bold paragraph names, code quotes)."""
    text = " ".join(sentences)
    for name in ("Clips and rows", "Drafts", "Coders", "Gold"):
        text = text.replace(f"**{name}.** ", "")
    return text.replace("`", "")


def rai_provenance(facts: dict) -> dict[str, str]:
    """Croissant's responsible-AI fields on collection and annotation, from the same facts as the card."""
    paragraphs = provenance_sentences(facts)
    return {
        "dataCollection": _plain(paragraphs[0]),
        "dataAnnotationProtocol": _plain([s for p in paragraphs[1:4] for s in p]),
    }
