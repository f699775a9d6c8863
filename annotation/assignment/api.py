"""Assignment API: the operations of the lead's assign page, for scripts.

Leads and admins only: any other signed-in user, and an anonymous caller, gets 403."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from .. import starting
from ..api.permissions import lead_only
from ..api.responses import refused
from ..models import Assignment
from ..services import ServiceError
from . import selectors, services

IsLead = lead_only("only leads and admins may adjudicate or assign clips")


class AssignSerializer(serializers.Serializer):
    per_clip = serializers.IntegerField(
        min_value=1, max_value=50, required=False, help_text="annotators per clip (default: the project's setting)"
    )
    annotators = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="usernames (default: every active annotator)"
    )
    clips = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="sample ids (default: every assignable clip)"
    )
    calibration = serializers.IntegerField(
        min_value=0,
        required=False,
        help_text=(
            "number of clips (chosen with seed) whose assignments start empty; without calibration or "
            "calibration_clips, the study design's from-empty share decides"
        ),
    )
    calibration_clips = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="sample ids whose assignments start empty"
    )
    seed = serializers.IntegerField(required=False, default=0)

    def validate(self, attrs):
        if "calibration" in attrs and "calibration_clips" in attrs:
            raise serializers.ValidationError("give calibration (a number) or calibration_clips (a list), not both")
        return attrs


def assignment_rows(project) -> list[dict]:
    return [
        {
            "id": a.pk,
            "clip": a.clip_id,
            "sample_id": a.clip.sample_id,
            "annotator": a.annotator.username,
            "mode": a.mode,
            "state": a.state,
            "submitted_at": a.submitted_at,
        }
        for a in Assignment.objects.filter(clip__project=project)
        .select_related("clip", "annotator")
        .order_by("clip__sample_id", "annotator__username")
    ]


class ProjectAssignments(APIView):
    permission_classes = (IsLead,)

    @extend_schema(
        responses=OpenApiResponse(description="every assignment of the project and each annotator's progress"),
        summary="Assignments and annotator progress",
    )
    def get(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        return Response({"assignments": assignment_rows(project), "progress": selectors.annotator_progress(project)})

    @extend_schema(
        request=AssignSerializer,
        responses={
            201: OpenApiResponse(description="created assignments and skipped clips"),
            422: OpenApiResponse(description="refused"),
        },
        summary="Assign clips in bulk: k per clip, balanced load, optional calibration subset",
    )
    def post(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        data = AssignSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        d = data.validated_data
        users = None
        if d.get("annotators"):
            users = list(scoped.annotators().filter(username__in=d["annotators"]))
            missing = sorted(set(d["annotators"]) - {u.username for u in users})
            if missing:
                return Response(
                    {"detail": f"not active annotators: {', '.join(missing)}"},
                    status=status.HTTP_422_UNPROCESSABLE_ENTITY,
                )
        clips = None
        if d.get("clips"):
            clips = project.clips.filter(sample_id__in=d["clips"])
            missing = sorted(set(d["clips"]) - set(clips.values_list("sample_id", flat=True)))
            if missing:
                return Response(
                    {"detail": f"no such clips in {project.slug}: {', '.join(missing[:20])}"},
                    status=status.HTTP_422_UNPROCESSABLE_ENTITY,
                )
        calibration = d.get("calibration_clips") if "calibration_clips" in d else d.get("calibration")
        try:
            plan = services.assign_clips(
                project,
                clips=clips,
                users=users,
                per_clip=d.get("per_clip"),
                calibration=calibration,
                seed=d["seed"],
                actor=request.user,
            )
        except ServiceError as exc:
            return refused(exc)
        return Response(
            {
                "summary": plan.summary,
                "created": [
                    {
                        "id": a.pk,
                        "sample_id": a.clip.sample_id,
                        "annotator": a.annotator.username,
                        "mode": a.mode,
                        "design": a.design,
                    }
                    for a in plan.created
                ],
                "skipped": plan.skipped,
                "refused": plan.refused,
            },
            status=status.HTTP_201_CREATED,
        )


class ReassignSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="username of the new annotator")
    discard_edits = serializers.BooleanField(
        default=False, help_text="allow throwing away the previous annotator's edited rows"
    )


class Reassign(APIView):
    permission_classes = (IsLead,)

    @extend_schema(
        request=ReassignSerializer,
        responses={201: OpenApiResponse(description="the new assignment"), 422: OpenApiResponse(description="refused")},
        summary="Hand an assignment to another annotator",
    )
    def post(self, request, assignment_id):
        assignment = get_object_or_404(
            Assignment.objects.filter(clip__in=scoped.visible_clips(request.user)).select_related("clip", "annotator"),
            pk=assignment_id,
        )
        data = ReassignSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = scoped.annotators().filter(username=data.validated_data["annotator"]).first()
        if user is None:
            return Response(
                {"detail": f"{data.validated_data['annotator']!r} is not an active annotator"},
                status=status.HTTP_422_UNPROCESSABLE_ENTITY,
            )
        try:
            new = starting.reassign(
                assignment, user, actor=request.user, discard_edits=data.validated_data["discard_edits"]
            )
        except ServiceError as exc:
            return refused(exc)
        return Response(
            {
                "id": new.pk,
                "sample_id": new.clip.sample_id,
                "annotator": user.username,
                "mode": new.mode,
                "state": new.state,
            },
            status=status.HTTP_201_CREATED,
        )
