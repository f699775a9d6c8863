"""A small study whose coders confuse given label pairs: three coders on a transcript clip and a video clip."""

from __future__ import annotations

from annotation.models import Draft

from .agreement import SUBMITTED, annotators, client_content, make_clip

A, D, R, F, V = "accusation", "disclosure", "request", "defense", "validation"
TRANSCRIPT_CLIP = {
    "coders": [
        [A, A, D, R, A, V],
        [D, A, D, R, R, V],
        [R, A, A, A, R, F],
    ],
    "draft": [A, D, D, R, R, V],
}
VIDEO_CLIP = {
    "coders": [
        [D, F, R, A],
        [D, F, A, A],
        [A, F, R, R],
    ],
    "draft": [D, A, R, A],
}


def build(project):
    users = annotators("cb", 3)
    for sample_id, spec, modality in (("grp/001_t", TRANSCRIPT_CLIP, "transcript"), ("grp/002_v", VIDEO_CLIP, "video")):
        contents = {u: [client_content(utterance_type=v) for v in values] for u, values in zip(users, spec["coders"])}
        clip = make_clip(
            project,
            sample_id,
            contents,
            state=SUBMITTED,
            draft=[client_content(utterance_type=v) for v in spec["draft"]],
        )
        Draft.objects.filter(row__clip=clip).update(modality=modality)
    return users


def guidance_saved_before_names_were_refused(project, lead, text: str, *, reason: str = "coders split"):
    """A guidance version written straight to the table, as one saved before naming a coder was refused could be:
    the project's entries so far plus one for ``request`` (couple clips) whose text is ``text``."""
    from annotation.models import GuidanceVersion

    latest = project.guidance_versions.order_by("-number").first()
    number = latest.number + 1 if latest else 1
    return GuidanceVersion.objects.create(
        project=project,
        number=number,
        taxonomy_version=project.taxonomy_version,
        created_by=lead,
        reason=reason,
        change={"action": "added", "scenario": "couple", "field": "utterance_type", "labels": ["request"]},
        entries=[
            *(latest.entries if latest else []),
            {
                "scenario": "couple",
                "field": "utterance_type",
                "labels": ["request"],
                "text": text,
                "written_by": lead.username,
                "written_at": (latest.created_at if latest else project.created_at).isoformat(),
                "version": number,
            },
        ],
    )
