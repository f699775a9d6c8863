"""The guide page (every member of a project) and the lead's guidance page.

Thin: reads come from ``selectors``, writes from ``services``; this module
only reads the form and picks what the template shows.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from .. import selectors as scoped
from ..roles import is_lead
from ..taxonomy import SCENARIOS
from . import selectors, services
from .fields import ALL_SCENARIOS, FIELDS, field_title, labels_title, scenario_title


@login_required
@require_GET
def guide(request, slug: str):
    """Every label of the project's scenarios with its definition, the taxonomy's boundary rules and the project's
    guidance."""
    project = scoped.visible_project(request.user, slug)
    wanted = request.GET.get("scenario") or ""
    present = selectors.project_scenarios(project, scoped.visible_clips(request.user, project))
    scenarios = [wanted] if wanted in SCENARIOS else present
    version = selectors.current_version(project)
    return render(
        request,
        "codebook/guide.html",
        {
            "project": project,
            "sections": selectors.guide(project, scenarios),
            "version": version,
            "scenario": wanted if wanted in SCENARIOS else "",
            "other_scenarios": [s for s in SCENARIOS if s != wanted] if wanted in SCENARIOS else [],
            "query": request.GET.get("q", ""),
            "is_lead": is_lead(request.user),
        },
    )


def _change(post) -> dict:
    field = post.get("field", "")
    return {
        "scenario": post.get("scenario", ""),
        "field": field,
        "labels": post.getlist(f"labels_{field}") if field in FIELDS else [],
        "why": post.get("why", ""),
        "based_on": int(post["based_on"]) if post.get("based_on", "").isdigit() else None,
    }


@login_required
@require_http_methods(["GET", "POST"])
def guidance(request, slug: str):
    """Leads write, rewrite and withdraw the project's guidance, and read its history."""
    project = scoped.lead_project(request.user, slug, "Guidance is written by leads.")
    error, form = "", {}
    if request.method == "POST":
        change = _change(request.POST)
        action = request.POST.get("action", "write")
        try:
            if action == "withdraw":
                version = services.withdraw_guidance(project, request.user, **change)
            else:
                version = services.write_guidance(project, request.user, text=request.POST.get("text", ""), **change)
        except services.GuidanceError as exc:
            error = str(exc)
            form = {**change, "text": request.POST.get("text", ""), "action": action}
        else:
            what = version.change
            messages.success(
                request,
                f"Guidance version {version.number}: {what['action']} {labels_title(what['field'], what['labels'])} "
                f"({field_title(what['field']).lower()}, {scenario_title(what['scenario'])}).",
            )
            return redirect(reverse("codebook-guidance", args=[project.slug]))
    current = selectors.current_version(project)
    if not form:
        # Prefilled from the address: the agreement page links here with a confused pair.
        field = request.GET.get("field", "utterance_type")
        labels = request.GET.getlist("labels")  # repeated; an empty one is the empty choice (no strategy...)
        form = {
            "scenario": request.GET.get("scenario", ALL_SCENARIOS),
            "field": field if field in FIELDS else "utterance_type",
            "labels": labels,
            "text": "",
            "why": request.GET.get("why", ""),
        }
    existing = None
    if form["labels"]:
        try:
            scenario, field, labels = services.check_target(project, form["scenario"], form["field"], form["labels"])
        except services.GuidanceError as exc:
            error = error or str(exc)
        else:
            existing = selectors.find_entry(current, scenario, field, labels)
            if existing and not form.get("text"):
                form["text"] = existing["text"]
    view = selectors.version_view(current)
    return render(
        request,
        "codebook/guidance.html",
        {
            "project": project,
            "current": view,
            "by_field": [
                {"field": f, "title": field_title(f), "entries": [e for e in view["entries"] if e["field"] == f]}
                for f in FIELDS
            ],
            "history": selectors.history(project),
            "options": selectors.label_options(project),
            "scenarios": [
                {"key": ALL_SCENARIOS, "title": "every scenario"},
                *({"key": s, "title": f"{s} clips"} for s in SCENARIOS),
            ],
            "form": form,
            "existing": existing and selectors.entry_view(existing),
            "error": error,
        },
        status=400 if error and request.method == "POST" else 200,
    )
