"""The versioned pre-annotation prompts.

One Markdown file per scenario and version in ``prompts/`` (``couple-v1.md``).
A file is a ``string.Template``: the label lists and the disambiguation rules
are filled in from the taxonomy data, so no label set is written twice. The
file name (``couple-v1``) is the prompt version recorded on every draft; a
changed prompt is a new file, so old drafts stay explainable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

from ..taxonomy import Label, Taxonomy, load_taxonomy

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
_NAME = re.compile(r"^(?P<scenario>[a-z]+)-v(?P<number>\d+)\.md$")


class UnknownPrompt(LookupError):
    """No prompt file for this scenario (or version)."""


@dataclass(frozen=True)
class Prompt:
    version: str  # e.g. "couple-v1"
    text: str


def available_versions(scenario: str) -> list[str]:
    """Prompt versions of ``scenario``, oldest first."""
    found = []
    for path in PROMPTS_DIR.glob(f"{scenario}-v*.md"):
        m = _NAME.match(path.name)
        if m and m["scenario"] == scenario:
            found.append((int(m["number"]), path.stem))
    return [stem for _, stem in sorted(found)]


def current_version(scenario: str) -> str:
    versions = available_versions(scenario)
    if not versions:
        raise UnknownPrompt(f"no pre-annotation prompt for scenario {scenario!r} in {PROMPTS_DIR}")
    return versions[-1]


def _bullets(labels: tuple[Label, ...]) -> str:
    return "\n".join(f"- `{x.label}`: {x.definition}" for x in labels)


def _rules(taxonomy: Taxonomy, field: str) -> str:
    return "\n".join(f"- {r.title}: {r.text}" for r in taxonomy.rules if r.field == field)


@cache
def system_prompt(scenario: str, taxonomy_version: str = "1", version: str | None = None) -> Prompt:
    """The rendered instructions for ``scenario`` (latest prompt version unless ``version``)."""
    version = version or current_version(scenario)
    path = PROMPTS_DIR / f"{version}.md"
    if not path.is_file() or not version.startswith(f"{scenario}-"):
        raise UnknownPrompt(f"no prompt {version!r} for scenario {scenario!r}")
    taxonomy = load_taxonomy(scenario, taxonomy_version)
    text = Template(path.read_text(encoding="utf-8")).substitute(
        taxonomy_version=taxonomy.version,
        group_label=taxonomy.group_label,
        relation_patterns=_bullets(taxonomy.relation_patterns),
        support_strategies=_bullets(taxonomy.support_strategies),
        utterance_types=_bullets(taxonomy.utterance_types),
        strategy_rules=_rules(taxonomy, "support_strategy"),
        relation_rules=_rules(taxonomy, "relation_pattern"),
    )
    return Prompt(version=version, text=text)
