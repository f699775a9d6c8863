"""Read or change a project's guidance (its living codebook) from a shell.

    manage.py guidance --project demo                       # the guidance in force and its history
    manage.py guidance --project demo --json                # the same as JSON
    manage.py guidance --project demo --write --field utterance_type --labels accusation,disclosure \\
        --text "..." --why "coders split on complaints" --by lead [--scenario couple]
    manage.py guidance --project demo --write ... --text-file guidance.txt    # or --text-file - (standard input)
    manage.py guidance --project demo --withdraw --field utterance_type --labels accusation,disclosure --why "..." --by
    lead

Labels are separated by commas; an empty name is the empty choice ("join," is
join and no strategy). Every change makes a new guidance version (the same
service as the guidance page and the API).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from ...codebook import selectors, services
from ...codebook.fields import FIELDS
from ...taxonomy import SCENARIOS
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Show, write or withdraw a project's guidance (each change makes a new guidance version)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--write", action="store_true", help="write (or rewrite) the guidance of --labels")
        action.add_argument("--withdraw", action="store_true", help="withdraw the guidance of --labels")
        parser.add_argument("--field", choices=list(FIELDS), help="the label field")
        parser.add_argument("--labels", help="comma-separated labels (one, or the ones the guidance separates)")
        parser.add_argument(
            "--scenario", choices=SCENARIOS, default="", help="only clips of this scenario (default: every scenario)"
        )
        parser.add_argument("--text", help="the guidance text")
        parser.add_argument(
            "--text-file", type=Path, metavar="PATH", help="read the guidance text from a file (- for standard input)"
        )
        parser.add_argument("--why", help="why the change is made (recorded with the version)")
        parser.add_argument("--by", metavar="USERNAME", help="the lead making the change")
        parser.add_argument("--json", action="store_true", help="print the guidance in force and its history as JSON")

    def handle(self, *args, **options):
        project = self.get_project(options["project"])
        if options["write"] or options["withdraw"]:
            self._change(project, options)
        current = selectors.version_view(selectors.current_version(project))
        history = selectors.history(project)
        if options["json"]:
            for v in history:
                v["created_at"] = v["created_at"].isoformat()
            self.stdout.write(json.dumps({"current": current, "history": history}, indent=2, ensure_ascii=False))
            return
        if current["version"] is None:
            self.stdout.write(f"{project.slug} has no guidance yet.")
            return
        self.stdout.write(
            f"{project.slug}: guidance version {current['version']} (taxonomy {current['taxonomy_version']}), "
            f"{len(current['entries'])} entr{'y' if len(current['entries']) == 1 else 'ies'}"
        )
        for e in current["entries"]:
            self.stdout.write(
                f"\n* {e['title']} ({e['field_title'].lower()}, {e['scenario_title']}; {e['written_by']}, "
                f"{e['written_at'][:10]}, version {e['version']})"
            )
            for line in e["text"].splitlines():
                self.stdout.write(f"  {line}")
        self.stdout.write("\nHistory:")
        for v in history:
            self.stdout.write(
                f"  v{v['version']}  {v['created_at']:%Y-%m-%d %H:%M}  {v['created_by'] or '-'}  "
                f"{v['change']['title']}  — {v['reason']}"
            )

    def _change(self, project, options) -> None:
        # --labels "" is the empty choice alone, so only a missing --labels is missing.
        missing = [
            f"--{name}"
            for name in ("field", "labels", "why", "by")
            if (options[name] is None if name == "labels" else not options[name])
        ]
        if missing:
            raise CommandError(
                f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required to change guidance"
            )
        user = get_user_model().objects.filter(username=options["by"]).first()
        if user is None:
            raise CommandError(f"no user {options['by']!r}")
        target = {
            "scenario": options["scenario"],
            "field": options["field"],
            "labels": [x.strip() for x in options["labels"].split(",")],
            "why": options["why"],
        }
        try:
            if options["withdraw"]:
                version = services.withdraw_guidance(project, user, **target)
            else:
                version = services.write_guidance(project, user, text=self._text(options), **target)
        except services.GuidanceError as exc:
            raise CommandError(f"guidance not changed: {exc}") from None
        self.stdout.write(f"guidance version {version.number}: {selectors.change_view(version.change)['title']}\n")

    @staticmethod
    def _text(options) -> str:
        if options["text"] is not None and options["text_file"] is not None:
            raise CommandError("give the text with --text or --text-file, not both")
        if options["text_file"] is None:
            return options["text"] or ""
        if str(options["text_file"]) == "-":
            return sys.stdin.read()
        try:
            return options["text_file"].read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {options['text_file']}: {exc}") from None
