"""Scriptable administration: projects and users from a shell script."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Project
from annotation.roles import role_of

pytestmark = pytest.mark.django_db


def run(*args, stdin=None, monkeypatch=None):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_project_with_defaults_and_options():
    assert "created project rb2" in run("create_project", "rb2", "--name", "RESCUE 2", "--annotators-per-clip", "4")
    project = Project.objects.get(slug="rb2")
    assert (project.name, project.annotators_per_clip, project.taxonomy_version) == (
        "RESCUE 2",
        4,
        "2",
    )  # the latest taxonomy
    with pytest.raises(CommandError, match="already exists"):
        run("create_project", "rb2")
    with pytest.raises(CommandError, match="unknown taxonomy version '7'"):
        run("create_project", "rb3", "--taxonomy-version", "7")


@pytest.mark.parametrize("role", ["annotator", "lead", "admin"])
def test_create_user_with_password_from_stdin(role, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret-Passphrase\n"))
    out = run("create_user", f"u_{role}", "--role", role, "--password-stdin")
    assert f"created {role} u_{role}" in out and "s3cret" not in out
    user = get_user_model().objects.get(username=f"u_{role}")
    assert user.check_password("s3cret-Passphrase") and role_of(user) == role
    assert user.is_superuser == (role == "admin")


def test_create_user_generates_and_prints_a_password():
    out = run("create_user", "newbie", "--role", "annotator")
    password = out.split("password: ")[1].strip()
    assert len(password) >= 16
    assert get_user_model().objects.get(username="newbie").check_password(password)


def test_create_user_refuses_duplicates_and_empty_stdin(monkeypatch):
    run("create_user", "dup", "--role", "lead")
    with pytest.raises(CommandError, match="already exists"):
        run("create_user", "dup", "--role", "lead")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(CommandError, match="stdin held no password"):
        run("create_user", "nopw", "--role", "lead", "--password-stdin")
