"""Release pages for leads: list, preview and freeze, one release with its manifest, zip download, diff.

Freezing takes two steps: the list page's form opens the preview (what the
freeze would release, ``preview.preview_freeze``), whose *Freeze* button asks
for confirmation in a dialog stating the counts, and sends the preview's
digest with it, so that the freeze runs only on the plan the lead saw.

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
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from tasks.profiles import DEFAULT_PROFILE, PROFILES
from tasks.rules import ALL_TASKS, TITLES

from ..groups import GroupMapError, dump_group_map, read_group_map
from . import selectors, services
from .archive import archive_name, write_zip
from .diff import Snapshot, diff_releases
from .freeze import FreezeError, check_version
from .manifest import sha256, verify
from .preview import preview_freeze
from .readme_html import readme_html
from .splits import DEFAULT_RATIOS, SPLITS, SplitError


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
        "form": {
            "version": request.GET.get("version", ""),
            "seed": 0,
            "splits": ",".join(str(r) for r in DEFAULT_RATIOS),
            "group_map": "",
            "task_profile": DEFAULT_PROFILE,
        },
        "versions": [s["release"].version for s in releases],
        "task_profiles": PROFILES,
    }
    return render(request, "releases/list.html", context)


# A clip → group map names each clip once: even 10,000 clips fit well below this.
GROUP_MAP_MAX_BYTES = 1_000_000  # well under MAX_REQUEST_BYTES, which refuses the whole body first


def _freeze_form(request) -> dict:
    """The freeze inputs as the list and preview forms send them (text, not yet checked).

    A chosen map file wins over the text box (the preview then shows its
    content in the box); a file too large to be a map raises GroupMapError.
    """
    data = request.POST if request.method == "POST" else request.GET
    upload = request.FILES.get("group_map_file")
    if upload is not None and upload.size > GROUP_MAP_MAX_BYTES:
        raise GroupMapError(
            f"the group map file is {upload.size:,} bytes; a map of clips to groups is far smaller (limit "
            f"{GROUP_MAP_MAX_BYTES:,})"
        )
    return {
        "version": data.get("version", "").strip(),
        "seed": data.get("seed", "0").strip(),
        "splits": data.get("splits", "").strip() or ",".join(str(r) for r in DEFAULT_RATIOS),
        "group_map": upload.read().decode("utf-8", "replace") if upload else data.get("group_map", ""),
        "accept_incomplete": sorted(set(data.getlist("accept_incomplete"))),
        # The page's profile choice (absent: the default, rescue-v1); an unknown name is refused by the freeze.
        "task_profile": data.get("task_profile", "").strip() or DEFAULT_PROFILE,
    }


@login_required
@require_http_methods(["GET", "POST"])
def freeze_preview(request, slug: str):
    """What freezing with the form's inputs would release; nothing is written."""
    project = _lead_project(request, slug)
    preview, error = None, ""
    form = {
        "version": "",
        "seed": "0",
        "splits": "",
        "group_map": "",
        "accept_incomplete": [],
        "task_profile": DEFAULT_PROFILE,
    }
    try:
        form = _freeze_form(request)
        check_version(form["version"])
        if selectors.visible_releases(request.user, project).filter(version=form["version"]).exists():
            raise FreezeError(f"release {form['version']} already exists; a new version is a new release")
        group_map = read_group_map(form["group_map"])
        preview = preview_freeze(
            project,
            seed=services.parse_seed(form["seed"]),
            ratios=form["splits"],
            group_map=group_map,
            accept_incomplete=form["accept_incomplete"],
            task_profile=form["task_profile"],
        )
        form["group_map"] = dump_group_map(group_map)
    except (FreezeError, SplitError, GroupMapError) as exc:
        error = str(exc)
    context = {
        "project": project,
        "form": form,
        "preview": preview,
        "error": error,
        "splits": SPLITS,
        "tasks": ALL_TASKS,
        "task_profiles": PROFILES,
    }
    return render(request, "releases/preview.html", context, status=200 if preview is not None else 400)


@login_required
@require_POST
def start_freeze(request, slug: str):
    project = _lead_project(request, slug)
    if not request.POST.get("confirmed"):
        messages.error(
            request,
            "Release not started: freeze from the preview, which shows what will be released and asks you to confirm.",
        )
        return redirect("releases-list", slug=project.slug)
    try:
        form = _freeze_form(request)
        job = services.start_freeze(
            project,
            version=form["version"],
            seed=form["seed"],
            ratios=form["splits"],
            group_map=read_group_map(form["group_map"]),
            accept_incomplete=form["accept_incomplete"],
            confirmed=request.POST["confirmed"],
            user=request.user,
            task_profile=form["task_profile"],
        )
    except (FreezeError, GroupMapError) as exc:
        messages.error(request, f"Release not started: {exc}")
        return redirect("releases-list", slug=project.slug)
    messages.success(request, f"Freezing release {form['version']} on a worker (job {job.pk}); progress below.")
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
    tasks = [
        {"name": name, "title": TITLES[name], "counts": recorded_tasks[name].get("all", {})}
        for name in ALL_TASKS
        if name in recorded_tasks
    ]
    readme = Path(release.path) / "README.md"
    files_url = reverse("releases-file", args=[project.slug, release.version, "_"])[:-1]
    card = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    listed = manifest.get("files", {})
    context = {
        "project": project,
        **_summary(release),
        "manifest": manifest,
        "splits": splits,
        "tasks": tasks,
        "file_list": sorted(manifest.get("files", {}).items()),
        "verification": verify(release.path, expected_manifest=manifest),
        "card": card,
        "card_html": readme_html(card, lambda name: files_url + name) if card else "",
        "card_url": files_url + "README.md" if "README.md" in listed else None,
        "croissant_url": files_url + "croissant.json" if "croissant.json" in listed else None,
        "human": selectors.human_work_of(release),
        "others": [r.version for r in selectors.visible_releases(request.user, project) if r.pk != release.pk],
    }
    return render(request, "releases/detail.html", context)


# Shown in the browser; any other file of the release is downloaded.
VIEWABLE = {
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}


@login_required
@require_GET
def release_file(request, slug: str, version: str, name: str):
    """One file of a release (the card, its Croissant, a figure the card shows), only when the manifest lists it
    and its bytes still match the manifest's checksum."""
    project = _lead_project(request, slug)
    release = selectors.release_or_404(request.user, project, version)
    entry = release.manifest.get("files", {}).get(name)
    path = Path(release.path) / name
    if entry is None or not path.is_file():
        raise Http404("no such file in this release")
    data = path.read_bytes()
    if sha256(data) != entry.get("sha256"):
        return HttpResponse("this file no longer matches the release's manifest", status=409, content_type="text/plain")
    kind = VIEWABLE.get(path.suffix.lower())
    response = HttpResponse(data, content_type=kind or "application/octet-stream")
    if kind is None:
        response["Content-Disposition"] = f'attachment; filename="{path.name}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


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
        return render(
            request,
            "releases/damaged.html",
            {"project": project, "release": release, "verification": check},
            status=409,
        )
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
                context["diff"] = diff_releases(
                    Snapshot.open(by_version[a_version].path), Snapshot.open(by_version[b_version].path)
                )
            except (OSError, ValueError) as exc:
                context["error"] = f"A release folder cannot be read: {exc}"
    return render(request, "releases/diff.html", context)
