"""The leads' agreement dashboard, whose free-text section says what each figure is worth.

The page composes two capabilities: agreement's report (``agreement.views.report_context``: the tables per
slice, the plots, the draft's pull) and, beside each free-text figure, its measure's validity for the field
(``selectors.with_validity``: the page, the API and releases read it). It is this package's view because
meaning reads agreement and never the reverse; its route and template are the agreement page's
(``agreement-dashboard``, ``agreement/dashboard.html``). Nothing is computed in the request: a job computes a
missing or stale report while the page shows the last one.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from ..agreement import services
from ..agreement.views import lead_project, report_context
from .selectors import with_validity


@login_required
@require_http_methods(["GET", "POST"])
def dashboard(request, slug: str):
    project = lead_project(request, slug)
    query = request.POST if request.method == "POST" else request.GET
    try:
        params = services.Params.from_query(query, project.work_scope)
    except ValueError as exc:
        return render(request, "agreement/dashboard.html", {"project": project, "error": str(exc)}, status=400)
    if request.method == "POST":  # "compute again" after a failed job
        kind = services.TEXTS if request.POST.get("report") == "texts" else services.LABELS
        services.ensure_report(
            project, params, user=request.user, retry=True, kind=kind, compute=services.Compute.AS_JOB
        )
        return redirect(f"{request.path}?{params.query()}")

    # Both reports read the same data: its digest is taken once for the two fingerprints.
    data = services.data_digest(project, params)
    # Never computed in the request: a job computes a missing or stale report while the page shows the last one.
    state = services.ensure_report(project, params, user=request.user, data=data, compute=services.Compute.AS_JOB)
    texts_state = services.ensure_report(
        project, params, user=request.user, kind=services.TEXTS, data=data, compute=services.Compute.AS_JOB
    )
    wanted = request.GET.get("slice") or "all/all"
    context = report_context(project, params, state, wanted)
    context["texts"] = _texts(texts_state, wanted, project)
    return render(request, "agreement/dashboard.html", context)


def _texts(state: services.ReportState, wanted: str, project) -> dict:
    """The free-text section: where its report stands, and its table for the slice shown, each field's figure
    with its measure's validity (``selectors.with_validity``: the page, the API and releases read it)."""
    out = {"state": state, "computing": state.status in ("queued", "running"), "stored": state.report}
    if state.report is None:
        return out
    report = with_validity(state.report.report, project)
    meaning = report["meaning"]
    by_field = {s["field"]: s for s in report["summary"]}
    verdicts = {by_field[f["key"]]["validity"]["verdict"] for f in report["fields"] if f["key"] in by_field}
    out["meaning"] = meaning
    out["all_validated"] = bool(verdicts) and verdicts == {"validated"}
    out["some_validated"] = "validated" in verdicts
    entry = next((s for s in report["slices"] if s["key"] == wanted), report["slices"][0])
    out.update(report=report, entry=entry)
    if not entry["empty"]:
        out["rows"] = [
            {
                "field": f,
                **entry["fields"][f["key"]],
                "llm_pairs": [p for p in entry["fields"][f["key"]]["pairs"] if report["llm_coder"] in p["pair"]],
                "validity": meaning["fields"][f["key"]]["embedding"],
                "judge": (by_field.get(f["key"]) or {}).get("measures", {}).get("judge"),
            }
            for f in report["fields"]
        ]
    return out
