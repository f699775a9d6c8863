from pathlib import Path

from django.core.management.base import CommandError

from ...models import Release
from ...releases.freeze import FreezeError, freeze, reproduce
from ...releases.manifest import ReleaseDirExists
from ...releases.splits import SplitError
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Freeze a versioned benchmark release of a project's adjudicated gold into a new folder "
        "(data, task instances, stats, agreement, dataset card, Croissant, figures, manifest), "
        "record it, and move the released clips to state 'released'. With --reproduce, rebuild an "
        "existing release from its recorded inputs and clip list into DIR and check it is byte-identical."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version names the release here, replacing Django's "print the Django version" option.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--version", required=True, help="e.g. 1.0.0; a new version is a new release")
        parser.add_argument("--seed", type=int, help="split and sampling seed (required unless --reproduce)")
        parser.add_argument("--splits", default="0.7,0.1,0.2", help="train,validation,test shares of rows (default 0.7,0.1,0.2)")
        parser.add_argument("-o", "--output", required=True, help="the release folder to create (must not exist)")
        parser.add_argument("--reproduce", action="store_true", help="rebuild the recorded release VERSION into the folder and compare")

    def handle(self, project, version, seed, splits, output, reproduce, **options):
        project = self.get_project(project)
        out = Path(output)
        try:
            if reproduce:
                return self._reproduce(project, version, out)
            if seed is None:
                raise CommandError("--seed is required: the same seed gives the same splits and samples")
            release, built = freeze(project, version=version, seed=seed, ratios=splits, out_dir=out)
        except (FreezeError, SplitError, ReleaseDirExists) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"froze release {release.version} of {project.slug}: {len(built.clip_ids)} clips, {built.rows} rows, {len(built.files)} files in {release.path}")
        if built.skipped:
            self.stdout.write(f"left out {len(built.skipped)} adjudicated clips without gold on every row: {', '.join(built.skipped[:10])}")
        if options["verbosity"] > 1:
            self.stdout.write("seconds per stage: " + ", ".join(f"{k} {v:.2f}" for k, v in built.timings.items()))

    def _reproduce(self, project, version, out):
        release = Release.objects.filter(project=project, version=version).first()
        if release is None:
            raise CommandError(f"there is no release {version} of {project.slug} to reproduce")
        built, verification = reproduce(release, out)
        if not verification.ok:
            raise CommandError(f"rebuilt release {version} in {out} differs from the recorded one:\n" + "\n".join(verification.lines()))
        self.stdout.write(f"rebuilt release {version} of {project.slug} in {out}: all {len(built.files)} files byte-identical to the recorded release")
