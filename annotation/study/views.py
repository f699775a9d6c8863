"""The study-design page: leads read and change the project's study design."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from .. import selectors as scoped
from ..services import ServiceError
from . import selectors, services
from .forms import StudyDesignForm


@login_required
def design(request, slug):
    project = scoped.lead_project(request.user, slug, "Only leads and admins set the study design.", refuse_first=True)
    form = StudyDesignForm.for_project(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            services.update_design(
                project,
                request.user,
                work_scope=d["work_scope"],
                adjudication_min_coders=d["adjudication_min_coders"],
                from_empty_share=d["from_empty_share"] / 100,
                quick_confirm_seconds=d["quick_confirm_seconds"],
                reason=d["reason"],
            )
        except ServiceError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "The study design is saved; it applies from now on.")
            return redirect("study-design", slug=project.slug)
    context = {"project": project, "form": form, "design": selectors.design_of(project)}
    return render(request, "study/design.html", context, status=422 if form.errors else 200)
