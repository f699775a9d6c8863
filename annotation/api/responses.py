"""Answers shared by the capabilities' endpoints."""

from rest_framework import status
from rest_framework.response import Response

from ..services import ClipClosed, ServiceError


def clip_closed(exc: ClipClosed) -> Response:
    """409 for work on a discarded or released clip: the reason, and the clip's state.

    Unlike a stale-version 409 the body has no ``current``: there is nothing to
    merge, the clip takes no more work.
    """
    return Response({"detail": str(exc), "clip_state": exc.state}, status=status.HTTP_409_CONFLICT)


def refused(exc: ServiceError, code: int = status.HTTP_422_UNPROCESSABLE_ENTITY) -> Response:
    """A service's refusal (422 unless ``code`` says otherwise), its reason as ``detail``."""
    return Response({"detail": str(exc)}, status=code)
