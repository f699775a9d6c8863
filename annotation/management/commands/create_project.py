from django.core.management.base import CommandError

from ...services import ServiceError, create_project
from ...taxonomy import DEFAULT_VERSION
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Create a project (a benchmark under construction)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--annotators-per-clip", type=int, default=3)
        parser.add_argument("--taxonomy-version", default=DEFAULT_VERSION)

    def handle(self, slug, name, annotators_per_clip, taxonomy_version, **options):
        try:
            project = create_project(
                slug, name=name, annotators_per_clip=annotators_per_clip, taxonomy_version=taxonomy_version
            )
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"created project {project.slug} ({project.name}), {project.annotators_per_clip} annotators per clip, "
            f"taxonomy v{project.taxonomy_version}"
        )
