"""Every management command and flag the documentation names exists.

The docs are the first thing a newcomer runs from; a renamed command or a dropped flag must fail the suite, not
the reader. Commands are read from code blocks and inline code: a line or span with `manage.py <command>`, or one
that starts with a command's name and passes a `--flag`."""

import re
from functools import cache
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])

FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
SPAN = re.compile(r"`([^`]+)`")  # a span may wrap onto the next line
MANAGE = re.compile(r"manage\.py\s+([a-z_]+)(.*)")
BARE = re.compile(r"^([a-z]+(?:_[a-z]+)+)\s+(.*--.*)")  # `freeze_release --reproduce`
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def snippets(text: str):
    """Each command line of a code block, then each inline code span outside the blocks."""
    for block in FENCE.findall(text):
        for line in block.splitlines():
            yield line.split(" #")[0]
    for span in SPAN.findall(FENCE.sub("", text)):
        yield " ".join(span.split())


def named_commands(path: Path) -> list[tuple[str, list[str], str]]:
    found = []
    for snippet in snippets(path.read_text(encoding="utf-8")):
        match = MANAGE.search(snippet) or BARE.match(snippet.strip())
        if match and (match.re is MANAGE or match.group(1) in get_commands()):
            found.append((match.group(1), FLAG.findall(match.group(2)), snippet.strip()))
    return found


@cache
def options_of(command: str) -> set[str]:
    parser = load_command_class(get_commands()[command], command).create_parser("manage.py", command)
    return {option for action in parser._actions for option in action.option_strings}


def test_the_docs_name_commands_at_all():
    """The reader below finds what it should (a parser that found nothing would pass the next test)."""
    names = {name for path in DOCS for name, _, _ in named_commands(path)}
    assert {"import_rescue", "freeze_release", "create_user", "api_token", "study_design"} <= names, names


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_and_flag_the_docs_name_exists(path):
    commands = get_commands()
    problems = []
    for name, flags, snippet in named_commands(path):
        if name not in commands:
            problems.append(f"no command {name!r}: {snippet}")
            continue
        problems += [f"{name} has no {flag}: {snippet}" for flag in flags if flag not in options_of(name)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_docs_point_only_inside_the_repository(path):
    """A clone has only the repository: every relative link resolves inside it, and no page sends the reader to a
    file beside the checkout."""
    text = path.read_text(encoding="utf-8")
    problems = [
        link
        for link in re.findall(r"\]\(([^)#\s]+)", text)
        if not link.startswith(("http://", "https://"))
        and not (path.parent / link).resolve().is_relative_to(ROOT)
        or not link.startswith(("http://", "https://"))
        and not (path.parent / link).exists()
    ]
    problems += re.findall(r"\.\./shared\S*", text)
    assert not problems, problems


@cache
def defined_test_names() -> set[str]:
    return {
        name
        for module in (ROOT / "tests").rglob("test_*.py")
        for name in re.findall(r"^\s*def (test_\w+)", module.read_text(encoding="utf-8"), re.M)
    }


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_test_the_docs_cite_exists(path):
    """A page that says which test checks a rule names a test that is there (a prefix ending in ``...`` counts when
    one test starts with it)."""
    cited = re.findall(r"`(test_\w+)(\.\.\.)?`", path.read_text(encoding="utf-8"))
    names = defined_test_names()
    missing = [
        name + dots
        for name, dots in cited
        if (name not in names if not dots else not any(n.startswith(name) for n in names))
    ]
    assert not missing, missing
