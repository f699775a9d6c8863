"""The lead's assign page: bulk assignment under the study design, reassignment, and each annotator's progress.

Leads and admins only; any other signed-in user gets 403 (a role's tool, not someone's data)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Prefetch
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import selectors as scoped
from .. import starting
from ..models import Assignment, ClipState
from ..services import ServiceError
from . import selectors, services
from .forms import AssignForm, ReassignForm

LEADS_ONLY = "Only leads and admins assign clips."


@login_required
def project_assignments(request, slug):
    """Bulk assignment (GET shows the form, POST assigns), reassignment and annotator progress."""
    project = scoped.lead_project(request.user, slug, LEADS_ONLY, refuse_first=True)
    form = AssignForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            plan = services.assign_clips(
                project,
                clips=project.clips.filter(sample_id__in=d["clips"]),
                users=list(d["annotators"]) or None,
                per_clip=d["per_clip"],
                calibration=form.calibration_subset(),
                seed=d["seed"],
                actor=request.user,
            )
        except ServiceError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, plan.summary + ".")
            for line in plan.skipped[:20]:
                messages.info(request, f"Skipped {line}")
            for line in plan.refused:
                messages.warning(request, f"Left out: {line}")
            return redirect("assignment-index", slug=project.slug)
    clips = list(
        project.clips.annotate(row_count=Count("rows", distinct=True))
        .prefetch_related(
            Prefetch(
                "assignments", queryset=Assignment.objects.select_related("annotator").order_by("annotator__username")
            )
        )
        .order_by("sample_id")
    )
    present = {clip.state for clip in clips}
    context = {
        "project": project,
        "form": form,
        "clips": clips,
        "assignable_states": services.ASSIGNABLE_STATES,
        "states": [state for state in ClipState.values if state in present],  # the state filter's choices
        "ticked": form.ticked("clips"),
        "ticked_calibration": form.ticked("calibration_clips"),
        "progress": selectors.annotator_progress(project),
        "annotators": list(scoped.annotators()),
        # The record dashboard's "reassign their clips" opens the list filtered to one coder.
        "coder": request.GET.get("coder", ""),
    }
    return render(request, "assignment/assignments.html", context, status=422 if form.errors else 200)


@login_required
@require_POST
def reassign(request, assignment_id):
    scoped.require_lead(request.user, LEADS_ONLY)
    assignment = get_object_or_404(
        Assignment.objects.filter(clip__in=scoped.visible_clips(request.user)).select_related(
            "clip__project", "annotator"
        ),
        pk=assignment_id,
    )
    form = ReassignForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose an active annotator to hand the clip to.")
    else:
        try:
            starting.reassign(
                assignment,
                form.cleaned_data["annotator"],
                actor=request.user,
                discard_edits=form.cleaned_data["discard_edits"],
            )
        except ServiceError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(
                request,
                f"{assignment.clip.sample_id}: {assignment.annotator.username} → "
                f"{form.cleaned_data['annotator'].username}.",
            )
    return redirect("assignment-index", slug=assignment.clip.project.slug)
