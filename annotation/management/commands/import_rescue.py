from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from ...rescue_format.importer import ImportFailed, import_rescue, summarise_warnings
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Import clips in the RESCUE release format (.json, .jsonl or a folder) as gold, draft or an annotator's revision."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--project", required=True)
        parser.add_argument("--as", dest="as_source", choices=["gold", "draft", "revision"], default="gold")
        parser.add_argument("--annotator", help="username whose revision this is (with --as revision)")

    def handle(self, path, project, as_source, annotator, **options):
        project = self.get_project(project)
        user = None
        if as_source == "revision":
            if not annotator:
                raise CommandError("--as revision needs --annotator USERNAME")
            user = get_user_model().objects.filter(username=annotator).first()
            if user is None:
                raise CommandError(f"no user named {annotator!r}")
        elif annotator:
            raise CommandError("--annotator only goes with --as revision")
        try:
            result = import_rescue(path, project, as_source=as_source, annotator=user)
        except ImportFailed as exc:
            lines = [str(p) for p in exc.problems]
            shown = lines[:50] + ([f"... and {len(lines) - 50} more"] if len(lines) > 50 else [])
            raise CommandError("import refused, nothing was written:\n" + "\n".join(shown)) from None
        self.stdout.write(
            f"imported {len(result.created) + len(result.attached)} clips ({len(result.created)} new, "
            f"{len(result.attached)} existing) and {result.rows} rows as {as_source} into {project.slug}"
        )
        if result.warnings:
            counts = ", ".join(f"{n} {code}" for code, n in summarise_warnings(result).most_common())
            self.stdout.write(f"{len(result.warnings)} warnings stored on their rows ({counts}):")
            for sample_id, issue in result.warnings[:20]:
                self.stdout.write(f"  {sample_id}: {issue}")
