from django.core.management.base import CommandError

from ...synthetic import RELEASE_CLIPS, SyntheticError, generate
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Fill a project with a synthetic, adjudicated benchmark shaped like the real release "
        "(clips, rows, a draft, one revision per annotator, gold, submitted assignments). "
        "Annotator accounts <slug>_annotator1..N are created when missing (set their passwords with changepassword)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument(
            "--clips", type=int, default=RELEASE_CLIPS, help=f"default {RELEASE_CLIPS}, the full release"
        )
        parser.add_argument("--annotators", type=int, default=3)
        parser.add_argument("--seed", type=int, default=0, help="same seed, same documents")

    def handle(self, project, clips, annotators, seed, **options):
        project = self.get_project(project)
        try:
            counts = generate(project, clips=clips, annotators=annotators, seed=seed)
        except SyntheticError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"generated {counts['clips']} clips, {counts['rows']} rows "
            f"({counts['couple_clips']} couple and {counts['family_clips']} family clips), "
            f"{counts['documents']} documents ({counts['drafts']} drafts, "
            f"{counts['revisions']} revisions, {counts['gold']} gold), {counts['assignments']} assignments "
            f"for {', '.join(counts['annotators'])} into {project.slug} (seed {seed}) in {counts['seconds']:.1f} s"
        )
