"""Damaged inputs of the readers (``.log`` files, msgpack hand records, game
files): one line naming the file and the line or record, quotes cut at a bounded
length, and nothing a damaged header declares is believed."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.cli import main as analyze
from analysis.hands import HandsError, read_log
from poker.excerpt import QUOTE_CHARS
from poker.gamedef import GameDefError, load_game

KUHN = load_game("kuhn")
BIG = 5_000_000
#: The longest error line a damaged input may give: a few quotes and the words around them.
LONGEST_ERROR = 4 * QUOTE_CHARS + 400
HEADER = "# name/game/hands/seed m kuhn 2 3"
HANDS = ["STATE:0:crc:Ks|Qs:2|-2:a|b", "STATE:1:rc:Ks|As:-2|2:b|a"]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


LONG_LINES = {
    "names": [HEADER, "STATE:0:crc:Ks|Qs:2|-2:" + "x" * BIG, HANDS[1]],
    "values": [HEADER, "STATE:0:crc:Ks|Qs:2|" + "1" * BIG + ":a|b", HANDS[1]],
    "cards": [HEADER, "STATE:0:crc:" + "K" * BIG + ":2|-2:a|b", HANDS[1]],
    "betting": [HEADER, "STATE:0:" + "c" * BIG + ":Ks|Qs:2|-2:a|b", HANDS[1]],
    "score": [HEADER, *HANDS, "SCORE:" + "x" * BIG],
    "header game": ["# name/game/hands/seed m " + "x" * BIG + " 2 3", *HANDS],
    "another line": [HEADER, "x" * BIG, *HANDS],
}


@pytest.mark.parametrize("damage", sorted(LONG_LINES))
def test_a_long_damaged_line_is_quoted_in_part_saying_how_much_was_cut(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "long.log", LONG_LINES[damage])
    argv = [str(path), "--validate"] if damage == "betting" else [str(path)]  # the fast read takes any calls
    assert analyze(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"arena analyze: error: {path}:") and err.count("\n") == 1
    assert len(err) < LONGEST_ERROR and "more characters)" in err


def test_infinite_values_are_refused_without_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "inf.log", [HEADER, "STATE:0:crc:Ks|Qs:inf|-inf:a|b", HANDS[1]])
    with pytest.raises(HandsError, match=r"inf.log:2: a value is not a finite number"):
        read_log(path)  # filterwarnings = error: numpy's "invalid value in reduce" would fail it
    assert read_log(path, skip_damaged=True).hand_id.tolist() == [1]


def test_a_game_name_longer_than_a_file_name_may_be_is_a_game_error() -> None:
    with pytest.raises(GameDefError, match="File name too long") as raised:
        load_game("x" * 5000)
    assert len(str(raised.value)) < LONGEST_ERROR
