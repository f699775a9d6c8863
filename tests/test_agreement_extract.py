"""Extraction reads the same values from the database's JSON paths as from whole documents.

Values are computed once per distinct combination of the parts a measure
declares it reads (``Measure.reads``) and the speaker; these tests compute
every value again from the full document and compare, so a measure that
reads a part it does not declare fails here.
"""

from __future__ import annotations

import pytest

from annotation.agreement.extract import DocumentParts, _factorise, measure_codes, slim_document
from annotation.agreement.fields import SOURCES
from annotation.models import Draft, Revision
from annotation.rescue_format.importer import import_rescue
from annotation.synthetic import generate

pytestmark = pytest.mark.django_db


def _assert_same_values(documents) -> int:
    reader = DocumentParts()
    columns = reader.read(documents, "pk", "content", "row__primary_speaker")
    assert len(columns["pk"]) == documents.count()
    parts = reader.label_parts()
    speaker = _factorise(columns["row__primary_speaker"])
    checked = 0
    for source, measure in SOURCES.items():
        codes, domain = measure_codes(measure, parts, speaker)
        for i, (full, who) in enumerate(zip(columns["content"], columns["row__primary_speaker"])):
            expected = measure.value(full, who) if measure.applies_to(who) else None
            got = None if codes[i] < 0 else domain[codes[i]]
            assert got == expected, (columns["pk"][i], source)
            checked += expected is not None
    return checked


def test_extracted_values_equal_those_of_the_real_release_rows(project, sample_path):
    import_rescue(sample_path, project, as_source="draft")
    assert _assert_same_values(Draft.objects.filter(row__clip__project=project)) > 406 * 8


def test_extracted_values_equal_those_of_synthetic_revisions(project):
    generate(project, clips=4, annotators=2, seed=2)
    assert _assert_same_values(Revision.objects.filter(row__clip__project=project)) > 100


def test_edge_documents_keep_null_absent_and_empty_apart(project):
    """JSON null and an absent key differ for the relation keys; "" is a value; odd shapes are read as the full document
    reads them."""
    generate(project, clips=1, annotators=1, seed=3)
    drafts = list(Draft.objects.filter(row__clip__project=project).select_related("row")[:8])
    variants = [
        {"relation_pattern": None},
        {"relation_pattern": ""},
        {"relation_cycle_state": "Pursue-Withdraw"},
        {"relation_cycle_state": None, "relation_pattern": "Mutual Blame"},
        {"support_strategy": [{"strategy_type": None, "target": []}]},
        {"support_strategy": [{"target": ["Client A", "Client A", "Client B"]}]},
        {"target": [], "utterance_type": ""},
        {"internal_emotion": [{"person": "Client A", "intensity": 2}, {"person": "Client B", "intensity": 3}]},
    ]
    for draft, change in zip(drafts, variants):
        content = {**draft.content, **change}
        if "relation_cycle_state" in change and "relation_pattern" not in change:
            content.pop("relation_pattern", None)
        Draft.objects.filter(pk=draft.pk).update(content=content)
    assert _assert_same_values(Draft.objects.filter(row__clip__project=project)) > 8


def test_slim_document_holds_only_the_parts_given():
    assert slim_document({"target": '["B", "A"]'}) == {"target": ["B", "A"]}
    assert slim_document({"relation_pattern": None, "relation_cycle_state": "null"}) == {"relation_cycle_state": None}
    assert slim_document({"has_support_strategy": False, "strategy_type": None}) == {"support_strategy": []}
    assert slim_document({"has_facial_expressions": 1}) == {"facial_expressions": [True]}
