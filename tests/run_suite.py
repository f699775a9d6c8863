"""Run the whole suite as two pytest processes side by side (what `make test` runs).

The tests that wait on real things (a Celery worker, a live server, Chromium: the `services` and `browser` marks)
run in one process, everything else in the other, so the waiting of the first overlaps the computing of the second
on a 2-core machine. Each process has its own test database and its own Redis database, so neither sees the other's
jobs or rows: with DATABASE_URL `.../rescue` the second process's test database is `test_rescue_unit`, and with
CELERY_BROKER_URL `redis://host/15` its broker is database 14, emptied before it starts (as `.ci/run` empties 15).
Without those variables (SQLite, in-process tasks) the split needs nothing.

Arguments are passed to both processes; a test path or `-k`/`-m` given on the command line runs one plain pytest
instead. Exits non-zero when either process fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAITING = "services or browser"


def unit_environment(env: dict) -> dict:
    env = dict(env)
    database = env.get("DATABASE_URL", "")
    if database.startswith("postgres"):
        base, name = database.rsplit("/", 1)
        env["DATABASE_URL"] = f"{base}/{name}_unit"
    broker = env.get("CELERY_BROKER_URL", "")
    match = re.match(r"^(redis://.*/)(\d+)$", broker)
    if match:
        env["CELERY_BROKER_URL"] = f"{match[1]}{(int(match[2]) - 1) % 16}"
        import redis

        redis.Redis.from_url(env["CELERY_BROKER_URL"]).flushdb()  # stale messages must not reach this run's worker
    return env


def main(args: list[str]) -> int:
    pytest = [sys.executable, "-m", "pytest", *args]
    if any(a in ("-k", "-m") or a.startswith("tests") for a in args):
        return subprocess.call(pytest, cwd=ROOT)
    started = time.monotonic()
    logs = {name: open(ROOT / "var" / f"test-{name}.log", "w") for name in ("waiting", "unit")}
    runs = {
        "waiting": subprocess.Popen(
            [*pytest, "-m", WAITING], cwd=ROOT, stdout=logs["waiting"], stderr=subprocess.STDOUT
        ),
        "unit": subprocess.Popen(
            [*pytest, "-m", f"not ({WAITING})"],
            cwd=ROOT,
            env=unit_environment(os.environ),
            stdout=logs["unit"],
            stderr=subprocess.STDOUT,
        ),
    }
    codes = {name: run.wait() for name, run in runs.items()}
    for name, log in logs.items():
        log.close()
        print(f"===== {name} tests ({'-m ' + repr(WAITING) if name == 'waiting' else 'the rest'}) =====")
        print((ROOT / "var" / f"test-{name}.log").read_text(encoding="utf-8", errors="replace"))
    print(f"whole suite: {time.monotonic() - started:.0f} s; exit codes {codes}")
    # pytest exits 5 when a selection holds no test (e.g. a run where every test is of one kind): not a failure.
    return max((0 if code == 5 else code) for code in codes.values())


if __name__ == "__main__":
    (ROOT / "var").mkdir(exist_ok=True)
    sys.exit(main(sys.argv[1:]))
