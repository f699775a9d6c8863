"""The release's card (its README.md, contract C4) as HTML for the release page.

Markdown by the ``markdown`` library with raw HTML switched off (a ``<script>`` in
the card is shown as text, never run), links and images kept only when they are
relative or http(s), and the card's relative file names (``figures/x.png``)
pointed at the page's own file address. The YAML front matter the Hugging Face
hub reads is left out of the page (the card file itself keeps it).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
SAFE_URL = re.compile(r"^(https?://|#|[^:/?#][^:]*$)", re.I)  # http(s), an anchor, or a relative path (no scheme)


class _Links(Treeprocessor):
    def __init__(self, md, file_url):
        super().__init__(md)
        self.file_url = file_url

    def run(self, root: etree.Element) -> None:
        for el in root.iter():
            for attr in ("href", "src"):
                url = el.get(attr)
                if url is None:
                    continue
                if not SAFE_URL.match(url.strip()):
                    del el.attrib[attr]
                elif not re.match(r"^(https?://|#)", url, re.I):
                    el.set(attr, self.file_url(url))


class _FoldedSections(Treeprocessor):
    """Each ``##`` section (its heading and everything up to the next one) folded under its heading, so that the
    page opens on the card's title, its opening lines and the list of its sections rather than on 20,000 pixels."""

    def run(self, root: etree.Element) -> None:
        children, current = list(root), None
        for child in children:
            root.remove(child)
            if child.tag == "h2":
                current = etree.SubElement(root, "details", {"class": "card-section"})
                etree.SubElement(current, "summary").append(child)
            elif current is not None:
                current.append(child)
            else:
                root.append(child)


class _SafeCard(Extension):
    def __init__(self, file_url):
        super().__init__()
        self.file_url = file_url

    def extendMarkdown(self, md):
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.treeprocessors.register(_Links(md, self.file_url), "card_links", 0)
        md.treeprocessors.register(_FoldedSections(md), "card_sections", 1)


def readme_html(text: str, file_url) -> str:
    """``text`` (the card's Markdown) as HTML, each ``##`` section folded under its heading; ``file_url(name)``: the
    page's address of a release file."""
    body = FRONT_MATTER.sub("", text, count=1)
    return markdown.markdown(
        body, extensions=["tables", "fenced_code", "sane_lists", _SafeCard(file_url)], output_format="html"
    )
