"""Print a project's inter-annotator agreement as a table; optionally write the full report as JSON.

    manage.py agreement --project rescue2
    manage.py agreement --project rescue2 --scope reviewed      # also rows marked reviewed in open assignments
    manage.py agreement --project rescue2 --scenario family --json out/agreement.json
    manage.py agreement --project rescue2 --clips alan_and_evelyn/001_x alan_and_evelyn/002_y --resamples 5000 --seed 7
    manage.py agreement --project rescue2 --no-texts                # without the free-text (semantic) figures

The free-text figures embed the texts not yet in the embedding cache (the
model loads only then) and are written under "semantic" in the JSON.

Computed in this process (no worker needed) and stored in the report cache,
so the dashboard and the API serve it without computing it again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import CommandError

from ...agreement import services
from ...agreement.embeddings import EmbeddingError
from ...agreement.extract import ScopeError
from ...agreement.report import MAX_RESAMPLES, MIN_RESAMPLES
from ...agreement.scope import DEFAULT_WORK_SCOPE, WORK_SCOPES, left_out_summary
from ...codebook.selectors import MEASURE_FIELDS as LABEL_MEASURES  # measures whose values are taxonomy labels
from ...taxonomy import SCENARIOS
from ._base import AuditedCommand

COLUMNS = (
    "field",
    "level",
    "alpha",
    "95% interval",
    "P<.800",
    "P<.667",
    "units",
    "coders",
    "pairable",
    "agree",
    "majority",
    "α+LLM",
    "changed",
)


def _num(x, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _pct(x) -> str:
    return "–" if x is None else f"{x:.0%}"


def slice_table(report: dict, entry: dict) -> tuple[list[tuple[str, ...]], list[str]]:
    """Rows of the table for one slice, and the notes (undefined figures, rare values) under it."""
    rows, notes = [], []
    for m in report["measures"]:
        item = entry["measures"][m["key"]]
        f, llm, changed = item["humans"], item["with_llm"], item["changed_from_draft"]
        interval = f"[{_num(f['ci95'][0])}, {_num(f['ci95'][1])}]" if f["ci95"] else "–"
        alpha = _num(f["alpha"]) if f["defined"] else "undefined"
        majority = f"{f['majority_value']} {_pct(f['majority_share'])}" if f["majority_value"] is not None else "–"
        rows.append(
            (
                m["key"],
                m["level"],
                alpha,
                interval,
                _num(f["p_alpha_below_0_800"]),
                _num(f["p_alpha_below_0_667"]),
                str(f["units"]),
                str(f["coders"]),
                str(f["pairable_values"]),
                _pct(f["observed_agreement"]),
                majority,
                _num(llm["alpha"]) if llm else "–",
                _pct(changed["share"]) if changed else "–",
            )
        )
        if f["undefined_reason"]:
            notes.append(f"{m['key']}: undefined: {f['undefined_reason']}")
        if f["rare_values_note"]:
            notes.append(f"{m['key']}: {f['rare_values_note']}")
    return rows, notes


def format_table(rows: list[tuple[str, ...]], columns: tuple[str, ...] = COLUMNS) -> str:
    widths = [max(len(str(r[i])) for r in [columns, *rows]) for i in range(len(columns))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [columns, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def confused_lines(report: dict, entry: dict) -> list[str]:
    """One line per label field: the pairs of labels coders confuse most (rows, share of the field's disagreement)."""
    lines = []
    for m in report["measures"]:
        pairs = entry["measures"][m["key"]].get("confused_pairs")
        if m["key"] in LABEL_MEASURES and pairs:
            shown = ", ".join(
                f"{p['values'][0]} <-> {p['values'][1]} ({p['rows']} rows, {_pct(p['share'])})" for p in pairs
            )
            lines.append(f"  {m['key']}: {shown}")
    return lines


def modality_table(report: dict, entry: dict) -> str | None:
    """The LLM-vs-human figures per draft modality: alpha with the LLM and changed from draft, per field."""
    groups = entry.get("llm_by_modality")
    if not groups:
        return None
    columns = ("field", *(f"{word} {g['label']}" for g in groups for word in ("α+LLM", "changed")))
    rows = []
    for m in report["measures"]:
        cells = []
        for g in groups:
            item = g["measures"][m["key"]]
            fig, changed = item["with_llm"], item["changed_from_draft"]
            cells += [
                _num(fig["alpha"]) if fig and fig["defined"] else ("undefined" if fig else "–"),
                _pct(changed["share"]) if changed else "–",
            ]
        rows.append((m["key"], *cells))
    head = "; ".join(f"{g['label']}: {g['rows']} rows" for g in groups)
    return f"LLM draft by modality ({head}):\n" + format_table(rows, columns)


class Command(AuditedCommand):
    help = "Krippendorff's alpha per field with bootstrap intervals, for a project (all coders, pairs, the LLM draft)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument(
            "--scope",
            choices=list(WORK_SCOPES),
            default=None,
            help="which work counts: "
            + "; ".join(f"{key}: {rule}" for key, (_label, rule) in WORK_SCOPES.items())
            + f" (default: the project's study design, {DEFAULT_WORK_SCOPE} unless changed)",
        )
        parser.add_argument("--scenario", choices=SCENARIOS, help="only clips of this scenario")
        parser.add_argument(
            "--clips", nargs="+", metavar="SAMPLE_ID", help="only these clips (sample ids; commas also separate)"
        )
        parser.add_argument("--json", type=Path, metavar="PATH", help="also write the full report here as JSON")
        parser.add_argument(
            "--resamples",
            type=int,
            default=1000,
            help=f"bootstrap resamples per figure ({MIN_RESAMPLES:,}-{MAX_RESAMPLES:,}, default 1,000)",
        )
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
        parser.add_argument(
            "--no-texts",
            action="store_true",
            help="leave out the semantic agreement of the free-text fields (it embeds texts not yet cached)",
        )

    def handle(self, *args, **options):
        project = self.get_project(options["project"])
        clips = None
        if options["clips"]:
            clips = tuple(sorted({c.strip() for arg in options["clips"] for c in arg.split(",") if c.strip()}))
        if options["seed"] < 0:
            raise CommandError("--seed must be 0 or more")
        params = services.Params(
            options["scenario"], clips, options["resamples"], options["seed"], options["scope"] or project.work_scope
        )
        try:
            state = services.ensure_report(project, params, compute=services.Compute.IN_PROCESS)
        except (ScopeError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        if state.status != "ready":
            raise CommandError("the revisions changed while the report was computed; run the command again")
        report = state.report.report

        out = self.stdout
        c = report["counts"]
        out.write(
            f"Agreement for {report['project']}: {c['clips']} clips, {c['rows']} rows, {c['annotators']} annotators, "
            f"{c['revisions']} revisions that count ({c['assignments']['anchored']} anchored, "
            f"{c['assignments']['calibration']} calibration"
            + (f", {c['assignments']['imported']} imported" if c["assignments"].get("imported") else "")
            + " assignments)"
        )
        scope = report["work_scope"]
        out.write(f"Scope: {scope['label']} ({scope['key']}). {scope['rule']}")
        left = left_out_summary(c["revisions_left_out"])
        if left:
            out.write(f"Left out: {left}.")
        if not report["coded_work"]:
            out.write(f"No figures: {report['empty_reason']}.")
        out.write(f"Intervals: Krippendorff's bootstrap, {params.resamples} resamples, seed {params.seed}.")
        for entry in report["slices"]:
            where = "all scenarios" if entry["scenario"] == "all" else f"{entry['scenario']} clips"
            title = f"{entry['mode']} assignments, {where}"
            out.write("")
            if entry["empty"]:
                out.write(f"== {title}: {entry['reason']}")
                continue
            left = left_out_summary(entry["left_out"])
            out.write(
                f"== {title} ({entry['clips']} clips, {entry['rows']} rows, {entry['revisions']} revisions; "
                f"annotators: {', '.join(entry['annotators'])}){'; ' + left if left else ''}"
            )
            rows, notes = slice_table(report, entry)
            out.write(format_table(rows))
            for note in notes:
                out.write(f"  * {note}")
            confused = confused_lines(report, entry)
            if confused:
                out.write("Labels coders confuse most:")
                for line in confused:
                    out.write(line)
            by_modality = modality_table(report, entry)
            if by_modality:
                out.write(by_modality)
        if not options["no_texts"]:
            texts = self.write_texts(project, params)
            report = {**report, "semantic": texts}
        if options["json"]:
            options["json"].parent.mkdir(parents=True, exist_ok=True)
            options["json"].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            out.write(f"\nFull report written to {options['json']}")

    def write_texts(self, project, params) -> dict:
        """Compute (or read from the cache) and print the free-text figures; the report."""
        facts: dict = {}
        state = services.report_state(project, params, kind=services.TEXTS)
        if state.status != "ready":
            started = time.perf_counter()
            try:
                stored = services.compute_and_store(
                    project, params, kind=services.TEXTS, facts=facts, fp=state.fingerprint
                )
            except EmbeddingError as exc:
                raise CommandError(f"the free-text figures cannot be computed: {exc}") from None
            if stored is None:
                raise CommandError("the revisions changed while the report was computed; run the command again")
            facts["seconds"] = time.perf_counter() - started
            report = stored.report
        else:
            report = state.report.report
        out = self.stdout
        model = report["model"]
        out.write("")
        out.write(f"Free text: semantic agreement (model {model['model']}, {model['version']}; {model['runtime']})")
        if facts:
            out.write(
                f"Embedded {facts['embedded']} new text(s), {facts['from_cache']} from the cache "
                f"({facts['seconds_embedding']:.1f} s embedding of {facts['seconds']:.1f} s)."
            )
        else:
            out.write("Up to date: read from the stored report.")
        for entry in report["slices"]:
            where = "all scenarios" if entry["scenario"] == "all" else f"{entry['scenario']} clips"
            title = f"{entry['mode']} assignments, {where}"
            if entry["empty"]:
                out.write(f"== {title}: {entry['reason']}")
                continue
            out.write(f"== {title}")
            rows = []
            for field in report["fields"]:
                item = entry["fields"][field["key"]]
                f, llm = item["humans"], item["with_llm"]
                interval = f"[{_num(f['ci95'][0])}, {_num(f['ci95'][1])}]" if f["ci95"] else "–"
                rows.append(
                    (
                        field["key"],
                        _num(f["alpha"]) if f["defined"] else "undefined",
                        interval,
                        str(f["units"]),
                        _num(f["mean_similarity"], 2),
                        _num(f["baseline_similarity"], 2),
                        _pct(f["presence_disagreement"]),
                        _num(llm["alpha"]) if llm else "–",
                    )
                )
            out.write(format_table(rows, TEXT_COLUMNS))
        return report


TEXT_COLUMNS = ("text field", "alpha", "95% interval", "units", "similarity", "shuffled", "one empty", "α+LLM")
