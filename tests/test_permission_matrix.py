"""Every page and endpoint × every role × read and write, generated from the URL configuration.

A URL name missing from POLICY fails the test, so a new view cannot escape the
matrix. Roles: anonymous, annotator A (assigned to the world's clip),
annotator B (assigned to nothing), a lead and an admin.

Expected outcomes:
- denied: anonymous pages redirect to the login page, anonymous API calls get
  401/403; a logged-in user without the right gets 403 or 404 (404 where
  saying "forbidden" would confirm that someone else's object exists); a
  denied write changes nothing in the database.
- allowed: never 401/403/404 and never a server error (a write with an empty
  body may be refused as invalid: 400/405/409/415/422).
"""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.models import (
    Assignment,
    Clip,
    Comment,
    Draft,
    Gold,
    GuidanceVersion,
    Job,
    Project,
    Release,
    Revision,
    Row,
)
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_project, create_user
from annotation.starting import start_assignment

from .builders.documents import couple_clip, family_clip

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "annotator_a", "annotator_b", "lead", "admin")

PUBLIC = "public"  # anyone
USER = "user"  # any logged-in user (results are scoped to what they may see)
MEMBER = "member"  # leads, and annotators with work in the project
ASSIGNED = "assigned"  # leads? no: the annotator who owns the object (leads read through other pages)
ASSIGNED_OR_LEAD = "assigned_or_lead"  # the assigned annotator and leads
LEAD = "lead"  # leads and admins only
ADMIN = "admin"  # the Django admin: staff only

POLICY = {
    # accounts and health
    "login": PUBLIC,
    "logout": USER,
    "password_change": USER,
    "password_change_done": USER,
    "healthz": PUBLIC,
    "readyz": PUBLIC,
    # home and project pages
    "home": USER,
    "project-detail": MEMBER,
    "api-root": USER,
    "api-schema": USER,
    "api-docs": USER,
    "api-project-list": USER,
    "api-project-detail": MEMBER,
    "project-clips": (MEMBER, LEAD),  # read the clips you may see; only leads ingest
    # workspace
    "workspace-queue": USER,
    "workspace-clip": ASSIGNED_OR_LEAD,
    "workspace-media": ASSIGNED_OR_LEAD,
    "api-my-assignments": USER,
    "api-clip-workspace": ASSIGNED_OR_LEAD,
    "api-clip-comments": ASSIGNED_OR_LEAD,
    "api-revision": ASSIGNED,
    "api-revision-validate": ASSIGNED,
    "api-revision-review": ASSIGNED,
    "api-assignment-submit": ASSIGNED,
    "api-my-settings": USER,
    "api-my-tokens": USER,
    # the project's guidance: every member reads it, leads write it
    "codebook-guide": MEMBER,
    "codebook-guidance": LEAD,
    "api-guidance": (MEMBER, LEAD),
    "api-guidance-version": MEMBER,
    # judging pairs of free text for meaning: members (never their own texts); the validity and the judge run: leads
    "meaning-judge": MEMBER,
    "api-meaning-pair": MEMBER,
    "api-meaning-judgements": MEMBER,
    "meaning-run-judge": LEAD,
    "api-meaning-validity": LEAD,
    # the study design: leads only
    "study-design": LEAD,
    "api-study-design": LEAD,
    # the annotators' record: a coder reads their own rounds and record (404 for anyone else's), leads everything
    "record-qualification": MEMBER,
    "record-attempt": ASSIGNED_OR_LEAD,
    "record-coder": ASSIGNED_OR_LEAD,
    "api-record-coder": ASSIGNED_OR_LEAD,
    "record-dashboard": LEAD,
    "record-setup": LEAD,
    "record-decide": LEAD,
    "api-record-dashboard": LEAD,
    "api-record-decisions": LEAD,
}
# Everything a lead runs: ingest, pre-annotation, assignment, adjudication, agreement, releases.
LEAD_PREFIXES = (
    "ingest-",
    "preannotate-",
    "api-preannotate-",
    "adjudication-",
    "api-adjudication-",
    "assignment-",
    "api-project-assignments",
    "api-assignment-reassign",
    "api-clip-adjudication",
    "api-project-adjudication",
    "api-row-gold",
    "agreement-",
    "api-agreement",
    "releases-",
    "api-release",
    "audit-trail",
    "api-audit-trail",
)


# Query strings a route needs to name its objects.
QUERY = {"api-release-diff": "?a=1.0.0&b=1.0.1", "releases-diff": "?a=1.0.0&b=1.0.1"}


def policy_of(name: str, method: str = "get") -> str:
    if name in POLICY:
        policy = POLICY[name]
        return policy if isinstance(policy, str) else policy[0 if method == "get" else 1]
    if name.startswith("admin:"):
        return ADMIN
    if name.startswith(LEAD_PREFIXES):
        return LEAD
    raise AssertionError(f"URL {name!r} has no access policy in tests/test_permission_matrix.py: add one")


def all_routes():
    """(route template, name) for every URL pattern, with the admin's collapsed to a sample."""

    def walk(patterns, prefix="", namespace=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
                yield from walk(p.url_patterns, prefix + str(p.pattern), ns)
            elif isinstance(p, URLPattern) and p.name:
                yield prefix + str(p.pattern), namespace + p.name

    seen = set()
    for route, name in walk(get_resolver().url_patterns):
        if "(?P<format>" in route or "<drf_format_suffix" in route:
            continue  # the same views with a format suffix
        if name.startswith("admin:") and name not in (
            "admin:index",
            "admin:annotation_revision_changelist",
            "admin:annotation_revision_change",
            "admin:annotation_revision_history",
        ):
            continue
        if (route, name) not in seen:
            seen.add((route, name))
            yield route, name


@pytest.fixture
def world(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    project = create_project("main")
    other = create_project("other")
    a = create_user("annotator_a", "annotator", password="pw-a-12345678")[0]
    b = create_user("annotator_b", "annotator", password="pw-b-12345678")[0]
    lead = create_user("lead", "lead", password="pw-l-12345678")[0]
    admin = create_user("admin", "admin", password="pw-x-12345678")[0]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    clip.media.save("clip.mp3", ContentFile(b"ID3" + b"\0" * 2048))
    start_assignment(clip, a)
    import_rescue(path, project, as_source="gold")
    fam = tmp_path / "f.jsonl"
    fam.write_text(json.dumps(family_clip()) + "\n", encoding="utf-8")
    import_rescue(fam, other, as_source="gold")
    Comment.objects.create(clip=clip, row=clip.rows.first(), author=a, body="A's note")
    # An adjudicated clip, frozen into release 1.0.0 (and 1.0.1, so that the two can be compared).
    gold = tmp_path / "g.jsonl"
    gold.write_text(json.dumps(couple_clip("g2/002_second")) + "\n", encoding="utf-8")
    import_rescue(gold, project, as_source="gold")
    from annotation.releases.freeze import freeze
    from annotation.releases.services import FREEZE_JOB, release_dir

    freeze(
        project, version="1.0.0", seed=1, out_dir=release_dir(project, "1.0.0"), accept_incomplete=["couple"]
    )  # one couple: no full split
    freeze(project, version="1.0.1", seed=2, out_dir=release_dir(project, "1.0.1"), accept_incomplete=["couple"])
    freeze_job = Job.objects.create(kind=FREEZE_JOB, project=project, state="succeeded")
    from annotation.preannotate.services import BATCH_KIND, CLIP_KIND

    batch = Job.objects.create(kind=BATCH_KIND, project=project, state="failed")
    job = Job.objects.create(
        kind=CLIP_KIND, project=project, clip=clip, state="failed", error="x", params={"batch": batch.pk}
    )
    from annotation.codebook.services import write_guidance

    write_guidance(
        project, lead, field="utterance_type", labels=["accusation", "disclosure"], text="lead's guidance", why="matrix"
    )
    from annotation.record.models import QualificationAttempt

    attempt = QualificationAttempt.objects.create(project=project, scenario="couple", annotator=a, number=1)
    return {
        "users": {"annotator_a": a, "annotator_b": b, "lead": lead, "admin": admin},
        "params": {
            "slug": project.slug,
            "clip_id": clip.pk,
            "row_id": clip.rows.get(row_index=1).pk,
            "revision_id": Revision.objects.get(row__clip=clip, row__row_index=1, annotator=a).pk,
            "assignment_id": Assignment.objects.get(clip=clip, annotator=a).pk,
            "job_id": job.pk,
            "freeze_job_id": freeze_job.pk,
            "batch_id": batch.pk,
            "version": "1.0.0",
            "name": "README.md",  # a release file
            "number": 1,  # guidance version
            "object_id": Revision.objects.filter(annotator=a).first().pk,
            "user_id": a.pk,  # the record of annotator A
            "attempt_id": attempt.pk,
        },
    }


def fill(route: str, params: dict) -> str:
    def sub(match):
        name = match.group(2)
        if name == "job_id" and "releases/jobs/" in route:
            name = "freeze_job_id"
        return str(params[name])

    url = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: str(params[m.group(1)]), route)  # router regexes
    url = re.sub(r"<(?:(\w+):)?(\w+)>", sub, url)
    url = re.sub(r"\^|\$", "", url)
    return "/" + url


def client_for(role, world):
    client = Client()
    if role != "anonymous":
        client.force_login(world["users"][role])
    return client


def snapshot():
    return tuple(
        m.objects.count()
        for m in (Project, Clip, Row, Draft, Revision, Gold, Assignment, Comment, Release, GuidanceVersion)
    )


def allowed(policy: str, role: str) -> bool:
    return {
        PUBLIC: True,
        USER: role != "anonymous",
        MEMBER: role in ("annotator_a", "lead", "admin"),
        ASSIGNED: role == "annotator_a",
        ASSIGNED_OR_LEAD: role in ("annotator_a", "lead", "admin"),
        LEAD: role in ("lead", "admin"),
        ADMIN: role == "admin",
    }[policy]


def test_every_route_has_a_policy():
    for _, name in all_routes():
        policy_of(name)


def test_permission_matrix(world, settings):
    results = []
    failures = []
    clients = {role: client_for(role, world) for role in ROLES}
    for route, name in sorted(all_routes(), key=lambda r: r[1]):
        url = fill(route, world["params"]) + QUERY.get(name, "")
        for role in ROLES:
            for method in ("get", "post"):
                policy = policy_of(name, method)
                if name == "logout" and method == "post":
                    continue  # logging out is the point of the page, not a breach
                client = clients[role]
                before = snapshot()
                response = (
                    getattr(client, method)(url, data={}, content_type="application/json")
                    if method == "post" and url.startswith("/api/")
                    else getattr(client, method)(url)
                )
                status = response.status_code
                results.append((name, role, method, status))
                is_api = url.startswith("/api/")
                if allowed(policy, role):
                    ok = status not in (401, 403, 404) and status < 500
                    if method == "get" and name in ("workspace-media",):
                        ok = status in (200, 206)
                else:
                    if role == "anonymous":
                        ok = (
                            status in (401, 403)
                            if is_api
                            else (status == 302 and "/login/" in response.get("Location", "")) or status == 405
                        )
                    elif policy == ADMIN:
                        ok = status == 302 and "/admin/login/" in response.get("Location", "")
                    else:
                        ok = status in (403, 404, 405)
                    if method == "post" and snapshot() != before:
                        ok = False
                if not ok:
                    failures.append(f"{method.upper()} {url} ({name}, {policy}) as {role}: {status}")
    print(f"permission matrix: {len(results)} checks over {len({r[0] for r in results})} routes")
    assert not failures, "\n".join(failures)


def test_annotator_cannot_enumerate_revisions_of_others(world, tmp_path):
    """Every revision id that is not A's is a 404 to A, whatever the endpoint."""
    b = world["users"]["annotator_b"]
    clip = Clip.objects.get(pk=world["params"]["clip_id"])
    start_assignment(clip, b)
    client = client_for("annotator_a", world)
    for revision in Revision.objects.exclude(annotator=world["users"]["annotator_a"]):
        for suffix in ("", "validate/", "review/"):
            method = client.get if suffix == "" else client.post
            assert (
                method(f"/api/v1/revisions/{revision.pk}/{suffix}", {}, content_type="application/json").status_code
                == 404
            )
    payload = client.get(f"/api/v1/clips/{clip.pk}/workspace/").json()
    assert all(
        r["revision"]["id"]
        in set(Revision.objects.filter(annotator=world["users"]["annotator_a"]).values_list("pk", flat=True))
        for r in payload["rows"]
    )
    assert "annotator_b" not in json.dumps(payload)


def test_an_annotator_never_reads_another_coders_record(world):
    """B, a member of the project (assigned to the same clip), gets 404 for A's record and rounds, web and API."""
    b = world["users"]["annotator_b"]
    start_assignment(Clip.objects.get(pk=world["params"]["clip_id"]), b)
    client = client_for("annotator_b", world)
    slug, a_id, attempt = world["params"]["slug"], world["params"]["user_id"], world["params"]["attempt_id"]
    for url in (
        f"/projects/{slug}/record/coders/{a_id}/",
        f"/api/v1/projects/{slug}/record/coders/{a_id}/",
        f"/projects/{slug}/qualification/rounds/{attempt}/",
    ):
        assert client.get(url).status_code == 404, url
    own = client.get(f"/api/v1/projects/{slug}/record/coders/{b.pk}/")
    assert own.status_code == 200 and own.json()["coder"] == "annotator_b"
    assert "annotator_a" not in client.get(f"/projects/{slug}/qualification/").content.decode()
