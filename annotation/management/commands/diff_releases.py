import json
from pathlib import Path

from django.core.management.base import CommandError

from ...models import Release
from ...releases.diff import Snapshot, diff_releases, format_diff
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "List what changed between two releases: clips added, removed and changed, and label changes per field."

    def add_arguments(self, parser):
        parser.add_argument("a", help="the older release: a folder, or a version with --project")
        parser.add_argument("b", help="the newer release: a folder, or a version with --project")
        parser.add_argument("--project", help="read A and B as versions of this project's recorded releases")
        parser.add_argument("--json", action="store_true", help="print the diff as JSON")

    def _folder(self, project, ref: str) -> Path:
        if project is None:
            return Path(ref)
        release = Release.objects.filter(project=project, version=ref).first()
        if release is None:
            raise CommandError(f"there is no release {ref} of {project.slug}")
        return Path(release.path)

    def handle(self, a, b, project, json, **options):
        project = self.get_project(project) if project else None
        try:
            diff = diff_releases(Snapshot.open(self._folder(project, a)), Snapshot.open(self._folder(project, b)))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(_json_dumps(diff) if json else format_diff(diff))


def _json_dumps(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
