"""Qualification and known-answer checks from the shell (``annotation.record``).

manage.py qualification PROJECT --status
manage.py qualification PROJECT --rule couple --fields utterance_type relation_pattern --min-score 0.8 --min-rows 40
--attempts 3
manage.py qualification PROJECT --train SAMPLE_ID [SAMPLE_ID ...] [--note "..."]
manage.py qualification PROJECT --start USER --scenario couple
manage.py qualification PROJECT --waive USER --scenario couple --reason "..."
manage.py qualification PROJECT --send-back USER --scenario couple --reason "..."
manage.py qualification PROJECT --known-answer 0.1
"""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from ...record import selectors, services
from ...record.models import DecisionKind, QualificationRule
from ...selectors import annotators
from ...services import ServiceError
from ...taxonomy import SCENARIOS
from ._base import AuditedCommand


class Command(AuditedCommand):
    help = "Pass rules, training clips, rounds, waivers and known-answer checks of a project"

    def add_arguments(self, parser):
        parser.add_argument("project")
        parser.add_argument("--scenario", choices=SCENARIOS)
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument(
            "--status", action="store_true", help="each annotator's qualification per scenario with a rule"
        )
        what.add_argument("--rule", choices=SCENARIOS, help="set the pass rule of this scenario")
        what.add_argument("--remove-rule", choices=SCENARIOS)
        what.add_argument("--train", nargs="+", metavar="SAMPLE_ID", help="mark clips with gold as training material")
        what.add_argument("--start", metavar="USER", help="start a qualification round for USER (with --scenario)")
        what.add_argument("--waive", metavar="USER")
        what.add_argument("--send-back", metavar="USER")
        what.add_argument(
            "--known-answer",
            type=float,
            metavar="SHARE",
            help="share of new assignments added as known-answer checks (0 is off)",
        )
        parser.add_argument("--fields", nargs="+", default=["utterance_type", "relation_pattern"])
        parser.add_argument("--min-score", type=float, default=0.8)
        parser.add_argument("--min-rows", type=int, default=40)
        parser.add_argument("--attempts", type=int, default=3)
        parser.add_argument("--reason", default="")
        parser.add_argument("--note", default="")

    def _user(self, name):
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise CommandError(f"no such user: {name}")
        return user

    def handle(self, project, **o):
        project = self.get_project(project)
        try:
            if o["status"]:
                for rule in QualificationRule.objects.filter(project=project).order_by("scenario"):
                    self.stdout.write(f"{rule.scenario}: {selectors.rule_text(rule)}")
                    for user in annotators():
                        s = selectors.status(project, rule.scenario, user, rule=rule)
                        self.stdout.write(
                            f"  {user.username}: {s['status']}, {s['rounds']} rounds, {s['attempts_left']} left"
                        )
            elif o["rule"]:
                rule = services.set_rule(
                    project,
                    o["rule"],
                    fields=o["fields"],
                    min_score=o["min_score"],
                    min_rows=o["min_rows"],
                    max_attempts=o["attempts"],
                    reason=o["reason"],
                )
                self.stdout.write(f"{rule.scenario}: {selectors.rule_text(rule)}")
            elif o["remove_rule"]:
                services.remove_rule(project, o["remove_rule"])
                self.stdout.write(f"{o['remove_rule']}: no rule")
            elif o["train"]:
                for sample_id in o["train"]:
                    clip = project.clips.filter(sample_id=sample_id).first()
                    if clip is None:
                        raise CommandError(f"no clip {sample_id} in {project.slug}")
                    services.mark_training(project, clip, note=o["note"])
                    self.stdout.write(f"{sample_id}: training material for {clip.scenario} clips")
            elif o["start"]:
                attempt = services.start_round(project, self._scenario(o), self._user(o["start"]))
                self.stdout.write(
                    f"{attempt.annotator.username}: round {attempt.number} of {attempt.scenario}, "
                    f"{len(attempt.sample_ids)} clips"
                )
            elif o["waive"] or o["send_back"]:
                kind = DecisionKind.WAIVED if o["waive"] else DecisionKind.SENT_BACK
                user = self._user(o["waive"] or o["send_back"])
                services.decide(project, self._scenario(o), user, kind, o["reason"], actor=None)
                self.stdout.write(f"{user.username}: {selectors.status(project, o['scenario'], user)['status']}")
            elif o["known_answer"] is not None:
                services.set_known_answer_share(project, o["known_answer"])
                self.stdout.write(f"known-answer checks: {project.known_answer_share}")
        except ServiceError as exc:
            raise CommandError(str(exc)) from None

    @staticmethod
    def _scenario(o):
        if not o["scenario"]:
            raise CommandError("--scenario is required")
        return o["scenario"]
