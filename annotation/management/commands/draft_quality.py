"""Print how good a project's LLM drafts were, per field and per modality, against gold or reviewed revisions.

    manage.py draft_quality --project rescue2
    manage.py draft_quality --project rescue2 --json          # the whole report as JSON on stdout
    manage.py draft_quality --project rescue2 --clips grp/001_a grp/002_b

agree: rows where the draft's entries equal the humans'; deleted: drafted
entries the humans did not keep (invented content); missed: human entries the
draft did not have. See ``annotation/preannotate/quality.py``.
"""

from __future__ import annotations

import json

from django.core.management.base import CommandError

from ...preannotate.quality import draft_quality
from ...preannotate.services import resolve_clips
from ...services import ServiceError
from ._base import AuditedCommand


def _pct(x) -> str:
    return "–" if x is None else f"{x:.0%}"


def table(report: dict) -> str:
    lines = []
    for group in report["modalities"]:
        lines.append(
            f"\n{group['label']}: {group['clips']} clips, {group['rows']} rows, {group['comparisons']} comparisons"
        )
        header = ("field", "rows", "agree", "drafted", "deleted", "human", "missed")
        body = [
            (
                f["field"],
                str(f["rows"]),
                _pct(f["agreement"]),
                str(f["drafted"]),
                f"{f['deleted']} ({_pct(f['deleted_share'])})",
                str(f["human"]),
                f"{f['missed']} ({_pct(f['missed_share'])})",
            )
            for f in group["fields"]
        ]
        widths = [max(len(r[i]) for r in (header, *body)) for i in range(len(header))]
        for r in (header, *body):
            lines.append(
                "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
            )
    return "\n".join(lines).lstrip("\n")


class Command(AuditedCommand):
    help = "How good the LLM drafts were, per field and modality, against gold or reviewed revisions."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--clips", nargs="+", help="sample ids or clip ids (default: every clip)")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the whole report as JSON")

    def handle(self, project, clips, as_json: bool, **options):
        project_obj = self.get_project(project)
        try:
            chosen = resolve_clips(project_obj, clips) if clips else None
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        report = draft_quality(project_obj, clips=chosen)
        if as_json:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        if not report["modalities"]:
            self.stdout.write(
                f"project {project_obj.slug}: no LLM draft has a human reference yet (gold, or a revision marked "
                "reviewed)"
            )
            return
        c = report["compared_with"]
        self.stdout.write(
            f"project {project_obj.slug}: {report['drafted_rows']} drafted rows; compared with gold {c['gold']} times "
            f"and with reviewed revisions {c['reviewed_revisions']} times\n"
        )
        self.stdout.write(table(report))
