"""Rendering the dataset card: Django templates under ``templates/releases/card/`` over one dictionary of facts.

The card is Markdown, so the engine is a separate instance with autoescaping
off (nothing here is HTML; the release page escapes the Markdown it renders).
Its loader trims block tags the way Jinja's ``trim_blocks``/``lstrip_blocks``
do: a line holding only ``{% ... %}`` tags leaves no line behind, so the
templates can be laid out for reading without changing the Markdown.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from django.template import Context, Engine
from django.template.loaders.filesystem import Loader as FilesystemLoader

TEMPLATE_DIR = Path(__file__).resolve().parents[3] / "templates" / "releases" / "card"
BLANK_RUNS = re.compile(r"\n{3,}")  # sections left out leave blank lines behind; Markdown needs one at most
TAG = r"\{%(?:(?!%\}).)*%\}|\{#(?:(?!#\}).)*#\}"  # one block tag or comment, never running past its own end
ONLY_TAGS = re.compile(rf"^[ \t]*(?:(?:{TAG})[ \t]*)+\n", re.MULTILINE)


class TrimmedLoader(FilesystemLoader):
    """Files under the card's folder, with lines of block tags only reduced to the tags."""

    def get_contents(self, origin) -> str:
        source = super().get_contents(origin)
        return ONLY_TAGS.sub(lambda m: "".join(re.findall(TAG, m.group(0))), source)


@lru_cache(maxsize=1)
def engine() -> Engine:
    return Engine(
        dirs=[str(TEMPLATE_DIR)],
        loaders=[("annotation.releases.card.render.TrimmedLoader", [str(TEMPLATE_DIR)])],
        autoescape=False,
        libraries={"card": "annotation.releases.card.markdown"},
        builtins=["annotation.releases.card.markdown"],
        string_if_invalid="",
    )


def render_card(facts: dict) -> str:
    """README.md from ``facts`` (``facts.card_facts``)."""
    text = engine().get_template("README.md").render(Context(facts, autoescape=False))
    return BLANK_RUNS.sub("\n\n", text).rstrip("\n") + "\n"
