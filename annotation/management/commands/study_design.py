import json

from django.core.management.base import CommandError

from ...models import WorkScope
from ...services import ServiceError
from ...study import selectors, services
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Show or change a project's study design: which work counts as coded, how many coders must submit before a "
        "clip is adjudicated, the share of clips coded from empty, and what a quick confirmation is."
    )

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument(
            "--work-scope", choices=WorkScope.values, help="which coders' values count (default: submitted)"
        )
        parser.add_argument("--min-coders", help="coders who must submit before adjudication: a number, or 'all'")
        parser.add_argument(
            "--from-empty-share", type=float, help="share of clips coded from empty, 0 to 1 (0.2: 20%%)"
        )
        parser.add_argument(
            "--quick-confirm-seconds",
            type=int,
            help="a draft row confirmed unchanged faster than this is a quick confirmation",
        )
        parser.add_argument("--reason", default="", help="why (kept in the project's history)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the settings as JSON")

    def handle(
        self, project, work_scope, min_coders, from_empty_share, quick_confirm_seconds, reason, as_json, **options
    ):
        project = self.get_project(project)
        changes = {}
        if work_scope is not None:
            changes["work_scope"] = work_scope
        if min_coders is not None:
            if min_coders == "all":
                changes["adjudication_min_coders"] = None
            elif min_coders.isdigit():
                changes["adjudication_min_coders"] = int(min_coders)
            else:
                raise CommandError(f"--min-coders takes a whole number from 1 or 'all', got {min_coders!r}")
        if from_empty_share is not None:
            changes["from_empty_share"] = from_empty_share
        if quick_confirm_seconds is not None:
            changes["quick_confirm_seconds"] = quick_confirm_seconds
        if changes:
            try:
                project = services.update_design(project, None, reason=reason, **changes)
            except ServiceError as exc:
                raise CommandError(str(exc)) from None
        design = selectors.design_of(project)
        if as_json:
            self.stdout.write(json.dumps(design, indent=2))
            return
        self.stdout.write(
            f"{project.slug}: coded work = {design['work_scope_label']}; before adjudication, "
            f"{design['adjudication_min_coders_label']} "
            f"must have submitted; {design['from_empty_share']:.0%} of clips coded from empty; a quick confirmation is "
            "under "
            f"{design['quick_confirm_seconds']} s"
        )
