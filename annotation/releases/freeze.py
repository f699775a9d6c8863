"""Freezing a release: from the project's gold to an immutable folder and record.

A build has two halves. ``plan_build`` decides, before any gold is read, what the
release is made of: its clips and splits and the inputs it is built with (a
``ReleasePlan``; ``recorded_plan`` reads the same from a release's record).
``build`` is everything but the writes: named steps over that plan, one per
stage (``STAGES``), that read the gold and return the release's files as bytes
plus the manifest; ``build_release`` is the two together. It is deterministic: the same database state and inputs give
the same bytes
(no clock readings in the files, no unordered iteration, fixed JSON spelling). ``freeze`` writes
the folder (read-only, atomically), creates the ``Release`` record and moves
the released clips to state ``released``; ``reproduce`` rebuilds a recorded
release from its recorded inputs and clip list, to show it is reproducible.

Which clips: those in state ``adjudicated`` or ``released`` (never
``discarded``) whose every row has gold. Clips already ``released`` by an
earlier version are included again: a new version is the whole benchmark,
not a delta. Freezing moves the included ``adjudicated`` clips to
``released`` with ``services.transition_many`` (audited: one historical
record per clip, with the reason and who froze); a lead who reopens one moves it back to ``adjudicated``. A
release records its clip list, so the state change never affects what an
existing release holds.

Splits are decided before any gold is read (``plan_release``: relationship
groups, ``splits.plan_splits``), and a scenario whose groups cannot reach
every split stops the freeze there unless the lead accepted it. Everything
runs in this process, one step after another: at ten times the public
release's size the whole freeze stays under half a minute (``bench_release``:
about 28 s, more than half of it the two agreement reports), so nothing here
forks, spawns or starts a thread. A thread computing the agreement reports
beside the other stages was measured and gave nothing at that size: the work
holds Python's interpreter lock.
"""

from __future__ import annotations

import gc
import json
import re
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path

from django.db import transaction
from django.db.models import Count, Max

from tasks.instances import InstanceWriter, build_instances
from tasks.profiles import TaskProfile, UnknownProfile, get_profile, recorded_profile
from tasks.rules import ALL_TASKS, RULE_VERSION

from ..codebook.selectors import CURRENT as CURRENT_GUIDANCE
from ..codebook.selectors import NOT_RECORDED as GUIDANCE_NOT_RECORDED
from ..codebook.selectors import release_guidance
from ..meaning.selectors import judgement_set, judgement_set_changes, recorded_judgement_set
from ..models import Clip, ClipState, Gold, Project, Release
from ..rescue_format.exporter import ROW_FIELDS, dumps_clip, release_clip, release_row, row_skeleton
from ..services import ServiceError, transition_many
from .agreement_report import agreement_file
from .card import CARD_TEMPLATE, LICENCE_TEXT, card_facts, render_card
from .croissant import build_croissant, croissant_description, croissant_limitations, row_record_files
from .drafting_model import drafting_predictions, prediction_files, read_drafts
from .figures import FIGURE_STYLE, FIGURE_STYLES, release_figures
from .manifest import FORMAT, MANIFEST, Digests, Verification, dumps_json, file_entries, remove_tree, sha256, write_tree
from .provenance import collect_provenance, rai_provenance
from .splits import SPLITS, ClipInfo, SplitPlan, decision_digest, parse_ratios, plan_splits
from .stats import compute_stats

RELEASABLE_STATES = (ClipState.ADJUDICATED, ClipState.RELEASED)
VERSION_PATTERN = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._+-]{0,39}$")
# Path segments the release pages use next to version numbers.
RESERVED_VERSIONS = frozenset({"diff", "jobs", "freeze", "preview"})
# A release frozen before its judgements of meaning were recorded: its validity reads every judgement, as it did.
JUDGEMENTS_NOT_RECORDED = "not recorded"
STAGES = ("collect", "splits", "data", "tasks", "stats", "agreement", "figures", "card", "croissant", "manifest")

Progress = Callable[[int, int, str], None]


class FreezeError(ServiceError):
    """The release cannot be frozen as asked (message for the user)."""


def check_version(version: str) -> str:
    if not isinstance(version, str) or not VERSION_PATTERN.match(version) or ".." in version:
        raise FreezeError(
            f"version {version!r} must be 1–40 letters, digits, dots, dashes, underscores or plus signs, e.g. 1.0.0"
        )
    if version.lower() in RESERVED_VERSIONS:
        raise FreezeError(f"{version!r} cannot be a version name")
    return version


def releasable_clips(project: Project):
    return project.clips.filter(state__in=RELEASABLE_STATES)


class NothingToRelease(FreezeError):
    """No clip can be released; ``skipped``: releasable clips left out for lack of gold."""

    def __init__(self, message: str, skipped: list[str]):
        self.skipped = skipped
        super().__init__(message)


@dataclass
class BuiltRelease:
    files: dict[str, bytes]
    manifest: dict
    clip_ids: list[str]
    skipped: list[str]  # releasable clips left out because some row has no gold
    rows: int
    timings: dict[str, float] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # {path: SHA-256} of the files, manifest.json excepted
    provenance: dict = field(default_factory=dict)  # the database facts the card and stats.json state

    @property
    def inputs(self) -> dict:
        return self.manifest["inputs"]


def complete_clips(selection) -> tuple[list[Clip], list[str]]:
    """The clips of ``selection`` with gold on every row, sorted by sample id (each
    with its ``row_count``), and the sample ids left out. One query."""
    candidates = list(
        selection.annotate(
            row_count=Count("rows", distinct=True), gold_count=Count("rows__gold", distinct=True)
        ).order_by("sample_id")
    )
    complete = [c for c in candidates if c.row_count and c.row_count == c.gold_count]
    skipped = [c.sample_id for c in candidates if not (c.row_count and c.row_count == c.gold_count)]
    return complete, skipped


def read_gold(complete: list[Clip]) -> list[dict]:
    """The release dicts of ``complete`` (from ``complete_clips``), in that order; rows
    through the exporter's ``release_row``, so key order is what import preserved. One query.
    """
    by_clip: dict[int, list[dict]] = {c.pk: [] for c in complete}
    gold = (
        Gold.objects.filter(row__clip_id__in=list(by_clip))
        .order_by("row__clip_id", "row__row_index")
        .values_list(
            *ROW_FIELDS,
            "content",
            "layout",
        )
    )
    for clip_id, start, end, speaker, dialogue, index, content, layout in gold.iterator(chunk_size=2000):
        row = row_skeleton(start, end, speaker, dialogue, index)
        by_clip[clip_id].append(release_row(row, content, layout))
    return [release_clip(c, by_clip[c.pk]) for c in complete]


def _data_as_of(clip_pks: list[int]) -> str:
    """The date (UTC) of the latest gold change among the released rows."""
    latest = Gold.objects.filter(row__clip_id__in=clip_pks).aggregate(latest=Max("updated_at"))["latest"]
    return latest.date().isoformat() if latest else "1970-01-01"


def plan_release(
    project: Project,
    *,
    seed: int,
    ratios=(0.7, 0.1, 0.2),
    clip_ids: list[str] | None = None,
    group_map: dict[str, str] | None = None,
) -> tuple[list[Clip], list[str], SplitPlan]:
    """(the clips a freeze would take, each with its ``row_count``; the releasable
    sample ids left out for lack of gold; their relationship groups and splits).
    Reads no gold: cheap enough for a preview.

    ``clip_ids`` takes a recorded clip list instead of the releasable clips.
    """
    if group_map:
        known = set(project.clips.filter(sample_id__in=list(group_map)).values_list("sample_id", flat=True))
        unknown = sorted(set(group_map) - known)
        if unknown:
            raise FreezeError(
                f"the group map names {len(unknown)} clips this project does not have: {', '.join(unknown[:10])}"
            )
    selection = project.clips.filter(sample_id__in=clip_ids) if clip_ids is not None else releasable_clips(project)
    complete, skipped = complete_clips(selection)
    if clip_ids is not None and len(complete) != len(clip_ids):
        missing = sorted(set(clip_ids) - {c.sample_id for c in complete})
        raise FreezeError(f"{len(missing)} recorded clips no longer exist or lack gold: {', '.join(missing[:10])}")
    if not complete:
        raise NothingToRelease(
            f"project {project.slug} has no adjudicated clip with gold on every row; nothing to release", skipped
        )
    infos = [ClipInfo(c.sample_id, c.scenario, c.row_count, tuple(c.participants)) for c in complete]
    return complete, skipped, plan_splits(infos, seed=seed, ratios=ratios, group_map=group_map)


@dataclass(frozen=True)
class ReleasePlan:
    """What a release is built from, decided before any gold is read: by ``freeze`` from the project as it is,
    by ``reproduce`` from what a release recorded. The build's steps read it and nothing else of the request.

    ``data_as_of``, ``provenance`` and ``judgements`` are None for a new release (read from the database by
    ``database_facts`` and ``judgements_used``); a reproduction gives the recorded ones (``judgements``:
    ``JUDGEMENTS_NOT_RECORDED`` for a release that recorded none).
    """

    project: Project
    version: str
    seed: int
    clips: list[Clip]  # the clips released, sorted by sample id, each with its ``row_count``
    skipped: list[str]  # releasable clips left out because some row has no gold
    splits: SplitPlan
    group_map: dict[str, str] | None
    accepted: list[str]  # scenarios the lead let go without every split
    profile: TaskProfile
    params: object  # the profile's parameters
    figure_style: int
    guidance: object  # ``codebook.selectors.release_guidance``'s choice: CURRENT, NOT_RECORDED or a version
    card_template: int
    data_as_of: str | None = None
    provenance: dict | None = None
    judgements: dict | str | None = None  # the judgements of meaning the free-text validity reads (``judgement_set``)

    @property
    def clip_pks(self) -> list[int]:
        return [c.pk for c in self.clips]


def plan_build(
    project: Project,
    *,
    version: str,
    seed: int,
    ratios=(0.7, 0.1, 0.2),
    group_map: dict[str, str] | None = None,
    accept_incomplete=(),
    clip_ids: list[str] | None = None,
    data_as_of: str | None = None,
    params=None,
    task_profile: str | None = None,
    figure_style: int = FIGURE_STYLE,
    provenance: dict | None = None,
    judgements: dict | str | None = None,
    confirmed: str | None = None,
    guidance=CURRENT_GUIDANCE,
    card_template: int = CARD_TEMPLATE,
) -> ReleasePlan:
    """The plan of a release: its clips and splits (``plan_release``) and the inputs it is built with.

    ``group_map`` is the lead's clip → group map (``groups``); a scenario whose
    groups cannot reach every split stops the freeze (``FreezeError`` naming it)
    unless it is in ``accept_incomplete``. ``clip_ids`` rebuilds a recorded clip
    list instead of selecting the releasable clips; ``data_as_of`` replaces the
    date read from the gold, ``provenance`` the facts read from the database and
    ``judgements`` the judgements of meaning read now (all three as a release recorded them, to reproduce it;
    ``judgements``: ``JUDGEMENTS_NOT_RECORDED`` for a release that recorded none); ``guidance`` names the project
    guidance version the card ships (``codebook.selectors.release_guidance``: the one in
    force, by default). ``task_profile`` names the rules that build and score the task instances
    (``tasks.profiles``: ``rescue-v1`` by default); ``params`` are that profile's parameters (its defaults
    when None). ``card_template`` is the card template version the manifest records (a
    reproduction records the release's own; the card is always written by this platform's templates).
    ``confirmed`` is the digest of the preview the lead confirmed: the plan must still have it.
    """
    check_version(version)
    profile = profile_named(task_profile)
    ratios = parse_ratios(ratios)
    complete, skipped, plan = plan_release(project, seed=seed, ratios=ratios, clip_ids=clip_ids, group_map=group_map)
    refusal = plan.refusal(accept_incomplete)
    if refusal:
        raise FreezeError(f"release {version} not frozen: {refusal}")
    if confirmed is not None:
        # Checked again here, where the freeze is planned for good: a clip adjudicated after the job was
        # queued would otherwise slip into a release the lead confirmed without it.
        if confirmed != decision_digest(plan, seed=seed, group_map=group_map or {}, accepted=accept_incomplete):
            raise FreezeError(
                f"release {version} not frozen: the releasable clips or their groups changed since the preview you "
                "confirmed; look at the preview again"
            )
    return ReleasePlan(
        project=project,
        version=version,
        seed=seed,
        clips=complete,
        skipped=skipped,
        splits=plan,
        group_map=group_map,
        accepted=sorted(set(plan.incomplete) & set(accept_incomplete)),
        profile=profile,
        params=profile.parameters if params is None else params,
        figure_style=figure_style,
        guidance=guidance,
        card_template=card_template,
        data_as_of=data_as_of,
        provenance=provenance,
        judgements=judgements,
    )


def build_release(project: Project, *, progress: Progress | None = None, **decisions) -> BuiltRelease:
    """Every file of the release, as bytes, with the manifest. Writes nothing. ``decisions``: ``plan_build``'s."""
    started = time.perf_counter()
    return build(plan_build(project, **decisions), progress=progress, started=started)


def profile_named(name: str | None) -> TaskProfile:
    try:
        return get_profile(name)
    except UnknownProfile as exc:
        raise FreezeError(str(exc)) from None


@contextmanager
def _gc_paused():
    """The cyclic garbage collector pauses while a release is built: the rows and instances
    it holds are millions of live objects at ten times the public release's size, and each
    full pass over them took seconds; nothing built here forms cycles that must be freed early."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Stages:
    """Each stage's seconds (from the end of the one before; the first from ``started``), reported to ``progress``."""

    def __init__(self, started: float, progress: Progress | None):
        self.timings: dict[str, float] = {}
        self._last = started
        self._progress = progress

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round(now - self._last, 4)
        self._last = now
        if self._progress:
            self._progress(STAGES.index(name) + 1, len(STAGES), name)


def build(plan: ReleasePlan, *, progress: Progress | None = None, started: float | None = None) -> BuiltRelease:
    """The release ``plan`` describes, one step after another (``STAGES``). Writes nothing.

    ``started``: when the planning began (the first stage's time counts from it; from now when not given).
    """
    stages = _Stages(time.perf_counter() if started is None else started, progress)
    with _gc_paused():
        clips = read_gold(plan.clips)
        stages.done("collect")
        stages.done("splits")  # decided in the plan, before any gold was read

        files, digests, lines = data_files(clips, plan.splits.splits)
        stages.done("data")

        instances, drafting = task_files(plan, clips, files)
        stages.done("tasks")

        data_date, provenance = database_facts(plan)
        judgements = judgements_used(plan)
        inputs, guidance_shipped = recorded_inputs(plan, data_date, judgements)
        stats = stats_file(plan, clips, instances, drafting, provenance, files)
        del drafting
        stages.done("stats")

        # What the later stages need of the clips (they are in the files now); the rows and task instances are let go
        # before the agreement reports read every revision: at 10x they are gigabytes the reports would work beside.
        released = [
            (c["sample_id"], c["scenario"], len(c["rows"]), sha256(memoryview(line)[:-1]))
            for c, line in zip(clips, lines)
        ]
        del clips, lines, instances
        agreement = agreement_files(plan, judgements, files)
        stages.done("agreement")

        files.update(release_figures(stats, figure_style=plan.figure_style))
        stages.done("figures")

        head = manifest_head(plan, inputs)
        files["README.md"] = card_file(head, stats, agreement, files, guidance_shipped)
        stages.done("card")

        files["croissant.json"] = croissant_file(plan, files, digests, stats, inputs, provenance)
        stages.done("croissant")

        manifest = release_manifest(plan, head, released, stats, files, digests)
        files[MANIFEST] = dumps_json(manifest)
        stages.done("manifest")
    clip_ids = [sample_id for sample_id, *_ in released]
    rows = sum(rows for _, _, rows, _ in released)
    return BuiltRelease(files, manifest, clip_ids, plan.skipped, rows, stages.timings, digests, provenance)


def data_files(clips: list[dict], splits: dict[str, str]) -> tuple[dict[str, bytes], Digests, list[bytes]]:
    """(``data/``'s files: every clip, each split's, the row records; their digests, taken when first asked for,
    of every file later added to the same dict; each clip's JSONL line, encoded once for every file and digest)."""
    lines = [(dumps_clip(c) + "\n").encode("utf-8") for c in clips]
    files: dict[str, bytes] = {"data/all.jsonl": b"".join(lines)}
    digests = Digests(files)
    for split in SPLITS:
        files[f"data/{split}.jsonl"] = b"".join(
            line for c, line in zip(clips, lines) if splits[c["sample_id"]] == split
        )
    files.update(row_record_files(clips, splits))
    return files, digests, lines


def task_files(plan: ReleasePlan, clips: list[dict], files: dict[str, bytes]) -> tuple[dict, dict | None]:
    """Writes ``tasks/<task>/<split>.jsonl`` (and the drafting model's predictions) into ``files``; returns
    (the task instances, the drafting model's system and predictions, or None when no row was drafted)."""
    project, splits = plan.project, plan.splits.splits
    instances = build_instances(
        clips,
        splits,
        seed=plan.seed,
        taxonomy_version=project.taxonomy_version,
        params=plan.params,
        profile=plan.profile,
    )
    writer = InstanceWriter({c["sample_id"]: c for c in clips}, plan.profile.context_keys)
    for task in ALL_TASKS:
        for split in SPLITS:
            files[f"tasks/{task}/{split}.jsonl"] = writer.jsonl(i for i in instances[task] if i.split == split)
    # The drafting model as one more system: its drafts' answers to the same instances, scored in stats.json.
    draft_clips, drafting_system = read_drafts(plan.clips, clips)
    if not drafting_system["rows_drafted"]:
        return instances, None
    predictions = drafting_predictions(
        instances,
        draft_clips,
        taxonomy_version=project.taxonomy_version,
        seed=plan.seed,
        params=plan.params,
        profile=plan.profile,
    )
    files.update(prediction_files(instances, predictions))
    return instances, {"system": drafting_system, "predictions": predictions}


def database_facts(plan: ReleasePlan) -> tuple[str, dict]:
    """(the release's data date, its provenance): what the database alone tells, unless the plan has them recorded."""
    provenance = plan.provenance
    if provenance is None:
        from ..record.release import qualification_facts  # the coders' qualification at freeze time (contract C3)

        provenance = {
            **collect_provenance(plan.project, plan.clip_pks),
            "record": qualification_facts(plan.project, plan.clip_pks),
        }
    return plan.data_as_of or _data_as_of(plan.clip_pks), provenance


def judgements_used(plan: ReleasePlan) -> dict | None:
    """The judgements of meaning the free-text validity reads: those recorded, or every one made so far (None for a
    release that recorded none: it reads every judgement made so far, as it did when frozen)."""
    if plan.judgements == JUDGEMENTS_NOT_RECORDED:
        return None
    return recorded_judgement_set(plan.judgements) if plan.judgements is not None else judgement_set(plan.project)


def recorded_inputs(plan: ReleasePlan, data_date: str, judgements: dict | None) -> tuple[dict, object]:
    """(the manifest's ``inputs``: everything the release was built from; the guidance the card ships)."""
    project = plan.project
    inputs = {
        "project": project.slug,
        "seed": plan.seed,
        "split_ratios": dict(zip(SPLITS, plan.splits.ratios)),
        "split_unit": (
            "relationship group (the sample id without its last path segment; clips of one scenario that share a "
            "participant joined; the lead's clip-to-group map where given), stratified by scenario, balanced by rows"
        ),
        "taxonomy_version": project.taxonomy_version,
        "rule_version": RULE_VERSION,
        "task_profile": plan.profile.name,
        "rule_parameters": plan.params.as_dict(),
        "source": "gold",
        "clip_selection": "clips in state adjudicated or released (not discarded) with gold on every row",
        "data_as_of": data_date,
        # PNG bytes are reproducible with the same plotting library only.
        "figures_drawn_with": f"matplotlib {package_version('matplotlib')}",
    }
    if plan.figure_style != 1:  # releases drawn before styles were numbered record none
        inputs["figure_style"] = plan.figure_style
    if plan.card_template != 1:  # releases whose card was built from strings record none
        inputs["card_template"] = plan.card_template
    if plan.group_map:
        inputs["group_map"] = dict(sorted(plan.group_map.items()))
    if plan.accepted:  # scenarios the lead let go without every split (the card says so first)
        inputs["accepted_incomplete"] = plan.accepted
    guidance_record, guidance_shipped = release_guidance(project, plan.clip_pks, plan.guidance)
    if guidance_record is not None:  # releases frozen before guidance was recorded have none
        inputs["guidance"] = guidance_record
    if judgements is not None:  # releases frozen before the judgements were recorded have none
        inputs["meaning_judgements"] = judgements
    return inputs, guidance_shipped


def stats_file(
    plan: ReleasePlan,
    clips: list[dict],
    instances: dict,
    drafting: dict | None,
    provenance: dict,
    files: dict[str, bytes],
) -> dict:
    """Writes ``stats.json`` into ``files``; returns the statistics (the figures, card and croissant read them)."""
    from ..record.release import coders_record  # the coders' record, anonymised (contract C3)

    project = plan.project
    stats = compute_stats(
        clips,
        plan.splits.splits,
        instances,
        groups=plan.splits.group_of,
        taxonomy_version=project.taxonomy_version,
        provenance=provenance,
        drafting_model=drafting,
        task_profile=plan.profile.name,
    )
    # Releases frozen before the qualification facts were recorded read them from the database as it is now.
    stats["coders"] = coders_record(project, plan.clip_pks, facts=provenance.get("record"))
    files["stats.json"] = dumps_json(stats)
    return stats


def agreement_files(plan: ReleasePlan, judgements: dict | None, files: dict[str, bytes]) -> dict:
    """Writes ``agreement.json`` into ``files`` (its validity from ``judgements``: every judgement, verdict and the
    latest judge run when None); returns it read back (for the card)."""
    files["agreement.json"] = agreement_file(plan.project, [c.sample_id for c in plan.clips], judgements=judgements)
    return json.loads(files["agreement.json"])


def manifest_head(plan: ReleasePlan, inputs: dict) -> dict:
    """The manifest but the clip list and the file digests: what the card reads of it."""
    project = plan.project
    return {
        "format": FORMAT,
        "release": {"project": project.slug, "name": project.name, "version": plan.version},
        "inputs": inputs,
        "task_profile": plan.profile.manifest_entry(),
    }


def card_file(head: dict, stats: dict, agreement: dict, files: dict[str, bytes], guidance_shipped) -> bytes:
    """``README.md``, the dataset card."""
    return render_card(
        card_facts(manifest=head, stats=stats, agreement=agreement, files=files, guidance=guidance_shipped)
    ).encode("utf-8")


def croissant_file(
    plan: ReleasePlan, files: dict[str, bytes], digests: Digests, stats: dict, inputs: dict, provenance: dict
) -> bytes:
    """``croissant.json``: the Croissant metadata of every file written before it, with its Responsible AI fields."""
    project, version = plan.project, plan.version
    return dumps_json(
        build_croissant(
            files=files,
            name=f"{project.name} {version}",
            description=croissant_description(stats),
            version=version,
            license_text=LICENCE_TEXT,
            date_published=inputs["data_as_of"],
            cite_as=_citation(project, version, inputs["data_as_of"]),
            digests=digests,
            rai={
                **rai_provenance(provenance),
                "dataUseCases": (
                    "Benchmarking models on relational understanding and therapist-support decisions in "
                    "multi-party therapy dialogue."
                ),
                "dataLimitations": croissant_limitations(stats),
                "personalSensitiveInformation": (
                    "Therapy dialogue about relationships and emotions; do not use to "
                    "identify or assess the people in the clips."
                ),
            },
        )
    )


def release_manifest(
    plan: ReleasePlan, head: dict, released: list[tuple], stats: dict, files: dict[str, bytes], digests: Digests
) -> dict:
    """The manifest: ``head``, every clip (``released``: sample id, scenario, rows, digest) with its group and split,
    the task counts and every file's digest."""
    return {
        **head,
        "clips": [
            {
                "sample_id": sample_id,
                "scenario": scenario,
                "group": plan.splits.group_of[sample_id],
                "split": plan.splits.splits[sample_id],
                "rows": rows,
                "sha256": digest,
            }
            for sample_id, scenario, rows, digest in released
        ],
        "tasks": {task: {"rule_version": RULE_VERSION, **stats["tasks"][task]["counts"]} for task in ALL_TASKS},
        "files": file_entries(files, digests),
    }


def _citation(project: Project, version: str, date: str) -> str:
    key = re.sub(r"[^A-Za-z0-9]+", "_", f"{project.slug}_{version}")
    return (
        f"@misc{{{key}, title = {{{project.name}, release {version}}}, year = {{{date[:4]}}}, "
        f"note = {{Frozen benchmark release {version}}}}}"
    )


def freeze(
    project: Project,
    *,
    version: str,
    seed: int,
    ratios=(0.7, 0.1, 0.2),
    out_dir: str | Path,
    user=None,
    group_map: dict[str, str] | None = None,
    accept_incomplete=(),
    params=None,
    task_profile: str | None = None,
    progress: Progress | None = None,
    confirmed: str | None = None,
) -> tuple[Release, BuiltRelease]:
    """Build, write (read-only, atomically) and record a new release (``confirmed``: the digest of the
    preview the lead confirmed; the freeze stops if the plan no longer has it)."""
    check_version(version)
    if Release.objects.filter(project=project, version=version).exists():
        raise FreezeError(f"release {version} of {project.slug} already exists; a new version is a new release")
    out_dir = Path(out_dir).resolve()
    if out_dir.exists():
        raise FreezeError(f"{out_dir} already exists; a release folder is never overwritten")
    started = time.perf_counter()
    plan = plan_build(
        project,
        version=version,
        seed=seed,
        ratios=ratios,
        group_map=group_map,
        accept_incomplete=accept_incomplete,
        params=params,
        task_profile=task_profile,
        confirmed=confirmed,
    )
    built = build(plan, progress=progress, started=started)
    written = False
    started = time.perf_counter()
    try:
        with transaction.atomic():
            release = Release.objects.create(
                project=project,
                version=version,
                seed=seed,
                split_ratios=[built.inputs["split_ratios"][s] for s in SPLITS],
                path=str(out_dir),
                manifest=built.manifest,
                # As text, in its own key order: jsonb would reorder the keys the card's sentences follow.
                provenance=json.dumps(built.provenance),
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
            transition_many(
                Clip.objects.filter(project=project, sample_id__in=built.clip_ids, state=ClipState.ADJUDICATED),
                ClipState.RELEASED,
                actor=user if getattr(user, "is_authenticated", False) else None,
                reason=f"frozen in release {version}",
            )
            recorded = time.perf_counter()
            built.timings["record"] = round(recorded - started, 4)
            write_tree(built.files, out_dir)  # last, so that a failed write rolls the record back
            written = True
            built.timings["write"] = round(time.perf_counter() - recorded, 4)
    except BaseException:
        if written:  # the commit itself failed after the folder was written
            remove_tree(out_dir)
        raise
    return release, built


def recorded_figure_style(inputs: dict) -> int:
    """The drawing style a release's figures were made in (releases made before styles were numbered record none: 1)."""
    style = inputs.get("figure_style", 1)
    if style not in FIGURE_STYLES:
        raise FreezeError(
            f"the release's figures were drawn in style {style}; this platform draws styles "
            f"{', '.join(map(str, FIGURE_STYLES))}"
        )
    return style


def recorded_provenance(release: Release) -> tuple[dict | None, str]:
    """(the database facts ``release`` was frozen with, a note when they could not be had).

    They describe the project at freeze time (its imports, assignments, clips not
    released): later work in the project must not change a reproduced card. Releases
    frozen before the record was kept have them in their folder's ``stats.json``,
    trusted only when its bytes match the manifest; failing both, they are read anew.
    """
    if release.provenance:
        return json.loads(release.provenance), ""
    stats = Path(release.path) / "stats.json"
    entry = release.manifest.get("files", {}).get("stats.json")
    if entry and stats.is_file():
        data = stats.read_bytes()
        if sha256(data) == entry["sha256"]:
            return json.loads(data)["provenance"], ""
    return None, (
        f"the database facts of release {release.version} (its provenance) were not recorded and its stats.json could "
        "not be read intact: they were read from the database as it is now, so the card may differ"
    )


def recorded_plan(release: Release) -> tuple[ReleasePlan, str]:
    """(the plan ``release`` was built from, read from its record; a note when its provenance could not be had)."""
    inputs = release.manifest["inputs"]
    profile = recorded_profile(release.manifest)  # releases frozen before profiles existed: platform-v1
    params = profile.read_parameters(inputs["rule_parameters"])
    if inputs["taxonomy_version"] != release.project.taxonomy_version:
        raise FreezeError(
            f"release {release.version} used taxonomy {inputs['taxonomy_version']}; the project now uses "
            f"{release.project.taxonomy_version}"
        )
    if inputs["rule_version"] != RULE_VERSION:
        raise FreezeError(
            f"release {release.version} was built with task rules {inputs['rule_version']}; this platform has "
            f"{RULE_VERSION}"
        )
    provenance, provenance_note = recorded_provenance(release)
    plan = plan_build(
        release.project,
        version=release.version,
        seed=release.seed,
        ratios=release.split_ratios,  # a list: the manifest's dict may come back from jsonb in another key order
        group_map=inputs.get("group_map"),
        accept_incomplete=inputs.get("accepted_incomplete", ()),
        clip_ids=[c["sample_id"] for c in release.manifest["clips"]],
        data_as_of=inputs["data_as_of"],
        params=params,
        task_profile=profile.name,
        figure_style=recorded_figure_style(inputs),
        provenance=provenance,
        judgements=inputs.get("meaning_judgements", JUDGEMENTS_NOT_RECORDED),
        guidance=inputs["guidance"]["version"] if "guidance" in inputs else GUIDANCE_NOT_RECORDED,
        card_template=recorded_card_template(inputs),
    )
    return plan, provenance_note


def reproduce(
    release: Release, out_dir: str | Path, *, progress: Progress | None = None
) -> tuple[BuiltRelease, Verification]:
    """Rebuild ``release`` from its recorded inputs and clip list into ``out_dir``
    (not recorded), and compare every file with the recorded manifest."""
    started = time.perf_counter()
    plan, provenance_note = recorded_plan(release)
    built = build(plan, progress=progress, started=started)
    inputs = release.manifest["inputs"]
    # A card written by an older template cannot be rewritten byte for byte: README.md and croissant.json
    # (which holds README.md's digest) are regenerated by this platform's template and said to be so; every
    # data file is still compared byte for byte, and the manifest apart from those two entries.
    regenerated = CARD_FILES if recorded_card_template(inputs) != CARD_TEMPLATE else ()
    writing = time.perf_counter()
    write_tree(built.files, Path(out_dir))
    built.timings["write"] = round(time.perf_counter() - writing, 4)
    result = Verification(Path(out_dir))
    if provenance_note:
        result.problems.append(provenance_note)
    result.problems.extend(judgement_set_changes(release.project, inputs.get("meaning_judgements")))
    recorded = release.manifest.get("files", {})
    for rel in sorted((set(recorded) | set(built.files)) - {MANIFEST}):
        if rel not in built.files:
            result.missing.append(rel)
        elif rel not in recorded:
            result.extra.append(rel)
        else:
            result.checked += 1
            if built.digests[rel] != recorded[rel]["sha256"]:
                if rel in regenerated:
                    result.regenerated.append(rel)
                else:
                    result.changed.append(rel)
    if result.regenerated:
        result.notes.append(
            f"{' and '.join(result.regenerated)} regenerated by card template {CARD_TEMPLATE}; the release's were "
            "written by "
            f"card template {recorded_card_template(inputs)} and are not compared byte for byte (the data files are)"
        )
    if _without(built.manifest, regenerated) != _without(release.manifest, regenerated):
        result.problems.append(f"{MANIFEST} differs from the release's database record")
    original = Path(release.path) / MANIFEST
    if original.is_file():
        same = (
            original.read_bytes() == built.files[MANIFEST]
            if not regenerated
            else _without(json.loads(original.read_bytes()), regenerated) == _without(built.manifest, regenerated)
        )
        if not same:
            result.problems.append(f"{MANIFEST} differs from the one in {release.path}")
    return built, result


CARD_FILES = ("README.md", "croissant.json")


def recorded_card_template(inputs: dict) -> int:
    """The card template version a release's card was written by (releases that record none: 1, the string-built
    card)."""
    return inputs.get("card_template", 1)


def _without(manifest: dict, paths) -> dict:
    """``manifest`` without the file entries of ``paths`` (JSON-equal copies compare equal)."""
    if not paths:
        return manifest
    return {**manifest, "files": {k: v for k, v in manifest.get("files", {}).items() if k not in paths}}
