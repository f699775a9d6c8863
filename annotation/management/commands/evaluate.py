import json

from django.core.management.base import BaseCommand, CommandError

from tasks.predictions import PredictionFileError
from tasks.rules import ALL_TASKS

from ...releases.evaluate import EvaluationError, evaluate, format_report
from ...releases.splits import SPLITS


class Command(BaseCommand):
    help = (
        "Score predictions on a release's task instances: every metric of the task with a 95% "
        "clip-level bootstrap interval, next to the majority and random baselines (and the ITP "
        "shortcut); with --baseline, a paired bootstrap test of the difference. Missing and malformed "
        "predictions are counted, reported and scored as wrong."
    )

    def add_arguments(self, parser):
        parser.add_argument("predictions", help="JSONL: one {\"id\": ..., <field>: ...} per instance")
        parser.add_argument("--release", required=True, help="the release folder")
        parser.add_argument("--task", required=True, choices=ALL_TASKS)
        parser.add_argument("--split", default="test", choices=SPLITS)
        parser.add_argument("--baseline", help="a second prediction file to compare against (paired bootstrap)")
        parser.add_argument("--resamples", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def handle(self, predictions, release, task, split, baseline, resamples, seed, json, **options):
        if resamples < 100:
            raise CommandError("use at least 100 bootstrap resamples")
        try:
            report = evaluate(release, task=task, split=split, predictions=predictions, baseline=baseline, resamples=resamples, seed=seed)
        except (EvaluationError, PredictionFileError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(_dumps(report) if json else format_report(report))


def _dumps(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
