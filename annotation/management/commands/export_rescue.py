import sys
from pathlib import Path

from django.core.management.base import CommandError

from ...rescue_format.exporter import ExportError, ExportSource, export_rescue
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Export a project's clips in the RESCUE release format (JSONL, one clip per line, sorted by sample id)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--source", default="gold", help="gold, draft or revision:USERNAME")
        parser.add_argument("-o", "--output", required=True, help="output .jsonl path, or - for stdout")

    def handle(self, project, source, output, **options):
        project = self.get_project(project)
        try:
            src = ExportSource.parse(source)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        if output == "-":
            result = export_rescue(project, src, sys.stdout)
        else:
            out = Path(output)
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_name(out.name + ".part")
            # Write aside and rename, so a failed export never leaves half a file.
            with tmp.open("w", encoding="utf-8", newline="\n") as fh:
                result = export_rescue(project, src, fh)
            tmp.replace(out)
        self.stderr.write(f"exported {result.clips} clips, {result.rows} rows from {source}")
        if result.skipped:
            self.stderr.write(
                f"skipped {len(result.skipped)} clips that {source} does not cover completely: "
                f"{', '.join(result.skipped[:10])}"
            )
