import json
from pathlib import Path

from django.core.management.base import CommandError

from tasks.profiles import DEFAULT_PROFILE, PROFILES

from ...groups import GroupMapError, read_group_map
from ...models import Release
from ...releases.card.markdown import count_noun
from ...releases.freeze import FreezeError, freeze, reproduce
from ...releases.manifest import ReleaseDirExists
from ...releases.preview import preview_freeze
from ...releases.splits import SplitError
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Freeze a versioned benchmark release of a project's adjudicated gold into a new folder "
        "(data, task instances, stats, agreement, dataset card, Croissant, figures, manifest), "
        "record it, and move the released clips to state 'released'. With --dry-run, only show what "
        "the freeze would release (clips, relationship groups, rows and task instances per scenario and "
        "split, what keeps other clips out) and write nothing. With --reproduce, rebuild an existing "
        "release from its recorded inputs and clip list into DIR and check it is byte-identical."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version names the release here, replacing Django's "print the Django version" option.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--version", help="e.g. 1.0.0; a new version is a new release (required unless --dry-run)")
        parser.add_argument("--seed", type=int, help="split and sampling seed (required unless --reproduce)")
        parser.add_argument(
            "--splits", default="0.7,0.1,0.2", help="train,validation,test shares of rows (default 0.7,0.1,0.2)"
        )
        parser.add_argument(
            "--groups", metavar="FILE", help="clip → group map: lines '<sample_id>,<group>' or a JSON object"
        )
        parser.add_argument(
            "--accept-incomplete",
            default="",
            metavar="SCENARIO[,SCENARIO]",
            help=(
                "freeze even though these scenarios' groups cannot reach every split (the card says so in its first "
                "lines)"
            ),
        )
        parser.add_argument(
            "--task-profile",
            default=None,
            choices=sorted(PROFILES),
            help=(
                f"the rules that build and score the task instances (default {DEFAULT_PROFILE}: the public "
                "benchmark's evaluation code; see docs/tasks.md)"
            ),
        )
        parser.add_argument(
            "-o", "--output", help="the release folder to create (must not exist; required unless --dry-run)"
        )
        parser.add_argument("--dry-run", action="store_true", help="show what the freeze would release; write nothing")
        parser.add_argument(
            "--json", dest="as_json", action="store_true", help="with --dry-run: print the preview as JSON"
        )
        parser.add_argument(
            "--reproduce", action="store_true", help="rebuild the recorded release VERSION into the folder and compare"
        )

    def handle(
        self,
        project,
        version,
        seed,
        splits,
        groups,
        accept_incomplete,
        output,
        dry_run,
        as_json,
        reproduce,
        task_profile=None,
        **options,
    ):
        project = self.get_project(project)
        accepted = [s.strip() for s in accept_incomplete.split(",") if s.strip()]
        try:
            group_map = read_group_map(Path(groups).read_text(encoding="utf-8")) if groups else None
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read the group map {groups}: {exc}") from None
        except GroupMapError as exc:
            raise CommandError(f"{groups}: {exc}") from None
        try:
            if reproduce:
                return self._reproduce(
                    project, self._required(version, "--version"), Path(self._required(output, "-o"))
                )
            if seed is None:
                raise CommandError("--seed is required: the same seed gives the same splits and samples")
            if dry_run:
                return self._dry_run(
                    project,
                    seed,
                    splits,
                    group_map,
                    accepted,
                    as_json=as_json,
                    every_group=options["verbosity"] > 1,
                    task_profile=task_profile,
                )
            version, out = self._required(version, "--version"), Path(self._required(output, "-o"))
            release, built = freeze(
                project,
                version=version,
                seed=seed,
                ratios=splits,
                out_dir=out,
                group_map=group_map,
                accept_incomplete=accepted,
                task_profile=task_profile,
            )
        except (FreezeError, SplitError, ReleaseDirExists) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"froze release {release.version} of {project.slug}: {count_noun(len(built.clip_ids), 'clip')}, "
            f"{count_noun(built.rows, 'row')}, {count_noun(len(built.files), 'file')} in {release.path} "
            f"(task profile {built.manifest['task_profile']['name']})"
        )
        if built.skipped:
            self.stdout.write(
                f"left out {len(built.skipped)} adjudicated clips without gold on every row: "
                f"{', '.join(built.skipped[:10])}"
            )
        for scenario in built.inputs.get("accepted_incomplete", []):
            self.stdout.write(f"scenario {scenario} does not reach every split; the card says so in its first lines")
        if options["verbosity"] > 1:
            self.stdout.write("seconds per stage: " + ", ".join(f"{k} {v:.2f}" for k, v in built.timings.items()))

    @staticmethod
    def _required(value, flag: str):
        if not value:
            raise CommandError(f"{flag} is required")
        return value

    def _dry_run(
        self, project, seed, splits, group_map, accepted, *, as_json: bool, every_group: bool, task_profile=None
    ):
        preview = preview_freeze(
            project,
            seed=seed,
            ratios=splits,
            group_map=group_map,
            accept_incomplete=accepted,
            task_profile=task_profile,
        )
        if as_json:
            self.stdout.write(json.dumps(preview.as_dict(), indent=2, ensure_ascii=False))
        else:
            self.stdout.write("dry run: nothing was written")
            self.stdout.write("\n".join(preview.lines(every_group=every_group)))
        if preview.refusal:
            raise CommandError(f"a freeze with these settings would be refused: {preview.refusal}")

    def _reproduce(self, project, version, out):
        release = Release.objects.filter(project=project, version=version).first()
        if release is None:
            raise CommandError(f"there is no release {version} of {project.slug} to reproduce")
        built, verification = reproduce(release, out)
        if not verification.ok:
            raise CommandError(
                f"rebuilt release {version} in {out} differs from the recorded one:\n" + "\n".join(verification.lines())
            )
        if verification.regenerated:  # a card an older template wrote: said, the data still identical
            same = len(built.files) - len(verification.regenerated)
            self.stdout.write(
                f"rebuilt release {version} of {project.slug} in {out}: {same} files byte-identical to the recorded "
                "release; " + "; ".join(verification.notes)
            )
            return
        self.stdout.write(
            f"rebuilt release {version} of {project.slug} in {out}: all {len(built.files)} files byte-identical to the "
            "recorded release"
        )
