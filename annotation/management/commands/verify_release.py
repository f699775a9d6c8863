from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ...models import Release
from ...releases.manifest import verify


class Command(BaseCommand):
    help = (
        "Re-hash every file of a release folder against its manifest.json and name every changed, "
        "missing or extra file; when the folder is a recorded release, also check manifest.json "
        "against the database record. Exits with an error when anything differs."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder")

    def handle(self, folder, **options):
        path = Path(folder).resolve()
        if not path.is_dir():
            raise CommandError(f"{folder} is not a folder")
        record = Release.objects.filter(path=str(path)).first()
        result = verify(path, expected_manifest=record.manifest if record else None)
        if not result.ok:
            raise CommandError(f"{folder} does not match its manifest:\n" + "\n".join(result.lines()))
        against = f" and the database record of release {record.version}" if record else ""
        self.stdout.write(f"ok: {result.checked} files match manifest.json{against}")
