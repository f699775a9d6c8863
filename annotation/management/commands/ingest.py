"""manage.py ingest PATH... --project SLUG --scenario couple|family"""

from __future__ import annotations

from pathlib import Path

from django.core.files import File
from django.core.management.base import CommandError

from ...api import parsers as bounded_json
from ...ingest import services
from ...ingest.formats import TRANSCRIPT_SUFFIXES
from ...ingest.forms import split_names
from ...ingest.uploads import MEDIA_SUFFIXES
from ...services import ServiceError
from ...taxonomy import SCENARIOS
from ._base import AuditedCommand


def _collect(paths: list[str]) -> list[tuple[str, Path]]:
    """(relative name, path) for every transcript and media file named or found under a folder.

    Relative names start at the named folder (``transcripts/alan_and_evelyn/001.srt``)
    or, for a named file, at its folder (``alan_and_evelyn/001.srt``), as a browser sends them.
    """
    wanted = TRANSCRIPT_SUFFIXES + MEDIA_SUFFIXES
    found: list[tuple[str, Path]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in wanted and not p.name.startswith(".")
            )
            if not files:
                raise CommandError(f"{path}: folder holds no transcripts ({', '.join(TRANSCRIPT_SUFFIXES)})")
            base = path.resolve().parent
            found += [(p.resolve().relative_to(base).as_posix(), p) for p in files]
        elif path.is_file():
            found.append((f"{path.resolve().parent.name}/{path.name}", path))
        else:
            raise CommandError(f"{path}: no such file or folder")
    return found


class Command(AuditedCommand):
    help = (
        "Ingest transcript files (SubRip, WebVTT, CSV/TSV, diarisation or RESCUE JSON) into a project, one clip per "
        "file."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH", help="transcript files or folders of them")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--scenario", required=True, choices=SCENARIOS)
        parser.add_argument(
            "--participants",
            help="comma-separated on-screen names (default: the speaker labels, without the therapist)",
        )
        parser.add_argument(
            "--speaker-map",
            metavar="FILE",
            help='JSON file {"raw tag": "entity"}; confirms the speaker map of the clips it covers',
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="replace clips whose transcript changed, if nobody has worked on them",
        )
        parser.add_argument("--group", help="the sample id's folder part, instead of each file's folder")
        parser.add_argument("--sample-id", help="sample id <group>/<clip> (a single transcript only)")
        parser.add_argument("--media-url", default="", help="media URL (a single transcript only)")

    def handle(self, *args, **options):
        project = self.get_project(options["project"])
        speaker_map = None
        if options["speaker_map"]:
            try:
                speaker_map = bounded_json.loads(Path(options["speaker_map"]).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise CommandError(f"--speaker-map {options['speaker_map']}: {exc}") from None
        ingest_options = services.IngestOptions(
            scenario=options["scenario"],
            participants=split_names(options["participants"] or ""),
            sample_id=options["sample_id"],
            group=options["group"],
            speaker_map=speaker_map,
            replace=options["replace"],
            media_url=options["media_url"],
        )
        files = _collect(options["paths"])
        handles = []
        uploads = []
        for name, path in files:
            upload = services.Upload(name=name, size=path.stat().st_size, read=path.read_bytes)
            if upload.is_media:
                handle = path.open("rb")
                handles.append(handle)
                upload.file = File(handle, name=path.name)
            uploads.append(upload)
        try:
            results = services.ingest_files(project, uploads, ingest_options)
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        finally:
            for handle in handles:
                handle.close()

        for r in results:
            if r.status == services.REFUSED:
                self.stdout.write(f"{r.status:<9} {r.message}")
            else:
                speakers = "speakers confirmed" if r.speaker_map_confirmed else "speakers to confirm"
                self.stdout.write(f"{r.status:<9} {r.sample_id}  ({r.cues} cues, {speakers})  <- {r.file}")
                for note in r.notes:
                    self.stdout.write(f"{'':<9} {note}")
        counts = {
            s: sum(r.status == s for r in results)
            for s in (services.CREATED, services.UNCHANGED, services.REPLACED, services.REFUSED)
        }
        self.stdout.write(", ".join(f"{n} {s}" for s, n in counts.items()))
        if counts[services.REFUSED]:
            raise CommandError(f"{counts[services.REFUSED]} of {len(results)} files refused")
