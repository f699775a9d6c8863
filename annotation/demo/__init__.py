"""Demo data: fictional clips written for the demo (see README.md here)."""

from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
DEMO_CLIPS = DEMO_DIR / "clips.jsonl"
DEMO_TRANSCRIPTS = DEMO_DIR / "transcripts"
DEMO_MEDIA = DEMO_DIR / "media"  # made by scripts/make_demo_media.py (see README.md here)


def demo_media_file(sample_id: str) -> Path:
    """The committed media file of a demo clip (it exists for the clips that have one)."""
    return DEMO_MEDIA / (sample_id.replace("/", "__") + ".webm")
