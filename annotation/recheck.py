"""Re-validate every stored document of a project against the schema.

Useful after a taxonomy update or a bulk import: it recomputes each
document's warnings and reports the documents that no longer pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from .models import Draft, Gold, Project, Revision
from .schema import ClipContext, check_row

DOCUMENT_MODELS = {"draft": Draft, "revision": Revision, "gold": Gold}


def recheck_project(project: Project, progress: Callable[[int, int], None] | None = None) -> dict:
    clips = list(project.clips.prefetch_related("rows").order_by("sample_id"))
    summary = {"clips": len(clips), "documents": 0, "errors": Counter(), "warnings": Counter(), "invalid": []}
    for done, clip in enumerate(clips, start=1):
        rows = list(clip.rows.all())
        ctx = ClipContext.for_clip(clip.scenario, clip.participants, len(rows), project.taxonomy_version, clip.duration)
        for kind, model in DOCUMENT_MODELS.items():
            for doc in model.objects.filter(row__clip=clip).select_related("row"):
                _, report = check_row({**doc.row.skeleton(), **doc.content}, ctx)
                summary["documents"] += 1
                summary["errors"].update(i.code for i in report.errors)
                summary["warnings"].update(i.code for i in report.warnings)
                if report.errors:
                    summary["invalid"].append(
                        {
                            "sample_id": clip.sample_id,
                            "row": doc.row.row_index,
                            "source": kind,
                            "errors": [str(i) for i in report.errors],
                        }
                    )
        if progress:
            progress(done, len(clips))
    summary["errors"] = dict(summary["errors"])
    summary["warnings"] = dict(summary["warnings"])
    return summary
