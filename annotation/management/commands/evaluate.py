import json

from django.core.management.base import BaseCommand, CommandError

from tasks.predictions import PredictionFileError
from tasks.rules import ALL_TASKS

from ...releases.evaluate import EvaluationError, evaluate, format_report
from ...releases.splits import SPLITS


class Command(BaseCommand):
    help = (
        "Score predictions on a release's task instances: every metric of the task with a 95% "
        "bootstrap interval over relationship groups, next to the task's trivial rules (naming the "
        "strongest); with --baseline, a paired bootstrap test of the difference; with --by scenario, "
        "every figure per scenario as well. Missing and malformed predictions are counted, reported "
        "and scored as wrong; a scenario the file has no prediction for is left out and named."
    )

    def add_arguments(self, parser):
        parser.add_argument("predictions", help='JSONL: one {"id": ..., <field>: ...} per instance')
        parser.add_argument("--release", required=True, help="the release folder")
        parser.add_argument("--task", required=True, choices=ALL_TASKS)
        parser.add_argument("--split", default="test", choices=SPLITS)
        parser.add_argument("--baseline", help="a second prediction file to compare against (paired bootstrap)")
        parser.add_argument("--by", choices=["scenario"], help="also report every figure per scenario")
        parser.add_argument("--resamples", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def handle(self, predictions, release, task, split, baseline, by, resamples, seed, json, **options):
        if resamples < 100:
            raise CommandError("use at least 100 bootstrap resamples")
        try:
            report = evaluate(
                release,
                task=task,
                split=split,
                predictions=predictions,
                baseline=baseline,
                resamples=resamples,
                seed=seed,
                by_scenario=by == "scenario",
            )
        except (EvaluationError, PredictionFileError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(_dumps(report) if json else format_report(report))


def _dumps(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
