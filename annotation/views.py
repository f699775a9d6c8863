"""Server-rendered pages. Views stay thin: reads go through selectors."""

from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import JsonResponse
from django.shortcuts import redirect, render

from . import readiness, selectors
from .roles import is_lead, role_of
from .workspace import views as workspace_views


def healthz(request):
    """Process is up (for a load balancer); says nothing about dependencies."""
    return JsonResponse({"status": "ok"})


def readyz(request):
    """Ready to serve: database reachable with every migration applied, broker reachable
    (or explicitly not configured). Says which check failed, never why in detail."""
    checks = readiness.run_checks()
    ready = all(c["ok"] for c in checks.values())
    return JsonResponse({"status": "ready" if ready else "not ready", "checks": checks}, status=200 if ready else 503)


@login_required
def home(request):
    """Where everyone lands after login: annotators on their queue (their work), leads on the projects."""
    if not is_lead(request.user):
        # Rendered here rather than redirected, so that "/" stays the address people sign in to.
        return workspace_views.queue(request)
    projects = selectors.visible_projects(request.user)
    return render(request, "annotation/home.html", {"projects": projects, "role": role_of(request.user)})


@login_required
def project_detail(request, slug):
    project = selectors.visible_project(request.user, slug)
    clips = selectors.clip_list_with_counts(selectors.visible_clips(request.user, project))
    context = {"project": project, "clips": clips, "is_lead": is_lead(request.user)}
    if context["is_lead"]:
        context["overview"] = selectors.project_overview(project)
    return render(request, "annotation/project_detail.html", context)


# Where the nav's lead links land, per target: the page of one project, its title, and who may open it.
LEAD_LANDINGS = {
    "adjudication": ("adjudication-index", "Adjudicate", "Only leads and admins adjudicate clips."),
    "assignments": ("assignment-index", "Assign clips", "Only leads and admins assign clips."),
}


@login_required
def choose_lead_project(request, target: str):
    """Where the nav's "Adjudicate" and "Assign" links land: straight to the only project, or a list to pick from."""
    page, title, refusal = LEAD_LANDINGS[target]
    selectors.require_lead(request.user, refusal)
    projects = list(selectors.visible_projects(request.user).annotate(clip_count=Count("clips")).order_by("slug"))
    if len(projects) == 1:
        return redirect(page, slug=projects[0].slug)
    return render(request, "annotation/choose_project.html", {"projects": projects, "page": page, "title": title})
