"""Run every benchmark in this folder, one after another, each in its own process."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Named like a benchmark but not one: the settings bench_workspace.py's gunicorn server runs with.
NOT_BENCHMARKS = {"bench_settings.py"}

if __name__ == "__main__":
    failed = []
    for script in sorted(p for p in HERE.glob("bench_*.py") if p.name not in NOT_BENCHMARKS):
        print(f"\n=== {script.name} ===", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=HERE.parent).returncode != 0:
            failed.append(script.name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")
