"""The dataset card's free-text agreement: a section written from ``agreement.json``'s ``semantic`` entry.

The release card (``releases.card``) places it right after its label
agreement, and only where that section shows figures (two or more coders'
finished work): the same coders, clips and work scope.
"""

from __future__ import annotations

from collections.abc import Callable


def _fmt(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def texts_section(agreement: dict, table: Callable[[list[str], list[list]], str]) -> str:
    """Markdown for the free-text figures ("" when the release's agreement.json has no semantic entry).

    ``table(header, rows)`` draws a Markdown table the way the rest of the card does.
    """
    semantic = agreement.get("semantic")
    if not isinstance(semantic, dict):
        return ""
    text = "### Free text: agreement on meaning\n\n"
    if not semantic.get("available"):
        return text + f"Not stated for this release: {semantic.get('reason') or 'no report'}.\n\n"
    report = semantic["report"]
    if not report.get("coded_work"):
        return text + f"No figures: {report.get('empty_reason')}.\n\n"
    model = report["model"]
    text += (
        "Most of what coders write is free text. For each free-text field, Krippendorff's alpha uses a semantic "
        "distance, 1 − cosine between sentence embeddings of two coders' texts about the same row (and the same "
        "person or pair inside list fields): 0 for the same text, about 1 for unrelated texts, and 1 for a text "
        "against none. *Similarity* is the mean of 1 − distance over paired coders; *shuffled* is the same with the "
        "texts shuffled across the moments of their scenario (what coders writing about different moments reach). "
        f"Embeddings: {model['model']} ({model['version']}; {model['runtime']}). The 95% interval is Krippendorff's "
        "bootstrap; the full figures (per scenario, every pair of coders, the LLM draft as a coder, the method) are in "
        "`agreement.json` under `semantic`. Embeddings judge wording and topic, not clinical correctness.\n\n"
    )
    rows = []
    for entry in report["summary"]:
        ci = entry.get("ci95") or [None, None]
        rows.append(
            [
                entry["label"],
                _fmt(entry["alpha"]) if entry["defined"] else "undefined",
                f"{_fmt(ci[0])} – {_fmt(ci[1])}" if entry["defined"] else "–",
                entry["units"],
                _fmt(entry["mean_similarity"], 2),
                _fmt(entry["baseline_similarity"], 2),
                _fmt(entry["with_llm_alpha"]),
                entry.get("undefined_reason") or "",
            ]
        )
    header = ["text field", "alpha", "95% interval", "units", "similarity", "shuffled", "with LLM", "note"]
    return text + table(header, rows) + "\n"
