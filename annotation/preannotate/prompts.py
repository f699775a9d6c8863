"""The versioned pre-annotation prompts.

One Markdown file per scenario and version in ``prompts/`` (``couple-v2.md``).
A file is a ``string.Template``: the label lists and the disambiguation rules
are filled in from the taxonomy data, so no label set is written twice. The
file name (``couple-v2``) is the prompt version recorded on every draft; a
changed prompt is a new file, so old drafts stay explainable (``couple-v1``
drafts keep saying so).

From v2 on, what the model is told about the nonverbal fields and the tone
depends on what it can perceive: ``modalities-v2.md`` holds one section per
modality (``## video``, ``## audio``, ``## transcript``), and the one that
applies fills ``${modality_instructions}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

from ..models import Modality
from ..taxonomy import DEFAULT_VERSION, Label, Taxonomy, load_taxonomy

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
_NAME = re.compile(r"^(?P<scenario>[a-z]+)-v(?P<number>\d+)\.md$")
_SECTION = re.compile(r"^## (?P<name>[a-z]+)\s*$", re.MULTILINE)


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


def modality_instructions(version: str, modality: str) -> str:
    """The section of ``modalities-v<N>.md`` for ``modality`` ("" for prompt versions without one)."""
    path = PROMPTS_DIR / f"modalities-v{version.rsplit('-v', 1)[1]}.md"
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    marks = list(_SECTION.finditer(text))
    sections = {
        m["name"]: text[m.end() : nxt.start() if nxt else len(text)].strip()
        for m, nxt in zip(marks, [*marks[1:], None])
    }
    if modality not in sections:
        raise UnknownPrompt(f"{path.name} has no section for modality {modality!r}")
    return sections[modality]


@cache
def system_prompt(
    scenario: str,
    taxonomy_version: str = DEFAULT_VERSION,
    version: str | None = None,
    modality: str = Modality.TRANSCRIPT,
) -> Prompt:
    """The rendered instructions for ``scenario`` and ``modality`` (latest prompt version unless ``version``)."""
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
        modality_instructions=modality_instructions(version, str(modality)),
    )
    return Prompt(version=version, text=text)
