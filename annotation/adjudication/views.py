"""The lead's adjudication pages (project progress, the clip page).

Leads and admins only. Anonymous visitors are sent to the login page; any
other signed-in user gets 403 on every page (a role's tool, not someone's
data: there is nothing to hide by answering 404). The clip page embeds its
data as inert JSON; its module (static/adjudication/adjudicate.js, Preact,
with the shared row editor of static/workspace/) edits the gold through the
adjudication API; clip-level decisions are plain forms posted here.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from .. import selectors as scoped
from ..agreement.embeddings import EmbeddingError
from ..models import ClipState
from ..services import ServiceError
from ..workspace.selectors import annotator_settings
from . import disagreement, selectors, services
from .fields import FIELD_TITLES, FIELDS
from .forms import RereviewForm

LEADS_ONLY = "Only leads and admins adjudicate clips."


def _clip(request, clip_id):
    scoped.require_lead(request.user, LEADS_ONLY)
    return selectors.adjudication_clip(request.user, clip_id)


# --- adjudication -------------------------------------------------------------------


@login_required
def project_adjudication(request, slug):
    project = scoped.lead_project(request.user, slug, LEADS_ONLY, refuse_first=True)
    progress = selectors.project_progress(project)
    proposals = selectors.open_discard_proposals(project)
    try:
        scores = disagreement.clip_scores(project)
    except EmbeddingError:  # no embedding provider: the order falls back to the sample ids
        scores = {}
    clips = [
        {**c, "discard_proposals": proposals.get(c["id"], 0), "disagreement": scores.get(c["id"])}
        for c in progress["per_clip"]
    ]
    # The most disputed clips first (the score of ``disagreement``); clips without two coders last.
    clips.sort(key=lambda c: (c["disagreement"] is None, -(c["disagreement"] or {}).get("score", 0), c["sample_id"]))
    left = [(FIELD_TITLES[name], progress["disagreements_left"][name]) for name in FIELDS]
    return render(
        request, "adjudication/index.html", {"project": project, "progress": progress, "clips": clips, "left": left}
    )


@login_required
def clip_adjudication(request, clip_id):
    clip = _clip(request, clip_id)
    # Every row goes to the page, which filters in the browser (instantly, and
    # without losing unsaved edits); the query only sets the filters' start.
    payload = selectors.adjudication_payload(clip)
    payload["filters"] = selectors.RowFilter.from_query(request.GET).as_dict()
    # What only the page needs: where its forms post, what the lead may do, how their media replays.
    payload["urls"] = {
        "index": reverse("adjudication-index", args=[clip.project.slug]),
        **{
            key: reverse(f"adjudication-{name}", args=[clip.pk])
            for key, name in (
                ("accept_unanimous", "accept-unanimous"),
                ("accept_agreeing", "accept-agreeing"),
                ("mark_adjudicated", "mark-adjudicated"),
                ("accept_discard", "accept-discard"),
                ("dismiss_discard", "dismiss-discard"),
                ("rereview", "rereview"),
            )
        },
    }
    payload["urls"]["agreeing"] = reverse("api-adjudication-agreeing", args=[clip.pk])
    payload["urls"]["clip_api"] = reverse("api-clip-adjudication", args=[clip.pk])
    payload["project_name"] = clip.project.name
    payload["discard_reason"] = clip.discard_reason
    payload["can_mark"] = clip.state == ClipState.REVIEWED
    payload["can_rereview"] = clip.state not in (ClipState.DISCARDED, ClipState.RELEASED)
    payload["settings"] = annotator_settings(request.user)
    return render(request, "adjudication/clip.html", {"clip": clip, "payload": payload})


def _back_to_clip(clip, request):
    """Back to the clip page with the lead's filters (the form's query) and open row."""
    url = reverse("adjudication-clip", args=[clip.pk])
    row_filter = selectors.RowFilter.from_query(request.GET).as_dict()
    query = {k: (1 if v is True else v) for k, v in row_filter.items() if v}
    if query:
        url += "?" + urlencode(query)
    row = request.POST.get("row", "")
    if row.isdigit():
        url += f"#row-{row}"
    return redirect(url)


def _clip_action(request, clip_id, action):
    clip = _clip(request, clip_id)
    try:
        text = action(clip)
    except ServiceError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, text)
    return _back_to_clip(clip, request)


@login_required
@require_POST
def accept_unanimous(request, clip_id):
    return _clip_action(request, clip_id, lambda clip: services.accept_unanimous(clip, request.user).summary + ".")


@login_required
@require_POST
def accept_agreeing(request, clip_id):
    threshold = request.POST.get("threshold", "")
    return _clip_action(
        request, clip_id, lambda clip: services.accept_agreeing(clip, request.user, threshold).summary + "."
    )


@login_required
@require_POST
def mark_adjudicated(request, clip_id):
    def act(clip):
        services.mark_adjudicated(clip, request.user)
        return f"{clip.sample_id} is adjudicated."

    return _clip_action(request, clip_id, act)


def _comment_id(request) -> int:
    try:
        return int(request.POST.get("comment", ""))
    except ValueError:
        raise ServiceError("no discard proposal chosen") from None


@login_required
@require_POST
def accept_discard(request, clip_id):
    def act(clip):
        services.accept_discard(clip, _comment_id(request), request.user)
        return f"{clip.sample_id} was discarded; the proposal's reason is kept with the clip."

    return _clip_action(request, clip_id, act)


@login_required
@require_POST
def dismiss_discard(request, clip_id):
    def act(clip):
        services.dismiss_discard(clip, _comment_id(request), request.user)
        return "The discard proposal was dismissed; the clip stays."

    return _clip_action(request, clip_id, act)


@login_required
@require_POST
def request_rereview(request, clip_id):
    def act(clip):
        form = RereviewForm(request.POST)
        if not form.is_valid():
            raise ServiceError("choose an annotator (and keep the message under 10,000 characters)")
        services.request_rereview(clip, form.cleaned_data["annotator"], request.user, form.cleaned_data["message"])
        return f"{form.cleaned_data['annotator']} can edit {clip.sample_id} again."

    return _clip_action(request, clip_id, act)
