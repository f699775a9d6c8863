"""Simulated annotators for bench/bench_load.py (run by locust, headless, loopback only).

Each simulated annotator takes one identity from the file named by LOAD_IDENTITIES
(token, clip, revisions), opens the clip, saves rows (a share of them deliberately
with a stale version, which must be answered 409) and comments. Every save the
server acknowledged, and every deliberate conflict, is logged to LOAD_LOG so that
bench_load.py can check the database afterwards.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import time

from locust import HttpUser, between, events, task

IDENTITIES = json.loads(open(os.environ["LOAD_IDENTITIES"], encoding="utf-8").read())
LOG = open(os.environ["LOAD_LOG"], "a", encoding="utf-8", buffering=1)
CONFLICT_RATE = float(os.environ.get("LOAD_CONFLICT_RATE", "0.1"))
_next_identity = itertools.count()
# Every request's type, start (seconds since the epoch) and response time, for
# latencies per phase of the run (bench_load.py: the start-up burst apart).
TIMINGS = (
    open(os.environ["LOAD_TIMINGS"], "a", encoding="utf-8", buffering=1 << 16)
    if os.environ.get("LOAD_TIMINGS")
    else None
)


@events.request.add_listener
def _record_timing(request_type, name, response_time, response_length, exception, start_time=None, **kwargs):
    if TIMINGS is not None:
        TIMINGS.write(f"{name}\t{start_time or time.time() - response_time / 1000:.3f}\t{response_time:.1f}\n")


@events.quitting.add_listener
def _close_timings(environment, **kwargs):
    if TIMINGS is not None:
        TIMINGS.close()


class Annotator(HttpUser):
    wait_time = between(0.2, 1.0)

    def on_start(self):
        me = IDENTITIES[next(_next_identity) % len(IDENTITIES)]
        self.headers = {"Authorization": f"Token {me['token']}", "Content-Type": "application/json"}
        self.clip = me["clip"]
        self.rng = random.Random(me["token"])
        self.revisions = {}
        self.open_clip()

    @task(2)
    def open_clip(self):
        with self.client.get(
            f"/api/v1/clips/{self.clip}/workspace/", headers=self.headers, name="open clip", catch_response=True
        ) as r:
            if r.status_code != 200:
                r.failure(f"open clip answered {r.status_code}")
                return
            for row in r.json()["rows"]:
                rev = row["revision"]
                self.revisions[rev["id"]] = {"version": rev["version"], "content": rev["content"]}

    @task(6)
    def save_row(self):
        if not self.revisions:
            return
        rev_id = self.rng.choice(sorted(self.revisions))
        state = self.revisions[rev_id]
        stale = state["version"] > 1 and self.rng.random() < CONFLICT_RATE
        marker = f"load {self.rng.getrandbits(48):x}"
        content = {**state["content"], "tone_of_voice": marker}
        version = state["version"] - 1 if stale else state["version"]
        name = "save row (stale on purpose)" if stale else "save row"
        with self.client.put(
            f"/api/v1/revisions/{rev_id}/",
            json={"content": content, "version": version},
            headers=self.headers,
            name=name,
            catch_response=True,
        ) as r:
            if stale:
                LOG.write(json.dumps({"kind": "conflict", "revision": rev_id, "status": r.status_code}) + "\n")
                if r.status_code == 409:
                    r.success()
                    current = r.json()["current"]
                    self.revisions[rev_id] = {"version": current["version"], "content": current["content"]}
                else:
                    r.failure(f"a stale save answered {r.status_code}, not 409")
                return
            if r.status_code == 200:
                body = r.json()
                LOG.write(
                    json.dumps({"kind": "save", "revision": rev_id, "version": body["version"], "tone": marker}) + "\n"
                )
                self.revisions[rev_id] = {"version": body["version"], "content": body["content"]}
            else:
                r.failure(f"save answered {r.status_code}: {r.text[:200]}")

    @task(1)
    def comment(self):
        with self.client.post(
            f"/api/v1/clips/{self.clip}/comments/",
            json={"body": "load test note", "kind": "comment"},
            headers=self.headers,
            name="comment",
            catch_response=True,
        ) as r:
            if r.status_code != 201:
                r.failure(f"comment answered {r.status_code}")
