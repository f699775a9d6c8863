from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from ...assignment.services import assign_clips
from ...demo import DEMO_CLIPS, DEMO_TRANSCRIPTS, demo_media_file
from ...models import Project
from ...rescue_format.importer import import_rescue
from ...services import create_project, create_user
from ._base import AuditedCommand

DEMO_PROJECT = "demo"
PIPELINE_PROJECT = "demo-pipeline"
# Fixed, printed credentials: for a local demo only, refused in production.
DEMO_ACCOUNTS = [
    ("lead", "lead", "demo-lead-2026"),
    ("annotator1", "annotator", "rescue-demo-coder-1"),
    ("annotator2", "annotator", "rescue-demo-coder-2"),
    ("annotator3", "annotator", "rescue-demo-coder-3"),
]


DEMO_GUIDANCE_LABELS = ["accusation", "disclosure", "request"]
DEMO_GUIDANCE_WHY = (
    "In a trial run of the demo the three annotators split three ways on Maya's opening turn "
    "(demo_maya_and_tobias/001_session_opening, row 2): accusation, disclosure and request."
)
DEMO_GUIDANCE = (
    "Ask what the turn mainly does to the listener, not which words it contains.\n"
    "Accusation: the turn holds the other person at fault for what they do or fail to do. A complaint stays an "
    'accusation when it also mentions how the speaker feels or what they wait for ("I sit on the couch and wait for '
    "him to be done, and he's never done\").\n"
    "Disclosure: the speaker's own feeling, fear or need is the point of the turn, and it is not used to fault the "
    'other ("I feel like I\'m failing at both things").\n'
    'Request: the turn asks the listener for an answer, a change or reassurance, in so many words ("Can you just put '
    "the phone down while we're talking about it?\"). A complaint that only implies a wish is not a request.\n"
    "When a turn does two of these, choose the one the rest of the turn serves; say which in a comment if unsure."
)


class Command(AuditedCommand):
    help = "Load the fictional demo clips and demo accounts (idempotent; refused in production)."

    def handle(self, **options):
        if settings.PRODUCTION:
            raise CommandError(
                "load_demo creates accounts with published passwords and is refused when DJANGO_ENV=production"
            )
        User = get_user_model()
        users = {}
        for username, role, password in DEMO_ACCOUNTS:
            user = User.objects.filter(username=username).first()
            if user is None:
                user, _ = create_user(username, role, password=password)
            users[username] = user
        project = Project.objects.filter(slug=DEMO_PROJECT).first() or create_project(
            DEMO_PROJECT, name="Demo: fictional couple and family sessions"
        )
        if not project.clips.exists():
            result = import_rescue(DEMO_CLIPS, project, as_source="draft")
            self.stdout.write(f"loaded {len(result.created)} demo clips ({result.rows} rows) with drafts")
        self._attach_media(project)
        demo_annotators = [users[name] for name, role, _ in DEMO_ACCOUNTS if role == "annotator"]
        plan = assign_clips(
            project,
            users=demo_annotators,
            per_clip=len(demo_annotators),
            calibration=["demo_priya_and_jonah/001_whose_turn"],
        )
        if plan.created:
            self.stdout.write(
                f"assigned every demo clip to {len(demo_annotators)} annotators (one clip in calibration mode, "
                "starting empty)"
            )
        self._load_demo_guidance(project, users["lead"])
        self._load_pipeline_demo(users["lead"])
        self.stdout.write("demo accounts (local demo only):")
        for username, role, password in DEMO_ACCOUNTS:
            self.stdout.write(f"  {role:<10} {username:<11} password: {password}")

    def _attach_media(self, project) -> None:
        """The demo clips that have a committed media file get it (a test pattern with their lines spoken), so that
        the player, the replay keys, the speed and the pre-roll can be tried."""
        from django.core.files import File

        for clip in project.clips.filter(media=""):
            path = demo_media_file(clip.sample_id)
            if path.is_file():
                with path.open("rb") as f:
                    clip.media.save(path.name, File(f), save=True)
                self.stdout.write(f"attached {path.name} to {clip.sample_id} (a test pattern with its lines spoken)")

    def _load_demo_guidance(self, project, lead) -> None:
        """The demo project's first piece of guidance: the three labels its three annotators
        split on when they coded Maya's opening turn (accusation / disclosure / request)."""
        from ...codebook.services import write_guidance

        if project.guidance_versions.exists():
            return
        write_guidance(
            project,
            lead,
            field="utterance_type",
            labels=DEMO_GUIDANCE_LABELS,
            text=DEMO_GUIDANCE,
            why=DEMO_GUIDANCE_WHY,
        )
        self.stdout.write(
            "wrote the demo project's guidance for accusation / disclosure / request (guidance version 1)"
        )

    def _load_pipeline_demo(self, lead) -> None:
        """A second project that shows the front of the pipeline: the demo transcripts
        ingested, their speakers mapped, and offline pre-annotation (no LLM) run."""
        from ...ingest import services as ingest
        from ...preannotate.services import start_preannotation

        if Project.objects.filter(slug=PIPELINE_PROJECT).exists():
            return
        project = create_project(PIPELINE_PROJECT, name="Demo pipeline: transcripts ingested and pre-annotated offline")
        for scenario in ("couple", "family"):
            uploads = [
                ingest.Upload(name=f"{path.parent.name}/{path.name}", size=path.stat().st_size, read=path.read_bytes)
                for path in sorted(DEMO_TRANSCRIPTS.glob("*/*"))
                if (path.parent.name.endswith("_family")) == (scenario == "family")
            ]
            ingest.ingest_files(project, uploads, ingest.IngestOptions(scenario=scenario), actor=lead)
        ingest.accept_suggested_speakers(project.clips.all(), actor=lead)
        start_preannotation(project, user=lead, offline_provider=True)
        self.stdout.write(
            f"ingested {project.clips.count()} demo transcripts into {PIPELINE_PROJECT} and pre-annotated them offline"
        )
