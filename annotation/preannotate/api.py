"""Pre-annotation through the REST API (leads only): start a batch, follow it, retry a clip.

POST /api/v1/projects/{slug}/preannotation/     {"clips": [id or sample id, ...], "force": false, "provider":
"gemini"|"offline"}
GET  /api/v1/projects/{slug}/preannotation/     the latest batch of the project
GET  /api/v1/preannotation/batches/{id}/        one batch: progress and per-clip state
POST /api/v1/preannotation/jobs/{id}/retry/     queue a failed (or stalled) clip again
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors as scoped
from ..api.permissions import lead_only
from ..models import Job
from ..services import ServiceError
from . import selectors, services
from .gemini import PROVIDER as GEMINI
from .offline import PROVIDER as OFFLINE

IsLead = lead_only("pre-annotation is for leads")


class StartSerializer(serializers.Serializer):
    clips = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="clip ids or sample ids; default: every clip that needs a draft",
    )
    force = serializers.BooleanField(default=False)
    provider = serializers.ChoiceField(choices=[GEMINI, OFFLINE], default=GEMINI)


class ProjectPreannotation(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(
        responses={
            200: OpenApiResponse(description="the latest batch"),
            404: OpenApiResponse(description="no batch yet"),
        }
    )
    def get(self, request, slug):
        batch = selectors.latest_batch(scoped.visible_project(request.user, slug))
        if batch is None:
            return Response({"detail": "no pre-annotation batch in this project yet"}, status=status.HTTP_404_NOT_FOUND)
        return Response(selectors.batch_status(batch))

    @extend_schema(request=StartSerializer, responses={202: OpenApiResponse(description="the batch, queued")})
    def post(self, request, slug):
        project = scoped.visible_project(request.user, slug)
        data = StartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            clips = (
                services.resolve_clips(project, data.validated_data["clips"])
                if "clips" in data.validated_data
                else None
            )
            batch = services.start_preannotation(
                project,
                clips,
                force=data.validated_data["force"],
                user=request.user,
                offline_provider=data.validated_data["provider"] == OFFLINE,
            )
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        batch.refresh_from_db()
        return Response(selectors.batch_status(batch), status=status.HTTP_202_ACCEPTED)


class BatchDetail(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(responses={200: OpenApiResponse(description="progress of the batch and the state of each clip")})
    def get(self, request, batch_id):
        batch = get_object_or_404(
            Job.objects.filter(kind=services.BATCH_KIND, project__in=scoped.visible_projects(request.user)), pk=batch_id
        )
        return Response(selectors.batch_status(batch))


class RetryJob(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(request=None, responses={202: OpenApiResponse(description="the clip job, queued again")})
    def post(self, request, job_id):
        job = selectors.clip_job(request.user, job_id)
        if job is None:
            return Response({"detail": "no such pre-annotation job"}, status=status.HTTP_404_NOT_FOUND)
        try:
            services.retry_clip_job(job, user=request.user)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        job.refresh_from_db()
        batch = Job.objects.filter(pk=job.params.get("batch")).first()
        return Response(
            selectors.batch_status(batch) if batch else {"job": job.pk, "state": job.state},
            status=status.HTTP_202_ACCEPTED,
        )
