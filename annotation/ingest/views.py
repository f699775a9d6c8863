"""Pages for leads: the multi-file upload and the speaker-mapping step."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import selectors
from ..middleware import accepts_uploads
from ..roles import is_lead
from ..services import ServiceError
from . import services, speakers
from .forms import SpeakerMapForm, UploadForm, split_names
from .selectors import clips_waiting_for_speakers, speaker_rows

LEADS_ONLY = "Only leads ingest transcripts."


def uploads_from_form(form: UploadForm) -> list[services.Upload]:
    return [services.Upload(name=name, size=f.size, read=f.read, file=f) for name, f in form.named_files()]


@accepts_uploads(allowed=is_lead)
@login_required
def upload(request, slug):
    project = selectors.lead_project(request.user, slug, LEADS_ONLY, refuse_first=True)
    results = None
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        options = services.IngestOptions(
            scenario=data["scenario"],
            participants=data["participants"],
            sample_id=data["sample_id"].strip() or None,
            group=data["group"].strip() or None,
            replace=data["replace"],
            media_url=data["media_url"],
        )
        try:
            results = services.ingest_files(project, uploads_from_form(form), options, actor=request.user)
        except ServiceError as exc:
            form.add_error(None, str(exc))
    waiting = clips_waiting_for_speakers(project)
    context = {
        "project": project,
        "form": form,
        "results": results,
        "waiting": waiting,
        "acceptable": [clip for clip, complete in waiting if complete],
        "max_bytes": settings.MAX_UPLOAD_BYTES,
        "max_media_bytes": settings.MAX_MEDIA_BYTES,
        "max_files": settings.DATA_UPLOAD_MAX_NUMBER_FILES,
    }
    return render(request, "ingest/upload.html", context, status=200)


@login_required
@require_POST
def accept_speakers(request, slug):
    """Accept the suggested speakers of the chosen clips where every label found a name."""
    project = selectors.lead_project(request.user, slug, LEADS_ONLY, refuse_first=True)
    ids = [int(i) for i in request.POST.getlist("clip") if i.isdigit()]
    clips = selectors.visible_clips(request.user, project).filter(pk__in=ids)
    confirmed, left = services.accept_suggested_speakers(clips, actor=request.user)
    messages.success(request, f"Speakers of {len(confirmed)} clip(s) confirmed as suggested.")
    if left:
        messages.warning(
            request, f"{len(left)} clip(s) need their speakers mapped by hand: " + ", ".join(c.sample_id for c in left)
        )
    return redirect("ingest-upload", slug=project.slug)


@login_required
def speaker_map(request, slug, clip_id):
    project = selectors.lead_project(request.user, slug, LEADS_ONLY, refuse_first=True)
    clip = get_object_or_404(selectors.visible_clips(request.user, project), pk=clip_id)
    rows = speaker_rows(clip)
    initial = {"participants": ", ".join(clip.participants)}
    # The people on offer follow the participants being confirmed (the page's script updates them as they are typed).
    if request.method == "POST":
        participants = split_names(request.POST.get("participants", "")) or []
    else:
        participants = clip.participants
    entities = speakers.entities(participants, clip.scenario)
    form = SpeakerMapForm(
        request.POST if request.method == "POST" else None, rows=rows, entities=entities, initial=initial
    )
    if form.is_bound and form.is_valid():
        try:
            services.confirm_speaker_map(
                clip, form.mapping(), participants=form.cleaned_data["participants"], actor=request.user
            )
        except ServiceError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Speakers of {clip.sample_id} confirmed.")
            return redirect("ingest-speakers", slug=project.slug, clip_id=clip.pk)
    context = {
        "project": project,
        "clip": clip,
        "form": form,
        "fixed_entities": speakers.entities([], clip.scenario),  # Therapist and the group label
        "report": clip.ingest_report,
        "editable": not clip.rows.exists(),
    }
    return render(request, "ingest/speaker_map.html", context)
