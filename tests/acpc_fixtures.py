"""The reference dealer's transcripts and log lines, read from
``tests/fixtures/acpc/spec_section5.md``.

That file is the compatibility fixture: exchanges captured from the reference
dealer (section 5 of the protocol notes the project was built from, kept verbatim
in the repo so that a plain clone runs the tests). These helpers pull its code
blocks apart so tests replay exactly what the reference dealer printed;
``tests/test_fixtures.py`` checks the copy against its original when a checkout
of that material sits beside the clone, so the copy cannot drift.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "acpc"
SECTION_5 = FIXTURES / "spec_section5.md"
SECTION_5_START, SECTION_5_END = "## 5. Example exchanges", "## 6. Conformance"

# §5 subsection -> (game file stem, seed) of its main transcript.
SECTIONS = {
    "5.1": ("holdem.limit.2p.reverse_blinds", 11),
    "5.2": ("holdem.nolimit.2p.reverse_blinds", 11),
    "5.3": ("holdem.limit.3p", 11),
    "5.4": ("holdem.nolimit.3p", 11),
    "5.5": ("kuhn.limit.3p", 7),
    "5.6": ("holdem.nolimit.2p.reverse_blinds", 5),
    "5.7": ("holdem.limit.2p.reverse_blinds", 0),
}

_LINE = re.compile(r"^(TO|FROM) (\d+) (.*?)(?:\s{3,}.*)?$")


@dataclass(frozen=True)
class Message:
    direction: str  # "TO" (dealer -> seat) or "FROM" (seat -> dealer)
    seat: int  # 0-based
    text: str  # without CRLF and without the spec's right-hand annotation


def _section_texts() -> dict[str, str]:
    body = SECTION_5.read_text()
    parts = re.split(r"^### ", body, flags=re.M)[1:]
    return {part.split(" ", 1)[0]: part for part in parts}


def code_blocks(section: str) -> list[list[str]]:
    """The lines of each fenced code block of a §5 subsection."""
    return [block.splitlines() for block in re.findall(r"```\n(.*?)```", _section_texts()[section], flags=re.S)]


def messages(lines: list[str]) -> list[Message]:
    """TO/FROM lines of a block, annotations stripped."""
    result = []
    for line in lines:
        match = _LINE.match(line)
        if match:
            result.append(Message(match.group(1), int(match.group(2)) - 1, match.group(3).rstrip()))
    return result


def inline_lines(section: str, prefix: str) -> list[str]:
    """Backquoted protocol lines in a subsection's prose (e.g. ``STATE:…``)."""
    return re.findall(rf"`({prefix}:[^`]*)`", _section_texts()[section])


def state_lines(section: str) -> list[str]:
    """Every STATE line of a subsection, from code blocks and prose."""
    found = [line for block in code_blocks(section) for line in block if line.startswith("STATE:")]
    return found + inline_lines(section, "STATE")
