"""Reads of releases, scoped by role: releases (and their freeze jobs) are for leads only.

An annotator gets nothing here, not even the list of versions; pages and
endpoints turn that into 403 (a project they can see) or 404 (one they cannot).
"""
from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from ..models import Job, Project, Release
from ..roles import is_lead
from ..selectors import lead_project  # noqa: F401 (the releases API and pages ask here)

FREEZE_JOB = "freeze_release"


def visible_releases(user, project: Project) -> QuerySet[Release]:
    if not is_lead(user):
        return Release.objects.none()
    return Release.objects.filter(project=project).select_related("project", "created_by").order_by("-created_at", "-id")


def release_or_404(user, project: Project, version: str) -> Release:
    release = visible_releases(user, project).filter(version=version).first()
    if release is None:
        raise Http404("no such release")
    return release


def freeze_jobs(user, project: Project) -> QuerySet[Job]:
    if not is_lead(user):
        return Job.objects.none()
    return Job.objects.filter(project=project, kind=FREEZE_JOB).order_by("-created_at", "-id")
