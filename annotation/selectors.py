"""Reads, scoped by role. Every view and endpoint asks here, so that blind
annotation is enforced in one place: an annotator sees only the clips assigned
to them (and only their own revisions); leads and admins see everything."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from .models import Assignment, AssignmentPurpose, Clip, Comment, Project, Revision
from .roles import ANNOTATOR, LEAD, is_lead


def visible_projects(user) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    if is_lead(user):
        return Project.objects.all()
    return Project.objects.filter(clips__assignments__annotator=user).distinct()


def visible_project(user, slug: str) -> Project:
    """The project ``slug`` if ``user`` may see it; else 404 (whether it exists is not confirmed)."""
    return get_object_or_404(visible_projects(user), slug=slug)


def require_lead(user, refusal: str = "This is for leads.") -> None:
    """The lead-only guard of the pages: 403 with ``refusal`` (the capability's words) unless ``user`` is a lead
    or an admin. The API's is ``api.permissions.lead_only``."""
    if not is_lead(user):
        raise PermissionDenied(refusal)


def lead_project(user, slug: str, refusal: str = "This is for leads.", *, refuse_first: bool = False) -> Project:
    """The project ``slug`` for a lead: 404 when ``user`` cannot see it (so its existence is
    not confirmed), 403 with ``refusal`` when they can see it but are not a lead.

    ``refuse_first``: 403 for anyone not a lead before the project is looked up, whatever the slug (the pages of a
    lead's tools, whose existence is no secret, answer as their API does); a lead then gets 404 for no such project.
    """
    if refuse_first:
        require_lead(user, refusal)
        return visible_project(user, slug)
    project = visible_projects(user).filter(slug=slug).first()
    if project is None:
        raise Http404("no such project")
    require_lead(user, refusal)
    return project


def visible_clips(user, project: Project | None = None) -> QuerySet[Clip]:
    if not user.is_authenticated:
        return Clip.objects.none()
    clips = Clip.objects.all() if is_lead(user) else Clip.objects.filter(assignments__annotator=user)
    if project is not None:
        clips = clips.filter(project=project)
    return clips.select_related("project")


def visible_revisions(user) -> QuerySet[Revision]:
    if not user.is_authenticated:
        return Revision.objects.none()
    if is_lead(user):
        return Revision.objects.all()
    return Revision.objects.filter(annotator=user, row__clip__assignments__annotator=user)


def visible_comments(user, clip: Clip) -> QuerySet[Comment]:
    """The comments on ``clip`` that ``user`` may read.

    Leads read every comment. A coder reads their own comments, flags and
    discard proposals, and what leads wrote to every coder of the clip or to
    them alone (``Comment.addressee``: a re-review request, a note naming
    them); never another coder's, and not those of a lead who also codes this
    clip (that is a coder's work too).
    """
    comments = Comment.objects.filter(clip=clip)
    if is_lead(user):
        return comments
    coders = Assignment.objects.filter(clip=clip).values("annotator")
    from_a_lead = (Q(author__groups__name=LEAD) | Q(author__is_superuser=True)) & ~Q(author__in=coders)
    for_me = Q(addressee__isnull=True) | Q(addressee=user)
    return comments.filter(Q(author=user) | (from_a_lead & for_me)).distinct()


def project_overview(project: Project) -> dict:
    """Counters for a project's dashboard: clips per state, rows, drafts, gold."""
    clips = project.clips.all()
    by_state = dict(clips.values_list("state").annotate(n=Count("id")).order_by())
    counts = clips.aggregate(
        row_count=Count("rows", distinct=True),
        drafted_rows=Count("rows__draft", distinct=True),
        gold_rows=Count("rows__gold", distinct=True),
    )
    return {"clips": sum(by_state.values()), "by_state": by_state, **counts}


def clip_list_with_counts(clips: QuerySet[Clip]) -> QuerySet[Clip]:
    return clips.annotate(
        row_count=Count("rows", distinct=True),
        warning_rows=Count("rows", filter=~Q(rows__draft__warnings=[]), distinct=True),
    ).order_by("sample_id")


def production_revisions(revisions: QuerySet[Revision]) -> QuerySet[Revision]:
    """``revisions`` without those of a qualification round or a known-answer check (the annotator's record),
    for readers that count every revision, coded or not (a release's guidance counts)."""
    record = Assignment.every.filter(clip_id=OuterRef("row__clip_id"), annotator_id=OuterRef("annotator_id")).exclude(
        purpose=AssignmentPurpose.PRODUCTION
    )
    return revisions.exclude(Exists(record))


def annotators():
    """Every active annotator account (assignment is by account, not by project membership)."""
    return get_user_model().objects.filter(groups__name=ANNOTATOR, is_active=True).order_by("username")
