"""Reads of the project's guidance: for the editor, the guide page, the lead's page and releases.

Guidance is written by leads, never by coders, so every member of a project
(leads, and annotators with work in it) may read all of it: it shows nothing of
another coder's work. Who may open a project at all is ``selectors.visible_projects``.
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlencode

from django.urls import reverse

from ..addressees import names_in
from ..models import Assignment, Gold, GuidanceVersion, Project, Revision
from ..selectors import production_revisions
from ..taxonomy import NONE, SCENARIOS, load_taxonomy
from .fields import (
    ALL_SCENARIOS,
    FIELDS,
    field_labels,
    field_title,
    label_title,
    labels_in,
    labels_title,
    scenario_title,
    scenarios_with,
)
from .services import GuidanceError, check_target, coder_usernames

# ``release_guidance``'s choice of version: the one in force now (a freeze), or none recorded
# (rebuilding a release frozen before releases recorded guidance: its files must not change).
CURRENT, NOT_RECORDED = "current", "not recorded"
NO_VERSION = "none"  # the key counting documents that record no guidance version

# Guidance written before writing it was refused when it named a coder (services._check_no_coders) may name one:
# every reader then gets this instead of its words (the lead's editing form still gets them, to rewrite them).
WITHHELD = (
    "Withheld: this guidance names a coder, and every annotator reads guidance. A lead rewrites it without the name."
)
WITHHELD_REASON = "Withheld: the reason names a coder."


def current_version(project: Project) -> GuidanceVersion | None:
    return GuidanceVersion.objects.filter(project=project).select_related("created_by").order_by("-number").first()


def in_force_id(project_id: int) -> int | None:
    """The id of the project's guidance version in force now (its latest), for a gold write to record."""
    return (
        GuidanceVersion.objects.filter(project_id=project_id).order_by("-number").values_list("pk", flat=True).first()
    )


def entry_id(entry: dict) -> str:
    """A stable name for an entry (its scenario, field and labels), for anchors and forms."""
    return f"{entry['field']}:{entry['scenario'] or 'all'}:{'+'.join(x or '(empty)' for x in entry['labels'])}"


def entry_view(entry: dict, coders=()) -> dict:
    """An entry with the words pages show: its title, its field's and scenario's names; its text withheld when it
    names one of ``coders``."""
    if names_in(entry.get("text", ""), coders):
        entry = {**entry, "text": WITHHELD, "withheld": True}
    return {
        **entry,
        "id": entry_id(entry),
        "title": labels_title(entry["field"], entry["labels"]),
        "field_title": field_title(entry["field"]),
        "scenario_title": scenario_title(entry["scenario"]),
    }


def applies_to(entry: dict, scenario: str) -> bool:
    return entry["scenario"] in (ALL_SCENARIOS, scenario)


def version_view(version: GuidanceVersion | None, coders=None) -> dict:
    """A version as the API and the pages give it (``{"version": null, ...}`` before any guidance)."""
    if version is None:
        return {
            "version": None,
            "taxonomy_version": None,
            "created_by": None,
            "created_at": None,
            "reason": "",
            "change": None,
            "entries": [],
        }
    coders = coder_usernames(version.project) if coders is None else coders
    return {
        "version": version.number,
        "taxonomy_version": version.taxonomy_version,
        "created_by": version.created_by.username if version.created_by else None,
        "created_at": version.created_at.isoformat(),
        "reason": _reason(version.reason, coders),
        "change": change_view(version.change),
        "entries": [entry_view(e, coders) for e in version.entries],
    }


def _reason(reason: str, coders) -> str:
    return WITHHELD_REASON if names_in(reason, coders) else reason


def change_view(change: dict) -> dict:
    return {
        **change,
        "title": (
            f"{change['action']} {labels_title(change['field'], change['labels'])} "
            f"({field_title(change['field']).lower()}, {scenario_title(change['scenario'])})"
        ),
    }


def editor_guidance(project: Project, scenario: str) -> dict:
    """The guidance the row editor shows beside the taxonomy's rules, for a clip of ``scenario``."""
    version = current_version(project)
    view = version_view(version, coder_usernames(project) if version else ())
    view["entries"] = [e for e in view["entries"] if applies_to(e, scenario)]
    return view


def history(project: Project, coders=None) -> list[dict]:
    """Every version, newest first: who changed what, when and why (``coders``: ``coder_usernames``, when the
    caller has them)."""
    versions = GuidanceVersion.objects.filter(project=project).select_related("created_by").order_by("-number")
    coders = coder_usernames(project) if coders is None else coders
    return [
        {
            "version": v.number,
            "created_by": v.created_by.username if v.created_by else None,
            "created_at": v.created_at,
            "reason": _reason(v.reason, coders),
            "change": change_view(v.change),
            "entries": len(v.entries),
            "source": v.source,
        }
        for v in versions
    ]


def project_scenarios(project: Project, clips=None) -> list[str]:
    """The scenarios of ``clips`` (default: the project's), in the taxonomy's order; every scenario when there are
    none."""
    present = set((clips if clips is not None else project.clips.all()).values_list("scenario", flat=True).distinct())
    return [s for s in SCENARIOS if s in present] or list(SCENARIOS)


def guide(project: Project, scenarios: list[str]) -> list[dict]:
    """The guide page: per scenario and field, every label with its definition, the taxonomy's
    boundary rules that name it and the project's guidance that names it; then the rules in full."""
    version = current_version(project)
    coders = coder_usernames(project)
    entries = [entry_view(e, coders) for e in (version.entries if version else [])]
    out = []
    for scenario in scenarios:
        taxonomy = load_taxonomy(scenario, project.taxonomy_version)
        definitions = {
            x.label: x.definition
            for name in ("utterance_types", "support_strategies", "relation_patterns")
            for x in getattr(taxonomy, name)
        }
        fields = []
        for field in FIELDS:
            rules = [r for r in taxonomy.rules if r.field == field]
            rule_views = [
                {
                    "id": f"{scenario}-rule-{r.id}",
                    "title": r.title,
                    "text": r.text,
                    "labels": labels_title(field, r.labels),
                }
                for r in rules
            ]
            labels = []
            # a guidance entry is written out once per field, under its first label; the others link there
            shown_at: dict = {}
            for label in field_labels(taxonomy, field):
                named_by = [v for r, v in zip(rules, rule_views) if label in r.labels]
                guidance = []
                for e in entries:
                    if e["field"] == field and applies_to(e, scenario) and label in e["labels"]:
                        first = shown_at.setdefault(e["id"], f"{scenario}-{field}-{label or 'empty'}")
                        guidance.append(
                            {**e, "see": None if first == f"{scenario}-{field}-{label or 'empty'}" else first}
                        )
                if label == NONE and not (named_by or guidance):
                    continue
                labels.append(
                    {
                        "label": label,
                        "title": label_title(field, label),
                        "definition": definitions.get(label, ""),
                        "anchor": f"{scenario}-{field}-{label or 'empty'}",
                        "rules": named_by,
                        "guidance": guidance,
                    }
                )
            fields.append({"field": field, "title": field_title(field), "labels": labels, "rules": rule_views})
        out.append({"scenario": scenario, "title": scenario.capitalize(), "fields": fields})
    return out


def label_options(project: Project) -> list[dict]:
    """For the lead's form: per field, every label any scenario has, and under which scenarios an entry may name it."""
    out = []
    for field in FIELDS:
        allowed = {key: labels_in(project.taxonomy_version, key, field) for key in (ALL_SCENARIOS, *SCENARIOS)}
        union = list(dict.fromkeys(x for s in SCENARIOS for x in allowed[s] if x != NONE))
        if NONE in allowed[ALL_SCENARIOS]:
            union.append(NONE)
        # ``where``: the scenario keys under which the label may be named ("all" for every scenario), for the page's
        # script.
        labels = [
            {
                "label": x,
                "title": label_title(field, x),
                "where": " ".join(k or "all" for k in allowed if x in allowed[k]),
            }
            for x in union
        ]
        out.append({"field": field, "title": field_title(field), "labels": labels})
    return out


def find_entry(version: GuidanceVersion | None, scenario: str, field: str, labels) -> dict | None:
    if version is None:
        return None
    key = (scenario, field, tuple(labels))
    return next((e for e in version.entries if (e["scenario"], e["field"], tuple(e["labels"])) == key), None)


# --- releases ------------------------------------------------------------------------------


def _by_version(numbers) -> dict[str, int]:
    counts = Counter(NO_VERSION if n is None else n for n in numbers)
    ordered = sorted(k for k in counts if k != NO_VERSION)
    return {
        **{str(k): counts[k] for k in ordered},
        **({NO_VERSION: counts[NO_VERSION]} if NO_VERSION in counts else {}),
    }


def release_guidance(project: Project, clip_pks: list[int], choice=CURRENT) -> tuple[dict | None, dict | None]:
    """(what a release's manifest records under ``inputs.guidance``, the version its card ships).

    The record: the version in force at the freeze (``version``, null when the project has
    none) and, per guidance version, how many revisions of the released rows and how many of
    their gold rows were last saved under it (``none``: no version recorded). ``choice`` is
    CURRENT for a freeze, a recorded version number (or None) to rebuild a release, or
    NOT_RECORDED to rebuild one frozen before releases recorded guidance: (None, None).
    """
    if choice == NOT_RECORDED:
        return None, None
    if choice == CURRENT:
        version = current_version(project)
    elif choice is None:
        version = None
    else:
        version = GuidanceVersion.objects.select_related("created_by").get(project=project, number=choice)
    record = {
        "version": version.number if version else None,
        "revisions": _by_version(
            production_revisions(Revision.objects.filter(row__clip_id__in=clip_pks)).values_list(
                "guidance_version__number", flat=True
            )
        ),
        "gold": _by_version(
            Gold.objects.filter(row__clip_id__in=clip_pks).values_list("guidance_version__number", flat=True)
        ),
    }
    shipped = None
    if version is not None:
        # A card is public: guidance saved before naming a coder was refused ships withheld, as every page reads it.
        # The names are those of the released clips' coders, fixed once the clips are released, so that rebuilding
        # the release later gives the same bytes whoever has joined the project since.
        coders = list(
            Assignment.objects.filter(clip_id__in=clip_pks).values_list("annotator__username", flat=True).distinct()
        )
        shipped = {
            "version": version.number,
            "taxonomy_version": version.taxonomy_version,
            "created_by": version.created_by.username if version.created_by else None,
            "created_at": version.created_at.date().isoformat(),
            "entries": [
                {
                    **e,
                    **({"text": WITHHELD, "withheld": True} if names_in(e.get("text", ""), coders) else {}),
                    "title": labels_title(e["field"], e["labels"]),
                    "field_title": field_title(e["field"]),
                    "scenario_title": scenario_title(e["scenario"]),
                }
                for e in version.entries
            ],
        }
    return record, shipped


# --- the agreement page's confused pairs ---------------------------------------------------

# Agreement measures whose values are labels guidance can attach to -> the guidance field,
# and the report's words for the empty choice -> "".
MEASURE_FIELDS = {
    "utterance_type": "utterance_type",
    "strategy_type": "support_strategy",
    "relation_pattern": "relation_pattern",
}
EMPTY_VALUES = {"(no strategy)": NONE, "(no clear pattern)": NONE}


def confused_pair_links(
    project: Project, measure_key: str, pairs: list[dict], slice_scenario: str, why: str
) -> list[dict]:
    """The agreement report's confused pairs of a label measure, each with the address of the lead's
    guidance form prefilled for that pair, and the guidance it already has (if any)."""
    field = MEASURE_FIELDS[measure_key]
    current = current_version(project)
    out = []
    for pair in pairs:
        labels = [EMPTY_VALUES.get(v, v) for v in pair["values"]]
        if slice_scenario in SCENARIOS:
            scenario = slice_scenario
        else:
            where = scenarios_with(project.taxonomy_version, field, labels)
            scenario = ALL_SCENARIOS if len(where) == len(SCENARIOS) else (where[0] if where else ALL_SCENARIOS)
        try:
            scenario, field, labels = check_target(project, scenario, field, labels)
        except GuidanceError:
            out.append({**pair, "link": None, "existing": None})
            continue
        query = [("field", field), ("scenario", scenario), *(("labels", x) for x in labels), ("why", why)]
        existing = find_entry(current, scenario, field, labels)
        out.append(
            {
                **pair,
                "link": reverse("codebook-guidance", args=[project.slug]) + "?" + urlencode(query),
                "existing": existing and entry_view(existing),
            }
        )
    return out
