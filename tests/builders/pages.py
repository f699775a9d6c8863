"""What a person reads on a page."""

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

# Internal names that must never reach a page's visible text.
RAW_NAMES = re.compile(
    r"\b(?:in_review|in_progress|preannotation_failed|preannotated|preannotating|internal_emotion|"
    r"viewpoints_attitudes|relation_pattern\w*|content\.\w+)\b"
)

# Elements that never have an end tag.
VOID = frozenset(("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"))


@dataclass
class Element:
    """One element of a page: its tag, attributes and children (elements and text), to read figures by id or class
    rather than by searching the page for a number."""

    tag: str
    attrs: dict[str, str]
    children: list = field(default_factory=list)

    def text(self) -> str:
        """The element's text as a reader sees it: whitespace collapsed."""
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join("".join(parts).split())

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def matches(self, tag: str | None, attrs: dict[str, str]) -> bool:
        if tag is not None and self.tag != tag:
            return False
        for name, value in attrs.items():
            if name == "class":
                if value not in self.attrs.get("class", "").split():
                    return False
            elif self.attrs.get(name) != value:
                return False
        return True

    def find_all(self, tag: str | None = None, **attrs: str) -> list["Element"]:
        """Every element below (and including) this one with ``tag`` and ``attrs`` (``class_``: one of its classes;
        ``data_x``: the attribute ``data-x``)."""
        wanted = {("class" if k == "class_" else k.replace("_", "-")): v for k, v in attrs.items()}
        return [e for e in self.iter() if e.matches(tag, wanted)]

    def find(self, tag: str | None = None, **attrs: str) -> "Element | None":
        found = self.find_all(tag, **attrs)
        return found[0] if found else None

    def by_id(self, element_id: str) -> "Element":
        found = self.find(id=element_id)
        assert found is not None, f"no element with id {element_id!r}"
        return found

    def cell(self, class_name: str) -> str:
        """The text of the one element below with the class ``class_name``."""
        found = self.find_all(class_=class_name)
        assert len(found) == 1, f"{len(found)} elements of class {class_name!r} in <{self.tag} {self.attrs}>"
        return found[0].text()


class _Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("document", {})
        self.open = [self.root]

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.open[-1].children.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_startendtag(self, tag, attrs):
        self.open[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag):
        # An end tag closes its element and any left open inside it (as a browser does); a stray one is ignored.
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth].tag == tag:
                del self.open[depth:]
                return

    def handle_data(self, data):
        self.open[-1].children.append(data)


def parse_page(html: str) -> Element:
    """The page as a tree of elements (the standard library's parser: the tests add no HTML library)."""
    tree = _Tree()
    tree.feed(html)
    tree.close()
    return tree.root


def no_internal_names(page):
    """A Playwright page's visible main text names no internal state, mode or key (``RAW_NAMES``)."""
    text = page.inner_text("main")
    found = RAW_NAMES.search(text)
    assert found is None, f"{page.url} shows {found.group()!r}"
