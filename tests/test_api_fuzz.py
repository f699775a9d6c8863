"""Schemathesis against the project's own OpenAPI schema, authenticated as each role:
no server errors and no responses that break the documented schema.

Two kinds of run: bodies as schemathesis generates them from the schema, and
the same with deep or wide JSON in every body (tests/schemathesis_hooks.py;
a deep body once answered 500).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from annotation.models import Revision
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_user
from annotation.starting import start_assignment
from annotation.tokens import issue_token

from .builders.documents import couple_clip
from .conftest import require

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "role, bodies",
    [
        ("annotator", "generated"),
        ("lead", "generated"),
        ("admin", "generated"),
        ("annotator", "deep_and_wide"),
        ("lead", "deep_and_wide"),
    ],
)
def test_api_answers_within_its_schema_and_never_with_a_server_error(live_server, project, tmp_path, role, bodies):
    cli = shutil.which("schemathesis", path=str(REPO / ".venv" / "bin")) or shutil.which("schemathesis")
    require(cli is not None, "schemathesis is not installed (pip install -e '.[test]')")
    user = create_user(f"fuzz_{role}", role, password="fuzz-pass-123456")[0]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    if role == "annotator":
        start_assignment(clip, user)
    token = issue_token(user)[1]
    env = {k: v for k, v in os.environ.items() if k != "SCHEMATHESIS_HOOKS"}
    if bodies == "deep_and_wide":
        revision = Revision.objects.filter(row__clip=clip).order_by("pk").first()
        objects = {"slug": project.slug, "clip_id": clip.pk, "row_id": clip.rows.order_by("row_index").first().pk}
        if revision is not None:
            objects.update(revision_id=revision.pk, assignment_id=clip.assignments.get().pk)
        env.update(
            SCHEMATHESIS_HOOKS=str(Path(__file__).with_name("schemathesis_hooks.py")), FUZZ_OBJECTS=json.dumps(objects)
        )
    result = subprocess.run(
        [
            cli,
            "run",
            f"{live_server.url}/api/schema/",
            "-H",
            f"Authorization: Token {token}",
            "--max-examples",
            "5" if bodies == "generated" else "2",
            "--phases",
            "fuzzing",
            "--seed",
            "1",
            "--checks",
            "not_a_server_error,response_schema_conformance",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = "\n".join(result.stdout.splitlines()[-25:])
    print(f"schemathesis as {role} ({bodies} bodies):\n{summary}")  # the figures, in the run's log (pytest -s)
    assert result.returncode == 0, summary
    assert "passed" in summary
