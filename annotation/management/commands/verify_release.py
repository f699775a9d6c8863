from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ...releases.manifest import MANIFEST, read_manifest, verify
from ...releases.selectors import recorded_release_for


class Command(BaseCommand):
    help = (
        "Re-hash every file of a release folder against its manifest.json and name every changed, "
        "missing or extra file; when the database records that release (the folder it was frozen into, "
        "or any copy whose manifest names a recorded project and version), also check manifest.json "
        "against that record. Exits with an error when anything differs."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder")

    def handle(self, folder, **options):
        path = Path(folder).resolve()
        if not path.is_dir():
            raise CommandError(f"{folder} is not a folder")
        record = recorded_release_for(path)
        result = verify(path, expected_manifest=record.manifest if record else None)
        if not result.ok:
            against = (
                f" (checked against the database record of release {record.version} of {record.project.slug})"
                if record
                else ""
            )
            raise CommandError(f"{folder} does not match its manifest{against}:\n" + "\n".join(result.lines()))
        if record is None:
            self.stdout.write(f"ok: {result.checked} files match manifest.json; {_unrecorded(path)}")
            return
        where = "" if Path(record.path) == path else f", frozen into {record.path}"
        self.stdout.write(
            f"ok: {result.checked} files match manifest.json and the database record of release {record.version} of "
            f"{record.project.slug}{where}"
        )


def _unrecorded(path: Path) -> str:
    try:
        named = read_manifest(path)["release"]
        what = f"release {named['version']} of {named['project']}"
    except (OSError, ValueError, KeyError, TypeError):
        what = "this release"
    return f"this database has no record of {what}, so {MANIFEST} itself was checked against nothing else"
