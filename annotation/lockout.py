"""Login lockout with one limit per username and another, higher, per client address.

django-axes counts failed logins per lockout parameter (here the username and
the address, each on its own) but compares every count with one limit. Keyed
on the pair, as before, guessing over many usernames from one address never
locked; keyed on the address alone with the username's limit, five mistakes
behind a shared proxy address would lock everyone behind it. So each count
has its own limit: ``LOGIN_FAILURES_PER_USERNAME`` (default 5; the account is
locked from every address) and ``LOGIN_FAILURES_PER_ADDRESS`` (default 30;
that address is locked for every username), both for ``AXES_COOLOFF_TIME``.
Behind reverse proxies, ``TRUSTED_PROXY_COUNT`` makes the address the
client's (from X-Forwarded-For) rather than the proxy's: ``client_address``.

django-axes' maintainers point to a custom handler for per-parameter limits
(jazzband/django-axes#661); this is that handler.
"""
from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_lockout_parameters
from axes.models import AccessAttempt
from django.conf import settings
from rest_framework.throttling import BaseThrottle


def client_address(request) -> str:
    """The client's address, read as the API's anonymous rate reads it (DRF's ``NUM_PROXIES``,
    which settings set to ``TRUSTED_PROXY_COUNT``): REMOTE_ADDR, or behind N trusted proxies the
    N-th address from the right of X-Forwarded-For, the one the outermost trusted proxy saw
    (entries further left are whatever the client sent, so they are never believed)."""
    return BaseThrottle().get_ident(request)


def _limit_of(parameter) -> int:
    if parameter == "ip_address":
        return settings.LOGIN_FAILURES_PER_ADDRESS
    return settings.LOGIN_FAILURES_PER_USERNAME


class PerParameterLimitHandler(AxesDatabaseHandler):
    """Failures counted per username and per address, each against its own limit.

    django-axes locks when ``get_failures() >= AXES_FAILURE_LIMIT`` (which is
    ``LOGIN_FAILURES_PER_USERNAME``). So each count is scaled into units of that
    limit: a count reaches the lock exactly when it reaches its own limit.
    """

    def get_failures(self, request, credentials=None) -> int:
        unit = settings.AXES_FAILURE_LIMIT
        parameters = get_lockout_parameters(request, credentials)
        worst = 0
        for parameter, attempts in zip(parameters, self.get_user_attempts(request, credentials)):
            count = sum(attempts.values_list("failures_since_start", flat=True))
            worst = max(worst, count * unit // _limit_of(parameter))
        return worst

    def reset_user_attempts(self, request, credentials=None) -> int:
        """After a successful login (AXES_RESET_ON_SUCCESS), forget the user's own failures from this address.

        django-axes would delete every record matching either parameter, the
        address's failures under other usernames included: one good account
        would then reset an attacker's count between two rounds of guesses.
        """
        username = get_client_username(request, credentials)
        deleted, _ = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).delete()
        return deleted
