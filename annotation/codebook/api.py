"""``/api/v1/projects/{slug}/guidance/``: the project's guidance for scripts.

``GET`` (leads, and annotators with work in the project) returns the version in
force with its entries and the history of versions; ``POST`` (leads) writes or
withdraws one entry and answers 201 with the new version, 400 with a message
when the request is wrong, and 409 with the current version when the entry
changed since the version the caller names in ``based_on``.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from ..models import GuidanceVersion
from ..taxonomy import SCENARIOS
from . import selectors, services
from .fields import FIELDS


class GuidanceChangeSerializer(serializers.Serializer):
    action = serializers.ChoiceField(
        choices=["write", "withdraw"], default="write", help_text="write (new or rewrite) or withdraw an entry"
    )
    # Checked by the service (couple, family or ""): a second enum of scenarios would clash in the OpenAPI schema.
    scenario = serializers.CharField(
        default="", allow_blank=True, help_text=f'{", ".join(SCENARIOS)}, or "" for every scenario (default)'
    )
    field = serializers.ChoiceField(choices=list(FIELDS))
    labels = serializers.ListField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=True),
        help_text=(
            'one label, or the labels the guidance separates ("" is the empty choice: no strategy, no clear pattern)'
        ),
    )
    text = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=True, help_text="the guidance (write)"
    )
    why = serializers.CharField(
        allow_blank=True, trim_whitespace=True, help_text="why the change is made (recorded with the version)"
    )
    based_on = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        help_text="the version the change was based on (0 before any); refused with 409 when the entry changed since",
    )


VERSION_RESPONSE = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description=(
        '{"version": N|null, "taxonomy_version", "created_by", "created_at", "reason", "change", "entries": '
        '[{"id", "scenario", "field", "labels", "title", "text", "written_by", "written_at", "version"}]}'
    ),
)


class ProjectGuidance(APIView):
    @extend_schema(
        summary="The project's guidance: the version in force and the history of versions",
        parameters=[
            OpenApiParameter(
                "scenario", str, enum=list(SCENARIOS), description="only the entries that apply to this scenario"
            )
        ],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description=(
                    '{"current": <version>, "history": [{"version", "created_by", "created_at", "reason", '
                    '"change", "entries", "source"}]}'
                ),
            )
        },
    )
    def get(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        scenario = request.query_params.get("scenario") or ""
        coders = selectors.coder_usernames(project)  # who the texts read here must not name, asked once
        current = selectors.version_view(selectors.current_version(project), coders)
        if scenario:
            if scenario not in SCENARIOS:
                return Response(
                    {"detail": f"scenario must be one of {', '.join(SCENARIOS)}, got {scenario!r}"},
                    status=status.HTTP_400_BAD_REQUEST,
                )
            current["entries"] = [e for e in current["entries"] if selectors.applies_to(e, scenario)]
        return Response({"current": current, "history": selectors.history(project, coders)})

    @extend_schema(
        summary="Write or withdraw one guidance entry (leads): a new guidance version",
        request=GuidanceChangeSerializer,
        responses={
            201: VERSION_RESPONSE,
            400: OpenApiResponse(description="the change is refused: detail says why"),
            409: OpenApiResponse(description="the entry changed since based_on: detail, and current (the version now)"),
        },
    )
    def post(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        scoped.require_lead(request.user, "Guidance is written by leads.")
        body = GuidanceChangeSerializer(data=request.data)
        if not body.is_valid():
            return Response(
                {"detail": "the guidance was not changed: fix the fields below", "errors": body.errors},
                status=status.HTTP_400_BAD_REQUEST,
            )
        data = body.validated_data
        target = {
            "scenario": data["scenario"],
            "field": data["field"],
            "labels": data["labels"],
            "why": data["why"],
            "based_on": data.get("based_on"),
        }
        try:
            if data["action"] == "withdraw":
                version = services.withdraw_guidance(project, request.user, **target)
            else:
                version = services.write_guidance(project, request.user, text=data.get("text", ""), **target)
        except services.GuidanceConflict as exc:
            return Response(
                {"detail": str(exc), "current": selectors.version_view(exc.current)}, status=status.HTTP_409_CONFLICT
            )
        except services.GuidanceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(selectors.version_view(version), status=status.HTTP_201_CREATED)


class GuidanceVersionDetail(APIView):
    @extend_schema(summary="One guidance version with every entry it held", responses={200: VERSION_RESPONSE})
    def get(self, request, slug, number: int):
        project = scoped.visible_project(request.user, slug)
        version = get_object_or_404(
            GuidanceVersion.objects.select_related("created_by"), project=project, number=number
        )
        return Response(selectors.version_view(version, selectors.coder_usernames(project)))
