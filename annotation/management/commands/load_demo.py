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


# Work the demo annotators have already done, so that a new team sees adjudication, agreement figures and the
# annotators' record at once, and still has clips to code. Each coder has a habit: annotator3 keeps every draft
# (the one-key review pass), annotator1 and annotator2 edit where they read a turn differently. The family clip is
# submitted by all three (ready to adjudicate, with disagreements); the couple clip with the video by annotator2
# and annotator3 only: sign in as annotator1 to code and submit it, then adjudicate it as the lead. Edits are
# {row_index: {key: value}} on the coder's copy of the draft.
DEMO_WORK = {
    "demo_hartwell_family/001_after_the_concert": {
        "annotator1": {5: {"utterance_type": "accusation"}, 12: {"utterance_type": "repair"}},
        "annotator2": {
            2: {"utterance_type": "accusation"},
            9: {"utterance_type": "accusation"},
            10: {"relation_pattern": "cross_generational_coalition"},
        },
        "annotator3": {},
    },
    "demo_maya_and_tobias/001_session_opening": {
        "annotator2": {2: {"utterance_type": "disclosure"}, 7: {"utterance_type": "recollection"}},
        "annotator3": {},
    },
}


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
        self._load_demo_work(project, users)
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

    def _load_demo_work(self, project, users) -> None:
        """The coders' work of ``DEMO_WORK``, saved and submitted through the workspace's own services (validated and
        audited as if typed), once: nothing is done when any demo assignment is already submitted."""
        from ...models import Assignment, AssignmentState, Revision
        from ...workspace.services import save_revision, set_reviewed, submit_assignment

        if Assignment.every.filter(clip__project=project, state=AssignmentState.SUBMITTED).exists():
            return
        for sample_id, coders in DEMO_WORK.items():
            clip = project.clips.get(sample_id=sample_id)
            for username, edits in coders.items():
                user = users[username]
                revisions = Revision.objects.filter(row__clip=clip, annotator=user).select_related("row")
                for revision in revisions.order_by("row__row_index"):
                    content = {**revision.content, **edits.get(revision.row.row_index, {})}
                    if content != revision.content:
                        save_revision(revision.pk, user, content, revision.version, reviewed=True)
                    else:
                        set_reviewed(revision.pk, user, revision.version, True)
                submit_assignment(Assignment.every.get(clip=clip, annotator=user), user)
            self.stdout.write(f"{', '.join(coders)} coded and submitted {sample_id}")

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
