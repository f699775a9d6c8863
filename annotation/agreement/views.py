"""The leads' agreement dashboard: a table per slice, the plots, and job progress.

Thin: where the report stands comes from ``services.ensure_report`` (never
computed in the request: it starts a job, ``Compute.AS_JOB``); this module only picks the
slice to show and shapes it for the template (``report_context``). The page's view is
``meaning.agreement_views.dashboard``: the page shows each free-text figure's validity, which is meaning's,
and meaning reads agreement, never the reverse. The plots are images of their
own (``plot``), drawn when the browser asks for them and cached.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET

from .. import selectors
from ..codebook import selectors as codebook
from ..models import AgreementReport
from . import plots, services
from .attention import attention
from .draft_pull import anchoring_facts
from .scope import LEFT_OUT, WORK_SCOPES

MODE_NAMES = {
    "all": "All assignments",
    "anchored": "Anchored (started from the draft)",
    "calibration": "Calibration (started empty)",
}
PLOT_CACHE_SECONDS = 24 * 3600


def lead_project(request, slug: str):
    return selectors.lead_project(request.user, slug, "Agreement figures are for leads.")


def slice_name(entry: dict) -> str:
    where = "all scenarios" if entry["scenario"] == "all" else f"{entry['scenario']} clips"
    return f"{MODE_NAMES[entry['mode']]} · {where}"


def _rows(report: dict, entry: dict) -> list[dict]:
    llm = report.get("llm_coder")
    rows = []
    for m in report["measures"]:
        item = entry["measures"][m["key"]]
        llm_pairs = [p for p in item["pairs"] if llm in p["pair"]]
        rows.append(
            {
                "measure": m,
                "humans": item["humans"],
                "with_llm": item["with_llm"],
                "llm_pairs": llm_pairs,
                "changed": item["changed_from_draft"],
            }
        )
    return rows


def _pair_table(report: dict, entry: dict) -> tuple[list[str], list[dict]]:
    columns = [" – ".join(p["pair"]) for p in entry["measures"][report["measures"][0]["key"]]["pairs"]]
    rows = []
    for m in report["measures"]:
        by_name = {" – ".join(p["pair"]): p for p in entry["measures"][m["key"]]["pairs"]}
        rows.append({"measure": m, "cells": [by_name.get(c) for c in columns]})
    return columns, rows


def _confused(project, report: dict, entry: dict, name: str) -> list[dict]:
    """Per label measure of the slice, the pairs coders confuse most, each with a link to write guidance for it."""
    out = []
    for m in report["measures"]:
        pairs = entry["measures"][m["key"]].get("confused_pairs")
        if m["key"] not in codebook.MEASURE_FIELDS or pairs is None:
            continue
        why = f"coders confused these labels in the agreement report ({name})"
        units = entry["measures"][m["key"]]["humans"]["units"]
        left_out = entry["measures"][m["key"]].get("confused_pairs_left_out") or {"pairs": 0, "share": 0.0}
        out.append(
            {
                "measure": m,
                "units": units,
                "left_out": left_out,
                "pairs": codebook.confused_pair_links(project, m["key"], pairs, entry["scenario"], why),
            }
        )
    # The fields with confusions first, in the report's order.
    return sorted(out, key=lambda c: not c["pairs"])


def _by_modality(report: dict, entry: dict) -> dict | None:
    """The LLM-vs-human figures per draft modality, as rows (one per measure) of cells (one per modality)."""
    groups = entry.get("llm_by_modality")
    if not groups:
        return None
    rows = [
        {
            "measure": m,
            "cells": [
                {
                    **g["measures"][m["key"]],
                    "some_pair": any(p["defined"] for p in g["measures"][m["key"]]["llm_pairs"]),
                }
                for g in groups
            ],
        }
        for m in report["measures"]
    ]
    return {"groups": groups, "rows": rows}


def _left_out(entry: dict) -> list[dict]:
    """The slice's left-out revisions, one line per reason that applies."""
    return [
        {"reason": reason, "label": LEFT_OUT[reason][0], "why": LEFT_OUT[reason][1], "count": n}
        for reason, n in (entry.get("left_out") or {}).items()
        if n
    ]


def report_context(project, params: services.Params, state: services.ReportState, wanted: str) -> dict:
    """The agreement page's context but its free-text section (``meaning.agreement_views``, the page's view, adds
    that section with each figure's validity): the scopes, and the labels report's slice ``wanted``, shaped."""
    context = {
        "project": project,
        "params": params,
        "query": params.query(),
        "state": state,
        "scopes": [{"key": key, "label": label, "rule": rule} for key, (label, rule) in WORK_SCOPES.items()],
        "scope_label": WORK_SCOPES[params.work_scope][0],
        "scope_rule": WORK_SCOPES[params.work_scope][1],
        "computing": state.status in ("queued", "running"),
    }
    if state.report is not None:
        report = state.report.report
        slices = [{"key": s["key"], "name": slice_name(s), "empty": s["empty"]} for s in report["slices"]]
        entry = next((s for s in report["slices"] if s["key"] == wanted), report["slices"][0])
        context.update(
            report=report,
            stored=state.report,
            pull=anchoring_facts({"report": report}),
            slices=slices,
            entry=entry,
            entry_name=slice_name(entry),
            left_out=_left_out(entry),
        )
        if not entry["empty"]:
            columns, pair_rows = _pair_table(report, entry)
            confused = _confused(project, report, entry, slice_name(entry))
            context.update(
                attention=attention(report, entry, confused),
                rows=_rows(report, entry),
                pair_columns=columns,
                pair_rows=pair_rows,
                plots=plots.plot_list(report, entry["key"]),
                confused=confused,
                by_modality=_by_modality(report, entry),
            )
    return context


@login_required
@require_GET
def plot(request, slug: str):
    """One plot of a stored report as SVG: ``?report=<id>&slice=<key>&plot=<name>``."""
    project = lead_project(request, slug)
    try:
        report_id, slice_key, name = int(request.GET["report"]), request.GET["slice"], request.GET["plot"]
    except (KeyError, ValueError):
        return HttpResponseBadRequest("report (a number), slice and plot are required", content_type="text/plain")
    stored = AgreementReport.objects.filter(project=project, pk=report_id).first()
    if stored is None:
        raise Http404("no such report (a newer one may have replaced it: reload the page)")
    # A stored report never changes, so its drawings are cached as long as it exists.
    which = f"{stored.pk}|{stored.fingerprint}|{slice_key}|{name}"
    key = "agreement-plot:" + hashlib.sha256(which.encode()).hexdigest()
    svg = cache.get(key)
    if svg is None:
        svg = plots.draw(stored.report, slice_key, name)
        if svg is None:
            raise Http404("no such plot in this report")
        cache.set(key, svg, PLOT_CACHE_SECONDS)
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    patch_cache_control(response, private=True, max_age=PLOT_CACHE_SECONDS, immutable=True)
    return response
