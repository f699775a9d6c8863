"""``/api/v1/projects/{slug}/record/...``: the annotators' record for scripts.

``GET record/`` (leads): the stored dashboard of a scenario (``?scenario=``), 202 while a worker computes
it. ``GET record/coders/{id}/``: a coder's own record (the coder, or a lead; 404 for anyone else).
``POST record/coders/{id}/decisions/`` (leads): waive the rule or send the coder back, with a reason.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from ..api.permissions import lead_only
from ..models import Scenario
from ..roles import is_lead
from ..services import ServiceError
from ..taxonomy import SCENARIOS
from . import dashboard, dashboard_texts, free_text, selectors, services
from .models import DecisionKind

IsRecordLead = lead_only("only leads and admins read the annotators' dashboard or decide about a coder")


def _attempt_json(a) -> dict:
    return {
        "number": a.number,
        "scenario": a.scenario,
        "state": a.state,
        "rows": a.rows,
        "passed": a.passed,
        "scores": a.scores,
        "rule": a.rule,
        "scored_at": a.scored_at and a.scored_at.isoformat(),
        "free_text": free_text.text_state(a),  # ready / computing / failed / none: the worker's free-text scores
    }


class CoderRecord(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(
        summary="A coder's record: qualification, decisions, known-answer checks",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT)},
    )
    def get(self, request, slug, user_id):
        project = scoped.visible_project(request.user, slug)
        if not is_lead(request.user) and request.user.pk != user_id:
            raise Http404("no such record")
        person = get_object_or_404(get_user_model(), pk=user_id)
        record = selectors.coder_record(project, person)
        return Response(
            {
                "coder": person.username,
                "qualification": [
                    {"scenario": q["scenario"], **q["status"], "attempts": [_attempt_json(a) for a in q["attempts"]]}
                    for q in record["qualification"]
                ],
                "decisions": [
                    {"scenario": d.scenario, "kind": d.kind, "reason": d.reason, "at": d.created_at.isoformat()}
                    for d in record["decisions"]
                ],
                "known_answer": record["known_answer"],
            }
        )


class DecisionSerializer(serializers.Serializer):
    scenario = serializers.ChoiceField(choices=Scenario.choices)
    kind = serializers.ChoiceField(choices=DecisionKind.values)
    reason = serializers.CharField(max_length=5000)


class Decisions(APIView):
    permission_classes = (IsRecordLead,)

    @extend_schema(
        summary="Waive the qualification rule for a coder, or send them back",
        request=DecisionSerializer,
        responses={201: OpenApiResponse(OpenApiTypes.OBJECT), 422: OpenApiResponse(description="refused")},
    )
    def post(self, request, slug, user_id):
        project = scoped.visible_project(request.user, slug)
        person = get_object_or_404(get_user_model(), pk=user_id)
        body = DecisionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        try:
            decision = services.decide(project, d["scenario"], person, d["kind"], d["reason"], actor=request.user)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        return Response(
            {"id": decision.pk, "status": selectors.status(project, d["scenario"], person)},
            status=status.HTTP_201_CREATED,
        )


class Dashboard(APIView):
    permission_classes = (IsRecordLead,)

    @extend_schema(
        summary="The per-annotator dashboard of a scenario (stored report)",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT), 202: OpenApiResponse(description="being computed")},
    )
    def get(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        scenario = request.query_params.get("scenario") or dashboard.default_scenario(project)
        if scenario not in SCENARIOS:
            return Response(
                {"detail": f"scenario must be one of {', '.join(SCENARIOS)}"}, status=status.HTTP_400_BAD_REQUEST
            )
        state = dashboard.ensure_report(project, scenario, user=request.user)
        if state.report is None:
            return Response(
                {"detail": "the dashboard is being computed", "job": state.job_id}, status=status.HTTP_202_ACCEPTED
            )
        texts = dashboard_texts.ensure_text_report(project, scenario, state.fingerprint, user=request.user)
        # The free-text part comes from an embeddings worker: null with its status until it is stored.
        return Response(
            {**state.report, "stale": state.stale, "free_text": {"status": texts.status, "report": texts.report}}
        )
