"""``README.md``: the dataset card, for a researcher who has never seen this platform.

One dictionary of facts (``facts.card_facts``) computed from the release's own
files — ``manifest.json``'s head, ``stats.json`` (with the provenance recorded
at freeze time), ``agreement.json`` and the file list — and Django templates
under ``templates/releases/card/`` that word them (``render.render_card``).
Hugging Face YAML front matter declares one config per task plus the
benchmark rows, each with the split files it has, so that
``datasets.load_dataset(<folder>, <config>)`` works on the folder as is.
"""

from .facts import card_facts, facts_of_folder
from .render import render_card
from .texts import CARD_TEMPLATE, LICENCE_TEXT

__all__ = ["CARD_TEMPLATE", "LICENCE_TEXT", "card_facts", "facts_of_folder", "render_card"]
