"""Make the demo clip's media file: a test-pattern video with a spoken track synthesised from the clip's lines.

    python scripts/make_demo_media.py            # writes annotation/demo/media/<clip>.webm

The demo clips are fictional (annotation/demo/README.md); this gives one of them something to play, so that
the player, the replay keys, the speed and the pre-roll can be tried from ``make demo``. Each row's words are
spoken by espeak-ng (one voice per speaker), placed at the row's start time, over ffmpeg's ``testsrc2`` test
pattern; VP9 video and Opus audio in WebM (what every Chromium plays), small enough to commit.

Needs espeak-ng and ffmpeg (``apt-get install espeak-ng ffmpeg``) only to regenerate the file: the file itself
is committed, and nothing else (tests, the demo) runs this script. The output is the project's own work,
under the same terms as the demo clips (see annotation/demo/README.md).
"""

from __future__ import annotations

import argparse
import array
import json
import shutil
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "annotation" / "demo"
CLIP = "demo_maya_and_tobias/001_session_opening"
VOICES = {"Therapist": "en+m3", "Maya": "en-us+f2", "Tobias": "en+m7"}  # espeak-ng voice+variant per speaker
WORDS_PER_MINUTE = 165
RATE = 22050  # espeak-ng's sample rate (mono, 16 bit)


def media_name(sample_id: str) -> str:
    return sample_id.replace("/", "__") + ".webm"


def speak(text: str, voice: str, wpm: int, out: Path) -> array.array:
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(wpm), "-w", str(out), text], check=True, capture_output=True)
    with wave.open(str(out)) as w:
        assert w.getframerate() == RATE and w.getnchannels() == 1 and w.getsampwidth() == 2, (
            "unexpected espeak-ng output"
        )
        samples = array.array("h")
        samples.frombytes(w.readframes(w.getnframes()))
    return samples


def track(rows: list[dict], work: Path) -> tuple[Path, float]:
    """One mono track as long as the clip: each row's words spoken from its start time, faster when they would
    overrun the row."""
    end = max(r["end_time"] for r in rows) + 0.5
    mix = array.array("h", bytes(2 * int(end * RATE)))
    for r in rows:
        text = r["dialogue_cleaned"].strip()
        if not text:
            continue
        voice = VOICES.get(r["primary_speaker"], "en+m1")
        span = r["end_time"] - r["start_time"]
        wpm = WORDS_PER_MINUTE
        samples = speak(text, voice, wpm, work / "row.wav")
        if len(samples) / RATE > span:  # too long for its row: speak faster (espeak-ng's range ends at 450)
            wpm = min(450, int(wpm * len(samples) / RATE / span) + 10)
            samples = speak(text, voice, wpm, work / "row.wav")
        start = int(r["start_time"] * RATE)
        room = min(len(samples), int(span * RATE), len(mix) - start)
        mix[start : start + room] = samples[:room]
    path = work / "track.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(mix.tobytes())
    return path, end


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clip", default=CLIP)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    for tool in ("espeak-ng", "ffmpeg"):
        if shutil.which(tool) is None:
            print(f"{tool} is needed to regenerate the demo media (apt-get install espeak-ng ffmpeg)", file=sys.stderr)
            return 2
    doc = next(
        (
            json.loads(line)
            for line in (DEMO / "clips.jsonl").open(encoding="utf-8")
            if json.loads(line)["sample_id"] == args.clip
        ),
        None,
    )
    if doc is None:
        print(f"no demo clip {args.clip}", file=sys.stderr)
        return 2
    out = args.out or DEMO / "media" / media_name(args.clip)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        audio, seconds = track(doc["rows"], Path(tmp))
        subprocess.run(
            [
                "ffmpeg",
                "-y",
                "-loglevel",
                "error",
                "-f",
                "lavfi",
                "-i",
                f"testsrc2=size=320x180:rate=8:duration={seconds:.2f}",
                "-i",
                str(audio),
                "-c:v",
                "libvpx-vp9",
                "-b:v",
                "24k",
                "-deadline",
                "good",
                "-row-mt",
                "1",
                "-c:a",
                "libopus",
                "-b:a",
                "20k",
                "-ac",
                "1",
                "-shortest",
                "-map_metadata",
                "-1",
                "-fflags",
                "+bitexact",
                str(out),
            ],
            check=True,
        )
    print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size / 1024:.0f} KiB, {seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
