import sys

from django.core.management.base import CommandError

from ...roles import ROLES
from ...services import ServiceError, create_user
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Create a user with a role. The password comes from stdin (--password-stdin) or is generated and printed."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=ROLES)
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password-stdin", action="store_true", help="read the password from the first line of stdin"
        )

    def handle(self, username, role, email, password_stdin, **options):
        password = None
        if password_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
            if not password:
                raise CommandError("--password-stdin given but stdin held no password")
        try:
            user, generated = create_user(username, role, password=password, email=email)
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"created {role} {user.username}")
        if generated:
            self.stdout.write(f"password: {generated}")
