"""Pre-annotation reads for the batch page and the API (leads only; callers check the role).

Projects and clips are reached through ``annotation.selectors`` so that the
role scoping stays in one place.
"""

from __future__ import annotations

from django.db.models import Count, Q

from .. import selectors as scoped
from ..models import Draft, Job, JobState, Modality, Project
from .services import BATCH_KIND, CLIP_KIND, batch_jobs, is_stale


def latest_batch(project: Project) -> Job | None:
    return project.jobs.filter(kind=BATCH_KIND).order_by("-created_at", "-pk").first()


def batch_number(batch: Job) -> int:
    """The batch's number in its project: 1, 2, 3 ... in the order they were started.

    A batch is identified by its job id (URLs, the API's ``batch``, the clip
    jobs' ``params["batch"]``), but job ids are shared by every kind of job
    (one per clip of each batch, agreement and release jobs), so as numbers
    they jump. The number is counted instead, never stored: batches are never
    deleted on their own, so it does not change.
    """
    return Job.objects.filter(project_id=batch.project_id, kind=BATCH_KIND, pk__lte=batch.pk).count()


def clip_job(user, job_id: int) -> Job | None:
    """A clip's pre-annotation job, if the user may see its clip."""
    return (
        Job.objects.filter(kind=CLIP_KIND, pk=job_id, clip__in=scoped.visible_clips(user))
        .select_related("clip", "project")
        .first()
    )


def _job_view(job: Job | None) -> dict | None:
    if job is None:
        return None
    failure = job.result.get("failure") or {}
    provenance = job.result.get("provenance") or {}
    usage = provenance if provenance else (job.result.get("usage") or {})
    return {
        "job": job.pk,
        "batch": job.params.get("batch"),
        "state": job.state,
        "provider": job.params.get("provider"),
        "error": job.error,
        "reason": failure.get("reason", ""),
        "attempts": job.attempts,
        "windows_done": job.progress_done,
        "windows_total": job.progress_total,
        "cost_usd": usage.get("cost_usd"),
        "retries": (job.result.get("summary") or {}).get("retries", len(job.result.get("attempts") or [])),
        "warnings": (job.result.get("summary") or {}).get("warnings", {}),
        "schema_mode": provenance.get("schema_mode", ""),
        "prompt_version": provenance.get("prompt_version", ""),
        "modality": provenance.get("modality", ""),
        "retryable": job.state == JobState.FAILED or is_stale(job),
        "previous_failures": len(job.result.get("previous_failures") or []),
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


def batch_status(batch: Job) -> dict:
    """Progress of one batch and the state of each of its clips."""
    jobs = list(batch_jobs(batch).select_related("clip").order_by("clip__sample_id"))
    counts = {s: sum(1 for j in jobs if j.state == s) for s in JobState.values}
    total = len(jobs)
    done = counts[JobState.SUCCEEDED] + counts[JobState.FAILED]
    return {
        "batch": batch.pk,
        "number": batch_number(batch),
        "project": batch.project.slug if batch.project_id else None,
        "state": batch.state,
        "provider": batch.params.get("provider"),
        "model": batch.params.get("model"),
        "force": batch.params.get("force", False),
        "created_at": batch.created_at.isoformat(),
        "created_by": batch.created_by.username if batch.created_by_id else None,
        "total": total,
        "done": done,
        "succeeded": counts[JobState.SUCCEEDED],
        "failed": counts[JobState.FAILED],
        "running": counts[JobState.RUNNING],
        "queued": counts[JobState.QUEUED],
        "percent": round(100 * done / total) if total else 100,
        "finished": done == total,
        "error": batch.error,
        "reused": batch.params.get("reused", []),
        "refused": batch.params.get("refused", []),
        "cost_usd": round(
            sum((j.result.get("provenance") or j.result.get("usage") or {}).get("cost_usd") or 0 for j in jobs), 6
        ),
        "clips": [
            {"clip": j.clip_id, "sample_id": j.clip.sample_id, "clip_state": j.clip.state, **_job_view(j)} for j in jobs
        ],
    }


def project_clips(user, project: Project) -> list[dict]:
    """Every clip of the project with its pre-annotation state and latest clip job."""
    clips = (
        scoped.visible_clips(user, project)
        .annotate(
            row_count=Count("rows", distinct=True),
            draft_count=Count("rows__draft", distinct=True),
            warning_rows=Count("rows", filter=~Q(rows__draft__warnings=[]), distinct=True),
        )
        .order_by("sample_id")
    )
    latest: dict[int, Job] = {}
    for job in Job.objects.filter(kind=CLIP_KIND, project=project).order_by("clip_id", "-created_at", "-pk"):
        latest.setdefault(job.clip_id, job)
    sources: dict[int, set[str]] = {}
    prompts: dict[int, set[str]] = {}
    modalities: dict[int, set[str]] = {}
    for clip_id, source, prompt, modality in (
        Draft.objects.filter(row__clip__project=project)
        .values_list("row__clip_id", "source", "provenance__prompt_version", "modality")
        .distinct()
    ):
        sources.setdefault(clip_id, set()).add(source)
        if prompt:
            prompts.setdefault(clip_id, set()).add(prompt)
        if modality:
            modalities.setdefault(clip_id, set()).add(MODALITY_LABELS[modality])
    out = []
    for clip in clips:
        out.append(
            {
                "clip": clip.pk,
                "sample_id": clip.sample_id,
                "scenario": clip.scenario,
                "state": clip.state,
                "state_label": clip.get_state_display(),
                "rows": clip.row_count,
                "drafts": clip.draft_count,
                "warning_rows": clip.warning_rows,
                "draft_sources": sorted(sources.get(clip.pk, ())),
                # Each draft keeps the prompt version it was made with (v1 drafts stay v1).
                "prompt_versions": sorted(prompts.get(clip.pk, ())),
                "modalities": sorted(modalities.get(clip.pk, ())),
                "last_job": _job_view(latest.get(clip.pk)),
            }
        )
    return out


MODALITY_LABELS = dict(Modality.choices)
_DRAFTED_FROM = {
    Modality.VIDEO: "drafted from the video (with its sound)",
    Modality.AUDIO: "drafted from the audio only",
    Modality.TRANSCRIPT: "drafted from the transcript only",
}


def modality_note(modality: str) -> str:
    """What a draft was made from, as the editor shows it next to the draft ("" when not recorded)."""
    return _DRAFTED_FROM.get(modality, "")


def draft_modality_label(draft: Draft) -> str:
    """``modality_note`` of one draft: "drafted from the transcript only" and the like."""
    return modality_note(draft.modality)
