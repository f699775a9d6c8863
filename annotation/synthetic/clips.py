"""Pure generation: from a seed, clips with skeleton rows, an LLM-like draft, one revision per annotator with seeded
disagreement, and the gold a per-field majority of those revisions gives. Nothing here touches the database."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from dataclasses import dataclass

from ..groups import path_group
from ..schema import ANNOTATION_KEYS, CLIP_KEYS, CONVENTION_ROW_KEYS, RELATION_KEYS, check_clip
from ..taxonomy import THERAPIST, Taxonomy, load_taxonomy
from .shape import (
    _UNLISTED,
    ATTITUDES,
    BACKGROUND,
    COUPLE_GROUP_SIZE,
    COUPLE_ROWS,
    EMOTIONS,
    FACES,
    FAMILY_ROWS,
    FAMILY_SIZE_WEIGHTS,
    FIRST_NAMES,
    INTENSITY_WEIGHTS,
    KEEP_RANGE,
    MIN_GROUPS_PER_SCENARIO,
    MOVES,
    NO_PATTERN_REASONS,
    OBJECTS,
    OPENERS,
    POSTURES,
    QUESTIONS,
    REASONS,
    RELATION_KEEP_SEGMENT,
    RELATION_STATE,
    RELEASE_CLIPS,
    RELEASE_FAMILY_CLIPS,
    RELEASE_ROWS,
    SAME_SPEAKER_AGAIN,
    SELF_ACTS,
    SHARED_FIX,
    SPARSE_RATES,
    STRATEGY_MOVES,
    STRATEGY_SHARE,
    SUBJECTS,
    TAILS,
    THERAPIST_SHARE,
    TONES,
    VERBS,
    VIEWS,
    WEIGHTS,
)


class SyntheticError(Exception):
    """The generator cannot carry out the request (message for the user)."""


# --- pure generation -------------------------------------------------------------


@dataclass
class SyntheticClip:
    """One generated clip: skeleton rows and the annotation content per source.

    ``draft``, ``gold`` and each entry of ``revisions`` hold one content dict per
    row (keys in ``schema.ANNOTATION_KEYS`` order). Nested values are shared
    between sources where an annotator kept the draft: treat them as read-only.
    """

    sample_id: str
    scenario: str
    participants: list[str]
    skeletons: list[dict]
    draft: list[dict]
    revisions: list[list[dict]]
    gold: list[dict]

    @property
    def group(self) -> str:
        return path_group(self.sample_id)

    @property
    def source_file(self) -> str:
        return f"synthetic/{self.sample_id}.json"

    @property
    def duration(self) -> float:
        return self.skeletons[-1]["end_time"]

    def document(self, contents: list[dict]) -> dict:
        """The clip in the release format (what export writes), rows in the regular key order."""
        rows = [_ordered({**skel, **content}) for skel, content in zip(self.skeletons, contents)]
        values = {
            "sample_id": self.sample_id,
            "scenario": self.scenario,
            "participants": list(self.participants),
            "source_file": self.source_file,
            "rows": rows,
        }
        return {k: values[k] for k in CLIP_KEYS}

    def documents(self) -> dict[str, dict]:
        """Every source as a release clip: ``draft``, ``gold``, ``revision1`` ..."""
        out = {"draft": self.document(self.draft), "gold": self.document(self.gold)}
        out.update((f"revision{k}", self.document(rev)) for k, rev in enumerate(self.revisions, start=1))
        return out

    @property
    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of the generated clip (the draft document)."""
        canonical = json.dumps(self.document(self.draft), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _ordered(row: dict) -> dict:
    return {k: row[k] for k in CONVENTION_ROW_KEYS}


def family_clip_count(clips: int) -> int:
    """Family clips among ``clips``: the release's share, at least one from two clips on
    and three (three families) from four times that on."""
    n = round(clips * RELEASE_FAMILY_CLIPS / RELEASE_CLIPS)
    if clips >= 4 * MIN_GROUPS_PER_SCENARIO:
        return max(n, MIN_GROUPS_PER_SCENARIO)
    return max(n, 1) if clips >= 2 else n


class _Names:
    """Participant names, never the same twice within a scenario: first the plain
    first names, then each with an initial ("Ada B."), in an order drawn from ``rng``."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.tiers = [[f"{name} {letter}." for name in FIRST_NAMES] for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
        self.free: list[str] = list(FIRST_NAMES)
        rng.shuffle(self.free)

    def take(self, n: int) -> list[str]:
        while len(self.free) < n:
            if not self.tiers:
                raise SyntheticError("too many participants for the generator's name lists")
            tier = self.tiers.pop(0)
            self.rng.shuffle(tier)
            self.free += tier
        taken, self.free = self.free[:n], self.free[n:]
        return taken


def _slug(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def label_weights(taxonomy: Taxonomy, kind: str) -> tuple[list[str], list[float]]:
    """Labels of ``taxonomy`` (``relation``, ``strategy`` or ``utterance``) with their weights."""
    labels = {
        "relation": [x.label for x in taxonomy.relation_patterns],
        "strategy": [x.label for x in taxonomy.support_strategies],
        "utterance": [x.label for x in taxonomy.utterance_types],
    }[kind]
    table = WEIGHTS["utterance"] if kind == "utterance" else WEIGHTS[taxonomy.scenario][kind]
    return labels, [table.get(label, _UNLISTED) for label in labels]


def _weighted(rng: random.Random, choices: tuple[list, list]):
    values, weights = choices
    return rng.choices(values, weights)[0]


def _weighted_other(rng: random.Random, choices: tuple[list, list], current):
    pairs = [(v, w) for v, w in zip(*choices) if v != current]
    return rng.choices([p[0] for p in pairs], [p[1] for p in pairs])[0]


def _group_sizes(rng: random.Random, total: int, low: int, high: int) -> list[int]:
    sizes: list[int] = []
    while sum(sizes) < total:
        sizes.append(min(rng.randint(low, high), total - sum(sizes)))
    if len(sizes) > 1 and sizes[-1] < low:
        # Spread a short tail over the other groups rather than leave a tiny one.
        tail = sizes.pop()
        for i in range(tail):
            room = [j for j, n in enumerate(sizes) if n < high]
            if not room:
                sizes.append(tail - i)
                break
            sizes[room[i % len(room)]] += 1
    return sizes


def _row_counts(rng: random.Random, scenarios: list[str]) -> list[int]:
    """Rows per clip; the total is scaled from the release (7,079 rows for 191 clips)."""
    bounds = {"couple": COUPLE_ROWS, "family": FAMILY_ROWS}
    counts = []
    for scenario in scenarios:
        mean, sd, low, high = bounds[scenario]
        counts.append(min(high, max(low, round(rng.gauss(mean, sd)))))
    target = round(len(scenarios) * RELEASE_ROWS / RELEASE_CLIPS)
    order = list(range(len(counts)))
    rng.shuffle(order)
    for _ in range(4 * max(1, abs(target - sum(counts)))):
        diff = target - sum(counts)
        if not diff:
            break
        step = 1 if diff > 0 else -1
        moved = False
        for i in order:
            low, high = bounds[scenarios[i]][2:]
            if low <= counts[i] + step <= high:
                counts[i] += step
                moved = True
                if sum(counts) == target:
                    break
        if not moved:
            break
    return counts


@dataclass
class _Plan:
    sample_id: str
    scenario: str
    participants: list[str]
    rows: int


def _plan(clips: int, seed: int) -> list[_Plan]:
    """Groups, participants and row counts of every clip."""
    rng = random.Random(f"{seed}/plan")
    n_family = family_clip_count(clips)
    n_couple = clips - n_family
    # Clips per couple: the release's spread, narrowed so that a small project still has three couples.
    high = min(COUPLE_GROUP_SIZE[1], max(1, n_couple // MIN_GROUPS_PER_SCENARIO))
    low = min(COUPLE_GROUP_SIZE[0], high)
    plans = []
    couple_names = _Names(rng)
    for g, size in enumerate(_group_sizes(rng, n_couple, low, high) if n_couple else [], start=1):
        members = couple_names.take(2)
        group = f"syn{g:02d}_{_slug(members[0])}_and_{_slug(members[1])}"
        season, episode, segment = rng.randint(1, 4), rng.randint(1, 3), 0
        for j in range(1, size + 1):
            order = list(members)
            rng.shuffle(order)  # the release does not keep participant order within a group
            step = rng.randint(0, 2)
            episode, segment = (episode + step, rng.randint(1, 4)) if step else (episode, segment + rng.randint(1, 3))
            clip_name = f"{j:03d}_syn_s{season:02d}e{episode:02d}_segment{segment:02d}"
            plans.append(_Plan(f"{group}/{clip_name}", "couple", order, 0))
    family_names = _Names(rng)
    size_weights = (list(FAMILY_SIZE_WEIGHTS), list(FAMILY_SIZE_WEIGHTS.values()))
    for g in range(1, n_family + 1):  # one merged clip per family, as in the release
        plans.append(
            _Plan(f"family_therapy/{g:03d}/merged", "family", family_names.take(_weighted(rng, size_weights)), 0)
        )
    for p, n in zip(plans, _row_counts(rng, [p.scenario for p in plans])):
        p.rows = n
    return plans


# Field units that vary independently between annotators. "relation" is the
# (label, reason, evidence rows) triple; the relation_cycle_* keys mirror it.
UNITS = (*(k for k in ANNOTATION_KEYS if k not in RELATION_KEYS), "relation")


class _ClipWriter:
    """Draws skeleton and field values for one clip."""

    def __init__(self, plan: _Plan, taxonomy: Taxonomy, rng: random.Random):
        self.plan, self.tax, self.rng = plan, taxonomy, rng
        self.people = list(plan.participants)
        self.relations = label_weights(taxonomy, "relation")
        self.strategies = label_weights(taxonomy, "strategy")
        self.utterances = label_weights(taxonomy, "utterance")
        self.segment_label = _weighted(rng, self.relations)
        self.force_one = False  # sparse lists: draw exactly one entry (for alternatives)
        # Some members talk more than others.
        self.speaker_weights = [1.0 / (1 + 0.4 * i) for i in range(len(self.people))]

    # skeleton
    def skeletons(self) -> list[dict]:
        rng, rows, t, speaker = self.rng, [], 0.0, None
        client_share = 1 - THERAPIST_SHARE
        total = sum(self.speaker_weights)
        speakers = [THERAPIST, *self.people]
        weights = [THERAPIST_SHARE, *(client_share * w / total for w in self.speaker_weights)]
        for i in range(1, self.plan.rows + 1):
            if speaker is None or rng.random() >= SAME_SPEAKER_AGAIN:
                speaker = rng.choices(speakers, weights)[0]
            start = round(t, 2)
            end = round(start + rng.uniform(2.0, 6.0), 2)
            gap = 0.0 if rng.random() < 0.35 else min(rng.expovariate(1 / 0.6), 2.5)
            t = end + gap
            rows.append(
                {
                    "start_time": start,
                    "end_time": end,
                    "primary_speaker": speaker,
                    "dialogue_cleaned": self.dialogue(speaker),
                    "row_index": i,
                }
            )
        return rows

    def dialogue(self, speaker: str) -> str:
        rng = self.rng
        if speaker == THERAPIST:
            return rng.choice(QUESTIONS).format(name=rng.choice(self.people), obj=rng.choice(OBJECTS))
        sentences = []
        for _ in range(rng.choice((1, 1, 2))):
            opener = rng.choice(OPENERS)
            words = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
            sentence = f"{opener} {words}" if opener else words[0].upper() + words[1:]
            sentences.append(sentence + rng.choice(TAILS))
        return " ".join(sentences)

    # helpers
    def others(self, person: str) -> list[str]:
        return [p for p in self.people if p != person]

    def someone_else(self, person: str, *, therapist: bool = True) -> str:
        pool = self.others(person) + ([THERAPIST] if therapist and person != THERAPIST else [])
        return self.rng.choice(pool)

    def present(self, speaker: str) -> str:
        """A person a cue is about: mostly the speaker."""
        return speaker if self.rng.random() < 0.85 else self.someone_else(speaker)

    def sparse(self, name: str, make) -> list:
        rate, second = SPARSE_RATES[name]
        if self.force_one:
            return [make()]
        if self.rng.random() >= rate:
            return []
        return [make(), make()] if self.rng.random() < second else [make()]

    # field values (a fresh draw)
    def value(self, unit: str, skel: dict):
        return getattr(self, f"_v_{unit}")(skel["primary_speaker"], skel["row_index"])

    def _v_target(self, speaker, _):
        rng = self.rng
        if speaker == THERAPIST:
            roll = rng.random()
            if roll < 0.17:
                return [self.tax.group_label]
            if roll < 0.20 and len(self.people) > 1:
                return rng.sample(self.people, 2)
            return [rng.choice(self.people)]
        return [THERAPIST] if rng.random() < 0.8 else [rng.choice(self.others(speaker))]

    def _v_utterance_type(self, speaker, _):
        return "" if speaker == THERAPIST else _weighted(self.rng, self.utterances)

    def _v_background_dialogue(self, speaker, _):
        def make():
            who = self.someone_else(speaker)
            return {"speaker": who, "target": [speaker], "content": self.rng.choice(BACKGROUND)}

        return self.sparse("background_dialogue", make)

    def _v_tone_of_voice(self, *_):
        a, b = self.rng.sample(TONES, 2)
        return a if self.rng.random() < 0.3 else f"{a} and {b}"

    def _describe(self, name, speaker, words):
        return self.sparse(name, lambda: {"person": self.present(speaker), "description": self.rng.choice(words)})

    def _v_body_posture(self, speaker, _):
        return self._describe("body_posture", speaker, POSTURES)

    def _v_facial_expressions(self, speaker, _):
        return self._describe("facial_expressions", speaker, FACES)

    def _v_self_directed_behavior(self, speaker, _):
        return self._describe("self_directed_behavior", speaker, SELF_ACTS)

    def _v_interaction_behavior(self, speaker, _):
        def make():
            who = self.present(speaker)
            to = self.someone_else(who)
            return {"initiator": who, "target": [to], "description": self.rng.choice(MOVES).format(t=to)}

        return self.sparse("interaction_behavior", make)

    def _v_internal_emotion(self, speaker, _):
        def make():
            who = speaker if speaker != THERAPIST else self.rng.choice(self.people)
            text = self.rng.choice(EMOTIONS).format(obj=self.rng.choice(OBJECTS))
            return {"person": who, "emotion_description": text, "intensity": self.intensity()}

        return self.sparse("internal_emotion", make)

    def intensity(self) -> int:
        return _weighted(self.rng, (list(INTENSITY_WEIGHTS), list(INTENSITY_WEIGHTS.values())))

    def _v_viewpoints_attitudes(self, speaker, _):
        def make():
            src = speaker if speaker != THERAPIST else self.rng.choice(self.people)
            to = self.rng.choice(self.others(src) or [THERAPIST])
            view = self.rng.choice(VIEWS).format(t=to)
            return {"source": src, "target": to, "viewpoint": view, "attitude": self.rng.choice(ATTITUDES)}

        return self.sparse("viewpoints_attitudes", make)

    def _v_support_strategy(self, speaker, _):
        if speaker != THERAPIST or self.rng.random() >= STRATEGY_SHARE:
            return []
        return [self.strategy()]

    def strategy(self, strategy_type: str | None = None) -> dict:
        rng = self.rng
        roll = rng.random()
        if roll < 0.2:
            targets = [self.tax.group_label]
        elif roll < 0.23 and len(self.people) > 1:
            targets = rng.sample(self.people, 2)
        else:
            targets = [rng.choice(self.people)]
        who = self.tax.group_label if targets == [self.tax.group_label] else " and ".join(targets)
        return {
            "provider": THERAPIST,
            "target": targets,
            "strategy_type": strategy_type or _weighted(rng, self.strategies),
            "strategy_content": rng.choice(STRATEGY_MOVES).format(t=who, obj=rng.choice(OBJECTS)),
        }

    def _v_relation(self, speaker, row_index):
        p_null, p_blank = RELATION_STATE["therapist" if speaker == THERAPIST else "client"]
        roll = self.rng.random()
        if roll < p_null:
            return (None, None, [])
        if roll < p_null + p_blank:
            return self.relation("", row_index)
        if self.rng.random() >= RELATION_KEEP_SEGMENT:
            self.segment_label = _weighted(self.rng, self.relations)
        return self.relation(self.segment_label, row_index)

    def relation(self, label: str, row_index: int) -> tuple:
        rng = self.rng
        a, b = rng.sample(self.people, 2) if len(self.people) > 1 else (self.people[0], THERAPIST)
        obj = rng.choice(OBJECTS)
        reason = rng.choice(REASONS if label else NO_PATTERN_REASONS).format(a=a, b=b, obj=obj)
        # Evidence: the row itself and a few rows before it (never past it).
        window = list(range(max(1, row_index - 5), row_index))
        k = min(len(window), rng.randint(1, 4))
        evidence = sorted([*rng.sample(window, k), row_index])
        return (label, reason[0].upper() + reason[1:] + ".", evidence)

    # a plausible different value
    def alternative(self, unit: str, skel: dict, current):
        speaker, row_index = skel["primary_speaker"], skel["row_index"]
        rng = self.rng
        if unit == "utterance_type":
            return current if speaker == THERAPIST else _weighted_other(rng, self.utterances, current)
        if unit == "support_strategy":
            if speaker != THERAPIST:
                return current  # strategies exist on therapist rows only
            if not current:
                return [self.strategy()]
            if rng.random() < 0.35:
                return []
            return [self.strategy(_weighted_other(rng, self.strategies, current[0]["strategy_type"]))]
        if unit == "relation":
            label = current[0]
            options = [None, ""] + [x for x in self.relations[0]]
            weights = [0.3, 0.15] + [0.55 * w for w in self.relations[1]]
            pairs = [(o, w) for o, w in zip(options, weights) if o != label]
            new = rng.choices([p[0] for p in pairs], [p[1] for p in pairs])[0]
            return (None, None, []) if new is None else self.relation(new, row_index)
        if unit == "internal_emotion" and current and rng.random() < 0.6:
            # Most disagreements about emotion are about how strong it is.
            first = dict(current[0])
            first["intensity"] = min(10, max(4, first["intensity"] + rng.choice((-2, -1, 1, 2))))
            if first["intensity"] == current[0]["intensity"]:
                first["intensity"] += -1 if first["intensity"] == 10 else 1
            return [first, *current[1:]]
        if unit in SPARSE_RATES:
            if current and rng.random() < 0.5:
                return []
            for _ in range(10):
                value = self._force_one(unit, skel)
                if value != current:
                    return value
            return [] if current else value
        for _ in range(20):
            value = self.value(unit, skel)
            if value != current:
                return value
        return current  # nothing else is valid here (e.g. a single possible target)

    def _force_one(self, unit: str, skel: dict) -> list:
        self.force_one = True
        try:
            return self.value(unit, skel)
        finally:
            self.force_one = False


def _content(speaker: str, units: dict) -> dict:
    label, reason, evidence = units["relation"]
    therapist = speaker == THERAPIST
    content = {u: units[u] for u in UNITS if u != "relation"}
    content.update(
        relation_pattern=label,
        relation_pattern_reason=reason,
        relation_pattern_evidence_rows=list(evidence),
        # The regular convention: mirrored on therapist rows, blank elsewhere.
        relation_cycle_state=label if therapist else "",
        relation_cycle_reason=reason if therapist else "",
        relation_cycle_evidence_rows=list(evidence) if therapist else [],
    )
    return {k: content[k] for k in ANNOTATION_KEYS}


def _key(value) -> str:
    return json.dumps(value, sort_keys=True)


def keep_probability(annotator: int) -> float:
    """How often annotator ``annotator`` (1-based) keeps a draft field: fixed, in KEEP_RANGE."""
    low, high = KEEP_RANGE
    return round(low + (high - low) * ((annotator * 0.618034) % 1.0), 3)


def build_clips(
    *, clips: int = RELEASE_CLIPS, annotators: int = 3, seed: int = 0, taxonomy_version: str = "1"
) -> list[SyntheticClip]:
    """Generate ``clips`` clips with a draft, ``annotators`` revisions and gold. Pure."""
    if clips < 1:
        raise SyntheticError("generate at least one clip")
    if annotators < 1:
        raise SyntheticError("generate at least one annotator")
    out = []
    keep = [keep_probability(k) for k in range(1, annotators + 1)]
    for n, plan in enumerate(_plan(clips, seed)):
        taxonomy = load_taxonomy(plan.scenario, taxonomy_version)
        writer = _ClipWriter(plan, taxonomy, random.Random(f"{seed}/clip/{n}"))
        skeletons = writer.skeletons()
        draft_units = [{u: writer.value(u, s) for u in UNITS} for s in skeletons]
        # The alternative a careful annotator would pick, one per (row, field).
        writer.rng = random.Random(f"{seed}/fix/{n}")
        fixes = [{u: writer.alternative(u, s, d[u]) for u in UNITS} for s, d in zip(skeletons, draft_units)]
        revision_units = []
        for k in range(annotators):
            rng = random.Random(f"{seed}/annotator/{k + 1}/{n}")
            writer.rng = rng
            units_k = []
            for s, d, fix in zip(skeletons, draft_units, fixes):
                row = {}
                for u in UNITS:
                    if rng.random() < keep[k]:
                        row[u] = d[u]
                    elif rng.random() < SHARED_FIX:
                        row[u] = fix[u]
                    else:
                        row[u] = writer.alternative(u, s, d[u])
                units_k.append(row)
            revision_units.append(units_k)
        gold_units = [_majority([rev[i] for rev in revision_units]) for i in range(len(skeletons))]
        speakers = [s["primary_speaker"] for s in skeletons]
        out.append(
            SyntheticClip(
                sample_id=plan.sample_id,
                scenario=plan.scenario,
                participants=plan.participants,
                skeletons=skeletons,
                draft=[_content(sp, u) for sp, u in zip(speakers, draft_units)],
                revisions=[[_content(sp, u) for sp, u in zip(speakers, rev)] for rev in revision_units],
                gold=[_content(sp, u) for sp, u in zip(speakers, gold_units)],
            )
        )
    return out


def _majority(rows: list[dict]) -> dict:
    """Per field: the value more than half of the annotators gave, else annotator 1's.

    The relation pattern votes on the label alone; its reason and evidence rows
    come from the first annotator who gave the winning label.
    """
    out = {}
    for u in UNITS:
        vote = (lambda r, u=u: _key(r[u][0])) if u == "relation" else (lambda r, u=u: _key(r[u]))
        top, n = Counter(vote(r) for r in rows).most_common(1)[0]
        out[u] = next(r[u] for r in rows if vote(r) == top) if n * 2 > len(rows) else rows[0][u]
    return out


def check_generated(clips: list[SyntheticClip], taxonomy_version: str = "1") -> list[str]:
    """Every issue (errors and warnings) of every source of every clip, as text."""
    problems = []
    for clip in clips:
        for source, doc in clip.documents().items():
            _, report = check_clip(doc, taxonomy_version=taxonomy_version, duration=clip.duration)
            problems.extend(f"{clip.sample_id} ({source}): {issue} [{issue.severity}]" for issue in report.issues)
    return problems


def drafted_clip(
    sample_id: str,
    scenario: str,
    participants: list[str],
    rows: int,
    *,
    rng: random.Random,
    taxonomy_version: str = "1",
) -> SyntheticClip:
    """One clip of exactly ``rows`` rows with an LLM-like draft and no coders' work (its gold is the draft, for the
    documents' checks only): what the benchmarks open in the workspace."""
    taxonomy = load_taxonomy(scenario, taxonomy_version)
    writer = _ClipWriter(_Plan(sample_id, scenario, participants, rows), taxonomy, rng)
    skeletons = writer.skeletons()
    draft = [_content(s["primary_speaker"], {u: writer.value(u, s) for u in UNITS}) for s in skeletons]
    return SyntheticClip(sample_id, scenario, list(participants), skeletons, draft, revisions=[], gold=draft)
