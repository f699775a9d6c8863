"""``/api/v1/projects/{slug}/agreement/``: the agreement report for scripts (leads only).

``GET`` returns the stored report when it is current (200), computes it on
the spot for a small scope, or starts a background job and answers 202 with
its progress; poll ``.../agreement/status/`` (which never starts anything)
or the same URL. ``POST`` is the same, and also starts again after a failed
job. ``.../agreement/texts/`` (and ``.../texts/status/``) does the same for the
semantic agreement of the free-text fields, always on a worker (its ``GET`` and
``POST`` are ``meaning.agreement_api``: each free-text figure comes with its
measure's validity, which is meaning's). ``?scope=submitted`` (default) or ``reviewed`` says
which work counts;
every answer names its scope, and a report with no coded work in it says so
(``coded_work`` false, ``empty_reason``) instead of giving figures.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import permissions, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors
from ..api.permissions import lead_only
from ..taxonomy import SCENARIOS
from . import services
from .report import MAX_RESAMPLES, MIN_RESAMPLES
from .scope import DEFAULT_WORK_SCOPE, WORK_SCOPES

IsLead = lead_only("Agreement figures are for leads.")


PARAMETERS = [
    OpenApiParameter(
        "scope",
        str,
        enum=list(WORK_SCOPES),
        description=(
            f"Which work counts (default {DEFAULT_WORK_SCOPE}): "
            + " ".join(f"{key}: {rule}" for key, (_label, rule) in WORK_SCOPES.items())
        ),
    ),
    OpenApiParameter("scenario", str, enum=list(SCENARIOS), description="Only clips of this scenario (default: all)."),
    OpenApiParameter(
        "resamples",
        int,
        description=f"Bootstrap resamples per figure ({MIN_RESAMPLES:,}-{MAX_RESAMPLES:,}; default 1,000).",
    ),
    OpenApiParameter("seed", int, description="Bootstrap seed (default 0): the same seed gives the same intervals."),
]
RESPONSES = {
    200: OpenApiResponse(
        OpenApiTypes.OBJECT,
        description=(
            '{"status": "ready", "scope": "submitted", "scope_label": ..., "computed_at": ..., "stale": false, '
            '"coded_work": true|false, "empty_reason": null|"no coded work yet: ...", "fingerprint": ..., '
            '"report": {...}}'
        ),
    ),
    202: OpenApiResponse(
        OpenApiTypes.OBJECT, description='{"status": "queued"|"running", "job": {...progress}}: poll again'
    ),
    400: OpenApiResponse(OpenApiTypes.OBJECT, description="A parameter is invalid."),
    500: OpenApiResponse(
        OpenApiTypes.OBJECT, description='{"status": "failed", "job": {..., "error": ...}}: POST to try again'
    ),
}


def _job(job) -> dict | None:
    if job is None:
        return None
    return {
        "id": job.pk,
        "state": job.state,
        "progress_done": job.progress_done,
        "progress_total": job.progress_total,
        "error": job.error,
    }


def state_response(state: services.ReportState, params: services.Params, *, with_report: bool = True) -> Response:
    stored = state.report
    body = {
        "status": state.status,
        "scope": params.work_scope,
        "scope_label": WORK_SCOPES[params.work_scope][0],
        "fingerprint": state.fingerprint,
        # The last stored report of this scope: when it was computed, and whether the data moved on since.
        "computed_at": stored.created_at.isoformat() if stored else None,
        "stale": state.stale if stored else None,
        "job": _job(state.job),
    }
    if state.status == "ready":
        body["coded_work"] = stored.report.get("coded_work")
        body["empty_reason"] = stored.report.get("empty_reason")
        if with_report:
            body["report"] = stored.report
        return Response(body)
    if state.status == "failed":
        return Response(body, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    return Response(body, status=status.HTTP_202_ACCEPTED)


class AgreementBase(APIView):
    permission_classes = (permissions.IsAuthenticated, IsLead)
    # Which report a view reads and how it is computed when missing or stale (``report_response``).
    kind = services.LABELS
    compute = services.Compute.IN_PROCESS_IF_SMALL

    def project_and_params(self, request, slug):
        project = selectors.visible_project(request.user, slug)
        try:
            return project, services.Params.from_query(request.query_params, project.work_scope)
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from None

    def report_response(self, request, slug, *, retry: bool = False) -> tuple[Response, object]:
        """(the view's report as the API answers it, starting its computation when missing or stale; the project)."""
        project, params = self.project_and_params(request, slug)
        state = services.ensure_report(
            project, params, user=request.user, retry=retry, kind=self.kind, compute=self.compute
        )
        return state_response(state, params), project


class AgreementReportView(AgreementBase):
    @extend_schema(summary="Agreement report of a project", parameters=PARAMETERS, responses=RESPONSES)
    def get(self, request, slug):
        return self.report_response(request, slug)[0]

    @extend_schema(
        summary="Compute the agreement report (again after a failure)",
        parameters=PARAMETERS,
        request=None,
        responses=RESPONSES,
    )
    def post(self, request, slug):
        return self.report_response(request, slug, retry=True)[0]


class AgreementTextsStatusView(AgreementBase):
    @extend_schema(
        summary="Where the semantic agreement report stands (never starts a computation)",
        parameters=PARAMETERS,
        responses=RESPONSES,
    )
    def get(self, request, slug):
        project, params = self.project_and_params(request, slug)
        state = services.report_state(project, params, kind=services.TEXTS)
        return state_response(state, params, with_report=False)


class AgreementStatusView(AgreementBase):
    @extend_schema(
        summary="Where the agreement report stands (never starts a computation)",
        parameters=PARAMETERS,
        responses=RESPONSES,
    )
    def get(self, request, slug):
        project, params = self.project_and_params(request, slug)
        state = services.report_state(project, params)
        return state_response(state, params, with_report=False)
