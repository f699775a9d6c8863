"""Writes of the releases capability: starting a freeze on a worker.

The lead's page and the API both call ``start_freeze``: it checks the request
(version free and well-formed, ratios valid, no freeze of the same version
already queued or running, something to release, every scenario reaching
every split unless accepted, and, from the page, that the clips and their
splits are still those of the preview the lead confirmed) and creates a
``Job`` that ``celery_tasks.freeze_release_task`` carries out. The release folder is
``RELEASES_ROOT/<project>/<version>/``, decided here and passed to the worker.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from .. import jobs
from ..models import Job, JobState, Project, Release
from .freeze import FreezeError, check_version, plan_release, profile_named
from .selectors import FREEZE_JOB
from .splits import SplitError, decision_digest, parse_ratios


def release_dir(project: Project, version: str) -> Path:
    return Path(settings.RELEASES_ROOT) / project.slug / check_version(version)


def parse_seed(value) -> int:
    try:
        seed = int(value)
    except (TypeError, ValueError):
        raise FreezeError(f"the seed must be a whole number (got {value!r})") from None
    if not 0 <= seed < 2**63:
        raise FreezeError("the seed must be between 0 and 2^63 - 1")
    return seed


def start_freeze(
    project: Project,
    *,
    version: str,
    seed,
    ratios="0.7,0.1,0.2",
    group_map: dict[str, str] | None = None,
    accept_incomplete=(),
    confirmed: str | None = None,
    user=None,
    task_profile: str | None = None,
) -> Job:
    """Queue the freeze of ``project`` as ``version``; raises FreezeError with a message for the user.

    ``confirmed`` is the digest of the preview the lead confirmed (``splits.decision_digest``);
    when given, the freeze goes ahead only while the plan still has that digest.
    """
    check_version(version)
    profile = profile_named(task_profile)  # an unknown name is refused here, not on the worker
    seed = parse_seed(seed)
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
    group_map = dict(sorted((group_map or {}).items()))
    accepted = sorted(set(accept_incomplete))
    _, _, plan = plan_release(project, seed=seed, ratios=ratios, group_map=group_map)
    refusal = plan.refusal(accepted)
    if refusal:
        raise FreezeError(refusal)
    if confirmed is not None and confirmed != decision_digest(plan, seed=seed, group_map=group_map, accepted=accepted):
        raise FreezeError(
            "the releasable clips or their groups changed since the preview you confirmed; look at the preview again"
        )
    job = Job.objects.create(
        kind=FREEZE_JOB,
        project=project,
        key=key,
        params={
            "version": version,
            "seed": seed,
            "ratios": list(ratios),
            "group_map": group_map,
            "accept_incomplete": accepted,
            "out_dir": str(out_dir),
            "confirmed": confirmed,
            "task_profile": profile.name,
        },
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    from .celery_tasks import freeze_release_task

    return jobs.enqueue(job, freeze_release_task)
