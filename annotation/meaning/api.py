"""``/api/v1/projects/{slug}/meaning/...``: the judging loop and the validity figures for scripts.

- ``GET  .../meaning/pair/?field=F``: the next pair the caller may judge (``{"pair": null}`` when none);
- ``POST .../meaning/judgements/`` ``{"pair": sha, "judgement": "same"|"different"|"cant_tell"}``: record it (201);
- ``GET  .../meaning/validity/`` (leads): per field and measure, the validity (C2), judgement counts, the judge.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from ..agreement.textfields import TEXT_FIELDS, TEXT_FIELDS_BY_KEY
from . import selectors, services
from .models import Judgement


class JudgementSerializer(serializers.Serializer):
    pair = serializers.CharField(help_text="the pair's id, as GET .../meaning/pair/ gave it")
    judgement = serializers.ChoiceField(choices=Judgement.values)


class NextPairView(APIView):
    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(
        summary="The next pair of coders' texts the caller may judge (never their own)",
        parameters=[OpenApiParameter("field", str, description=", ".join(TEXT_FIELDS_BY_KEY))],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        field = request.query_params.get("field") or TEXT_FIELDS[0].key
        if field not in TEXT_FIELDS_BY_KEY:
            raise ValidationError({"field": f"one of {', '.join(TEXT_FIELDS_BY_KEY)}"})
        shown = selectors.next_pair(request.user, project, field)
        if shown is None:
            return Response({"field": field, "pair": None, "remaining": 0})
        c = shown.candidate
        return Response(
            {
                "field": field,
                "pair": {"id": c.sha, "text_a": c.text_a, "text_b": c.text_b},
                "remaining": shown.remaining,
            }
        )


class JudgementsView(APIView):
    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(
        summary="Record a judgement of a pair", request=JudgementSerializer, responses={201: OpenApiTypes.OBJECT}
    )
    def post(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        data = JudgementSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            row = services.record_judgement(
                request.user, project, data.validated_data["pair"], data.validated_data["judgement"], source="api"
            )
        except services.JudgementRefused as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response({"id": row.pk, "field": row.field, "judgement": row.judgement}, status=status.HTTP_201_CREATED)


class ValidityView(APIView):
    permission_classes = (permissions.IsAuthenticated,)

    @extend_schema(
        summary="Per free-text field and measure, how well it separates meaning (leads)",
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        scoped.require_lead(request.user, "The validity figures are for leads.")
        return Response(selectors.project_validity(project))
