from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.utils import timezone

from ...models import ApiToken, TokenScope
from ...tokens import issue_token, revoke_tokens
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Make an API token for a user's scripts (read-only unless --scope read-write), list their tokens, or revoke "
        "them. Only a hash of each key is stored: the key is printed once. Tokens expire after API_TOKEN_DAYS "
        f"(now {settings.API_TOKEN_DAYS}) days and are revoked when the user's password changes."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--scope",
            choices=[TokenScope.READ, TokenScope.READ_WRITE],
            default=TokenScope.READ,
            help="read: GET/HEAD/OPTIONS only (the default); read-write: whatever the user's role may do",
        )
        parser.add_argument(
            "--days", type=int, default=None, help="days until the token expires (default API_TOKEN_DAYS)"
        )
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--list", action="store_true", help="list the user's tokens (prefix, scope, expiry); keys are never shown"
        )
        action.add_argument(
            "--revoke",
            action="store_true",
            help="delete every token of the user: scripts using them stop working at once",
        )
        action.add_argument("--rotate", action="store_true", help="revoke every token of the user, then make a new one")

    def handle(self, username, scope, days, list, revoke, rotate, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user named {username!r}")
        if list:
            tokens = ApiToken.objects.filter(user=user, expiry__gt=timezone.now()).order_by("created")
            if not tokens:
                self.stdout.write(f"{username} has no token")
            for token in tokens:
                self.stdout.write(
                    f"{token.token_key}…  {token.scope:<10}  made {token.created:%Y-%m-%d}  expires "
                    f"{token.expiry:%Y-%m-%d}"
                )
            return
        if revoke:
            deleted = revoke_tokens(user)
            self.stdout.write(f"revoked {deleted} token(s) of {username}" if deleted else f"{username} had no token")
            return
        if rotate:
            self.stdout.write(f"revoked {revoke_tokens(user)} token(s) of {username}")
        try:
            token, key = issue_token(user, scope=scope, days=days)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"new {token.get_scope_display()} token for {username}, expires {token.expiry:%Y-%m-%d %H:%M} UTC:"
        )
        self.stdout.write(key)
        self.stdout.write(
            "send it as the header  Authorization: Token <key>  (it is shown only now; only its hash is kept)"
        )
        if scope == TokenScope.READ:
            self.stdout.write("it may only read; make one with --scope read-write to write")
