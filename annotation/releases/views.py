"""Release pages for leads: list and freeze, one release with its manifest, zip download, diff.

Thin: reads through ``selectors``, the freeze through ``services``. A frozen
release has no edit or delete action anywhere; its pages answer GET only
(anything else is 405). Annotators get 403 on a project they can see, 404 on
one they cannot.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from tasks.rules import ALL_TASKS

from . import selectors, services
from .archive import archive_name, write_zip
from .diff import Snapshot, diff_releases
from .freeze import FreezeError
from .manifest import verify
from .splits import DEFAULT_RATIOS, SPLITS


def _lead_project(request, slug: str):
    return selectors.lead_project(request.user, slug, "Releases are managed by leads.")


def _summary(release) -> dict:
    manifest = release.manifest
    files = manifest.get("files", {})
    return {
        "release": release,
        "clips": len(manifest.get("clips", [])),
        "rows": sum(c.get("rows", 0) for c in manifest.get("clips", [])),
        "files": len(files) + 1,
        "megabytes": sum(f.get("bytes", 0) for f in files.values()) / 1e6,
        "inputs": manifest.get("inputs", {}),
    }


@login_required
@require_GET
def release_list(request, slug: str):
    project = _lead_project(request, slug)
    releases = [_summary(r) for r in selectors.visible_releases(request.user, project)]
    jobs = list(selectors.freeze_jobs(request.user, project)[:10])
    context = {
        "project": project,
        "releases": releases,
        "jobs": jobs,
        "defaults": {"version": request.GET.get("version", ""), "seed": 0, "splits": ",".join(str(r) for r in DEFAULT_RATIOS)},
        "versions": [s["release"].version for s in releases],
    }
    return render(request, "releases/list.html", context)


@login_required
@require_POST
def start_freeze(request, slug: str):
    project = _lead_project(request, slug)
    version = request.POST.get("version", "").strip()
    try:
        job = services.start_freeze(project, version=version, seed=request.POST.get("seed", "0"), ratios=request.POST.get("splits", "").strip() or DEFAULT_RATIOS, user=request.user)
    except FreezeError as exc:
        messages.error(request, f"Release not started: {exc}")
        return redirect("releases-list", slug=project.slug)
    messages.success(request, f"Freezing release {version} on a worker (job {job.pk}); progress below.")
    return redirect("releases-list", slug=project.slug)


@login_required
@require_GET
def release_detail(request, slug: str, version: str):
    project = _lead_project(request, slug)
    release = selectors.release_or_404(request.user, project, version)
    manifest = release.manifest
    # The record's manifest is jsonb: read it by key, never by its key order.
    splits = {s: {"clips": 0, "rows": 0} for s in SPLITS}
    for clip in manifest.get("clips", []):
        cell = splits.setdefault(clip["split"], {"clips": 0, "rows": 0})
        cell["clips"] += 1
        cell["rows"] += clip["rows"]
    recorded_tasks = manifest.get("tasks", {})
    tasks = [{"name": name, "counts": recorded_tasks[name].get("all", {})} for name in ALL_TASKS if name in recorded_tasks]
    readme = Path(release.path) / "README.md"
    context = {
        "project": project,
        **_summary(release),
        "manifest": manifest,
        "splits": splits,
        "tasks": tasks,
        "file_list": sorted(manifest.get("files", {}).items()),
        "verification": verify(release.path, expected_manifest=manifest),
        "card": readme.read_text(encoding="utf-8") if readme.is_file() else "",
        "others": [r.version for r in selectors.visible_releases(request.user, project) if r.pk != release.pk],
    }
    return render(request, "releases/detail.html", context)


def zip_response(release) -> FileResponse:
    """The release as a deterministic zip, or 409 when its folder no longer matches the manifest."""
    spool = tempfile.TemporaryFile()  # noqa: SIM115 -- FileResponse closes it once sent
    name = archive_name(release.project.slug, release.version)
    write_zip(release.path, spool, name)
    spool.seek(0)
    return FileResponse(spool, as_attachment=True, filename=f"{name}.zip", content_type="application/zip")


@login_required
@require_GET
def release_download(request, slug: str, version: str):
    project = _lead_project(request, slug)
    release = selectors.release_or_404(request.user, project, version)
    check = verify(release.path, expected_manifest=release.manifest)
    if not check.ok:
        return render(request, "releases/damaged.html", {"project": project, "release": release, "verification": check}, status=409)
    return zip_response(release)


@login_required
@require_GET
def release_diff(request, slug: str):
    project = _lead_project(request, slug)
    releases = list(selectors.visible_releases(request.user, project))
    versions = [r.version for r in releases]
    a_version, b_version = request.GET.get("a", ""), request.GET.get("b", "")
    context = {"project": project, "versions": versions, "a": a_version, "b": b_version, "diff": None, "error": ""}
    if a_version and b_version:
        by_version = {r.version: r for r in releases}
        if a_version not in by_version or b_version not in by_version:
            context["error"] = "Choose two existing releases."
        else:
            try:
                context["diff"] = diff_releases(Snapshot.open(by_version[a_version].path), Snapshot.open(by_version[b_version].path))
            except (OSError, ValueError) as exc:
                context["error"] = f"A release folder cannot be read: {exc}"
    return render(request, "releases/diff.html", context)
