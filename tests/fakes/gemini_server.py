"""A fake Gemini API on 127.0.0.1, driven through the real google-genai SDK.

It speaks the parts of the Generative Language REST protocol the platform
uses: ``POST /{version}/models/{model}:generateContent``, ``...:batchEmbedContents`` (the semantic agreement's
Gemini provider: deterministic hashed-word vectors, ``fake_embedding``) and the Files API
(resumable upload, ``GET`` / ``DELETE /{version}/files/{id}``). Point the SDK
at it with ``HttpOptions(base_url=server.url)`` (``GEMINI_BASE_URL``).

Like the real service, it refuses a response schema that carries numeric
bounds or array/string length limits, or more enum values than
``enum_limit``, with the real 400 INVALID_ARGUMENT body ("The specified schema
produces a constraint that has too many states for serving ...").

Each test scripts it: ``server.script(behaviour, ...)`` queues what the next
generateContent requests get (an answer, an error, a hang, a hold ...); when
the queue is empty, ``responder`` answers (by default: one well-formed row per
transcript cue). A responder returns the answer's JSON, or a ``Reply`` (for
example ``max_tokens()`` for a request showing too many cues). Every request
is recorded with its arrival time, for rate checks.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

TOO_MANY_STATES = (
    "The specified schema produces a constraint that has too many states for serving.  Typical causes of this "
    "error are schemas with lots of text (for example, very long property or enum names), schemas with long array "
    "length limits (especially when nested), or schemas using complex value matchers (for example, integers or "
    "numbers with minimum/maximum bounds or strings with complex formats like date-time)"
)
BOUND_KEYS = {
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "exclusive_minimum",
    "exclusive_maximum",
    "minItems",
    "maxItems",
    "min_items",
    "max_items",
    "minLength",
    "maxLength",
    "min_length",
    "max_length",
    "minProperties",
    "maxProperties",
    "min_properties",
    "max_properties",
}
MODEL_VERSION = "gemini-2.5-flash-fake-001"
_GENERATE = re.compile(r"^/(?P<version>v\d\w*)/models/(?P<model>[^/:]+):generateContent$")
_EMBED = re.compile(r"^/(?P<version>v\d\w*)/models/(?P<model>[^/:]+):batchEmbedContents$")


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic stand-in for a sentence embedding: the text's words hashed into ``dimensions`` buckets
    (texts that share words point the same way; the real model is never called in tests)."""
    values = [0.0] * dimensions
    for word in re.findall(r"[a-z']+", text.lower()):
        bucket = int(hashlib.sha256(word.encode()).hexdigest(), 16)
        values[bucket % dimensions] += 1.0 if (bucket >> 8) % 2 else -1.0
    return values


_FILE = re.compile(r"^/(?P<version>v\d\w*)/files/(?P<id>[\w-]+)$")
_CUE = re.compile(r"^\[c(?P<n>\d+)\] (?P<start>[\d.]+)-(?P<end>[\d.]+) \| (?P<speaker>.*?) \| (?P<text>.*)$")
_MODALITY = re.compile(r"^Modality: (?P<modality>[a-z ]+?)\.", re.MULTILINE)


# --- behaviours ---------------------------------------------------------------------


@dataclass
class Reply:
    """A 200 answer. ``payload`` is JSON-encoded as the model's text unless ``text`` is given."""

    payload: Any = None
    text: str | None = None
    finish_reason: str | None = "STOP"
    model_version: str = MODEL_VERSION
    no_candidates: bool = False
    block_reason: str | None = None


@dataclass
class Error:
    status: int
    api_status: str
    message: str
    retry_after: str | None = None
    details: list = field(default_factory=list)


@dataclass
class Hang:
    """Hold the request without answering for ``seconds``, then drop the connection."""

    seconds: float


@dataclass
class Hold:
    """Hold the request until ``release`` is set (or the server stops), then answer normally."""

    release: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Event = field(default_factory=threading.Event)


def ok(payload=None, **kwargs) -> Reply:
    return Reply(payload=payload, **kwargs)


def text(raw: str, **kwargs) -> Reply:
    return Reply(text=raw, **kwargs)


def error(status: int, message: str = "", api_status: str = "", retry_after: str | None = None, details=None) -> Error:
    defaults = {
        429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
        500: (
            "INTERNAL",
            "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
        ),
        503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
        400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    }
    d_status, d_message = defaults.get(status, ("UNKNOWN", "error"))
    return Error(status, api_status or d_status, message or d_message, retry_after, list(details or []))


def max_tokens(partial: str = '{"rows": [{"start_time": 0.0, "end_time": 2.') -> Reply:
    return Reply(text=partial, finish_reason="MAX_TOKENS")


def safety() -> Reply:
    return Reply(text="", finish_reason="SAFETY")


def no_candidates(block_reason: str | None = None) -> Reply:
    return Reply(no_candidates=True, block_reason=block_reason)


# --- the default model: one row per cue ------------------------------------------------


@dataclass
class Cue:
    number: int
    start: float
    end: float
    speaker: str
    text: str


def parse_transcript(prompt: str) -> tuple[list[str], list[Cue]]:
    """(allowed person labels, cues) from the platform's transcript message."""
    labels: list[str] = []
    cues = []
    for line in prompt.splitlines():
        if line.startswith("Allowed person labels:"):
            labels = [x.strip() for x in line.split(":", 1)[1].split(",")]
        m = _CUE.match(line)
        if m:
            cues.append(Cue(int(m["n"]), float(m["start"]), float(m["end"]), m["speaker"], m["text"]))
    return labels, cues


def row_for(cue: Cue, index: int, previous: str | None, labels: list[str]) -> dict:
    """A row the platform's validation accepts without warnings (``index``: its place in the answer)."""
    group = labels[-1] if labels else "Couple"
    therapist = cue.speaker == "Therapist"
    if previous and previous != cue.speaker:
        target = [previous]
    else:
        target = [group] if therapist else ["Therapist"]
    return {
        "start_time": cue.start,
        "end_time": cue.end,
        "primary_speaker": cue.speaker,
        "target": target,
        "dialogue_cleaned": cue.text,
        "utterance_type": None if therapist else "disclosure",
        "background_dialogue": [],
        "tone_of_voice": "calm",
        "body_posture": [],
        "facial_expressions": [],
        "self_directed_behavior": [],
        "interaction_behavior": [],
        "internal_emotion": []
        if therapist
        else [{"person": cue.speaker, "emotion_description": "feels unheard", "intensity": 5}],
        "viewpoints_attitudes": [],
        "support_strategy": [],
        "relation_pattern": None,
        "relation_pattern_reason": None,
        "relation_pattern_evidence_cues": [],
    }


def one_row_per_cue(body: dict, prompt: str) -> dict:
    labels, cues = parse_transcript(prompt)
    rows, previous = [], None
    for i, cue in enumerate(cues, start=1):
        rows.append(row_for(cue, i, previous, labels))
        previous = cue.speaker
    return {"rows": rows}


# --- the server ----------------------------------------------------------------------


@dataclass
class Recorded:
    at: float  # time.time() when the request arrived
    method: str
    path: str
    model: str | None
    body: Any
    headers: dict

    @property
    def prompt(self) -> str:
        """The user text of a generateContent request (the transcript message)."""
        texts = []
        for content in (self.body or {}).get("contents", []):
            for part in content.get("parts", []):
                if "text" in part:
                    texts.append(part["text"])
        return "\n".join(texts)

    @property
    def system(self) -> str:
        """The system instruction of a generateContent request (the rendered prompt)."""
        parts = ((self.body or {}).get("systemInstruction") or {}).get("parts", [])
        return "\n".join(p.get("text", "") for p in parts)

    @property
    def modality(self) -> str | None:
        """What the transcript message says is attached: "video with audio", "audio only", "transcript only"."""
        m = _MODALITY.search(self.prompt)
        return m["modality"] if m else None

    @property
    def generation_config(self) -> dict:
        return (self.body or {}).get("generationConfig") or {}

    @property
    def response_schema(self) -> dict | None:
        config = (self.body or {}).get("generationConfig") or {}
        return config.get("responseSchema") or config.get("response_schema")

    @property
    def files(self) -> list[tuple[str, str | None]]:
        """(URI, MIME type) of every file part (the SDK writes their keys in either case)."""
        parts = [p for c in (self.body or {}).get("contents", []) for p in c.get("parts", [])]
        data = [p.get("fileData") or p.get("file_data") for p in parts]
        return [(d.get("fileUri") or d.get("file_uri"), d.get("mimeType") or d.get("mime_type")) for d in data if d]

    @property
    def file_uris(self) -> list[str]:
        return [uri for uri, _ in self.files]

    @property
    def thinking_budget(self) -> int | None:
        config = self.generation_config
        thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
        return thinking.get("thinkingBudget", thinking.get("thinking_budget"))

    @property
    def max_output_tokens(self) -> int | None:
        config = self.generation_config
        return config.get("maxOutputTokens", config.get("max_output_tokens"))


def schema_problem(schema, enum_limit: int) -> str | None:
    """Why the real service would refuse this response schema, or None."""
    total = 0

    def walk(node):
        nonlocal total
        if isinstance(node, dict):
            bounded = BOUND_KEYS & set(node)
            if bounded:
                return f"bound {min(bounded)}"
            total += len(node.get("enum") or [])
            for value in node.values():
                found = walk(value)
                if found:
                    return found
        elif isinstance(node, list):
            for value in node:
                found = walk(value)
                if found:
                    return found
        return None

    found = walk(schema)
    if found:
        return found
    if total > enum_limit:
        return f"{total} enum values"
    return None


class FakeGemini:
    def __init__(self, *, latency: float = 0.0, enum_limit: int = 40, file_polls: int = 1):
        self.latency = latency
        self.enum_limit = enum_limit
        self.file_polls = file_polls  # GETs that still report PROCESSING before ACTIVE
        self.responder: Callable[[dict, str], dict] = one_row_per_cue
        self.requests: list[Recorded] = []
        self.files: dict[str, dict] = {}
        self._queue: deque = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-gemini", daemon=True)

    # lifecycle
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeGemini:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # scripting
    def script(self, *behaviours) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def _next(self):
        with self._lock:
            return self._queue.popleft() if self._queue else None

    @property
    def generate_requests(self) -> list[Recorded]:
        return [r for r in list(self.requests) if r.model is not None]

    def max_in_window(self, seconds: float) -> int:
        """The most generateContent requests that arrived within any ``seconds``-long window."""
        times = sorted(r.at for r in self.generate_requests)
        best, lo = 0, 0
        for hi, t in enumerate(times):
            while times[lo] <= t - seconds:
                lo += 1
            best = max(best, hi - lo + 1)
        return best

    # HTTP
    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _body(self) -> bytes:
                length = int(self.headers.get("content-length") or 0)
                return self.rfile.read(length) if length else b""

            def _send(self, status: int, payload, headers: dict | None = None):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json; charset=UTF-8")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout) or was killed

            def do_POST(self):
                arrived = time.time()
                raw = self._body()
                path = self.path.split("?", 1)[0]
                m = _GENERATE.match(path)
                if m:
                    body = json.loads(raw or b"{}")
                    record = Recorded(arrived, "POST", path, m["model"], body, dict(self.headers))
                    fake.requests.append(record)
                    return self._generate(record)
                m = _EMBED.match(path)
                if m:
                    body = json.loads(raw or b"{}")
                    fake.requests.append(Recorded(arrived, "POST", path, None, body, dict(self.headers)))
                    return self._embed(body)
                fake.requests.append(Recorded(arrived, "POST", path, None, None, dict(self.headers)))
                if path.startswith("/upload/") and self.headers.get("x-goog-upload-command") == "start":
                    upload_id = next(fake._ids)
                    return self._send(200, {}, {"x-goog-upload-url": f"{fake.url}/upload-session/{upload_id}"})
                if path.startswith("/upload-session/"):
                    file_id = f"file{next(fake._ids)}"
                    info = {
                        "name": f"files/{file_id}",
                        "uri": f"{fake.url}/v1beta/files/{file_id}",
                        "mimeType": self.headers.get("x-goog-upload-header-content-type") or "video/mp4",
                        "sizeBytes": str(len(raw)),
                        "state": "PROCESSING",
                    }
                    fake.files[file_id] = {"info": info, "polls": 0, "bytes": len(raw)}
                    return self._send(200, {"file": info}, {"x-goog-upload-status": "final"})
                return self._send(404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}})

            def do_GET(self):
                fake.requests.append(Recorded(time.time(), "GET", self.path, None, None, dict(self.headers)))
                m = _FILE.match(self.path.split("?", 1)[0])
                if not m or m["id"] not in fake.files:
                    return self._send(404, {"error": {"code": 404, "message": "file not found", "status": "NOT_FOUND"}})
                entry = fake.files[m["id"]]
                entry["polls"] += 1
                if entry["polls"] > fake.file_polls:
                    entry["info"]["state"] = "ACTIVE"
                return self._send(200, entry["info"])

            def do_DELETE(self):
                fake.requests.append(Recorded(time.time(), "DELETE", self.path, None, None, dict(self.headers)))
                m = _FILE.match(self.path.split("?", 1)[0])
                if m:
                    fake.files.pop(m["id"], None)
                return self._send(200, {})

            def _embed(self, body: dict):
                scripted = fake._next()
                if isinstance(scripted, Error):
                    payload = {
                        "error": {"code": scripted.status, "message": scripted.message, "status": scripted.api_status}
                    }
                    return self._send(scripted.status, payload)
                out = []
                for request in body.get("requests", []):
                    text = " ".join(p.get("text", "") for p in (request.get("content") or {}).get("parts", []))
                    out.append({"values": fake_embedding(text, int(request.get("outputDimensionality") or 768))})
                return self._send(200, {"embeddings": out})

            def _generate(self, record: Recorded):
                schema = record.response_schema
                if schema is not None:
                    problem = schema_problem(schema, fake.enum_limit)
                    if problem:
                        details = [
                            {
                                "@type": "type.googleapis.com/google.rpc.BadRequest",
                                "fieldViolations": [{"description": TOO_MANY_STATES}],
                            }
                        ]
                        return self._send(
                            400,
                            {
                                "error": {
                                    "code": 400,
                                    "message": TOO_MANY_STATES,
                                    "status": "INVALID_ARGUMENT",
                                    "details": details,
                                }
                            },
                        )
                behaviour = fake._next()
                if isinstance(behaviour, Hang):
                    fake._stopping.wait(behaviour.seconds)
                    self.close_connection = True
                    return
                if isinstance(behaviour, Hold):
                    behaviour.arrived.set()
                    while not behaviour.release.wait(0.05):
                        if fake._stopping.is_set():
                            return
                    behaviour = None
                if fake.latency:
                    time.sleep(fake.latency)
                if isinstance(behaviour, Error):
                    headers = {"retry-after": behaviour.retry_after} if behaviour.retry_after else {}
                    payload = {
                        "error": {
                            "code": behaviour.status,
                            "message": behaviour.message,
                            "status": behaviour.api_status,
                        }
                    }
                    if behaviour.details:
                        payload["error"]["details"] = behaviour.details
                    return self._send(behaviour.status, payload, headers)
                if isinstance(behaviour, Reply):
                    reply = behaviour
                else:
                    produced = fake.responder(record.body, record.prompt)
                    reply = produced if isinstance(produced, Reply) else Reply(payload=produced)
                return self._send(200, self._answer(record, reply))

            def _answer(self, record: Recorded, reply: Reply) -> dict:
                prompt = record.prompt
                usage = {"promptTokenCount": max(1, len(prompt) // 4)}
                if reply.no_candidates:
                    out = {
                        "usageMetadata": {**usage, "totalTokenCount": usage["promptTokenCount"]},
                        "modelVersion": reply.model_version,
                    }
                    if reply.block_reason:
                        out["promptFeedback"] = {"blockReason": reply.block_reason}
                    return out
                if reply.text is not None:
                    answer = reply.text
                else:
                    payload = reply.payload if reply.payload is not None else fake.responder(record.body, prompt)
                    if isinstance(payload, Reply):  # a scripted Reply() left the answer to the responder
                        return self._answer(record, payload)
                    answer = json.dumps(payload, ensure_ascii=False)
                out_tokens = max(1, len(answer) // 4)
                candidate = {"content": {"parts": [{"text": answer}] if answer else [], "role": "model"}, "index": 0}
                if reply.finish_reason:
                    candidate["finishReason"] = reply.finish_reason
                return {
                    "candidates": [candidate],
                    "usageMetadata": {
                        **usage,
                        "candidatesTokenCount": out_tokens,
                        "totalTokenCount": usage["promptTokenCount"] + out_tokens,
                    },
                    "modelVersion": reply.model_version,
                }

        return Handler


def forget_queue(broker_url: str, queue: str) -> None:
    """Remove a private test queue from a Redis broker: its messages and kombu's binding keys."""
    import redis

    redis.Redis.from_url(broker_url).delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
