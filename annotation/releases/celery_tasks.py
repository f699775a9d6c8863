"""Celery task of the releases capability: freeze a release for a Job row."""

from __future__ import annotations

from celery import shared_task

from .. import jobs
from ..audit import audit_source
from ..models import Job, JobState, Release
from .freeze import STAGES, FreezeError, freeze

# Stages of freeze.build, then writing the folder and the record.
TOTAL_STEPS = len(STAGES) + 1


def _result(release: Release, clips: int, rows: int, skipped: list[str]) -> dict:
    return {
        "release_id": release.pk,
        "version": release.version,
        "clips": clips,
        "rows": rows,
        "files": len(release.manifest.get("files", {})) + 1,
        "skipped": skipped[:50],
    }


@shared_task(bind=True, acks_late=True)
def freeze_release_task(self, job_id: int) -> None:
    with audit_source("worker"):
        job = Job.objects.select_related("project", "created_by").get(pk=job_id)
        if job.state == JobState.SUCCEEDED:
            return  # a redelivered message for finished work
        params = job.params
        done = Release.objects.filter(project=job.project, version=params["version"], path=params["out_dir"]).first()
        if done is not None:
            # The worker died after committing; the release is there, so the job succeeded.
            jobs.mark_succeeded(
                job_id,
                _result(
                    done,
                    len(done.manifest.get("clips", [])),
                    sum(c["rows"] for c in done.manifest.get("clips", [])),
                    [],
                ),
            )
            return
        jobs.mark_running(job_id, TOTAL_STEPS)
        try:
            release, built = freeze(
                job.project,
                version=params["version"],
                seed=params["seed"],
                ratios=params["ratios"],
                group_map=params.get("group_map"),
                accept_incomplete=params.get("accept_incomplete", ()),
                out_dir=params["out_dir"],
                confirmed=params.get("confirmed"),
                task_profile=params.get("task_profile"),  # jobs queued before profiles existed: the default
                user=job.created_by,
                progress=lambda step, total, stage: jobs.report_progress(job_id, step, TOTAL_STEPS),
            )
        except FreezeError as exc:  # the request cannot be carried out: say why, do not retry
            jobs.mark_failed(job_id, str(exc))
            return
        except Exception as exc:  # the job row must say what went wrong
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            raise
        jobs.report_progress(job_id, TOTAL_STEPS, TOTAL_STEPS)
        jobs.mark_succeeded(job_id, _result(release, len(built.clip_ids), built.rows, built.skipped))
