"""What duplicate pairing refuses besides changed hole cards (test_duplicate.py):
logs whose boards differ, logs of another game, logs of other players. Each
is a valid log on its own; only together are they not one duplicate match,
and scoring them as one would average hands that were never the same deal.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from analysis.duplicate import DuplicateError, pair
from analysis.hand_files import read_hands
from analysis.hands import Hands
from arena.commands.match import main as arena_match
from poker.gamedef import load_game

_STATE = re.compile(r"^STATE:(\d+):([^:]*):([^:/]*)/([^:]+):(.*)$")


@pytest.fixture(scope="module")
def seatings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The two logs of a 12-hand duplicate Leduc match."""
    folder = tmp_path_factory.mktemp("leduc")
    argv = ["leduc", "--hands", "12", "--seed", "4", "random", "always-raise", "--in-process", "--duplicate", "--run-dir", str(folder)]
    assert arena_match(argv) == 0
    return folder / "match.1.log", folder / "match.2.log"


def _edited_copy(log: Path, tmp_path: Path, edit: str, boards: frozenset[int] = frozenset()) -> tuple[Path, int]:
    """A copy of ``log`` with ``edit`` applied: ``board`` changes the board card of
    the first hand among ``boards`` that reached one here too (to a card nobody
    holds), ``players`` renames always-raise; the id of the hand changed (-1 for every hand)."""
    text = log.read_text()
    hand = -1
    if edit == "players":
        text = text.replace("always-raise", "always-fold")
    else:
        lines = text.splitlines(keepends=True)
        row, found = next(
            (i, m) for i, line in enumerate(lines) if (m := _STATE.match(line)) and int(m[1]) in boards
        )
        held = {*found[3].split("|"), found[4]}
        other = next(card for card in ("Qh", "Qs", "Kh", "Ks", "Ah", "As") if card not in held)
        lines[row] = f"STATE:{found[1]}:{found[2]}:{found[3]}/{other}:{found[5]}\n"
        text, hand = "".join(lines), int(found[1])
    copy = tmp_path / log.name
    copy.write_text(text)
    return copy, hand


def test_a_changed_board_is_refused_naming_the_hand(seatings: tuple[Path, Path], tmp_path: Path) -> None:
    first = read_hands(seatings[0])
    boards = frozenset(int(h) for h, board in zip(first.hand_id, first.board) if board[0] >= 0)  # reached in both
    changed, hand = _edited_copy(seatings[1], tmp_path, "board", boards)
    with pytest.raises(DuplicateError, match=rf"^hand {hand}: the board is \w+ in .*match\.1\.log:\d+ but \w+ in .*match\.2\.log:\d+"):
        pair([first, read_hands(changed)])


def test_logs_of_other_players_are_refused(seatings: tuple[Path, Path], tmp_path: Path) -> None:
    renamed, _ = _edited_copy(seatings[1], tmp_path, "players")
    with pytest.raises(DuplicateError, match=r"match\.2\.log seats always-fold\|random, not the 2 players random\|always-raise"):
        pair([read_hands(seatings[0]), read_hands(renamed)])


def test_logs_of_another_game_are_refused(seatings: tuple[Path, Path]) -> None:
    # The same cards and names read as another Leduc (no-limit): the betting means other chips.
    first, second = (read_hands(log) for log in seatings)
    other: Hands = replace(second, game=load_game("leduc.nolimit"))
    with pytest.raises(DuplicateError, match=r"match\.2\.log is not a log of the same game as .*match\.1\.log$"):
        pair([first, other])
    assert pair([first, second]).names == ("random", "always-raise")  # unchanged, they pair
