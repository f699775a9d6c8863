"""Extraction reads the same values from the database's JSON paths as from whole documents."""

from __future__ import annotations

import pytest

from annotation.agreement.extract import slim_documents
from annotation.agreement.fields import SOURCES
from annotation.models import Draft, Revision
from annotation.rescue_format.importer import import_rescue
from annotation.synthetic import generate

pytestmark = pytest.mark.django_db


def _assert_same_values(documents, speakers):
    full = dict(documents.values_list("pk", "content"))
    checked = 0
    for pk, slim in slim_documents(documents, "pk"):
        speaker = speakers[pk]
        for source, measure in SOURCES.items():
            if measure.applies_to(speaker):
                assert measure.value(slim, speaker) == measure.value(full[pk], speaker), (pk, source)
                checked += 1
    return checked


def test_slim_documents_give_the_values_of_the_real_release_rows(project, sample_path):
    import_rescue(sample_path, project, as_source="draft")
    drafts = Draft.objects.filter(row__clip__project=project)
    speakers = dict(drafts.values_list("pk", "row__primary_speaker"))
    assert _assert_same_values(drafts, speakers) > 406 * 8


def test_slim_documents_give_the_values_of_synthetic_revisions(project):
    generate(project, clips=4, annotators=2, seed=2)
    revisions = Revision.objects.filter(row__clip__project=project)
    speakers = dict(revisions.values_list("pk", "row__primary_speaker"))
    assert _assert_same_values(revisions, speakers) > 100
