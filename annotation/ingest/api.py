"""Endpoints: ``POST /api/v1/projects/{slug}/clips/`` (multipart ingest) and the speaker map of a clip.

``ProjectClipsView`` also serves ``GET`` on the same path exactly as
``annotation.api.views.ProjectClipList`` does (it inherits it), so that one
route can carry both methods.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils.datastructures import MultiValueDict
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import permissions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors
from ..api.parsers import BoundedFormParser, BoundedJSONParser, BoundedMultiPartParser
from ..api.permissions import lead_only
from ..api.views import ProjectClipList
from ..middleware import accepts_uploads
from ..models import Scenario
from ..roles import is_lead
from ..services import ServiceError
from ..taxonomy import load_taxonomy
from . import services
from .forms import safe_relative_path, split_names
from .selectors import speaker_rows

IsLead = lead_only("Only leads ingest transcripts and confirm speakers.")


class IsLeadForWrites(IsLead):
    """Reads for anyone signed in (scoped by selectors); writes for leads."""

    def has_permission(self, request, view):
        return request.method in permissions.SAFE_METHODS or super().has_permission(request, view)


# --- request / response shapes ------------------------------------------------


class IngestRequestSerializer(serializers.Serializer):
    files = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True),
        help_text=(
            "Transcript files (also accepted as files[]); a video or audio file goes with the transcript of the "
            "same name."
        ),
    )
    scenario = serializers.ChoiceField(choices=Scenario.choices)
    participants = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text=(
            "On-screen names: repeat the field or send one comma-separated value. Default: each transcript's "
            "speaker labels without the therapist and the group label."
        ),
    )
    relative_paths = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text=(
            "Each file's path inside the uploaded folder, in the order of files (multipart drops folders from "
            "file names)."
        ),
    )
    group = serializers.CharField(
        required=False, help_text="Folder part of the default sample id when no relative path is given."
    )
    sample_id = serializers.CharField(required=False, help_text="<group>/<clip>; only with a single transcript.")
    speaker_map = serializers.JSONField(
        required=False,
        binary=True,
        help_text=(
            'JSON object {"raw tag": "entity"}; confirms the speaker map of every clip it covers ("" = unknown '
            "speaker)."
        ),
    )
    replace = serializers.BooleanField(
        required=False, default=False, help_text="Replace a changed clip that has no human work yet."
    )
    media_url = serializers.CharField(
        required=False, allow_blank=True, help_text="http(s) URL of the clip's media; only with a single transcript."
    )


class FileResultSerializer(serializers.Serializer):
    file = serializers.CharField()
    status = serializers.ChoiceField(
        choices=[services.CREATED, services.UNCHANGED, services.REPLACED, services.REFUSED]
    )
    message = serializers.CharField()
    line = serializers.IntegerField(
        allow_null=True, help_text="Line of the file the refusal points at, when there is one."
    )
    sample_id = serializers.CharField(allow_null=True)
    clip_id = serializers.IntegerField(allow_null=True)
    cues = serializers.IntegerField()
    speaker_map_confirmed = serializers.BooleanField()
    unmapped_speakers = serializers.ListField(child=serializers.CharField())
    notes = serializers.ListField(
        child=serializers.CharField(),
        help_text="What reading the file changed, e.g. rolling auto-captions collapsed into their lines.",
    )


class IngestResponseSerializer(serializers.Serializer):
    results = FileResultSerializer(many=True)
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    replaced = serializers.IntegerField()
    refused = serializers.IntegerField()


class SpeakerRowSerializer(serializers.Serializer):
    tag = serializers.CharField(allow_blank=True)
    cues = serializers.IntegerField()
    example = serializers.CharField(allow_blank=True)
    suggested = serializers.CharField(allow_blank=True)
    mapped = serializers.CharField(allow_blank=True)


class SpeakerMapSerializer(serializers.Serializer):
    clip_id = serializers.IntegerField(read_only=True)
    sample_id = serializers.CharField(read_only=True)
    entities = serializers.ListField(child=serializers.CharField(), read_only=True)
    speakers = SpeakerRowSerializer(many=True, read_only=True)
    confirmed = serializers.BooleanField(read_only=True)
    participants = serializers.ListField(child=serializers.CharField(), required=False)
    speaker_map = serializers.DictField(child=serializers.CharField(allow_blank=True))


def _status_of(results: list[services.FileResult]) -> int:
    counts = {s: sum(r.status == s for r in results) for s in (services.CREATED, services.REPLACED, services.REFUSED)}
    if counts[services.REFUSED]:
        return status.HTTP_422_UNPROCESSABLE_ENTITY
    if counts[services.CREATED] or counts[services.REPLACED]:
        return status.HTTP_201_CREATED
    return status.HTTP_200_OK


_INGEST_DESCRIPTION = """Ingest transcripts into the project (leads only), one clip per transcript.

Each file is read, checked and written on its own, in its own transaction, and gets one result:
`created`, `unchanged` (same bytes as a clip already in the project), `replaced` (with `replace`,
a changed transcript of a clip nobody has worked on) or `refused` (with a message naming the file and line;
nothing of that file was written).

Status: **201** when at least one clip was created or replaced and none refused; **200** when every file
was unchanged; **422** when at least one file was refused; the other files' results in the same body
still stand. **400** for parameters that are wrong for every file (unknown scenario, bad speaker map).
"""


@extend_schema_view(
    post=extend_schema(
        summary="Ingest transcripts",
        description=_INGEST_DESCRIPTION,
        request={"multipart/form-data": IngestRequestSerializer},
        responses={
            201: OpenApiResponse(
                IngestResponseSerializer, description="At least one clip created or replaced, none refused."
            ),
            200: OpenApiResponse(IngestResponseSerializer, description="Every file unchanged."),
            422: OpenApiResponse(IngestResponseSerializer, description="At least one file refused; see each result."),
            400: OpenApiResponse(description="Invalid parameters."),
            403: OpenApiResponse(description="Not a lead."),
        },
        examples=[
            OpenApiExample(
                "refused file",
                response_only=True,
                status_codes=["422"],
                value={
                    "results": [
                        {
                            "file": "alan_and_evelyn/009.srt",
                            "status": "refused",
                            "message": "alan_and_evelyn/009.srt, line 14: cue ends (3.0 s) before it starts (5.0 s)",
                            "line": 14,
                            "sample_id": None,
                            "clip_id": None,
                            "cues": 0,
                            "speaker_map_confirmed": False,
                            "unmapped_speakers": [],
                            "notes": [],
                        }
                    ],
                    "created": 0,
                    "unchanged": 0,
                    "replaced": 0,
                    "refused": 1,
                },
            )
        ],
    )
)
@accepts_uploads(allowed=is_lead)
class ProjectClipsView(ProjectClipList):
    """GET: the project's clips the caller may see. POST: ingest transcripts (leads)."""

    permission_classes = [permissions.IsAuthenticated, IsLeadForWrites]
    parser_classes = [BoundedMultiPartParser, BoundedFormParser]

    def post(self, request, slug):
        project = selectors.visible_project(request.user, slug)
        params = IngestRequestSerializer(data=_with_files(request))
        params.is_valid(raise_exception=True)
        data = params.validated_data
        participants = data.get("participants")
        if participants is not None and len(participants) == 1:
            participants = split_names(participants[0])
        options = services.IngestOptions(
            scenario=data["scenario"],
            participants=participants,
            sample_id=data.get("sample_id") or None,
            group=data.get("group") or None,
            speaker_map=data.get("speaker_map"),
            replace=data["replace"],
            media_url=data.get("media_url") or "",
        )
        files = data["files"]
        paths = data.get("relative_paths") or []
        if len(paths) != len(files):
            paths = [f.name for f in files]
        uploads = [services.Upload(safe_relative_path(p, f.name), f.size, f.read, f) for p, f in zip(paths, files)]
        try:
            results = services.ingest_files(project, uploads, options, actor=request.user)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        body = {"results": [r.as_dict() for r in results]}
        body.update(
            {
                s: sum(r.status == s for r in results)
                for s in (services.CREATED, services.UNCHANGED, services.REPLACED, services.REFUSED)
            }
        )
        return Response(body, status=_status_of(results))


def _with_files(request) -> MultiValueDict:
    """The request data (a shallow copy: uploaded files are not copied) with ``files[]`` accepted as ``files``."""
    data = MultiValueDict()
    for key in request.data:
        data.setlist(key, request.data.getlist(key))
    if "files[]" in data and "files" not in data:
        data.setlist("files", data.getlist("files[]"))
    return data


class ClipSpeakerMapView(APIView):
    """The speaker map of one clip: read it (with suggestions) or confirm it. Leads only."""

    permission_classes = [permissions.IsAuthenticated, IsLead]
    parser_classes = [BoundedJSONParser]
    serializer_class = SpeakerMapSerializer

    def _clip(self, request, slug, clip_id):
        project = selectors.visible_project(request.user, slug)
        return get_object_or_404(selectors.visible_clips(request.user, project), pk=clip_id)

    @staticmethod
    def _body(clip) -> dict:
        return {
            "clip_id": clip.pk,
            "sample_id": clip.sample_id,
            "participants": clip.participants,
            "entities": list(load_taxonomy(clip.scenario).entities(clip.participants)),
            "speakers": speaker_rows(clip),
            "speaker_map": clip.speaker_map,
            "confirmed": clip.speaker_map_confirmed,
        }

    @extend_schema(summary="Read a clip's speaker map", responses={200: SpeakerMapSerializer})
    def get(self, request, slug, clip_id):
        return Response(self._body(self._clip(request, slug, clip_id)))

    @extend_schema(
        summary="Confirm a clip's speaker map",
        description=(
            "Every raw speaker tag of the clip must be mapped to a participant, Therapist, the group label, or "
            '"" (unknown). '
            "Optionally replaces the participant list in the same step. Refused (400) once rows have been built."
        ),
        request=SpeakerMapSerializer,
        responses={
            200: SpeakerMapSerializer,
            400: OpenApiResponse(description="The map or participants are not valid for this clip."),
        },
    )
    def put(self, request, slug, clip_id):
        clip = self._clip(request, slug, clip_id)
        params = SpeakerMapSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        try:
            clip = services.confirm_speaker_map(
                clip,
                params.validated_data["speaker_map"],
                participants=params.validated_data.get("participants"),
                actor=request.user,
            )
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self._body(clip))
