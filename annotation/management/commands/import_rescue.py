from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from ...rescue_format.importer import ImportFailed, import_rescue, summarise_warnings
from ...roles import is_lead
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Import clips in the RESCUE release format (.json, .jsonl or a folder) as gold, draft or an annotator's "
        "revision. Every file read is recorded (file, SHA-256, who, when). Gold onto a clip that is already in a "
        "release is refused unless a lead imports it as a correction (--correct-released --by LEAD)."
    )

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--project", required=True)
        parser.add_argument("--as", dest="as_source", choices=["gold", "draft", "revision"], default="gold")
        parser.add_argument("--annotator", help="username whose revision this is (with --as revision)")
        parser.add_argument(
            "--by", dest="by", help="username of the person importing (recorded); a lead for --correct-released"
        )
        parser.add_argument(
            "--correct-released",
            action="store_true",
            help="let gold onto clips already in a release: a correction, recorded with what it changes",
        )

    @staticmethod
    def _user(username: str, option: str):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"{option}: no user named {username!r}")
        return user

    def handle(self, path, project, as_source, annotator, by, correct_released, **options):
        project = self.get_project(project)
        user = None
        if as_source == "revision":
            if not annotator:
                raise CommandError("--as revision needs --annotator USERNAME")
            user = self._user(annotator, "--annotator")
        elif annotator:
            raise CommandError("--annotator only goes with --as revision")
        actor = self._user(by, "--by") if by else None
        if correct_released:
            if as_source != "gold":
                raise CommandError("--correct-released corrects released gold: it goes with --as gold")
            if actor is None or not is_lead(actor):
                raise CommandError(
                    "--correct-released needs --by USERNAME of a lead: a correction of released data records who made "
                    "it"
                )
        try:
            result = import_rescue(
                path, project, as_source=as_source, annotator=user, actor=actor, correct_released=correct_released
            )
        except ImportFailed as exc:
            lines = [str(p) for p in exc.problems]
            shown = lines[:50] + ([f"... and {len(lines) - 50} more"] if len(lines) > 50 else [])
            raise CommandError("import refused, nothing was written:\n" + "\n".join(shown)) from None
        self.stdout.write(
            f"imported {len(result.created) + len(result.attached)} clips ({len(result.created)} new, "
            f"{len(result.attached)} existing) and {result.rows} rows as {as_source} into {project.slug}"
        )
        for record in result.records:
            self.stdout.write(
                f"recorded: {record.file_path} (sha256 {record.sha256}), {len(record.sample_ids)} clips, "
                f"{record.row_count} rows"
            )
        for clip in result.corrected:
            rows = ", ".join(f"{r['row_index']} ({', '.join(r['fields'])})" for r in clip["rows"][:10])
            more = f" and {len(clip['rows']) - 10} more" if len(clip["rows"]) > 10 else ""
            self.stdout.write(
                f"corrected {clip['sample_id']} (in release {', '.join(clip['releases'])}): "
                + (
                    f"{len(clip['rows'])} row{'s' if len(clip['rows']) != 1 else ''} changed: {rows}{more}"
                    if clip["rows"]
                    else "no row changed"
                )
            )
        if result.warnings:
            counts = ", ".join(f"{n} {code}" for code, n in summarise_warnings(result).most_common())
            self.stdout.write(f"{len(result.warnings)} warnings stored on their rows ({counts}):")
            for sample_id, issue in result.warnings[:20]:
                self.stdout.write(f"  {sample_id}: {issue}")
