"""Adjudication API: the operations of the lead's adjudication pages, for scripts.

Leads and admins only: any other signed-in user gets 403 on every endpoint
(the endpoints are a role's tools, not someone's data, so their existence is
no secret); an anonymous caller gets 403 too.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from ..api.permissions import lead_only
from ..api.responses import refused
from ..models import Row
from ..services import ServiceError
from ..workspace.services import InvalidDocument
from . import selectors, services
from .fields import FIELDS

IsLead = lead_only("only leads and admins may adjudicate or assign clips")


class LeadView(APIView):
    permission_classes = (IsLead,)


def _clip(request, clip_id):
    return selectors.adjudication_clip(request.user, clip_id)


def _row(request, row_id) -> Row:
    # Rows are reached through the clips the caller may see.
    return get_object_or_404(
        Row.objects.filter(clip__in=scoped.visible_clips(request.user)).select_related("clip__project"), pk=row_id
    )


def _gold(row: Row) -> dict:
    return {"row": row.pk, "row_index": row.row_index, **selectors.gold_document(selectors.row_state(row))}


def _conflict(exc: services.GoldConflict):
    return Response(
        {
            "detail": (
                f"the gold of row {exc.row.row_index} was changed elsewhere since you opened it; merge and save again"
            ),
            "current": _gold(exc.row),
        },
        status=status.HTTP_409_CONFLICT,
    )


def _invalid(exc: InvalidDocument):
    return Response(
        {"detail": "the gold was not saved: fix the fields below", "issues": [i.as_dict() for i in exc.issues]},
        status=status.HTTP_422_UNPROCESSABLE_ENTITY,
    )


def _decide(request, row_id, body_serializer, write):
    """A decision on one row's gold: ``write(row, validated body)``, then the row's gold (or why not)."""
    row = _row(request, row_id)
    data = body_serializer(data=request.data)
    data.is_valid(raise_exception=True)
    try:
        write(row, data.validated_data)
    except services.GoldConflict as exc:
        return _conflict(exc)
    except ServiceError as exc:
        return refused(exc)
    return Response(_gold(row))


FILTER_PARAMS = [
    OpenApiParameter("disagreements", bool, description="only rows where the coders disagree"),
    OpenApiParameter("open", bool, description="only rows not adjudicated yet"),
    OpenApiParameter("field", str, enum=list(FIELDS), description="only rows where this field is disputed"),
    OpenApiParameter(
        "label",
        str,
        description=(
            "only rows where a coder or the gold uses this label, as kind:label (utterance:request, "
            "strategy:track, relation:pursue_withdraw)"
        ),
    ),
    OpenApiParameter("annotator", str, description="only rows where this coder is outvoted (or there is no majority)"),
]


class ProjectAdjudication(LeadView):
    @extend_schema(
        responses=OpenApiResponse(
            description="clips and rows adjudicated, disagreements left per field, per-clip counters"
        ),
        summary="Adjudication progress of a project",
    )
    def get(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        progress = selectors.project_progress(project)
        proposals = selectors.open_discard_proposals(project)
        for clip in progress["per_clip"]:
            clip["discard_proposals"] = proposals.get(clip["id"], 0)
        return Response(progress)


class ClipAdjudication(LeadView):
    @extend_schema(
        parameters=FILTER_PARAMS,
        responses=OpenApiResponse(
            description="per row: draft, every coder's revision, gold, disputed fields; clip summary"
        ),
        summary="A clip as the adjudication page shows it",
    )
    def get(self, request, clip_id):
        clip = _clip(request, clip_id)
        return Response(selectors.adjudication_payload(clip, selectors.RowFilter.from_query(request.query_params)))


class SaveGoldSerializer(serializers.Serializer):
    content = serializers.JSONField()
    version = serializers.IntegerField(
        min_value=0, help_text="the gold version the edit was based on (0: the row has no gold yet)"
    )
    notes = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=services.NOTE_LIMIT),
        required=False,
        help_text="a note per field name",
    )


class DecideSerializer(serializers.Serializer):
    field = serializers.ChoiceField(choices=list(FIELDS))
    source = serializers.CharField(
        help_text=(
            "a coder's username or 'draft' to take that value; 'gold' to keep the current value (e.g. to change "
            "the note)"
        )
    )
    version = serializers.IntegerField(min_value=0)
    note = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=services.NOTE_LIMIT)


GOLD_RESPONSES = {
    200: OpenApiResponse(
        description=(
            "the row's gold: id, version, status (new|open|decided), content, warnings (blocking issues), decisions"
        )
    ),
    409: OpenApiResponse(description="stale version: the body holds the current gold"),
    422: OpenApiResponse(
        description="refused: validation issues with field paths, or the clip is not open for adjudication"
    ),
}


class RowGold(LeadView):
    @extend_schema(responses=GOLD_RESPONSES, summary="A row's gold (or the document a new gold starts from)")
    def get(self, request, row_id):
        return Response(_gold(_row(request, row_id)))

    @extend_schema(
        request=SaveGoldSerializer,
        responses=GOLD_RESPONSES,
        summary="Save the lead's edit of a row's gold (optimistic locking on version)",
    )
    def put(self, request, row_id):
        row = _row(request, row_id)
        data = SaveGoldSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.save_gold(
                row.pk,
                request.user,
                data.validated_data["content"],
                data.validated_data["version"],
                notes=data.validated_data.get("notes"),
            )
        except services.GoldConflict as exc:
            return _conflict(exc)
        except InvalidDocument as exc:
            return _invalid(exc)
        except ServiceError as exc:
            return refused(exc)
        return Response(_gold(row))


class RowGoldValidate(LeadView):
    @extend_schema(
        request=inline_serializer("GoldValidateRequest", {"content": serializers.JSONField()}),
        responses=inline_serializer(
            "GoldValidateResponse", {"issues": serializers.ListField(child=serializers.DictField())}
        ),
        summary="Check a gold edit without saving it",
    )
    def post(self, request, row_id):
        row = _row(request, row_id)
        return Response({"issues": [i.as_dict() for i in services.validate_gold(row, request.data.get("content"))]})


class RowGoldDecide(LeadView):
    @extend_schema(
        request=DecideSerializer,
        responses=GOLD_RESPONSES,
        summary="Decide one field: take a coder's or the draft's value, or keep the gold's, with a note",
    )
    def post(self, request, row_id):
        return _decide(
            request,
            row_id,
            DecideSerializer,
            lambda row, d: services.decide(
                row.pk, request.user, d["field"], d["source"], d["version"], note=d.get("note")
            ),
        )


class AcceptSuggestionSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=0)
    fields = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text=f"only these fields ({', '.join(FIELDS)}; default: every field not decided yet)",
    )


class RowGoldAcceptSuggestion(LeadView):
    @extend_schema(
        request=AcceptSuggestionSerializer,
        responses=GOLD_RESPONSES,
        summary=(
            "Decide the row's open fields by accepting the suggestion (unanimous or majority value, else the draft's)"
        ),
    )
    def post(self, request, row_id):
        return _decide(
            request,
            row_id,
            AcceptSuggestionSerializer,
            lambda row, d: services.accept_suggestion(row.pk, request.user, d["version"], d.get("fields")),
        )


class AcceptUnanimous(LeadView):
    @extend_schema(
        request=None,
        responses={
            200: inline_serializer(
                "UnanimousResult",
                {
                    "accepted": serializers.ListField(child=serializers.IntegerField()),
                    "invalid": serializers.DictField(),
                    "already_gold": serializers.IntegerField(),
                    "summary": serializers.CharField(),
                },
            )
        },
        summary="Accept every row on which all coders agree as gold",
    )
    def post(self, request, clip_id):
        clip = _clip(request, clip_id)
        try:
            result = services.accept_unanimous(clip, request.user)
        except ServiceError as exc:
            return refused(exc)
        return Response(
            {
                "accepted": result.accepted,
                "invalid": result.invalid,
                "already_gold": result.already_gold,
                "summary": result.summary,
            }
        )


THRESHOLD = OpenApiParameter(
    "threshold", float, description="Least pairwise similarity of the coders' texts (0.5-1; default 0.8)."
)


class AgreeingRows(LeadView):
    @extend_schema(
        parameters=[THRESHOLD],
        responses={
            200: OpenApiResponse(
                description=(
                    '{"threshold", "rows": [{"row_index", "min_similarity", "near", "fields"}], "unanimous", '
                    '"near", "similarity"}'
                )
            )
        },
        summary="Preview: rows without gold whose coders agree within a text-similarity threshold",
    )
    def get(self, request, clip_id):
        from ..agreement.embeddings import EmbeddingError
        from .disagreement import (
            DEFAULT_THRESHOLD,
            Vectors,
            agreeing_rows,
            check_threshold,
            row_texts,
            similarity_status,
        )

        clip = _clip(request, clip_id)
        try:
            threshold = check_threshold(request.query_params.get("threshold", DEFAULT_THRESHOLD))
        except ValueError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        states = selectors.row_states(clip)
        try:
            vectors = Vectors(t for s in states for t in row_texts(s.coder_contents, s.row.primary_speaker))
        except EmbeddingError as exc:
            return Response(
                {"detail": f"the coders' texts cannot be compared: {exc}"}, status=status.HTTP_503_SERVICE_UNAVAILABLE
            )
        rows = agreeing_rows(states, vectors, threshold)
        near = sum(1 for r in rows if r["near"])
        return Response(
            {
                "threshold": threshold,
                "rows": rows,
                "unanimous": len(rows) - near,
                "near": near,
                "similarity": similarity_status(clip, vectors, start=False),
            }
        )


class AcceptAgreeing(LeadView):
    @extend_schema(
        request=inline_serializer("AcceptAgreeing", {"threshold": serializers.FloatField()}),
        responses={200: OpenApiResponse(description='{"accepted", "near", "invalid", "summary"}')},
        summary="Accept as gold every row without gold whose coders agree within a text-similarity threshold",
    )
    def post(self, request, clip_id):
        clip = _clip(request, clip_id)
        try:
            result = services.accept_agreeing(clip, request.user, (request.data or {}).get("threshold"))
        except ServiceError as exc:
            return refused(exc)
        return Response(
            {
                "threshold": result.threshold,
                "accepted": result.accepted,
                "near": result.near,
                "invalid": result.invalid,
                "summary": result.summary,
            }
        )


def _clip_state(clip):
    clip.refresh_from_db()
    return Response(
        {"clip": clip.pk, "sample_id": clip.sample_id, "state": clip.state, "discard_reason": clip.discard_reason}
    )


class MarkAdjudicated(LeadView):
    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(description="the clip's new state"),
            422: OpenApiResponse(description="what is still missing"),
        },
        summary="Mark a reviewed clip adjudicated",
    )
    def post(self, request, clip_id):
        clip = _clip(request, clip_id)
        try:
            services.mark_adjudicated(clip, request.user)
        except ServiceError as exc:
            return refused(exc)
        return _clip_state(clip)


class DiscardDecision(LeadView):
    accept = True

    @extend_schema(
        request=inline_serializer("DiscardDecision", {"comment": serializers.IntegerField()}),
        responses={200: OpenApiResponse(description="the clip's state")},
        summary="Accept or dismiss a discard proposal",
    )
    def post(self, request, clip_id):
        clip = _clip(request, clip_id)
        try:
            comment_id = int(request.data.get("comment"))
        except (TypeError, ValueError):
            return Response({"detail": "comment: the id of the discard proposal"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            (services.accept_discard if self.accept else services.dismiss_discard)(clip, comment_id, request.user)
        except ServiceError as exc:
            return refused(exc)
        return _clip_state(clip)


class RereviewSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    message = serializers.CharField(required=False, allow_blank=True, max_length=10_000)


class RequestRereview(LeadView):
    @extend_schema(
        request=RereviewSerializer,
        responses={200: OpenApiResponse(description="the reopened assignment and the clip's state")},
        summary="Reopen one coder's assignment for a re-review",
    )
    def post(self, request, clip_id):
        clip = _clip(request, clip_id)
        data = RereviewSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            assignment = services.request_rereview(
                clip, data.validated_data["annotator"], request.user, data.validated_data.get("message", "")
            )
        except ServiceError as exc:
            return refused(exc)
        clip.refresh_from_db()
        return Response(
            {
                "assignment": assignment.pk,
                "annotator": assignment.annotator.username,
                "state": assignment.state,
                "clip_state": clip.state,
            }
        )
