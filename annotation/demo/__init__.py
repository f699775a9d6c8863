"""Demo data: fictional clips written for the demo (see README.md here)."""
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
DEMO_CLIPS = DEMO_DIR / "clips.jsonl"
DEMO_TRANSCRIPTS = DEMO_DIR / "transcripts"
