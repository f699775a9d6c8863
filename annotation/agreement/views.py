"""The leads' agreement dashboard: a table per slice, the plots, and job progress.

Thin: the report comes from ``services.report_state`` (cached, or computed /
started there); this module only picks the slice to show and shapes it for
the template.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from .. import selectors
from . import plots, services

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


def _plots(stored, report: dict, slice_key: str) -> list[dict]:
    # Drawing takes a few seconds; a stored report never changes, so its plots are cached by fingerprint.
    key = f"agreement-plots:{stored.fingerprint}:{stored.pk}:{slice_key}"
    drawn = cache.get(key)
    if drawn is None:
        drawn = plots.slice_plots(report, slice_key)
        cache.set(key, drawn, PLOT_CACHE_SECONDS)
    return drawn


@login_required
@require_http_methods(["GET", "POST"])
def dashboard(request, slug: str):
    project = lead_project(request, slug)
    query = request.POST if request.method == "POST" else request.GET
    try:
        params = services.Params.from_query(query)
    except ValueError as exc:
        return render(request, "agreement/dashboard.html", {"project": project, "error": str(exc)}, status=400)
    if request.method == "POST":  # "compute again" after a failed job
        services.report_state(project, params, user=request.user, retry=True)
        return redirect(f"{request.path}?{params.query()}")

    state = services.report_state(project, params, user=request.user)
    context = {"project": project, "params": params, "query": params.query(), "state": state}
    if state.status == "ready":
        report = state.report.report
        slices = [{"key": s["key"], "name": slice_name(s), "empty": s["empty"]} for s in report["slices"]]
        wanted = request.GET.get("slice") or "all/all"
        entry = next((s for s in report["slices"] if s["key"] == wanted), report["slices"][0])
        context.update(report=report, slices=slices, entry=entry, entry_name=slice_name(entry))
        if not entry["empty"]:
            columns, pair_rows = _pair_table(report, entry)
            context.update(
                rows=_rows(report, entry),
                pair_columns=columns,
                pair_rows=pair_rows,
                plots=_plots(state.report, report, entry["key"]),
            )
    return render(request, "agreement/dashboard.html", context)
