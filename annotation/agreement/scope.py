"""Which annotators' values count: the one rule behind every agreement figure.

A coder's value for a row enters agreement only when that coder actually
coded the row. The *work scope* says what "coded" means:

- ``submitted`` (the default, and what releases use): revisions of
  assignments the coder submitted. Revisions imported as finished work
  (``import_rescue --as revision``) come with a submitted assignment.
- ``reviewed``: the same, plus the rows the coder has marked reviewed in an
  assignment that is still open (assigned, in progress or reopened): a look
  at work in progress that the coder has vouched for row by row.

A revision nobody opened never counts, whether or not it still equals the
draft. Every other revision is *left out* for one reason (``LEFT_OUT``):
its clip is discarded, its coder is no longer assigned to the clip, or its
assignment is not submitted (and, in the ``reviewed`` scope, the row is not
marked reviewed either).

The rule is a database expression (``with_left_out``), so that extraction, the
cache fingerprint, and any later measure (free-text agreement, the pairs of
labels coders confuse) select exactly the same (row, coder) values:
``coded_revisions`` gives them, ``with_left_out`` annotates every revision
with the reason it is left out (null when it counts). Alpha, the LLM-as-coder
figures and the edit rates against the draft are all computed on those
values only (``report``).
"""

from __future__ import annotations

from django.db.models import (
    Case,
    CharField,
    Expression,
    F,
    FilteredRelation,
    Q,
    QuerySet,
    Value,
    When,
)

from ..models import (
    AssignmentPurpose,
    AssignmentState,
    Clip,
    ClipState,
    Revision,
    RevisionStatus,
    WorkScope,
)

SUBMITTED, REVIEWED = WorkScope.SUBMITTED.value, WorkScope.REVIEWED.value
DEFAULT_WORK_SCOPE = SUBMITTED
# Work scope -> (short label for pages and tables, the rule in a sentence).
WORK_SCOPES: dict[str, tuple[str, str]] = {
    SUBMITTED: (
        "submitted work",
        "A coder's values count only from assignments they submitted (revisions imported as finished work "
        "count as submitted).",
    ),
    REVIEWED: (
        "submitted work and rows marked reviewed",
        "A coder's values count from assignments they submitted, and, in assignments still open, from the rows "
        "they marked reviewed.",
    ),
}

# Why a revision is left out; the order is the order of the checks.
DISCARDED_CLIP, UNASSIGNED = "discarded_clip", "unassigned"
NOT_SUBMITTED, NOT_REVIEWED = "not_submitted", "not_reviewed"
LEFT_OUT: dict[str, tuple[str, str]] = {  # reason -> (short label, sentence)
    DISCARDED_CLIP: ("discarded clip", "the clip is discarded"),
    UNASSIGNED: ("coder no longer assigned", "the coder is no longer assigned to the clip"),
    NOT_SUBMITTED: ("not submitted", "the assignment is not submitted"),
    NOT_REVIEWED: ("not reviewed", "the assignment is not submitted and the row is not marked reviewed"),
}
# The annotations ``with_left_out`` adds to revisions: the reason, and the coder's assignment it reads.
LEFT_OUT_FIELD, ASSIGNMENT = "agreement_left_out", "agreement_assignment"


def check_work_scope(value) -> str:
    """``value`` if it names a work scope; ValueError with a message for the user otherwise."""
    if value not in WORK_SCOPES:
        raise ValueError(f"scope must be one of {', '.join(WORK_SCOPES)}, got {value!r}")
    return value


def label(work_scope: str) -> str:
    return WORK_SCOPES[work_scope][0]


def left_out_summary(counts: dict[str, int]) -> str:
    """E.g. "222 revisions left out (210 not submitted, 12 discarded clip)"; "" when none is."""
    total = sum(counts.values())
    if not total:
        return ""
    parts = ", ".join(f"{n} {LEFT_OUT[reason][0]}" for reason, n in counts.items() if n)
    return f"{total} revision{'s' if total != 1 else ''} left out ({parts})"


def reasons(work_scope: str) -> tuple[str, ...]:
    """The reasons a revision can be left out under ``work_scope``."""
    not_coded = NOT_REVIEWED if work_scope == REVIEWED else NOT_SUBMITTED
    return (not_coded, DISCARDED_CLIP, UNASSIGNED)


def with_left_out(
    revisions: QuerySet[Revision], work_scope: str = DEFAULT_WORK_SCOPE, *, counted: Expression | None = None
) -> QuerySet[Revision]:
    """``revisions`` annotated with ``LEFT_OUT_FIELD``: the reason each is left out, null when it counts.

    ``counted`` replaces that null by a value of the revision's own (the cache
    fingerprint digests the version of the revisions that count, and nothing
    of those that do not). The coder's assignment to the revision's clip is
    joined once (``ASSIGNMENT``): no per-revision subquery.
    """
    check_work_scope(work_scope)
    counts = Value(None) if counted is None else counted
    coded = [When(**{f"{ASSIGNMENT}__state": AssignmentState.SUBMITTED}, then=counts)]
    if work_scope == REVIEWED:
        coded.append(When(status=RevisionStatus.REVIEWED, then=counts))
    reason = Case(
        When(row__clip__state=ClipState.DISCARDED, then=Value(DISCARDED_CLIP)),
        When(**{f"{ASSIGNMENT}__id__isnull": True}, then=Value(UNASSIGNED)),
        *coded,
        default=Value(reasons(work_scope)[0]),
        output_field=CharField(null=True),
    )
    own_assignment = FilteredRelation(
        "row__clip__assignments", condition=Q(row__clip__assignments__annotator=F("annotator"))
    )
    # A qualification round's or a known-answer check's revisions are the annotator's record, not production
    # work: they are not even left out, they are not there (``annotation.record``).
    production = Q(**{f"{ASSIGNMENT}__id__isnull": True}) | Q(
        **{f"{ASSIGNMENT}__purpose": AssignmentPurpose.PRODUCTION}
    )
    return revisions.annotate(**{ASSIGNMENT: own_assignment}).filter(production).annotate(**{LEFT_OUT_FIELD: reason})


def coded_revisions(clips: QuerySet[Clip], work_scope: str = DEFAULT_WORK_SCOPE) -> QuerySet[Revision]:
    """The revisions of ``clips`` whose values count under ``work_scope``."""
    revisions = with_left_out(Revision.objects.filter(row__clip__in=clips), work_scope)
    return revisions.filter(**{f"{LEFT_OUT_FIELD}__isnull": True})
