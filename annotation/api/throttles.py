"""API request rates, per signed-in user and per anonymous address.

DRF's throttles keep their rates in a class attribute read once at import;
these read ``API_THROTTLE_RATES`` (settings, from the environment) on every
request, so a deployment, a benchmark or a test can change them without a
restart of the import machinery. A rate of ``None`` switches a scope off.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class _RateFromSettings:
    def get_rate(self):
        return settings.API_THROTTLE_RATES.get(self.scope)


class AnonymousRate(_RateFromSettings, AnonRateThrottle):
    """Callers without a session or token, counted per client address."""


class UserRate(_RateFromSettings, UserRateThrottle):
    """Signed-in callers (session or token), counted per user."""
