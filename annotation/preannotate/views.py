"""The batch page for leads: start a pre-annotation, follow it, retry failed clips.

Thin: the writes are ``services`` functions, the reads ``selectors``; every
view checks the lead role and reaches the project through the role-scoped
``annotation.selectors``. The page polls the API (static/preannotate/batch.js)
while a batch runs.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from .. import selectors as scoped
from ..services import ServiceError
from . import conf, quality, selectors, services
from .gemini import PROVIDER as GEMINI
from .offline import PROVIDER as OFFLINE


def _render(request, name: str, context: dict, status: int = 200) -> HttpResponse:
    return render(request, name, context, status=status)


LEADS_ONLY = "pre-annotation is for leads"


class StartForm(forms.Form):
    provider = forms.ChoiceField(choices=[(GEMINI, "Gemini"), (OFFLINE, "Offline skeleton (no LLM)")], initial=GEMINI)
    force = forms.BooleanField(required=False, help_text="Call the model again even when identical drafts exist")
    clips = forms.MultipleChoiceField(required=False)

    def __init__(self, *args, clip_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["clips"].choices = clip_choices


@login_required
def batch_page(request, slug):
    project = scoped.lead_project(request.user, slug, LEADS_ONLY, refuse_first=True)
    clips = selectors.project_clips(request.user, project)
    batch = selectors.latest_batch(project)
    context = {
        "project": project,
        "clips": clips,
        "batch": selectors.batch_status(batch) if batch else None,
        "has_key": bool(conf.gemini_api_key()),
        "model": conf.gemini_model(),
        "form": StartForm(),
        "quality": quality.draft_quality(project),
    }
    return _render(request, "preannotate/batch.html", context)


@login_required
@require_POST
def start(request, slug):
    project = scoped.lead_project(request.user, slug, LEADS_ONLY, refuse_first=True)
    choices = [(str(c.pk), c.sample_id) for c in scoped.visible_clips(request.user, project)]
    form = StartForm(request.POST, clip_choices=choices)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect("preannotate-batch", slug=project.slug)
    chosen = form.cleaned_data["clips"]
    clips = list(scoped.visible_clips(request.user, project).filter(pk__in=chosen)) if chosen else None
    try:
        batch = services.start_preannotation(
            project,
            clips,
            force=form.cleaned_data["force"],
            user=request.user,
            offline_provider=form.cleaned_data["provider"] == OFFLINE,
        )
    except ServiceError as exc:
        messages.error(request, str(exc))
        return redirect("preannotate-batch", slug=project.slug)
    p = batch.params
    messages.success(
        request,
        f"Batch {selectors.batch_number(batch)}: {len(p['queued'])} clips queued, {len(p['reused'])} reused, "
        f"{len(p['refused'])} refused.",
    )
    return redirect("preannotate-batch", slug=project.slug)


@login_required
@require_POST
def retry(request, job_id):
    scoped.require_lead(request.user, LEADS_ONLY)
    job = selectors.clip_job(request.user, job_id)
    if job is None:
        return HttpResponse("no such pre-annotation job", status=404)
    try:
        services.retry_clip_job(job, user=request.user)
    except ServiceError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{job.clip.sample_id}: queued again.")
    return redirect("preannotate-batch", slug=job.project.slug)
