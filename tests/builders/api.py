"""Clients as a given user: a DRF one for the API, Django's for pages and plain JSON requests."""

from django.test import Client
from rest_framework.test import APIClient


def api_for(user) -> APIClient:
    """A DRF client authenticated as ``user`` (force_authenticate: no session, no token)."""
    client = APIClient()
    client.force_authenticate(user)
    return client


def client_for(user) -> Client:
    """A Django test client logged in as ``user`` (a session, as a browser has)."""
    client = Client()
    client.force_login(user)
    return client
