"""Shared plumbing for the project's management commands."""

from django.core.management.base import BaseCommand, CommandError

from ...audit import audit_source
from ...models import Project


class AuditedCommand(BaseCommand):
    """A command whose writes are audited with source ``cli``."""

    def execute(self, *args, **options):
        with audit_source("cli"):
            return super().execute(*args, **options)

    @staticmethod
    def get_project(slug: str) -> Project:
        try:
            return Project.objects.get(slug=slug)
        except Project.DoesNotExist:
            raise CommandError(f"no project {slug!r}; create it with `manage.py create_project {slug}`") from None
