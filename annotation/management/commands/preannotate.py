import sys
import time

from django.core.management.base import CommandError

from ...models import Job, JobState
from ...preannotate import selectors, services
from ...services import ServiceError
from ._base import AuditedCommand

BAR = 30


class Command(AuditedCommand):
    help = "Pre-annotate clips of a project with Gemini (or the offline skeleton) on the Celery workers."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument(
            "--clips",
            nargs="+",
            metavar="ID_OR_SAMPLE_ID",
            help="only these clips (default: every clip that needs a draft)",
        )
        parser.add_argument(
            "--force", action="store_true", help="call the model again even when identical drafts exist"
        )
        parser.add_argument(
            "--offline", action="store_true", help="offline skeleton: one empty row per cue, no LLM (labelled as such)"
        )
        parser.add_argument(
            "--wait", action="store_true", help="follow the batch with a progress bar until every clip is done"
        )
        parser.add_argument("--timeout", type=float, default=6 * 3600, help="seconds to wait with --wait (default 6 h)")

    def handle(self, project, clips, force, offline, wait, timeout, **options):
        project = self.get_project(project)
        try:
            chosen = services.resolve_clips(project, clips) if clips else None
            batch = services.start_preannotation(project, chosen, force=force, offline_provider=offline)
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        params = batch.params
        provider = "offline skeleton (no LLM)" if params["provider"] == "offline" else f"Gemini {params['model']}"
        self.stdout.write(
            f"batch {selectors.batch_number(batch)} (id {batch.pk}, {provider}): {len(params['queued'])} clips queued, "
            f"{len(params['reused'])} reused, {len(params['refused'])} refused"
        )
        for item in params["reused"]:
            self.stdout.write(f"  reused {item['sample_id']}: identical input, prompt and model")
        for item in params["refused"]:
            self.stdout.write(f"  refused {item['sample_id']}: {item['reason']}")
        refused_named = bool(clips) and bool(params["refused"])
        if not wait:
            if refused_named:
                raise CommandError("some of the named clips were not started")
            return
        status = self._follow(batch.pk, timeout)
        for clip in status["clips"]:
            if clip["state"] == JobState.FAILED:
                self.stdout.write(f"  failed {clip['sample_id']} (job {clip['job']}): {clip['error']}")
        self.stdout.write(
            f"{status['succeeded']} pre-annotated, {status['failed']} failed, estimated cost ${status['cost_usd']:.4f}"
        )
        if status["failed"] or refused_named:
            raise CommandError(
                f"{status['failed']} clips failed; retry them on the batch page or with `preannotate --clips ...`"
            )

    def _follow(self, batch_id: int, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        tty = getattr(self.stdout, "isatty", lambda: False)() or sys.stdout.isatty()
        last = None
        while True:
            status = selectors.batch_status(Job.objects.get(pk=batch_id))
            line = self._bar(status)
            if tty:
                self.stdout.write("\r" + line, ending="")
                self.stdout.flush()
            elif line != last:
                self.stdout.write(line)
            last = line
            if status["finished"]:
                if tty:
                    self.stdout.write("")
                return status
            if time.monotonic() > deadline:
                raise CommandError(
                    f"batch {status['number']} (id {batch_id}) still running after {timeout:.0f} s; is a worker "
                    "running on the preannotate queue?"
                )
            time.sleep(0.5)

    @staticmethod
    def _bar(status: dict) -> str:
        total = status["total"] or 1
        filled = round(BAR * status["done"] / total)
        return (
            f"[{'#' * filled}{'.' * (BAR - filled)}] {status['done']}/{status['total']} clips"
            f"  ok {status['succeeded']}  failed {status['failed']}  running {status['running']}"
        )
