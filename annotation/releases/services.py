"""Writes of the releases capability: starting a freeze on a worker.

The lead's page and the API both call ``start_freeze``: it checks the request
(version free and well-formed, ratios valid, no freeze of the same version
already queued or running, something to release) and creates a ``Job`` that
``celery_tasks.freeze_release_task`` carries out. The release folder is
``RELEASES_ROOT/<project>/<version>/``, decided here and passed to the worker.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from .. import jobs
from ..models import Job, JobState, Project, Release
from .freeze import FreezeError, check_version, releasable_clips
from .selectors import FREEZE_JOB
from .splits import SplitError, parse_ratios


def release_dir(project: Project, version: str) -> Path:
    return Path(settings.RELEASES_ROOT) / project.slug / check_version(version)


def _seed(value) -> int:
    try:
        seed = int(value)
    except (TypeError, ValueError):
        raise FreezeError(f"the seed must be a whole number (got {value!r})") from None
    if not 0 <= seed < 2**63:
        raise FreezeError("the seed must be between 0 and 2^63 - 1")
    return seed


def start_freeze(project: Project, *, version: str, seed, ratios="0.7,0.1,0.2", user=None) -> Job:
    """Queue the freeze of ``project`` as ``version``; raises FreezeError with a message for the user."""
    check_version(version)
    seed = _seed(seed)
    try:
        ratios = parse_ratios(ratios)
    except SplitError as exc:
        raise FreezeError(str(exc)) from None
    if Release.objects.filter(project=project, version=version).exists():
        raise FreezeError(f"release {version} already exists; a new version is a new release")
    key = f"{FREEZE_JOB}:{project.slug}:{version}"
    if Job.objects.filter(kind=FREEZE_JOB, key=key, state__in=[JobState.QUEUED, JobState.RUNNING]).exists():
        raise FreezeError(f"a freeze of version {version} is already under way")
    out_dir = release_dir(project, version)
    if out_dir.exists():
        raise FreezeError(f"the folder for version {version} already exists on the server; choose another version")
    if not releasable_clips(project).exists():
        raise FreezeError("the project has no adjudicated clip yet; nothing to release")
    job = Job.objects.create(
        kind=FREEZE_JOB,
        project=project,
        key=key,
        params={"version": version, "seed": seed, "ratios": list(ratios), "out_dir": str(out_dir)},
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    from .celery_tasks import freeze_release_task

    return jobs.enqueue(job, freeze_release_task)
