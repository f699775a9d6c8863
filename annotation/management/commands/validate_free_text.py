"""Validate the free-text measure against judgements already made: a file of judged pairs.

    manage.py validate_free_text judged.csv            # per field: pairs, AUROC [95% interval], verdict
    manage.py validate_free_text judged.jsonl --json   # the same as JSON
    manage.py validate_free_text judged.csv --project rescue2   # and keep the judgements in the project

The file has ``field, text_a, text_b, judgement`` (CSV with a header, or JSON lines); ``judgement`` is
``same``, ``different`` or ``cant_tell``. The distances are the embedding measure's (the configured model,
``SEMANTIC_EMBEDDINGS``; texts embedded once and cached). Exit status 1 when the file cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from annotation.agreement.textfields import TEXT_FIELDS
from annotation.meaning import services
from annotation.meaning.validation import Judged, validity


def file_validity(rows: list[services.FileRow], provider=None, *, seed: int = 0) -> dict:
    """Per field (in the platform's field order), the embedding measure's validity on the file's pairs."""
    from annotation.agreement.embeddings import current_provider, embed_texts

    provider = provider or current_provider()
    vectors = embed_texts([t for r in rows for t in (r.text_a, r.text_b)], provider).vectors
    out = {}
    for field in [f.key for f in TEXT_FIELDS]:
        mine = [r for r in rows if r.field == field]
        if not mine:
            continue
        items = []
        for r in mine:
            if r.text_a == r.text_b:
                distance = 0.0
            elif not r.text_a or not r.text_b:
                distance = 1.0
            else:
                distance = float(
                    1.0 - np.dot(vectors[r.text_a].astype(np.float64), vectors[r.text_b].astype(np.float64))
                )
            items.append(Judged(distance, r.judgement))
        out[field] = validity(items, seed=seed, name=f"{field}|embedding")
    return {"measure": "embedding", "model": provider.describe(), "fields": out}


class Command(BaseCommand):
    help = (
        "Per free-text field, how well the embedding measure separates judged same-meaning from different-meaning "
        "pairs."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV (with header) or JSONL of field, text_a, text_b, judgement")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
        parser.add_argument("--project", help="also store the judgements in this project (slug)")

    def handle(self, *args, **options):
        path = Path(options["file"])
        try:
            rows = services.read_judgements(path.read_text(encoding="utf-8"), path.name)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise CommandError(f"{path}: {exc}") from None
        if not rows:
            raise CommandError(f"{path}: no judged pair in the file")
        result = file_validity(rows, seed=options["seed"])
        result["file"] = path.name
        if options["project"]:
            from annotation.models import Project

            project = Project.objects.filter(slug=options["project"]).first()
            if project is None:
                raise CommandError(f"no project {options['project']!r}")
            result["stored"] = services.import_judgements(project, rows, source=f"file:{path.name}")
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, sort_keys=True))
            return
        self.stdout.write(f"{path.name}: {len(rows)} judged pairs; measure: embeddings ({result['model']['model']})")
        width = max(len(k) for k in result["fields"])
        for field, v in result["fields"].items():
            auroc = f"{v['auroc']:.3f}" if v["auroc"] is not None else "–"
            interval = f"[{v['interval'][0]:.3f}, {v['interval'][1]:.3f}]" if v["interval"] else ""
            self.stdout.write(
                f"{field:<{width}}  pairs {v['pairs']:>4} ({v['same']} same, {v['different']} different, "
                f"{v['cant_tell']} can't tell)  AUROC {auroc} {interval}  {v['verdict']}: {v['sentence']}"
            )
        if "stored" in result:
            self.stdout.write(f"stored {result['stored']} judgements in project {options['project']}")
