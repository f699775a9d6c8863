"""The record's pages: an annotator's qualification rounds and feedback, a coder's record (theirs or,
for leads, anyone's), the lead's setup (rules, training material, known-answer checks) and the lead's
per-annotator dashboard with its actions."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import selectors as scoped
from ..roles import is_lead
from ..selectors import annotators
from ..services import ServiceError
from ..taxonomy import SCENARIOS
from . import dashboard, dashboard_texts, free_text, scoring, selectors, services
from .forms import DecisionForm, KnownAnswerForm, RuleForm, StartRoundForm, TrainingForm
from .models import AttemptState, QualificationAttempt, QualificationDecision, QualificationRule


def _coder_or_404(request, project, user_id):
    """The coder whose record is asked for: the caller themself, or anyone for a lead; 404 otherwise."""
    if not is_lead(request.user) and request.user.pk != user_id:
        raise Http404("no such record")
    return get_object_or_404(get_user_model(), pk=user_id)


@login_required
def qualification(request, slug):
    """The caller's rounds per scenario: the open one (its clips, to code in the workspace) and the scored ones."""
    project = scoped.visible_project(request.user, slug)
    if request.method == "POST":
        form = StartRoundForm(request.POST)
        try:
            if not form.is_valid():
                raise ServiceError("choose a scenario")
            scenario = form.cleaned_data["scenario"]
            if request.POST.get("action") == "submit":
                attempt = selectors.open_attempt(project, scenario, request.user)
                if attempt is None:
                    raise ServiceError("no round in progress")
                attempt = services.submit_round(attempt, request.user)
                messages.success(
                    request, f"Round {attempt.number} is scored: read where your coding differs from the gold below."
                )
                return redirect("record-attempt", slug=project.slug, attempt_id=attempt.pk)
            services.start_round(project, scenario, request.user, actor=request.user)
            messages.success(
                request,
                f"A new {scenario} round is ready: code its clips from empty, mark every row reviewed, then submit the "
                "round here.",
            )
        except ServiceError as exc:
            messages.error(request, str(exc))
        return redirect("record-qualification", slug=project.slug)
    return render(
        request, "record/qualification.html", {"project": project, "rounds": _rounds_of(project, request.user)}
    )


def _rounds_of(project, user) -> list[dict]:
    out = []
    scenarios = set(QualificationRule.objects.filter(project=project).values_list("scenario", flat=True))
    scenarios |= set(
        QualificationAttempt.objects.filter(project=project, annotator=user).values_list("scenario", flat=True)
    )
    for scenario in [s for s in SCENARIOS if s in scenarios]:
        attempt = selectors.open_attempt(project, scenario, user)
        assignments = list(services.round_assignments(attempt)) if attempt else []
        out.append(
            {
                "scenario": scenario,
                "status": selectors.status(project, scenario, user),
                "open": attempt,
                "clips": assignments,
                "scored": list(
                    QualificationAttempt.objects.filter(
                        project=project, scenario=scenario, annotator=user, state=AttemptState.SCORED
                    ).order_by("number")
                ),
                "training": selectors.training_for(project, scenario, user).count(),
            }
        )
    return out


@login_required
def attempt(request, slug, attempt_id):
    """A scored round's feedback: scores per field and, row by row, where the coding differs from the gold."""
    found = selectors.attempt_for(request.user, attempt_id)
    if found.project.slug != slug:
        raise Http404("no such qualification round")
    context = {
        "project": found.project,
        "attempt": found,
        "scores": _score_rows(found),
        # The free-text fields are scored by a worker after the submit: shown when stored, "being computed" until then.
        "text_scores": [{"key": k, **v} for k, v in free_text.text_scores(found.scores).items()],
        "text_state": free_text.text_state(found),
    }
    return render(request, "record/attempt.html", context)


def _score_rows(attempt) -> list[dict]:
    fields = set((attempt.rule or {}).get("fields", []))
    labels = free_text.label_scores(attempt.scores)
    order = [m.key for m in scoring.SCORED if m.key in labels] + [
        k for k in labels if k not in {m.key for m in scoring.SCORED}
    ]  # jsonb keeps no key order
    return [{"key": k, **labels[k], "in_rule": k in fields} for k in order]


@login_required
def coder(request, slug, user_id):
    """A coder's record: qualification status and rounds, decisions, known-answer results. Theirs or a lead's only."""
    project = scoped.visible_project(request.user, slug)
    person = _coder_or_404(request, project, user_id)
    context = {
        "project": project,
        "person": person,
        "record": selectors.coder_record(project, person),
        "lead": is_lead(request.user),
    }
    return render(request, "record/coder.html", context)


@login_required
def setup(request, slug):
    """The lead's setup: pass rules per scenario, training clips, the known-answer share, rounds to start."""
    project = scoped.lead_project(request.user, slug, "Only leads set qualification rules and training material.")
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "rule":
                form = RuleForm(request.POST)
                if not form.is_valid():
                    raise ServiceError("; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
                d = form.cleaned_data
                services.set_rule(
                    project,
                    d["scenario"],
                    fields=d["fields"],
                    min_score=d["min_score"],
                    min_rows=d["min_rows"],
                    max_attempts=d["max_attempts"],
                    actor=request.user,
                    reason=d["reason"],
                )
                messages.success(
                    request,
                    f"The {d['scenario']} rule is in force: "
                    f"{selectors.rule_text(selectors.rule_of(project, d['scenario']))}.",
                )
            elif action == "remove-rule":
                services.remove_rule(project, request.POST.get("scenario", ""), actor=request.user)
                messages.success(request, "The rule is removed: nobody is refused for it any more.")
            elif action == "training":
                form = TrainingForm(request.POST)
                if not form.is_valid():
                    raise ServiceError("name a clip")
                clip = project.clips.filter(sample_id=form.cleaned_data["sample_id"]).first()
                if clip is None:
                    raise ServiceError(f"no clip {form.cleaned_data['sample_id']} in {project.slug}")
                if form.cleaned_data["remove"]:
                    services.unmark_training(project, clip, actor=request.user)
                    messages.success(request, f"{clip.sample_id} is no longer training material.")
                else:
                    services.mark_training(project, clip, actor=request.user, note=form.cleaned_data["note"])
                    messages.success(request, f"{clip.sample_id} is training material for {clip.scenario} clips.")
            elif action == "known-answer":
                form = KnownAnswerForm(request.POST)
                if not form.is_valid():
                    raise ServiceError("the known-answer share is a whole percentage from 0 to 50")
                services.set_known_answer_share(
                    project, form.cleaned_data["known_answer_percent"] / 100, actor=request.user
                )
                messages.success(
                    request,
                    "Known-answer checks are "
                    + (
                        f"{form.cleaned_data['known_answer_percent']}% of new assignments."
                        if form.cleaned_data["known_answer_percent"]
                        else "off."
                    ),
                )
            elif action == "start":
                form = StartRoundForm(request.POST)
                if not form.is_valid() or not form.cleaned_data.get("annotator"):
                    raise ServiceError("choose an annotator and a scenario")
                person = get_object_or_404(annotators(), pk=form.cleaned_data["annotator"])
                services.start_round(project, form.cleaned_data["scenario"], person, actor=request.user)
                messages.success(
                    request, f"{person.username} has a {form.cleaned_data['scenario']} qualification round to code."
                )
            else:
                raise ServiceError("unknown action")
        except ServiceError as exc:
            messages.error(request, str(exc))
        return redirect("record-setup", slug=project.slug)
    context = {
        "project": project,
        "rules": list(QualificationRule.objects.filter(project=project).order_by("scenario")),
        "rule_texts": {r.scenario: selectors.rule_text(r) for r in QualificationRule.objects.filter(project=project)},
        "rule_form": RuleForm(initial={"fields": ["utterance_type", "relation_pattern"]}),
        "training": list(selectors.training_clips(project)),
        "candidates": list(
            services.known_answer_pool(project).order_by("sample_id").values_list("sample_id", flat=True)[:500]
        ),
        "known_answer_percent": int(round(float(project.known_answer_share) * 100)),
        "annotators": list(annotators()),
        "scenarios": SCENARIOS,
    }
    return render(request, "record/setup.html", context)


@login_required
@require_POST
def decide(request, slug, user_id):
    """Waive the rule for a coder, or send them back to qualification (a new round is started for them)."""
    project = scoped.lead_project(request.user, slug, "Only leads decide about a coder's qualification.")
    person = get_object_or_404(get_user_model(), pk=user_id)
    form = DecisionForm(request.POST)
    try:
        if not form.is_valid():
            raise ServiceError("choose the scenario and the decision, and say why")
        d = form.cleaned_data
        services.decide(project, d["scenario"], person, d["kind"], d["reason"], actor=request.user)
        if d["kind"] == "sent_back":
            try:
                services.start_round(project, d["scenario"], person, actor=request.user)
                messages.success(
                    request,
                    f"{person.username} is sent back to qualification for {d['scenario']} clips; a new round is ready "
                    "for them.",
                )
            except ServiceError as exc:
                messages.warning(
                    request,
                    f"{person.username} is sent back to qualification for {d['scenario']} clips, but no round could "
                    f"start: {exc}",
                )
        else:
            messages.success(
                request, f"The {d['scenario']} rule is waived for {person.username}; the reason is recorded."
            )
    except ServiceError as exc:
        messages.error(request, str(exc))
    back = request.POST.get("next", "")
    if back.startswith(f"/projects/{project.slug}/") and "//" not in back:
        return redirect(back)
    return redirect("record-dashboard", slug=project.slug)


@login_required
def dashboard_page(request, slug):
    """The lead's per-annotator dashboard for a scenario, served from the stored report (computed by a worker)."""
    project = scoped.lead_project(request.user, slug, "The annotators' record is for leads.")
    scenario = request.GET.get("scenario") or dashboard.default_scenario(project)
    if scenario not in SCENARIOS:
        raise Http404("no such scenario")
    state = dashboard.ensure_report(project, scenario, user=request.user, page=True)
    context = {
        # The free-text part, from an embeddings worker: shown when stored, "being computed" until then.
        "texts": dashboard_texts.ensure_text_report(project, scenario, state.fingerprint, user=request.user),
        "project": project,
        "scenario": scenario,
        "scenarios": SCENARIOS,
        "state": state,
        "report": state.report,
        "decision_form": DecisionForm(initial={"scenario": scenario}),
        "decisions": QualificationDecision.objects.filter(project=project, scenario=scenario)
        .select_related("annotator", "decided_by")
        .order_by("-created_at")[:20],
    }
    if state.report is not None:
        context.update(_page(project, scenario, state.report))
    return render(request, "record/dashboard.html", context)


def _page(project, scenario, report: dict) -> dict:
    """The stored report arranged for the template (no figure is computed here); the statuses are live."""
    users = {u.username: u for u in get_user_model().objects.filter(username__in=report["coders"])}
    cards = []
    for name in report["coders"]:
        pairs = []
        for f in report["fields"]:
            for c in f["coders"]:
                if c["coder"] == name and c.get("confusion"):
                    pairs += [{**p, "field": f["label"]} for p in c["confusion"]["pairs"]]
        person = users.get(name)
        cards.append(
            {
                "name": name,
                "user_id": person.pk if person else 0,
                "status": selectors.status(project, scenario, person) if person else {},
                "pace": report["pace"].get(name, {}),
                "pairs": sorted(pairs, key=lambda p: -p["rows"])[:5],
                "plot": (report.get("plots") or {}).get(name),
            }
        )
    for f in report["fields"]:
        d = f.get("distribution")
        if d:
            f["distribution_rows"] = [
                {
                    "label": label,
                    "values": [
                        d["team"][i],
                        *(d["coders"].get(n, [None] * len(d["labels"]))[i] for n in report["coders"]),
                    ],
                }
                for i, label in enumerate(d["labels"])
            ]
        for c in f["coders"]:
            conf = c.get("confusion")
            if conf:
                conf["rows"] = [
                    {"label": label, "cells": [{"n": n, "diag": i == k} for k, n in enumerate(row)]}
                    for i, (label, row) in enumerate(zip(conf["labels"], conf["counts"]))
                ]
    first = report["fields"][0]["pairwise"] if report["fields"] else []
    competence_rows = [
        {
            "label": next(f["label"] for f in report["fields"] if f["key"] == key),
            "values": [values.get(n) if isinstance(values, dict) else None for n in report["coders"]],
        }
        for key, values in report["competence"]["fields"].items()
    ]
    return {
        "cards": cards,
        "team": report["pace"].get("team", {}),
        "pair_names": [" – ".join(p["pair"]) for p in first],
        "competence_rows": competence_rows,
    }
