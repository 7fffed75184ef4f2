"""What agents' bytes can do to the dealer's stderr: terminal escapes are
escaped, quotes are cut, a flood is written as it comes (issue 24 items 13,
14 and the bounded-buffers review); and a damaged log is named in one short
line."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from dealer._escape import escape_line
from poker.excerpt import QUOTED_LENGTH, quote
from dealer.log import LogError, read_log
from dealer.server import MatchConfig
from poker.gamedef import load_game
from tests.dealer.dealer_clients import Script, actions_of, run_match

HULHE = load_game("hulhe")
CALLS = actions_of("cc/cc/cc/cc")


def _config(tmp_path: Path, **options: object) -> MatchConfig:
    return MatchConfig("m", HULHE, "hulhe", 1, 11, ("P1", "P2"), log_dir=tmp_path, **options)  # type: ignore[arg-type]


class _Writes(io.StringIO):
    """A stderr that remembers its longest single write."""

    longest = 0

    def write(self, text: str) -> int:
        self.longest = max(self.longest, len(text))
        return super().write(text)


def test_escape_line_keeps_printable_ascii_and_the_line_ending() -> None:
    assert escape_line(b"MATCHSTATE:0:0::3c4d|:c\r\n") == "MATCHSTATE:0:0::3c4d|:c\r\n"
    assert escape_line(b"# bare\n") == "# bare\n"
    assert escape_line(b"no ending") == "no ending"
    assert escape_line(b"#\x1b[2J\x07\tC:\\x\rz\xff\r\n") == "#\\x1b[2J\\x07\\x09C:\\\\x\\x0dz\\xff\r\n"


@pytest.mark.parametrize(
    ("line", "what"), [("x" * 5_000_000, "not a header, STATE or SCORE line: "), ("SCORE:" + "1" * 5_000_000, "unreadable SCORE line ")]
)
def test_a_huge_damaged_log_line_is_quoted_cut(tmp_path: Path, line: str, what: str) -> None:
    log = tmp_path / "m.log"
    log.write_text(f"# name/game/hands/seed m hulhe 1 11\n{line}\n")
    with pytest.raises(LogError) as caught:
        read_log(log, HULHE)
    assert str(caught.value) == f"{log}:2: {what}{quote(line)}"
    assert str(caught.value).endswith(f"... ({len(line) - QUOTED_LENGTH} more characters)") and len(str(caught.value)) < 500


async def test_terminal_escapes_from_an_agent_are_echoed_escaped(tmp_path: Path) -> None:
    # Seat 2 acts first; its comment would clear the screen and retitle the window.
    upfront = b"#\x1b]0;pwned\x07\x1b[2J \\ ok\r\n"
    plan = {0: CALLS}
    capture = await run_match(_config(tmp_path), [Script(follow=plan), Script(upfront=upfront, follow=plan)])

    assert re.search(r"FROM 2 at \S+ #\\x1b\]0;pwned\\x07\\x1b\[2J \\\\ ok\r\n", capture.stderr)
    assert not re.search(r"[^\x20-\x7e\r\n]", capture.stderr)
    assert capture.result.exit_status == 0


async def test_a_long_invalid_version_line_is_quoted_cut(tmp_path: Path) -> None:
    # 1000 bytes and a newline: quoted as its first 200, then how many were left
    # (2 s of start timeout: time for the drop to be reported on a loaded machine).
    version = b"\x1b" * 1000 + b"\n"
    capture = await run_match(_config(tmp_path, start_timeout_ms=2000), [Script(version=version), Script()])

    (warning,) = [line for line in capture.stderr.splitlines() if line.startswith("WARNING: dropped")]
    assert warning.endswith(f": invalid version string {quote(version)}")
    assert warning.endswith("... (801 more bytes)") and len(warning) < 1000


async def test_a_flood_of_comments_is_written_as_it_comes(tmp_path: Path) -> None:
    # 30000 comment lines wait in seat 2's socket when it first acts: the dealer
    # reads them without waiting, so before issue 24 it held all their echoes
    # (about 1 MB) for one write at the end; a few hundred at a time now.
    stderr = _Writes()
    plan = {0: CALLS}
    flood = Script(upfront=b"#\r\n" * 30000, follow=plan)
    capture = await run_match(_config(tmp_path), [Script(follow=plan), flood], stderr=stderr)

    assert capture.stderr.count("FROM 2 at ") == 30000 + 4
    assert stderr.longest < 64 * 1024
    assert capture.result.exit_status == 0
