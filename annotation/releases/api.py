"""``/api/v1/projects/{slug}/releases/...``: releases for scripts (leads only).

- ``GET releases/``: every release with its manifest; ``POST releases/``
  (``{"version", "seed", "splits", "groups", "accept_incomplete", "task_profile", "preview_digest"}``;
  only the first two required) starts a freeze on a worker: 202 with the job
  and the URL to poll.
- ``POST releases/preview/`` (``{"seed", "splits", "groups", "accept_incomplete", "task_profile"}``):
  what that freeze would release, without freezing (``preview.FreezePreview.as_dict``).
- ``GET releases/jobs/{id}/``: a freeze job's state and progress.
- ``GET releases/{version}/``: one release with its manifest; it accepts no
  other method (a frozen release cannot be changed or deleted: 405).
- ``GET releases/{version}/download/``: the release as a deterministic zip.
- ``GET releases/diff/?a=&b=``: what changed between two releases.
"""

from __future__ import annotations

import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from tasks.profiles import DEFAULT_PROFILE, PROFILES

from ..api.permissions import lead_only
from ..groups import GroupMapError, read_group_map
from . import selectors, services
from .diff import Snapshot, diff_releases
from .freeze import FreezeError
from .manifest import verify
from .preview import preview_freeze
from .splits import SplitError
from .views import zip_response

IsLead = lead_only("Releases are managed by leads.")


class ReleaseSerializer(serializers.Serializer):
    version = serializers.CharField()
    seed = serializers.IntegerField()
    split_ratios = serializers.ListField(child=serializers.FloatField())
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(source="created_by.username", default=None)
    manifest = serializers.JSONField()
    download_url = serializers.SerializerMethodField()

    def get_download_url(self, release) -> str:
        return reverse(
            "api-release-download",
            kwargs={"slug": release.project.slug, "version": release.version},
            request=self.context.get("request"),
        )


class FreezeInputsSerializer(serializers.Serializer):
    seed = serializers.IntegerField(min_value=0)
    splits = serializers.JSONField(
        required=False, help_text='train, validation, test shares: [0.7, 0.1, 0.2] or "0.7,0.1,0.2"'
    )
    groups = serializers.JSONField(
        required=False, help_text='clip → group map: {"<sample_id>": "<group>"}, or the text of a map file'
    )
    accept_incomplete = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="scenarios that may lack a split"
    )
    task_profile = serializers.ChoiceField(
        choices=sorted(PROFILES),
        required=False,
        help_text=f"the rules that build and score the task instances (default {DEFAULT_PROFILE})",
    )

    def validate_groups(self, value) -> dict[str, str]:
        try:
            return read_group_map(value if isinstance(value, str) else json.dumps(value))
        except (GroupMapError, AttributeError) as exc:
            raise serializers.ValidationError(f"not a clip → group map: {exc}") from None

    def freeze_inputs(self) -> dict:
        """The validated inputs as the keyword arguments of a freeze or its preview."""
        data = self.validated_data
        return {
            "seed": data["seed"],
            "ratios": data.get("splits") or "0.7,0.1,0.2",
            "group_map": data.get("groups"),
            "accept_incomplete": data.get("accept_incomplete", ()),
            "task_profile": data.get("task_profile"),
        }


class FreezeRequestSerializer(FreezeInputsSerializer):
    version = serializers.CharField(max_length=40)
    preview_digest = serializers.CharField(
        required=False, help_text="the digest of a preview: refuse the freeze if the plan changed since"
    )


def job_body(job, request) -> dict:
    return {
        "id": job.pk,
        "kind": job.kind,
        "state": job.state,
        "progress_done": job.progress_done,
        "progress_total": job.progress_total,
        "error": job.error,
        "result": job.result,
        # The request as the lead made it; the server folder and dispatch details stay inside.
        "params": {k: v for k, v in job.params.items() if k in ("version", "seed", "ratios")},
        "status_url": reverse("api-release-job", kwargs={"slug": job.project.slug, "job_id": job.pk}, request=request),
    }


class ReleaseList(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(responses=ReleaseSerializer(many=True))
    def get(self, request, slug):
        project = selectors.lead_project(request.user, slug)
        releases = selectors.visible_releases(request.user, project)
        return Response(ReleaseSerializer(releases, many=True, context={"request": request}).data)

    @extend_schema(
        request=FreezeRequestSerializer,
        responses={202: OpenApiResponse(OpenApiTypes.OBJECT, description="the freeze job; poll status_url")},
    )
    def post(self, request, slug):
        project = selectors.lead_project(request.user, slug)
        body = FreezeRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            job = services.start_freeze(
                project,
                version=data["version"],
                confirmed=data.get("preview_digest"),
                user=request.user,
                **body.freeze_inputs(),
            )
        except FreezeError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(job_body(job, request), status=status.HTTP_202_ACCEPTED)


class FreezePreviewView(APIView):
    """What a freeze with these inputs would release; nothing is written."""

    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(request=FreezeInputsSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug):
        project = selectors.lead_project(request.user, slug)
        body = FreezeInputsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            preview = preview_freeze(project, **body.freeze_inputs())
        except (FreezeError, SplitError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(preview.as_dict())


class FreezeJobStatus(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug, job_id):
        project = selectors.lead_project(request.user, slug)
        job = selectors.freeze_jobs(request.user, project).filter(pk=job_id).first()
        if job is None:
            raise NotFound("no such freeze job")
        return Response(job_body(job, request))


class ReleaseDetail(APIView):
    """One frozen release. GET only: releases are immutable."""

    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(responses=ReleaseSerializer)
    def get(self, request, slug, version):
        project = selectors.lead_project(request.user, slug)
        release = selectors.release_or_404(request.user, project, version)
        return Response(ReleaseSerializer(release, context={"request": request}).data)


class ReleaseDownload(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY, 409: OpenApiTypes.OBJECT})
    def get(self, request, slug, version):
        project = selectors.lead_project(request.user, slug)
        release = selectors.release_or_404(request.user, project, version)
        check = verify(release.path, expected_manifest=release.manifest)
        if not check.ok:
            return Response(
                {"detail": "the release folder no longer matches its manifest", **check.as_dict()},
                status=status.HTTP_409_CONFLICT,
            )
        return zip_response(release)


class ReleaseDiff(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)

    @extend_schema(
        parameters=[OpenApiParameter("a", str, required=True), OpenApiParameter("b", str, required=True)],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, slug):
        project = selectors.lead_project(request.user, slug)
        a = selectors.release_or_404(request.user, project, request.query_params.get("a", ""))
        b = selectors.release_or_404(request.user, project, request.query_params.get("b", ""))
        try:
            return Response(diff_releases(Snapshot.open(a.path), Snapshot.open(b.path)))
        except (OSError, ValueError) as exc:
            return Response({"detail": f"a release folder cannot be read: {exc}"}, status=status.HTTP_409_CONFLICT)
