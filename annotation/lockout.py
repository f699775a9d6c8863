"""Login lockout: a limit per client address, and one per username that holds only where the failures came from.

django-axes counts failed logins per lockout parameter (here the username and
the address, each on its own) but compares every count with one limit. Keyed
on the pair, guessing over many usernames from one address never locked;
keyed on the address alone with the username's limit, five mistakes behind a
shared proxy address would lock everyone behind it. So each count has its own
limit: ``LOGIN_FAILURES_PER_ADDRESS`` (default 30; that address is locked for
every username) and ``LOGIN_FAILURES_PER_USERNAME`` (default 5), both for
``AXES_COOLOFF_TIME``.

The choice for the username's limit: it locks the username **at the
addresses that sent its failures**, not everywhere. A username locked from
every address let anyone lock anyone, a lead or an admin included, with five
anonymous wrong passwords from afar. Now the owner, from an address that has
sent no wrong password for that username, still gets in with the right one;
every address that has (the guesser's) stays locked, right password or not,
and a new address is locked after its first wrong guess. So a guesser gets
``LOGIN_FAILURES_PER_USERNAME`` guesses, then one per fresh address, and the
address limit still bounds each address. (The alternative, a short growing
delay, would hold a web worker per guess.) Behind reverse proxies,
``TRUSTED_PROXY_COUNT`` makes the address the client's (from
X-Forwarded-For) rather than the proxy's: ``client_address``.

The password change page asks for the old password through the same
``authenticate`` (``ThrottledPasswordChangeForm``): its wrong old passwords
count and lock exactly as failed logins do.

django-axes' maintainers point to a custom handler for per-parameter limits
(jazzband/django-axes#661); this is that handler.
"""

from __future__ import annotations

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_lockout_parameters
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordChangeForm
from django.core.exceptions import ValidationError
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
    limit: a count reaches the lock exactly when it reaches its own limit. The
    username's count is left out at an address that has not failed for that
    username within the cool-off: there the username is not locked.
    """

    def get_failures(self, request, credentials=None) -> int:
        unit = settings.AXES_FAILURE_LIMIT
        parameters = get_lockout_parameters(request, credentials)
        worst = 0
        for parameter, attempts in zip(parameters, self.get_user_attempts(request, credentials)):
            count = sum(attempts.values_list("failures_since_start", flat=True))
            if parameter == "username" and count and not self._failed_here(request, credentials):
                continue
            worst = max(worst, count * unit // _limit_of(parameter))
        return worst

    @staticmethod
    def _failed_here(request, credentials) -> bool:
        """Whether this address sent a wrong password for this username within the cool-off."""
        return AccessAttempt.objects.filter(
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,
            attempt_time__gte=get_cool_off_threshold(request),
        ).exists()

    def reset_user_attempts(self, request, credentials=None) -> int:
        """After a successful login (AXES_RESET_ON_SUCCESS), forget the user's own failures from this address.

        django-axes would delete every record matching either parameter, the
        address's failures under other usernames included: one good account
        would then reset an attacker's count between two rounds of guesses.
        """
        username = get_client_username(request, credentials)
        deleted, _ = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).delete()
        return deleted


# --- the password change page -----------------------------------------------------------------


class ThrottledPasswordChangeForm(PasswordChangeForm):
    """Django's password change form, checking the old password through ``authenticate``.

    Django's own form calls ``user.check_password``, which django-axes never
    sees: wrong old passwords could be tried without limit from a signed-in
    session. Through ``authenticate`` each one is a failed login for the
    user's username and the client's address, counted and locked (429) as on
    the login page.
    """

    def __init__(self, user, *args, request=None, **kwargs):
        self.request = request
        super().__init__(user, *args, **kwargs)

    def clean_old_password(self):
        old_password = self.cleaned_data["old_password"]
        checked = authenticate(self.request, username=self.user.get_username(), password=old_password)
        if checked is None or checked.pk != self.user.pk:
            raise ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return old_password


class PasswordChangeView(auth_views.PasswordChangeView):
    form_class = ThrottledPasswordChangeForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "request": self.request}
