from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token

from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Create (or rotate) a user's API token for scripts, or revoke it."

    def add_arguments(self, parser):
        parser.add_argument("username")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--revoke", action="store_true", help="delete the token: scripts using it stop working at once")
        action.add_argument("--rotate", action="store_true", help="replace an existing token with a new one")

    def handle(self, username, revoke, rotate, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user named {username!r}")
        if revoke:
            deleted, _ = Token.objects.filter(user=user).delete()
            self.stdout.write(f"revoked the token of {username}" if deleted else f"{username} had no token")
            return
        if rotate:
            Token.objects.filter(user=user).delete()
        token, created = Token.objects.get_or_create(user=user)
        self.stdout.write(f"{'new ' if created else ''}token for {username}: {token.key}")
        self.stdout.write("send it as the header  Authorization: Token <key>")
