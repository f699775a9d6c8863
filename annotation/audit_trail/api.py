"""``/api/v1/projects/{slug}/history/``: the project's audit trail for scripts (leads only)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..api.permissions import lead_only
from . import selectors
from .views import lead_project

IsLead = lead_only("The audit trail is for leads.")


class ProjectHistoryView(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(
        summary="The project's audit trail, newest first",
        parameters=[
            OpenApiParameter("kind", str, enum=list(selectors.KIND_BY_KEY), description="Only records of this kind."),
            OpenApiParameter("user", str, description="Only writes by this username."),
            OpenApiParameter("source", str, enum=list(selectors.SOURCES), description="Only writes from this source."),
            OpenApiParameter("clip", str, description="Only records about this clip (sample id)."),
            OpenApiParameter("cursor", str, description="The `next` cursor of the previous page."),
        ],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description='{"entries": [{"id", "kind", "object_id", "object", "action", "date", "user", "source", '
                '"changes": [{"field", "old", "new"}]}], "next": cursor or null}',
            ),
            400: OpenApiResponse(OpenApiTypes.OBJECT, description="A filter or the cursor is invalid."),
        },
    )
    def get(self, request, slug: str):
        project = lead_project(request.user, slug)
        try:
            filters = selectors.Filters.from_query(request.query_params)
        except selectors.BadFilter as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        page = selectors.project_history(project, filters)
        return Response({"entries": [e.as_dict() for e in page.entries], "next": page.next_cursor})
