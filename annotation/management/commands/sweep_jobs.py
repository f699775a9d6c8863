from ...jobs import sweep_stale_jobs
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Re-send background jobs whose worker died or whose message was lost (celery beat does this every minute)."

    def handle(self, **options):
        resent = sweep_stale_jobs()
        self.stdout.write(f"re-sent {len(resent)} jobs" + (f": {', '.join(map(str, resent))}" if resent else ""))
