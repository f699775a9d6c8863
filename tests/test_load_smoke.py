"""A 10-second version of the load test (bench/bench_load.py): simulated annotators on
gunicorn + PostgreSQL; no unexpected failures, no lost saves, every deliberate conflict a 409."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import require

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.services
def test_ten_second_load_loses_no_save():
    require(
        os.environ.get("DATABASE_URL", "").startswith("postgres"), "the load test runs on PostgreSQL (DATABASE_URL)"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    result = subprocess.run(
        [
            sys.executable,
            "bench/bench_load.py",
            "--users",
            "10",
            "--seconds",
            "10",
            "--conflict-rate",
            "0.3",
            "--no-latency-target",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "lost saves               0" in result.stdout
