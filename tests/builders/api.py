"""API clients as a given user."""

from rest_framework.test import APIClient


def api_for(user) -> APIClient:
    """A DRF client authenticated as ``user`` (force_authenticate: no session, no token)."""
    client = APIClient()
    client.force_authenticate(user)
    return client
