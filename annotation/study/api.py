"""``/api/v1/projects/{slug}/design/``: the study design for scripts (leads only).

``GET`` returns the settings; ``PATCH`` changes the ones it names and answers
with all of them, or 400 with a message naming the setting that is wrong.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from ..api.permissions import lead_only
from ..models import WorkScope
from ..services import ServiceError
from . import selectors, services

IsStudyLead = lead_only("only leads and admins read or set the study design")


class DesignSerializer(serializers.Serializer):
    work_scope = serializers.ChoiceField(choices=WorkScope.values, required=False)
    adjudication_min_coders = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=services.MAX_MIN_CODERS,
        help_text="null: every assigned coder",
    )
    from_empty_share = serializers.FloatField(
        required=False, min_value=0, max_value=1, help_text="0.2 reserves 20% of clips"
    )
    quick_confirm_seconds = serializers.IntegerField(required=False, min_value=1, max_value=services.MAX_QUICK_SECONDS)
    reason = serializers.CharField(required=False, allow_blank=True, max_length=200)


DESIGN_RESPONSE = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description="the settings: work_scope, adjudication_min_coders, from_empty_share, quick_confirm_seconds",
)


class ProjectDesign(APIView):
    permission_classes = (IsStudyLead,)

    @extend_schema(summary="The project's study design", responses={200: DESIGN_RESPONSE})
    def get(self, request, slug):
        return Response(selectors.design_of(scoped.visible_project(request.user, slug)))

    @extend_schema(
        summary="Change the project's study design",
        request=DesignSerializer,
        responses={200: DESIGN_RESPONSE, 400: OpenApiResponse(description="which setting is wrong")},
    )
    def patch(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        body = DesignSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            project = services.update_design(project, request.user, **body.validated_data)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(selectors.design_of(project))
