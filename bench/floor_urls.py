"""The project's URLs plus a bench-only endpoint: the floor of a row save.

The floor is what any authenticated save through this stack must cost at
least: the same middleware, the same DRF authentication (session or token),
the same JSON body parsed, and one UPDATE of one column of the caller's own
revision (``updated_at``; the version is left alone so the real saves that
share these rows keep valid versions). The benchmark compares the real save
against it under the same load.
"""

from django.urls import path
from django.utils import timezone
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Revision
from rescue_annot.urls import urlpatterns as project_urlpatterns


class SaveFloor(APIView):
    """PUT: touch one of my revisions with a single UPDATE and return a small JSON."""

    def put(self, request, revision_id: int):
        _body = request.data  # parse the body like the real save does (same payload)
        touched = Revision.objects.filter(pk=revision_id, annotator=request.user).update(updated_at=timezone.now())
        return Response({"id": revision_id, "touched": touched}, status=200 if touched else 404)


urlpatterns = [
    path("bench/floor/revisions/<int:revision_id>/", SaveFloor.as_view(), name="bench-save-floor"),
    *project_urlpatterns,
]
