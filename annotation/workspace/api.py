"""Workspace API: my assignments, a clip with my revision, saving rows, comments.

Same operations as the browser pages (which call these endpoints), for scripts
with token auth. An annotator can only reach their own revisions: anything
else is a 404, never a 403 that would confirm it exists.
"""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from ..api.responses import clip_closed
from ..models import Assignment, CommentKind, Revision, Row
from ..services import ClipClosed, ServiceError
from . import selectors, services


class IssueSerializer(serializers.Serializer):
    path = serializers.CharField()
    message = serializers.CharField()
    code = serializers.CharField()
    severity = serializers.CharField()


class RevisionSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    row_index = serializers.IntegerField(source="row.row_index", read_only=True)
    clip = serializers.IntegerField(source="row.clip_id", read_only=True)
    version = serializers.IntegerField(read_only=True)
    status = serializers.CharField(read_only=True)
    content = serializers.JSONField(read_only=True)
    warnings = serializers.JSONField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)
    guidance_version = serializers.SerializerMethodField(
        help_text="the project's guidance version in force when the row was last saved (null: none recorded)"
    )

    def get_guidance_version(self, revision) -> int | None:
        if hasattr(revision, "guidance_number"):  # just written by the row save, which read it
            return revision.guidance_number
        return revision.guidance_version.number if revision.guidance_version_id else None


class SaveRevisionSerializer(serializers.Serializer):
    content = serializers.JSONField()
    version = serializers.IntegerField(min_value=1, help_text="the version the edit was based on")
    reviewed = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="also mark reviewed (true) or reopen (false)"
    )


class ReviewSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1)
    reviewed = serializers.BooleanField(default=True)


class AssignmentSerializer(serializers.ModelSerializer):
    sample_id = serializers.CharField(source="clip.sample_id")
    clip = serializers.IntegerField(source="clip_id")
    project = serializers.CharField(source="clip.project.slug")
    rows_total = serializers.IntegerField()
    rows_reviewed = serializers.IntegerField()
    rows_edited = serializers.IntegerField()
    rows_with_warnings = serializers.IntegerField()
    rows_commented = serializers.IntegerField()
    last_activity = serializers.DateTimeField(allow_null=True)
    clip_state = serializers.CharField(source="clip.state", read_only=True)
    clip_state_label = serializers.SerializerMethodField(help_text="the clip's state in the words every page uses")

    def get_clip_state_label(self, obj) -> str:
        from ..labels import state_label

        return state_label(obj.clip.state)

    class Meta:
        model = Assignment
        fields = [
            "id",
            "clip",
            "sample_id",
            "project",
            "mode",
            "state",
            "rows_total",
            "rows_reviewed",
            "rows_edited",
            "rows_with_warnings",
            "rows_commented",
            "last_activity",
            "clip_state",
            "clip_state_label",
        ]


class CommentSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    row = serializers.IntegerField(required=False, allow_null=True, help_text="row_index, or null for the whole clip")
    kind = serializers.ChoiceField(choices=CommentKind.choices, default=CommentKind.COMMENT)
    body = serializers.CharField(max_length=10_000)
    author = serializers.CharField(read_only=True)
    to = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text="the one coder a lead's message is for (only they and the leads read it), or null",
    )
    created_at = serializers.DateTimeField(read_only=True)


def _issues(exc: services.InvalidDocument):
    return {"detail": "the row was not saved: fix the fields below", "issues": [i.as_dict() for i in exc.issues]}


def _conflict(exc: services.VersionConflict):
    current = exc.revision
    return {
        "detail": f"row {current.row.row_index} was changed elsewhere since you opened it; merge and save again",
        "current": RevisionSerializer(current).data,
    }


class MyAssignments(APIView):
    @extend_schema(responses=AssignmentSerializer(many=True), summary="My assigned clips with progress")
    def get(self, request):
        return Response(AssignmentSerializer(selectors.my_assignments(request.user), many=True).data)


class ClipWorkspace(APIView):
    @extend_schema(
        responses=OpenApiResponse(
            description="clip, cues, rows with my revision and the draft, my comments, editor config"
        ),
        summary="A clip as the workspace shows it",
    )
    def get(self, request, clip_id: int):
        clip = selectors.workspace_clip(request.user, clip_id)
        return Response(selectors.workspace_payload(request.user, clip))


class MyRevisionMixin:
    """Only the caller's own revisions exist for these views: another annotator's id is a 404."""

    def _get(self, request, revision_id):
        return get_object_or_404(
            scoped.visible_revisions(request.user)
            .filter(annotator=request.user)
            .select_related("row", "guidance_version"),
            pk=revision_id,
        )

    def _write(self, request, revision_id, body_serializer, write):
        """Read my revision, validate the body, run ``write(target, data)`` -> Revision, and map the outcomes.

        The revision is read before the body is looked at, so that the answer to
        someone else's revision id is always the same 404, whatever the body.
        """
        try:
            target = services.load_for_save(revision_id, request.user)
        except Revision.DoesNotExist:
            raise Http404("no such revision") from None
        except ClipClosed as exc:
            return clip_closed(exc)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        data = body_serializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            revision = write(target, data.validated_data)
        except services.VersionConflict as exc:
            return Response(_conflict(exc), status=status.HTTP_409_CONFLICT)
        except services.InvalidDocument as exc:
            return Response(_issues(exc), status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        except ClipClosed as exc:
            return clip_closed(exc)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        return Response(RevisionSerializer(revision).data)


class RevisionDetail(MyRevisionMixin, APIView):
    @extend_schema(responses=RevisionSerializer, summary="One of my revisions")
    def get(self, request, revision_id: int):
        return Response(RevisionSerializer(self._get(request, revision_id)).data)

    @extend_schema(
        request=SaveRevisionSerializer,
        responses={
            200: RevisionSerializer,
            409: OpenApiResponse(
                description=(
                    "stale version: the body holds the current revision to merge with; or the clip is "
                    "discarded or released (clip_state, no current)"
                )
            ),
            422: OpenApiResponse(description="validation issues, each with a field path"),
        },
        summary="Save my revision of a row (optimistic locking on version)",
    )
    def put(self, request, revision_id: int):
        return self._write(
            request,
            revision_id,
            SaveRevisionSerializer,
            lambda target, d: (
                services.save_revision(
                    revision_id, request.user, d["content"], d["version"], reviewed=d["reviewed"], target=target
                ).revision
            ),
        )


class RevisionValidate(MyRevisionMixin, APIView):
    @extend_schema(
        request=inline_serializer("ValidateRequest", {"content": serializers.JSONField()}),
        responses=inline_serializer("ValidateResponse", {"issues": IssueSerializer(many=True)}),
        summary="Check an edit without saving it",
    )
    def post(self, request, revision_id: int):
        revision = self._get(request, revision_id)
        content = request.data.get("content")
        if not isinstance(content, dict):
            return Response(
                {
                    "issues": [
                        {
                            "path": "",
                            "message": "the document must be a JSON object",
                            "code": "model_type",
                            "severity": "error",
                        }
                    ]
                }
            )
        content = services.mirror_relation(content, revision.row.primary_speaker, revision.layout or {})
        return Response({"issues": [i.as_dict() for i in services.validate_content(revision.row, content)]})


class RevisionReview(MyRevisionMixin, APIView):
    @extend_schema(
        request=ReviewSerializer,
        responses={
            200: RevisionSerializer,
            409: OpenApiResponse(description="stale version"),
            422: OpenApiResponse(description="the row does not validate"),
        },
        summary="Mark a row reviewed, or reopen it",
    )
    def post(self, request, revision_id: int):
        return self._write(
            request,
            revision_id,
            ReviewSerializer,
            lambda target, d: services.set_reviewed(
                revision_id, request.user, d["version"], d["reviewed"], target=target
            ),
        )


class AssignmentSubmit(APIView):
    @extend_schema(
        request=None,
        responses={200: AssignmentSerializer, 422: OpenApiResponse(description="rows not reviewed yet")},
        summary="Submit a clip when every row is reviewed",
    )
    def post(self, request, assignment_id: int):
        assignment = get_object_or_404(Assignment, pk=assignment_id, annotator=request.user)
        try:
            services.submit_assignment(assignment, request.user)
        except ClipClosed as exc:
            return clip_closed(exc)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        return Response(AssignmentSerializer(selectors.my_assignments(request.user).get(pk=assignment.pk)).data)


class SettingsSerializer(serializers.Serializer):
    replay_speed = serializers.FloatField(required=False, help_text="0.75, 1 or 1.25")
    preroll = serializers.FloatField(
        required=False, help_text=f"seconds played before a row when it is replayed (0 to {services.PREROLL_MAX:g})"
    )


class MySettings(APIView):
    @extend_schema(responses=SettingsSerializer, summary="How my media replays (speed, pre-roll)")
    def get(self, request):
        return Response(selectors.annotator_settings(request.user))

    @extend_schema(
        request=SettingsSerializer,
        responses={200: SettingsSerializer, 422: OpenApiResponse(description="a value out of range")},
        summary="Change how my media replays",
    )
    def put(self, request):
        data = SettingsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            services.save_annotator_settings(request.user, **data.validated_data)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        return Response(selectors.annotator_settings(request.user))


class ClipComments(APIView):
    @extend_schema(responses=CommentSerializer(many=True), summary="Comments on a clip (an annotator sees their own)")
    def get(self, request, clip_id: int):
        clip = selectors.workspace_clip(request.user, clip_id)
        return Response(selectors.workspace_payload(request.user, clip)["comments"])

    @extend_schema(
        request=CommentSerializer,
        responses={201: CommentSerializer, 422: OpenApiResponse(description="invalid comment")},
        summary="Comment on a clip or row, flag a row, or propose discarding the clip",
    )
    def post(self, request, clip_id: int):
        clip = selectors.workspace_clip(request.user, clip_id)
        data = CommentSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = None
        if data.validated_data.get("row") is not None:
            row = Row.objects.filter(clip=clip, row_index=data.validated_data["row"]).first()
            if row is None:
                return Response(
                    {"detail": f"clip has no row {data.validated_data['row']}"},
                    status=status.HTTP_422_UNPROCESSABLE_ENTITY,
                )
        try:
            comment = services.add_comment(
                clip, request.user, data.validated_data["body"], row=row, kind=data.validated_data["kind"]
            )
        except ClipClosed as exc:
            return clip_closed(exc)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        return Response(
            {
                "id": comment.pk,
                "row": row.row_index if row else None,
                "kind": comment.kind,
                "body": comment.body,
                "author": request.user.username,
                "to": comment.addressee.username if comment.addressee_id else None,
                "created_at": comment.created_at.isoformat(),
            },
            status=status.HTTP_201_CREATED,
        )
