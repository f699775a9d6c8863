"""The judging page: two coders' texts, three keys (same meaning, different meaning, can't tell).

Leads and annotators with work in the project judge (``selectors.may_judge``: never their own texts);
leads also see, per field, what each measure's validity is, who judged how many pairs and when, and can
start the LLM judge over the project.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from .. import selectors as scoped
from ..agreement.textfields import TEXT_FIELDS, TEXT_FIELDS_BY_KEY
from ..roles import is_lead
from . import selectors, services
from .models import Judgement

KEYS = [
    {"value": Judgement.SAME, "key": "s", "label": "Same meaning"},
    {"value": Judgement.DIFFERENT, "key": "d", "label": "Different meaning"},
    {"value": Judgement.CANT_TELL, "key": "c", "label": "Can't tell"},
]


@login_required
@require_http_methods(["GET", "POST"])
def judge_page(request, slug: str):
    project = scoped.visible_project(request.user, slug)
    field = request.POST.get("field") or request.GET.get("field") or TEXT_FIELDS[0].key
    if field not in TEXT_FIELDS_BY_KEY:
        raise Http404("no such free-text field")
    message, status = "", 200
    if request.method == "POST":
        try:
            services.record_judgement(
                request.user, project, request.POST.get("pair", ""), request.POST.get("judgement", "")
            )
            return redirect(f"{request.path}?field={field}&saved=1")
        except services.JudgementRefused as exc:
            message, status = str(exc), 400
    shown = selectors.next_pair(request.user, project, field)
    lead = is_lead(request.user)
    context = {
        "project": project,
        "field": TEXT_FIELDS_BY_KEY[field],
        "fields": selectors.judgeable_fields(project),
        "shown": shown,
        "keys": KEYS,
        "message": message,
        "saved": request.GET.get("saved") == "1" and not message,
        "mine": selectors.JudgedPair.objects.filter(project=project, judge=request.user).count(),
        "is_lead": lead,
    }
    if lead:
        validity = selectors.project_validity(project)
        context.update(
            validity=validity,
            validity_rows=[{"field": f, **validity["fields"][f.key]} for f in TEXT_FIELDS],
            judges=selectors.judged_by(project),
            judge_run=selectors.latest_judge_run(project),
            judge_job=selectors_job(project),
        )
    return render(request, "meaning/judge.html", context, status=status)


def selectors_job(project):
    from ..models import Job

    return Job.objects.filter(project=project, kind=selectors.JUDGE_JOB).order_by("-created_at").first()


@login_required
@require_POST
def run_judge(request, slug: str):
    project = scoped.lead_project(request.user, slug, "Running the LLM judge is for leads.")
    from .tasks import start_judge_job

    start_judge_job(project, user=request.user)
    return redirect(f"/projects/{project.slug}/meaning/judge/?field={request.POST.get('field') or TEXT_FIELDS[0].key}")
