"""Reads of releases, scoped by role: releases (and their freeze jobs) are for leads only.

An annotator gets nothing here, not even the list of versions; pages and
endpoints turn that into 403 (a project they can see) or 404 (one they cannot).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.db.models import QuerySet
from django.http import Http404

from ..models import Job, Project, Release
from ..roles import is_lead
from ..selectors import lead_project  # noqa: F401 (the releases API and pages ask here)
from .human_work import release_human_work
from .manifest import read_manifest

FREEZE_JOB = "freeze_release"


def visible_releases(user, project: Project) -> QuerySet[Release]:
    if not is_lead(user):
        return Release.objects.none()
    return (
        Release.objects.filter(project=project).select_related("project", "created_by").order_by("-created_at", "-id")
    )


def release_or_404(user, project: Project, version: str) -> Release:
    release = visible_releases(user, project).filter(version=version).first()
    if release is None:
        raise Http404("no such release")
    return release


def freeze_jobs(user, project: Project) -> QuerySet[Job]:
    if not is_lead(user):
        return Job.objects.none()
    return Job.objects.filter(project=project, kind=FREEZE_JOB).order_by("-created_at", "-id")


def recorded_release_for(folder: Path) -> Release | None:
    """The database record a release folder is checked against: the release frozen into
    this folder, else the one its manifest names (project and version), e.g. for a
    copy; None when neither is recorded here (or the manifest cannot be read)."""
    folder = Path(folder).resolve()
    record = Release.objects.filter(path=str(folder)).select_related("project").first()
    if record is not None:
        return record
    try:
        named = read_manifest(folder)["release"]
        return (
            Release.objects.filter(project__slug=named["project"], version=named["version"])
            .select_related("project")
            .first()
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def human_work_of(release: Release) -> dict | None:
    """How much of the release's gold is human (``human_work``), read from its folder's stats.json and
    agreement.json; None when they cannot be read (the page says the folder does not match its manifest)."""
    folder = Path(release.path)
    try:
        stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
        agreement = json.loads((folder / "agreement.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return release_human_work(stats, agreement)
