"""Starting the LLM judge over a project: a ``Job`` handed to a Celery worker (the web process never calls Gemini)."""

from __future__ import annotations

from .. import jobs
from ..models import Job, JobState
from . import judge
from .selectors import JUDGE_JOB


def start_judge_job(project, *, user=None) -> Job:
    """One judge run per project at a time: a queued or running one is returned as it is."""
    running = Job.objects.filter(project=project, kind=JUDGE_JOB, state__in=(JobState.QUEUED, JobState.RUNNING)).first()
    if running:
        return running
    from .celery_tasks import judge_project_task

    job = Job.objects.create(
        kind=JUDGE_JOB,
        project=project,
        key=f"{JUDGE_JOB}:{project.pk}:{judge.judge_model()}:{judge.PROMPT_VERSION}",
        params={"model": judge.judge_model(), "prompt_version": judge.PROMPT_VERSION},
        created_by=user,
    )
    from ..preannotate import conf

    return jobs.enqueue(job, judge_project_task, queue=conf.get("PREANNOTATE_QUEUE"))
