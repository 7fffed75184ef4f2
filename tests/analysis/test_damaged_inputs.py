"""Damaged inputs of the readers (``.log`` files, msgpack hand records, results, game
files): one line naming the file and the line or record, quotes cut at a bounded
length, and nothing a damaged header declares is believed."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from arena.commands.analyze import main as analyze
from analysis.hand_files import read_hands
from analysis.hands import NO_SEED, HandsError
from analysis.logs import read_log
from analysis.records import read_records
from analysis.scoring import ResultsError, read_csv
from dealer.log import LogError
from dealer.log import read_log as dealer_read_log
from dealer.records import MAX_RECORD_BYTES, MAX_RECORD_ENTRIES, MatchHeader
from dealer.records import load_hands as dealer_load_hands
from poker.excerpt import QUOTED_LENGTH
from poker.gamedef import GameDefError, load_game

KUHN = load_game("kuhn")
BIG = 5_000_000
#: The longest error line a damaged input may give: a few quotes and the words around them.
LONGEST_ERROR = 4 * QUOTED_LENGTH + 400
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


@pytest.mark.parametrize("totals", ["nan|nan", "inf|-inf", "1e999|0"])
def test_a_score_line_with_totals_that_are_not_finite_is_damage(tmp_path: Path, totals: str) -> None:
    path = write(tmp_path / "s.log", [HEADER, *HANDS, f"SCORE:{totals}:a|b"])
    with pytest.raises(HandsError, match=r"s.log:4: a total is not a finite number: 'SCORE:"):
        read_log(path)
    hands = read_log(path, skip_damaged=True)
    assert hands.skipped == (4,) and hands.score is None and len(hands) == 2


def test_infinite_values_are_refused_without_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "inf.log", [HEADER, "STATE:0:crc:Ks|Qs:inf|-inf:a|b", HANDS[1]])
    with pytest.raises(HandsError, match=r"inf.log:2: a value is not a finite number"):
        read_log(path)  # filterwarnings = error: numpy's "invalid value in reduce" would fail it
    assert read_log(path, skip_damaged=True).hand_id.tolist() == [1]


def test_a_game_name_longer_than_a_file_name_may_be_is_a_game_error() -> None:
    with pytest.raises(GameDefError, match="File name too long") as raised:
        load_game("x" * 5000)
    assert len(str(raised.value)) < LONGEST_ERROR


# -- msgpack hand records -----------------------------------------------------------

HEADER_RECORD = MatchHeader("m", KUHN, "kuhn", 4, 3, ("a", "b"), False).to_msgpack()
KS, QS, AS = 47, 43, 51  # card ids rank * 4 + suit: K, Q, A of spades
HAND_RECORDS = [
    [0, [0, 1], bytes([KS, QS]), b"", 0, "crc", [2.0, -2.0]],
    [1, [1, 0], bytes([KS, AS]), b"", 0, "rc", [-2.0, 2.0]],
    [2, [0, 1], bytes([KS, QS]), b"", 0, "crc", [2.0, -2.0]],
    [3, [1, 0], bytes([QS, KS]), b"", 0, "rc", [-2, 2]],
]


def records(path: Path, items: list[Any], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(msgpack.packb(item, use_bin_type=True) for item in items) + tail)
    return path


def with_hand(field: int, value: Any) -> list[Any]:
    """The header and the hands, hand 1 (record 3) with ``value`` for ``field``."""
    hand = list(HAND_RECORDS[1])
    hand[field] = value
    return [HEADER_RECORD, HAND_RECORDS[0], hand, *HAND_RECORDS[2:]]


DAMAGED_HANDS = {
    "seat 7": (with_hand(1, [0, 7]), "seats [0, 7] are not the seats 0 to 1, one per position"),
    "seats twice": (with_hand(1, [1, 1]), "seats [1, 1] are not the seats 0 to 1"),
    "hand id 2^64-1": (with_hand(0, 2**64 - 1), "hand id 18446744073709551615 is not a number from 0 to 4294967295"),
    "hand id past uint32": (with_hand(0, 2**32), "hand id 4294967296 is not a number from 0 to 4294967295"),
    "negative hand id": (with_hand(0, -1), "hand id -1 is not a number"),
    "hand id text": (with_hand(0, "1"), "hand id '1' is not a number"),
    "nan": (with_hand(6, [math.nan, 2.0]), "a value is not a number"),
    "inf": (with_hand(6, [math.inf, -math.inf]), "a value is not a finite number"),
    "values that do not sum to 0": (with_hand(6, [-2.0, 3.0]), "values sum to 1, not 0"),
    "values of text": (with_hand(6, ["-2", "2"]), "values ['-2', '2'] are not one number per position (2)"),
    "one value": (with_hand(6, [0.0]), "values [0.0] are not one number per position (2)"),
    "a card past the deck": (with_hand(2, bytes([KS, 200])), "a card is not a rank then a suit"),
    "a card twice": (with_hand(2, bytes([KS, KS])), "a card is dealt twice"),
    "hole cards short": (with_hand(2, bytes([KS])), "hole cards b'/' are not 2 card bytes"),
    "hole cards as a list": (with_hand(2, [KS, AS]), "hole cards [47, 51] are not 2 card bytes"),
    "board too long": (with_hand(3, b"\x00"), "board b'\\x00' is not 0 card bytes"),
    "betting letters": (with_hand(5, "rx"), "betting 'rx' is not text of f, c, r, digits and /"),
    "betting past the last round": (with_hand(5, "rc/c"), "betting 'rc/c' reaches round 2 of a game of 1"),
    "board shown": (with_hand(4, 3), "board_shown 3 is not the 0 board cards of round 1"),
    "six fields": ([HEADER_RECORD, HAND_RECORDS[0], HAND_RECORDS[1][:6], *HAND_RECORDS[2:]], "not a hand record (7 fields)"),
    "a map among the hands": ([HEADER_RECORD, HAND_RECORDS[0], 5, *HAND_RECORDS[2:]], "not a hand record"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_HANDS))
def test_a_damaged_hand_record_is_one_line_naming_the_record_or_skipped(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    items, message = DAMAGED_HANDS[damage]
    path = records(tmp_path / "m.hands.msgpack", items)
    assert analyze([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"arena analyze: error: {path}: record 3: {message}") and err.count("\n") == 1
    hands = read_records(path, skip_damaged=True)
    assert hands.skipped == (3,)
    assert hands.hand_id.tolist() == [0, 2, 3] and hands.line.tolist() == [1, 3, 4]
    assert analyze([str(path), "--skip-damaged"]) == 0
    assert f"skipped 1 damaged record of {path}: 3" in capsys.readouterr().out


DAMAGED_HEADERS: dict[str, tuple[dict[str, Any], str]] = {
    "game None": ({"game": None}, "'game' is None, not text"),
    "game text": ({"game": "GAMEDEF\nlimit\nnumPlayers = x\nEND GAMEDEF\n"}, "numPlayers"),
    "one name for two players": ({"names": ["a"]}, "'names' ['a'] are not one per player of the game (2)"),
    "names of numbers": ({"names": [1, 2]}, "'names' [1, 2] are not all text"),
    "hands as text": ({"num_hands": "4"}, "'num_hands' is '4', not a whole number"),
    "seed past uint32": ({"seed": 2**32}, "is not a uint32"),
    "fixed seats as a number": ({"fixed_seats": 0}, "'fixed_seats' is 0, not true or false"),
    "another format": ({"format": 2}, "hand records format 2 is not 1"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_HEADERS))
def test_a_damaged_header_is_one_line_even_when_skipping(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    change, message = DAMAGED_HEADERS[damage]
    path = records(tmp_path / "m.hands.msgpack", [{**HEADER_RECORD, **change}, *HAND_RECORDS])
    for extra in ([], ["--skip-damaged"]):
        assert analyze([str(path), *extra]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"arena analyze: error: {path}: record 1: bad match header: ") and err.count("\n") == 1
        assert message in err


def test_a_header_without_a_key_names_the_key(tmp_path: Path) -> None:
    header = {key: value for key, value in HEADER_RECORD.items() if key != "names"}
    with pytest.raises(HandsError, match="record 1: bad match header: no 'names'"):
        read_records(records(tmp_path / "m.hands.msgpack", [header, *HAND_RECORDS]))


def test_a_truncated_file_is_damage_at_its_end_not_fewer_hands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = records(tmp_path / "whole.hands.msgpack", [HEADER_RECORD, *HAND_RECORDS]).read_bytes()
    path = tmp_path / "cut.hands.msgpack"
    path.write_bytes(whole[:-5])
    with pytest.raises(HandsError, match=r"cut.hands.msgpack: record 5: the file ends inside a record \(its last"):
        read_records(path)
    hands = read_records(path, skip_damaged=True)
    assert hands.hand_id.tolist() == [0, 1, 2] and hands.skipped == (5,)
    assert analyze([str(path), "--skip-damaged"]) == 0
    out, err = capsys.readouterr()
    assert f"skipped 1 damaged record of {path}: 5" in out
    start = len(whole) - len(msgpack.packb(HAND_RECORDS[-1], use_bin_type=True))  # where the last hand begins
    assert err == (
        f"arena analyze: warning: {path}: record 5: the file ends inside a record (its last {len(whole) - 5 - start}"
        f" bytes, from byte {start}); it and the rest of the file are left out\n"
    )


def test_a_declared_4_gib_string_is_not_allocated(tmp_path: Path) -> None:
    path = records(tmp_path / "big.hands.msgpack", [HEADER_RECORD, *HAND_RECORDS], b"\xdb\xff\xff\xff\xff" + bytes(20 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(HandsError, match=rf"record 6: damaged msgpack at byte \d+ of \d+: an object longer than {MAX_RECORD_BYTES} bytes"):
            read_records(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_RECORD_BYTES  # the 20 MiB after it are not buffered either
    assert read_records(path, skip_damaged=True).hand_id.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (b"\x91" * 100_000, "objects nested deeper than msgpack reads"),
        (b"\xc1", "a byte that starts no msgpack object"),  # a byte msgpack never uses
        (b"\xdd\xff\xff\xff\xff", f"exceeds max_array_len({MAX_RECORD_ENTRIES})"),
    ],
    ids=["deep nesting", "reserved byte", "a declared 4G-entry array"],
)
def test_every_msgpack_damage_has_a_reason(tmp_path: Path, tail: bytes, reason: str) -> None:
    path = records(tmp_path / "m.hands.msgpack", [HEADER_RECORD, *HAND_RECORDS], tail)
    with pytest.raises(HandsError, match="record 6: damaged msgpack at byte ") as raised:
        read_records(path)
    assert str(raised.value).endswith(reason)


def test_a_long_field_of_a_record_is_quoted_in_part(tmp_path: Path) -> None:
    path = records(tmp_path / "m.hands.msgpack", with_hand(6, ["x" * 500_000, 0]))
    with pytest.raises(HandsError, match="record 3: values ") as raised:
        read_records(path)
    assert len(str(raised.value)) < LONGEST_ERROR and "more characters)" in str(raised.value)


# -- the dealer's own reader of .log files (arena match, play and tournament results) --


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("STATE:0:crc:Ks|Qs:nan|nan:a|b", "has a value that is not a finite number"),
        ("STATE:0:crc:Ks|Qs:inf|-inf:a|b", "has a value that is not a finite number"),
        ("STATE:0:crc:Ks|Qs:2|-2:" + "x" * BIG, "more characters) needs 2 values and names"),
    ],
    ids=["nan", "inf", "long STATE line"],
)
def test_the_dealers_log_reader_refuses_non_finite_values_and_cuts_the_rules_quotes(
    tmp_path: Path, line: str, message: str
) -> None:
    path = write(tmp_path / "d.log", [HEADER, line, HANDS[1]])
    with pytest.raises(LogError, match="d.log:2: ") as raised:
        dealer_read_log(path, KUHN)
    assert message in str(raised.value) and len(str(raised.value)) < LONGEST_ERROR


def test_the_results_reader_cuts_its_quotes(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(f"match,player,value,hands\nm,a,1,10\nm,b,{'x' * 100_000},10\n")
    with pytest.raises(ResultsError, match="r.csv:3: value 'xxx") as raised:
        read_csv(path)
    assert len(str(raised.value)) < LONGEST_ERROR and "more characters) is not a number" in str(raised.value)


def test_the_dealers_records_reader_says_when_the_file_ends_inside_a_record(tmp_path: Path) -> None:
    whole = records(tmp_path / "whole.hands.msgpack", [HEADER_RECORD, *HAND_RECORDS]).read_bytes()
    path = tmp_path / "cut.hands.msgpack"
    path.write_bytes(whole[:-5])
    with pytest.raises(ValueError, match=r"cut.hands.msgpack: the file ends inside a record \(from byte \d+\)"):
        dealer_load_hands(path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("9" * 5000 + ",kuhn-cfr", f"hand id '{'9' * QUOTED_LENGTH}'... ({5000 - QUOTED_LENGTH} more characters) is not a number from 0"),
        ("4294967296,kuhn-cfr", "hand id '4294967296' is not a number from 0 to 4294967295"),
        ("\u0663,kuhn-cfr", "not a 'hand_id,component' line"),  # a decimal digit to Python, not to a file of hand ids
    ],
    ids=["5000 digits", "past uint32", "arabic-indic digit"],
)
def test_a_side_files_hand_ids_are_uint32(tmp_path: Path, line: str, message: str) -> None:
    log = write(tmp_path / "match.1.log", [HEADER, *HANDS])
    (tmp_path / "match.1.a.components.csv").write_text(f"0,kuhn-cfr\n{line}\n", encoding="utf-8")
    with pytest.raises(HandsError, match=r"match\.1\.a\.components\.csv:2: ") as raised:
        read_hands(log)
    assert message in str(raised.value)


@pytest.mark.parametrize("numbers", ["5 99999999999999999999", "5 -3", "-1 3", "5 " + "9" * 5000])
def test_a_log_headers_hands_and_seed_are_uint32(tmp_path: Path, numbers: str) -> None:
    path = write(tmp_path / "h.log", [f"# name/game/hands/seed m kuhn {numbers}", *HANDS])
    with pytest.raises(HandsError, match=r"h.log:1: the header's hands '.*' and seed .* are not both numbers from 0 to 4294967295$"):
        read_log(path)  # the game is taken from the header
    with pytest.raises(HandsError, match=r"h.log:1: the header's hands"):
        read_log(path, KUHN)
    hands = read_log(path, KUHN, skip_damaged=True)
    assert hands.skipped == (1,) and hands.seed.tolist() == [NO_SEED, NO_SEED] and hands.seed.dtype == np.int64


def test_the_estimators_quote_a_long_betting_in_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The fast read takes any run of calls; the estimators replay it and say why it cannot be played."""
    path = write(tmp_path / "long.log", [HEADER, "STATE:0:" + "c" * 200_000 + ":Ks|Qs:2|-2:a|b", *HANDS])
    assert analyze([str(path), "--strategy", "kuhn-cfr", "--player", "a"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("arena analyze: error: --strategy 'kuhn-cfr' could not have played these hands: betting 'ccc")
    assert err.count("\n") == 1 and len(err) < LONGEST_ERROR and "(199800 more characters)" in err


def test_a_game_files_long_line_is_quoted_in_part(tmp_path: Path) -> None:
    path = tmp_path / "long.game"
    path.write_text("GAMEDEF\nlimit\nnumPlayers " + "x" * BIG + "\nEND GAMEDEF\n")
    with pytest.raises(GameDefError, match=r"long.game:3: 'numPlayers xxx") as raised:
        load_game(path)
    assert len(str(raised.value)) < LONGEST_ERROR and "more characters) gives no number for numplayers" in str(raised.value)


def test_a_file_damaged_from_its_first_byte_is_an_error_not_zero_hands(tmp_path: Path) -> None:
    path = tmp_path / "m.hands.msgpack"
    path.write_bytes(b"\xdb\xff\xff\xff\xff" + msgpack.packb(HEADER_RECORD, use_bin_type=True))
    with pytest.raises(HandsError, match=r"m.hands.msgpack: record 1: the file ends inside a record \(its last \d+ bytes, from byte 0\)"):
        read_records(path)
    with pytest.raises(HandsError, match=r"m.hands.msgpack: no match header"):
        read_records(path, skip_damaged=True)
