"""API tokens for scripts: hashed, expiring, scoped, and revoked by a password change.

The tokens are django-rest-knox's: the key is 64 random hex characters shown
once when it is made, and only its SHA-512 digest is stored, so a copy of the
database holds no usable key. Each token expires ``API_TOKEN_DAYS`` days after
it was made (setting, default 90; knox deletes it when it is next presented
after that) and has a scope: ``read`` tokens may only read (GET, HEAD,
OPTIONS); ``read-write`` tokens may do whatever their user's role may.
Changing a user's password, by any path (the password page, the admin,
``manage.py changepassword``), deletes every token of that user.

Tokens are made and revoked with ``manage.py api_token``; ``GET
/api/v1/me/tokens/`` tells a script the scope and expiry of the token it sends.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import post_save
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from knox.auth import TokenAuthentication
from rest_framework.exceptions import APIException, AuthenticationFailed, PermissionDenied
from rest_framework.permissions import SAFE_METHODS

from .models import ApiToken, TokenScope

SCOPES = tuple(TokenScope.values)


def issue_token(user, *, scope: str = TokenScope.READ_WRITE, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token for ``user``: (its record, the key, which is never stored and cannot be shown again)."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    days = settings.API_TOKEN_DAYS if days is None else days
    if days < 1:
        raise ValueError("a token lives at least one day")
    return ApiToken.objects.create(user, expiry=timedelta(days=days), scope=scope)


def revoke_tokens(user) -> int:
    """Delete every token of ``user``; scripts that send one get 401 at once. Returns how many."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return deleted


def describe(token: ApiToken) -> dict:
    return {
        "prefix": token.token_key,
        "scope": token.scope,
        "created": token.created,
        "expires": token.expiry,
    }


class ScopedTokenAuthentication(TokenAuthentication):
    """knox's token authentication (``Authorization: Token <key>``) that holds a read-only token to reads.

    Refused here, during authentication, so that no view's own permission
    classes can forget it.
    """

    def authenticate(self, request):
        found = super().authenticate(request)
        if found is not None and found[1].scope == TokenScope.READ and request.method not in SAFE_METHODS:
            raise PermissionDenied(
                f"This API token is read-only ({found[1].token_key}…): it may only read. "
                "Writes need a read-write token (manage.py api_token USERNAME --scope read-write)."
            )
        return found

    def authenticate_credentials(self, token: bytes):
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:  # knox would let it out as a 500
            raise AuthenticationFailed("Invalid token.") from None
        return super().authenticate_credentials(token)


class ScopedTokenScheme(OpenApiAuthenticationExtension):
    """The token scheme as the OpenAPI schema (and /api/docs/) states it."""

    target_class = "annotation.tokens.ScopedTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "`Authorization: Token <key>`, with a key from `manage.py api_token USERNAME [--scope read-write]`. "
                f"Only a hash of the key is stored; a token expires {settings.API_TOKEN_DAYS} days (API_TOKEN_DAYS) "
                "after it is made and is revoked when its user's password changes. A `read` token may only send GET, "
                "HEAD and OPTIONS (403 otherwise); `read-write` may do whatever the user's role may. "
                "`GET /api/v1/me/tokens/` lists the caller's tokens."
            ),
        }


def caller_from_token(request):
    """The user an API request's token authenticates (any scope may be checked by the caller), or None.

    For the middleware that decides a body's limit before DRF runs; an
    invalid, expired or read-only-for-this-method token counts as no caller.
    """
    try:
        found = ScopedTokenAuthentication().authenticate(request)
    except APIException:  # AuthenticationFailed, PermissionDenied: DRF answers them properly later
        return None
    return found[0] if found else None


# --- a password change revokes the tokens ------------------------------------------------


def _revoke_on_password_change(sender, instance, created, **kwargs):
    # ``set_password`` leaves the new raw password in ``_password`` until the save is done (Django reads it to tell
    # the validators); a hash upgraded at login clears it first, so only a real change of password counts.
    if not created and getattr(instance, "_password", None) is not None:
        revoke_tokens(instance)


def connect_signals() -> None:
    post_save.connect(
        _revoke_on_password_change, sender=get_user_model(), dispatch_uid="tokens-revoke-on-password-change"
    )
