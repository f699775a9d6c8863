"""Clips as a lead adjudicates them: imported with the draft, coded by given coders with given edits, submitted."""

from __future__ import annotations

import json
import uuid

from annotation.models import Assignment, Revision
from annotation.rescue_format.importer import import_rescue
from annotation.starting import start_assignment
from annotation.workspace.services import save_revision, submit_assignment

from .documents import couple_clip

EDITS = {
    "ann1": {1: {"utterance_type": "request"}, 2: {"tone_of_voice": "calm"}},
    "ann2": {2: {"tone_of_voice": "warm"}},
}


def reviewed_clip(project, tmp_path, coders, edits=EDITS, *, doc=None, submit=True):
    """Import a clip as the LLM draft, give it to ``coders``, apply each coder's edits,
    mark every row reviewed and (by default) submit: the clip a lead adjudicates."""
    doc = doc or couple_clip()
    path = tmp_path / f"{uuid.uuid4().hex}.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get(sample_id=doc["sample_id"])
    for user in coders:
        start_assignment(clip, user)
    for user in coders:
        for revision in (
            Revision.objects.filter(row__clip=clip, annotator=user).select_related("row").order_by("row__row_index")
        ):
            content = {**revision.content, **edits.get(user.username, {}).get(revision.row.row_index, {})}
            save_revision(revision.pk, user, content, revision.version, reviewed=True)
        if submit:
            submit_assignment(Assignment.objects.get(clip=clip, annotator=user), user)
    clip.refresh_from_db()
    return clip
