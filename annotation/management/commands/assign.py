from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from ...assignment.selectors import annotator_progress
from ...assignment.services import assign_clips
from ...services import ServiceError
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Assign a project's clips to annotators: k per clip, balanced load, optional calibration subset starting empty."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--per-clip", type=int, help="annotators per clip (default: the project's setting)")
        parser.add_argument("--annotators", help="comma-separated usernames (default: every active annotator)")
        parser.add_argument("--clips", nargs="*", help="sample ids (default: every assignable clip)")
        group = parser.add_mutually_exclusive_group()
        group.add_argument(
            "--calibration",
            type=int,
            help="number of clips whose assignments start empty (chosen with --seed); without this or "
            "--calibration-clips, "
            "the study design's from-empty share decides (manage.py study_design)",
        )
        group.add_argument("--calibration-clips", nargs="+", help="sample ids whose assignments start empty")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, project, per_clip, annotators, clips, calibration, calibration_clips, seed, **options):
        project = self.get_project(project)
        users = None
        if annotators:
            names = [n.strip() for n in annotators.split(",") if n.strip()]
            users = list(get_user_model().objects.filter(username__in=names))
            missing = sorted(set(names) - {u.username for u in users})
            if missing:
                raise CommandError(f"no such users: {', '.join(missing)}")
        clip_qs = project.clips.filter(sample_id__in=clips) if clips else None
        try:
            plan = assign_clips(
                project,
                clips=clip_qs,
                users=users,
                per_clip=per_clip,
                calibration=calibration_clips or calibration,
                seed=seed,
            )  # None: the design decides
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(plan.summary)
        for line in plan.skipped:
            self.stdout.write(f"  skipped {line}")
        for line in plan.refused:
            self.stdout.write(f"  left out: {line}")
        for p in annotator_progress(project):
            self.stdout.write(f"  {p['annotator']}: {p['clips']} clips, {p['reviewed']}/{p['rows']} rows reviewed")
