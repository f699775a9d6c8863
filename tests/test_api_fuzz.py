"""Schemathesis against the project's own OpenAPI schema, authenticated as each role:
no server errors and no responses that break the documented schema."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from annotation.assignment import start_assignment
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_user

from .conftest import require
from .factories import couple_clip

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ["annotator", "lead", "admin"])
def test_api_answers_within_its_schema_and_never_with_a_server_error(live_server, project, tmp_path, role):
    cli = shutil.which("schemathesis", path=str(REPO / ".venv" / "bin")) or shutil.which("schemathesis")
    require(cli is not None, "schemathesis is not installed (pip install -e '.[test]')")
    user = create_user(f"fuzz_{role}", role, password="fuzz-pass-123456")[0]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    if role == "annotator":
        start_assignment(project.clips.get(), user)
    token = Token.objects.create(user=user).key
    result = subprocess.run(
        [cli, "run", f"{live_server.url}/api/schema/", "-H", f"Authorization: Token {token}",
         "--max-examples", "5", "--phases", "fuzzing", "--seed", "1",
         "--checks", "not_a_server_error,response_schema_conformance"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    summary = "\n".join(result.stdout.splitlines()[-25:])
    print(f"schemathesis as {role}:\n{summary}")  # the figures, in the run's log (pytest -s)
    assert result.returncode == 0, summary
    assert "passed" in summary
