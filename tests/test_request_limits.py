"""Size and rate limits in the application (there were none).

A body over its limit is refused from its Content-Length before anything reads
it; uploaded files stream to disk and stop being written past their own limit;
the API counts requests per user and per anonymous address; the login lockout
counts failures per username and, with a higher limit, per client address.
"""

from __future__ import annotations

import io
import os

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from annotation.ingest.uploads import SizeLimitedUploadHandler
from annotation.models import Clip
from annotation.services import create_user

pytestmark = pytest.mark.django_db

SRT = (
    b"1\n00:00:01,000 --> 00:00:03,000\nMaya: I keep waiting.\n\n2\n00:00:03,500 --> 00:00:05,000\nTobias: I know.\n\n"
)


class CountingInput(io.BytesIO):
    """A request body that remembers how much of it was read."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk

    def readline(self, size=-1):
        line = super().readline(size)
        self.bytes_read += len(line)
        return line


def multipart(fields: dict[str, str], pad: int) -> tuple[bytes, str]:
    boundary = "limitboundary"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n' for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="pad"\r\n\r\n{"x" * pad}\r\n--{boundary}--\r\n')
    return "".join(parts).encode(), f"multipart/form-data; boundary={boundary}"


# --- body size ------------------------------------------------------------------------------


def test_a_100_mb_anonymous_body_to_the_login_page_is_refused_unread(client):
    """The probe's request: 100 MB of multipart to the login page. Refused (413) on its Content-Length alone."""
    body, content_type = multipart({"username": "ann1", "password": "x"}, pad=1000)
    stream = CountingInput(body)
    response = client.post(
        "/accounts/login/",
        data=b"",
        content_type=content_type,
        CONTENT_LENGTH=str(100 * 1024 * 1024),
        **{"wsgi.input": stream},
    )
    assert response.status_code == 413
    assert b"over the limit of 2,097,152 bytes (MAX_REQUEST_BYTES)" in response.content
    assert stream.bytes_read == 0, "nothing of the body was read"


def test_an_api_body_over_the_limit_gets_a_json_413(client, annotator, settings):
    settings.MAX_REQUEST_BYTES = 1000
    client.force_login(annotator)
    response = client.post(
        "/api/v1/clips/1/comments/", '{"body": "%s"}' % ("x" * 2000), content_type="application/json"
    )
    assert response.status_code == 413
    assert "MAX_REQUEST_BYTES" in response.json()["detail"]


def test_ingest_uploads_may_be_larger_than_other_requests_up_to_their_own_limit(client, project, lead, settings):
    settings.MAX_REQUEST_BYTES = 200  # smaller than this upload: ingest is held to MAX_INGEST_REQUEST_BYTES instead
    client.force_login(lead)
    url = f"/api/v1/projects/{project.slug}/clips/"
    response = client.post(url, {"files": [SimpleUploadedFile("a.srt", SRT * 3)], "scenario": "couple", "group": "g"})
    assert response.status_code == 201, response.content[:300]
    page = client.post(
        f"/projects/{project.slug}/ingest/",
        {"files": [SimpleUploadedFile("c.srt", SRT * 4)], "scenario": "couple", "group": "g"},
    )
    assert page.status_code == 200 and [r.status for r in page.context["results"]] == ["created"], "the upload page too"
    settings.MAX_INGEST_REQUEST_BYTES = 300
    response = client.post(url, {"files": [SimpleUploadedFile("b.srt", SRT * 3)], "scenario": "couple", "group": "g"})
    assert response.status_code == 413 and "MAX_INGEST_REQUEST_BYTES" in response.json()["detail"]
    assert Clip.objects.filter(sample_id="g/b").count() == 0


class StreamedUpload:
    """A multipart ingest upload of ``size`` bytes made as it is read (never held in memory), counting what was read.

    The fields are those of a real upload (the CSRF token matching an invented cookie, scenario, group), then one
    transcript file of filler.
    """

    CSRF = "A" * 32  # an unmasked CSRF secret: Django accepts it as cookie and token alike
    BOUNDARY = "streamedboundary"

    def __init__(self, size: int):
        head = "".join(
            f'--{self.BOUNDARY}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
            for k, v in (("csrfmiddlewaretoken", self.CSRF), ("scenario", "couple"), ("group", "g"))
        )
        head += (
            f'--{self.BOUNDARY}\r\nContent-Disposition: form-data; name="files"; '
            'filename="huge.srt"\r\nContent-Type: text/plain\r\n\r\n'
        )
        self.head, self.tail = head.encode(), f"\r\n--{self.BOUNDARY}--\r\n".encode()
        self.size = size
        self.filler = size - len(self.head) - len(self.tail)
        self.position = 0
        self.bytes_read = 0
        self.content_type = f"multipart/form-data; boundary={self.BOUNDARY}"

    def _bytes(self, start: int, end: int) -> bytes:
        out = []
        for part_start, part in ((0, self.head), (len(self.head) + self.filler, self.tail)):
            lo, hi = max(start, part_start), min(end, part_start + len(part))
            if lo < hi:
                out.append((lo, part[lo - part_start : hi - part_start]))
        lo, hi = max(start, len(self.head)), min(end, len(self.head) + self.filler)
        if lo < hi:
            out.append((lo, b"x" * (hi - lo)))
        return b"".join(chunk for _, chunk in sorted(out))

    def read(self, size=-1):
        end = self.size if size is None or size < 0 else min(self.size, self.position + size)
        chunk = self._bytes(self.position, end)
        self.position = end
        self.bytes_read += len(chunk)
        return chunk

    def readline(self, size=-1):
        end = self.size if size is None or size < 0 else min(self.size, self.position + size)
        window = self._bytes(self.position, min(end, self.position + 65536))
        cut = window.find(b"\n")
        return self.read(cut + 1 if cut >= 0 else len(window))


UPLOAD_BYTES = 300 * 1024 * 1024


def send_upload(client: Client, url: str, size: int = UPLOAD_BYTES, **extra) -> tuple[int, int, str]:
    """POST a streamed upload of ``size`` bytes to ``url`` as a browser would; (status, bytes read, answer)."""
    stream = StreamedUpload(size)
    client.cookies["csrftoken"] = StreamedUpload.CSRF
    response = client.post(
        # (an empty ``data`` sets neither header: the stream's are given as they would arrive)
        url,
        data=b"",
        content_type="application/octet-stream",
        CONTENT_TYPE=stream.content_type,
        CONTENT_LENGTH=str(size),
        HTTP_ORIGIN="http://testserver",
        **{"wsgi.input": stream},
        **extra,
    )
    return response.status_code, stream.bytes_read, response.content.decode(errors="replace")


@pytest.mark.parametrize("who, where", [("anonymous", "page"), ("annotator", "page"), ("annotator", "api")])
def test_a_300_mb_upload_from_a_caller_who_may_not_upload_is_refused_before_it_is_read(project, annotator, who, where):
    """The probe's requests: 300 MB to the ingest page (anonymously, with an invented CSRF cookie and a matching
    Origin; or as an annotator) and to the ingest API (an annotator's session). The CSRF check and DRF's session
    authentication read the body before the role check; now the caller's role decides the limit first."""
    client = Client(enforce_csrf_checks=True)  # the CSRF check as in production, not the test client's shortcut
    if who == "annotator":
        client.force_login(annotator)
    url = f"/projects/{project.slug}/ingest/" if where == "page" else f"/api/v1/projects/{project.slug}/clips/"
    status, read, answer = send_upload(client, url)
    print(f"{who} {where}: {status}, {read:,} bytes read of {UPLOAD_BYTES:,}")
    assert status == 413, (status, answer)
    assert read < 1024 * 1024, f"{read:,} bytes of the body were read before the refusal"
    assert "MAX_REQUEST_BYTES" in answer and "leads" in answer
    assert Clip.objects.count() == 0


def test_a_lead_may_send_an_upload_past_the_ordinary_limit_and_a_read_only_token_may_not(project, lead, settings):
    from annotation.tokens import issue_token

    settings.MAX_REQUEST_BYTES = 64 * 1024  # so that a small upload is past it
    url = f"/api/v1/projects/{project.slug}/clips/"
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(lead)
    status, read, answer = send_upload(browser, f"/projects/{project.slug}/ingest/", size=300_000)
    assert status == 200 and read == 300_000, (status, read, answer)
    for scope, expected in (("read-write", 422), ("read", 413)):  # 422: the filler is no transcript
        key = issue_token(lead, scope=scope)[1]
        status, read, answer = send_upload(Client(), url, size=300_000, HTTP_AUTHORIZATION=f"Token {key}")
        assert status == expected, (scope, status, answer)
        assert read == (300_000 if scope == "read-write" else 0)


@pytest.fixture
def disk_sizes(monkeypatch):
    """The largest size each uploaded file's temporary file reached on disk, by file name."""
    seen: dict[str, int] = {}
    original = SizeLimitedUploadHandler.receive_data_chunk

    def recording(self, raw_data, start):
        result = original(self, raw_data, start)
        self.file.flush()
        seen[self.file_name] = max(seen.get(self.file_name, 0), os.path.getsize(self.file.temporary_file_path()))
        return result

    monkeypatch.setattr(SizeLimitedUploadHandler, "receive_data_chunk", recording)
    return seen


def test_an_uploaded_file_stops_being_written_as_soon_as_it_passes_its_limit(
    client, project, lead, settings, disk_sizes
):
    """Media go to disk, never to memory, and no further than MAX_MEDIA_BYTES; the transcript is refused by name."""
    settings.MAX_MEDIA_BYTES = 300_000
    client.force_login(lead)
    video = SimpleUploadedFile("clip.mp4", b"\0" * 3_000_000, content_type="video/mp4")
    response = client.post(
        f"/api/v1/projects/{project.slug}/clips/",
        {"files": [SimpleUploadedFile("clip.srt", SRT), video], "scenario": "couple", "group": "g"},
    )
    assert response.status_code == 422
    (result,) = response.json()["results"]
    assert result["status"] == "refused" and result["message"].startswith("clip.srt: refused with its media file")
    assert "clip.mp4: file is 3,000,000 bytes, over the limit of 300,000 bytes (MAX_MEDIA_BYTES)" in result["message"]
    assert disk_sizes["clip.mp4"] <= 300_000, "the file stopped being written at its limit"
    assert Clip.objects.count() == 0


def test_a_transcript_over_its_limit_is_refused_while_the_others_go_on(client, project, lead, settings, disk_sizes):
    settings.MAX_UPLOAD_BYTES = 1000
    client.force_login(lead)
    files = [SimpleUploadedFile("big.srt", SRT * 40), SimpleUploadedFile("small.srt", SRT * 2)]
    response = client.post(
        f"/api/v1/projects/{project.slug}/clips/", {"files": files, "scenario": "couple", "group": "g"}
    )
    assert response.status_code == 422
    statuses = {r["file"]: (r["status"], r["message"]) for r in response.json()["results"]}
    assert statuses["small.srt"][0] == "created"
    assert (
        statuses["big.srt"][0] == "refused"
        and "over the limit of 1,000 bytes (MAX_UPLOAD_BYTES)" in statuses["big.srt"][1]
    )
    assert disk_sizes["big.srt"] <= 1000


# --- API rates --------------------------------------------------------------------------------


def test_the_api_throttles_each_signed_in_user(annotator, other_annotator, settings):
    settings.API_THROTTLE_RATES = {"anon": None, "user": "5/minute"}
    first, second = Client(), Client()
    first.force_login(annotator)
    second.force_login(other_annotator)
    assert [first.get("/api/v1/assignments/").status_code for _ in range(5)] == [200] * 5
    refused = first.get("/api/v1/assignments/")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "throttled" in refused.json()["detail"].lower()
    assert second.get("/api/v1/assignments/").status_code == 200, "counted per user"


class PublicPing(APIView):
    permission_classes = [AllowAny]

    def get(self, request):
        return Response({"ok": True})


def test_the_api_throttles_anonymous_callers_per_address(settings):
    """The anonymous rate applies to every endpoint open to anonymous callers (the project's
    endpoints all require a login and answer 401 first; this one stands for a public one)."""
    settings.API_THROTTLE_RATES = {"anon": "3/minute", "user": None}
    factory, view = APIRequestFactory(), PublicPing.as_view()
    statuses = [view(factory.get("/ping", REMOTE_ADDR="192.0.2.1")).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    assert view(factory.get("/ping", REMOTE_ADDR="192.0.2.2")).status_code == 200


def test_rates_are_set_from_the_environment_and_can_be_switched_off(tmp_path):
    import subprocess
    import sys

    from .conftest import REPO

    code = "import django; django.setup(); from django.conf import settings as s; print(s.API_THROTTLE_RATES)"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "rescue_annot.settings", "VAR_DIR": str(tmp_path)}
    default = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert default.stdout.strip() == "{'anon': '60/minute', 'user': '1200/minute'}", default.stderr
    changed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**env, "API_THROTTLE_USER": "off", "API_THROTTLE_ANON": "10/hour"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert changed.stdout.strip() == "{'anon': '10/hour', 'user': None}", changed.stderr


# --- login lockout ------------------------------------------------------------------------------


def login(client, username, password, address="203.0.113.10", **extra):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address, **extra)


@pytest.fixture
def people(db):
    return [create_user(f"coder{i}", "annotator", password=f"coder-pass-{i}-long")[0] for i in range(3)]


def test_guessing_over_many_usernames_from_one_address_locks_that_address(client, people, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 8
    # One guess each for eight usernames: no username reaches its own limit; the eighth failure locks the address.
    assert [login(client, f"someone{i}", "guess").status_code for i in range(8)] == [200] * 7 + [429]
    locked = login(client, "coder0", "coder-pass-0-long")
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    assert login(Client(), "coder0", "coder-pass-0-long", address="198.51.100.7").status_code == 302, (
        "only that address is locked"
    )


def test_a_good_login_from_the_address_does_not_reset_its_count_of_guesses(client, people, settings):
    """An attacker with one account of their own cannot wipe the address's failures between rounds."""
    settings.LOGIN_FAILURES_PER_ADDRESS = 5
    assert [login(client, f"someone{i}", "guess").status_code for i in range(4)] == [200] * 4
    assert login(Client(), "coder0", "coder-pass-0-long").status_code == 302
    assert login(Client(), "someone9", "guess").status_code == 429, "the four guesses before the good login still count"


def test_nobody_can_lock_a_lead_out_from_afar(client, people):
    """Wrong passwords for a lead's username from other addresses lock those addresses, not the lead's own."""
    lead = create_user("lead9", "lead", password="lead-nine-pass-123")[0]
    for i in range(5):
        assert login(Client(), lead.username, "wrong", address=f"192.0.2.{i + 1}").status_code in (200, 429)
    assert login(Client(), lead.username, "lead-nine-pass-123", address="198.51.100.9").status_code == 302, (
        "the lead, from an address that sent no wrong password, still signs in"
    )
    for i in range(5):
        assert login(Client(), lead.username, "lead-nine-pass-123", address=f"192.0.2.{i + 1}").status_code == 429, (
            "every address that guessed stays locked, even with the right password"
        )
    assert login(Client(), lead.username, "guess", address="203.0.113.99").status_code == 429, (
        "a new address gets one guess"
    )
    assert login(Client(), lead.username, "lead-nine-pass-123", address="203.0.113.99").status_code == 429


def test_one_user_locked_behind_a_shared_address_does_not_lock_the_others(client, people):
    """Behind a proxy everyone shares one address: a locked username locks that username only."""
    for _ in range(5):
        login(client, "coder1", "wrong", address="10.0.0.1")
    assert login(client, "coder1", "coder-pass-1-long", address="10.0.0.1").status_code == 429
    assert login(Client(), "coder2", "coder-pass-2-long", address="10.0.0.1").status_code == 302


def test_behind_a_trusted_proxy_the_client_address_is_the_one_the_proxy_saw(people, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 4
    proxied = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    with override_settings(REST_FRAMEWORK=proxied):
        attacker = Client()
        for i in range(4):
            # A forged X-Forwarded-For entry: the proxy appends the address it saw, and only that one counts.
            login(
                attacker, f"someone{i}", "guess", address="10.0.0.1", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}, 203.0.113.66"
            )
        assert (
            login(
                attacker, "coder0", "coder-pass-0-long", address="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.66"
            ).status_code
            == 429
        )
        colleague = login(
            Client(), "coder2", "coder-pass-2-long", address="10.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.20"
        )
        assert colleague.status_code == 302, "another client behind the same proxy is not locked"
