import time

from django.core.management.base import CommandError

from ...celery_tasks import start_recheck
from ...models import JobState
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Re-validate every stored document of a project (runs as a background job)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--wait", action="store_true", help="wait for the job and print its summary")
        parser.add_argument("--timeout", type=float, default=600)

    def handle(self, project, wait, timeout, **options):
        job = start_recheck(self.get_project(project))
        self.stdout.write(f"job {job.pk} queued")
        if not wait:
            return
        deadline = time.monotonic() + timeout
        while True:
            job.refresh_from_db()
            if job.state in (JobState.SUCCEEDED, JobState.FAILED):
                break
            if time.monotonic() > deadline:
                raise CommandError(f"job {job.pk} still {job.state} after {timeout:.0f} s; is a worker running?")
            time.sleep(0.5)
        if job.state == JobState.FAILED:
            raise CommandError(f"job {job.pk} failed: {job.error}")
        r = job.result
        self.stdout.write(
            f"checked {r['documents']} documents in {r['clips']} clips; errors: {r['errors'] or 'none'}; warnings: "
            f"{r['warnings'] or 'none'}"
        )
        for item in r["invalid"][:20]:
            self.stdout.write(
                f"  {item['sample_id']} row {item['row']} ({item['source']}): {'; '.join(item['errors'])}"
            )
