"""``/api/v1/projects/{slug}/agreement/texts/``: the semantic agreement of the free-text fields for scripts (leads).

The endpoint of the agreement API (``agreement.api``: same parameters, answers and polling) whose report carries,
beside every free-text figure, what its measure is worth for the field (``selectors.with_validity``). It is this
package's because meaning reads agreement and never the reverse; ``.../texts/status/`` (no report, so no
validity) stays in ``agreement.api``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from ..agreement import services
from ..agreement.api import PARAMETERS, RESPONSES, AgreementBase
from .selectors import with_validity


def _with_validity(response: Response, project) -> Response:
    """Every free-text figure says what its measure is worth for its field (``meaning.selectors.with_validity``)."""
    if isinstance(response.data, dict) and isinstance(response.data.get("report"), dict):
        response.data["report"] = with_validity(response.data["report"], project)
    return response


class AgreementTextsView(AgreementBase):
    """The free-text (semantic) figures: always computed by a worker (the embedding model is never loaded here)."""

    kind = services.TEXTS
    compute = services.Compute.AS_JOB

    @extend_schema(
        summary="Semantic agreement of the free-text fields (starts a job when missing or stale)",
        parameters=PARAMETERS,
        responses=RESPONSES,
    )
    def get(self, request, slug):
        return _with_validity(*self.report_response(request, slug))

    @extend_schema(
        summary="Compute the semantic agreement report (again after a failure)",
        parameters=PARAMETERS,
        request=None,
        responses=RESPONSES,
    )
    def post(self, request, slug):
        return _with_validity(*self.report_response(request, slug, retry=True))
