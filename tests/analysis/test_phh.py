"""Hand histories out and in without PokerKit: ACPC log -> PHH -> our reader
gives the same hands, PokerStars text matches a golden file checked by hand,
broken PHH is one line naming the hand and the field, and ``arena export``
refuses Kuhn and Leduc in one line. (PokerKit's checks: test_phh_pokerkit.py.)"""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pytest

from acpc_fixtures import SECTIONS, state_lines
from analysis.hand_files import read_hands
from analysis.hands import HandsError
from analysis.logs import read_log
from analysis.phh import read_phh, write_phh
from analysis.pokerstars import write_pokerstars
from arena.commands.analyze import main as arena_analyze
from arena.commands.export import main as arena_export
from arena.commands.match import main as arena_match
from poker.gamedef import load_game
from holdem_matches import MATCHES, REFERENCE_SECTIONS, SPLIT_IN_HALVES, assert_same_hands

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "pokerstars"
#: The golden text's date (an ACPC log has no clock).
WHEN = datetime.datetime(2026, 11, 27, 6, 0, 0)


@pytest.mark.parametrize("game", MATCHES)
def test_acpc_log_to_phh_to_our_reader_gives_the_same_hands(holdem_logs: dict[str, Path], tmp_path: Path, game: str) -> None:
    log = read_hands(holdem_logs[game] / "match.log")
    path = tmp_path / "hands.phhs"
    path.write_text("".join(write_phh(log)))
    back = read_hands(path)
    assert_same_hands(log, back)
    assert back.seed.tolist() == [7] * 20
    assert back.line.tolist() == list(range(1, 21))


@pytest.mark.parametrize("section", REFERENCE_SECTIONS)
def test_the_reference_dealers_hold_em_hands_round_trip(tmp_path: Path, section: str) -> None:
    """The reference dealer's STATE lines (section 5 transcripts; 5.4 is three-player no-limit)."""
    log = tmp_path / "reference.log"
    log.write_text("".join(f"{line}\n" for line in state_lines(section)))
    hands = read_log(log, load_game(SECTIONS[section][0]), validate=True)
    path = tmp_path / "reference.phhs"
    path.write_text("".join(write_phh(hands)))
    assert_same_hands(hands, read_hands(path), ids=False)
    assert read_hands(path).hand_id.tolist() == hands.hand_id.tolist()
    assert "".join(write_pokerstars(hands, WHEN)).count("*** SUMMARY ***") == len(hands)


def test_one_hand_phh_reads_and_no_limit_raises_are_per_street(tmp_path: Path) -> None:
    log = read_log(GOLDEN / "hunl.log")
    text = "".join(write_phh(log.take(np.array([2]))))
    assert "'p2 cbr 250', 'p1 cc', 'd db Kd7s2c', 'p1 cc', 'p2 cbr 250', 'p1 cc'" in text  # r500 is 250 on the flop
    single = tmp_path / "one.phh"
    single.write_text(text.removeprefix("[1]\n"))
    back = read_phh(single)
    assert back.betting == ("r250c/cr500c/cc/cc",)
    assert back.values.tolist() == [[500.0, -500.0]]
    assert back.names_at(0) == ("alice", "bob")


def test_pokerstars_text_matches_the_golden_file() -> None:
    """All-in pre-flop, a pre-flop fold, a showdown, a split pot and a bet uncalled on the flop."""
    hands = read_log(GOLDEN / "hunl.log", validate=True)
    assert "".join(write_pokerstars(hands, WHEN)) == (GOLDEN / "hunl.txt").read_text()


def phh_with(path: Path, old: str, new: str) -> Path:
    """The golden hands as PHH with ``old`` replaced by ``new`` (once)."""
    text = "".join(write_phh(read_log(GOLDEN / "hunl.log")))
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("variant = 'NT'", "variant = 'PO'", r"hand 1 \['1'\]: variant: 'PO' is not 'FT' or 'NT'"),
        ("'p2 cbr 300'", "'p1 cbr 300'", r"hand 1 \['1'\]: actions\[2\] 'p1 cbr 300': not p1's turn"),
        ("'p2 cbr 300'", "'p2 cbr 150'", r"hand 1 \['1'\]: actions\[2\] 'p2 cbr 150': .*raise"),
        ("finishing_stacks = [40000, 0]", "finishing_stacks = [39000, 1000]", r"hand 1 \['1'\]: finishing_stacks: \[39000, 1000\] are not those of the betting and cards \(\[40000, 0\]\)"),
        ("antes = [0, 0]", "antes = [0, 5]", r"hand 1 \['1'\]: antes: ACPC games have no antes"),
        ("'d dh p1 AhAd'", "'d dh p1 AhA'", r"hand 2 \['2'\]: actions\[0\] 'd dh p1 AhA': not 2 known cards"),
        ("'d db Kd7s2c'", "'d db Kd7s'", r"hand 3 \['3'\]: actions\[4\] 'd db Kd7s': 2 board cards where hold'em deals 3"),
        ("'p1 cc', 'd db Kd7s2c'", "'d db Kd7s2c'", r"hand 3 \['3'\]: actions\[3\] 'd db Kd7s2c': the board of round 1 before its betting"),
    ],
)
def test_broken_phh_is_one_line_naming_the_hand_and_field(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = phh_with(tmp_path / "broken.phhs", old, new)
    with pytest.raises(HandsError, match=message) as error:
        read_hands(path)
    assert "\n" not in str(error.value) and str(error.value).startswith(str(path))


def test_damaged_hands_are_skipped_on_request_and_analyze_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = phh_with(tmp_path / "broken.phhs", "'p2 cbr 300'", "'p1 cbr 300'")
    kept = read_phh(path, skip_damaged=True)
    assert kept.skipped == (1,) and kept.hand_id.tolist() == [1, 2, 3, 4]
    assert arena_analyze([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hand 1 ['1']: actions[2]" in err
    (tmp_path / "notes.phh").write_text("variant = [")
    assert arena_analyze([str(tmp_path / "notes.phh")]) == 1
    assert "not TOML" in capsys.readouterr().err


def test_arena_export_writes_what_analyze_reads_and_refuses_kuhn(
    holdem_logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.phhs"
    assert arena_export([str(holdem_logs["hunl"]), "--format", "phh", "-o", str(out)]) == 0
    assert_same_hands(read_hands(holdem_logs["hunl"] / "match.log"), read_hands(out))
    assert arena_export([str(holdem_logs["hunl"] / "match.hands.msgpack"), "--format", "pokerstars"]) == 0
    assert capsys.readouterr().out.count("PokerStars Hand #") == 20
    assert arena_analyze([str(tmp_path)]) == 0  # a folder of .phhs reads as one of logs
    assert "20 hands in 1 log" in capsys.readouterr().out
    kuhn = tmp_path / "kuhn"
    assert arena_match(["kuhn", "--hands", "3", "--seed", "1", "random", "random", "--in-process", "--run-dir", str(kuhn)]) == 0
    capsys.readouterr()
    for format_ in ("phh", "pokerstars"):
        assert arena_export([str(kuhn), "--format", format_, "-o", str(tmp_path / "kuhn.out")]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "only Texas hold'em has this format (not Kuhn, Leduc" in err
    assert not (tmp_path / "kuhn.out").exists()


def test_arena_export_bad_input_is_one_line(holdem_logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder with no hands, an output in no folder and logs of two games: one line each, nothing written."""
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        ([str(empty)], 1, f"{empty}: no .log, .hands.msgpack, .phhs or .phh files in this folder"),
        ([str(holdem_logs["hunl"]), "-o", str(tmp_path / "no" / "out.phhs")], 2, f"-o {tmp_path / 'no' / 'out.phhs'}: directory {tmp_path / 'no'} does not exist"),
        ([str(holdem_logs["hunl"]), str(holdem_logs["hulhe"])], 1, "is not a log of the same game"),
    ]
    for arguments, status, message in cases:
        assert arena_export([*arguments, "--format", "phh"]) == status
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("'p2 cbr 300'", "'p2 cbr " + "9" * 5_000_000 + "'"),
        ("players = ['alice', 'bob']", "players = ['alice', '" + "x" * 5_000_000 + "', 'carol']"),
        ("starting_stacks = [20000, 20000]", "starting_stacks = [20000, 9223372036854775807]"),
    ],
)
def test_a_long_or_huge_damaged_field_is_one_short_line(tmp_path: Path, old: str, new: str) -> None:
    path = phh_with(tmp_path / "long.phhs", old, new)
    with pytest.raises(HandsError) as error:
        read_phh(path)
    assert "\n" not in str(error.value) and len(str(error.value)) < 1000


def test_random_damage_is_a_hands_error_or_a_good_read(tmp_path: Path) -> None:
    """Bytes overwritten at random places: every read ends in hands or in one HandsError line."""
    text = "".join(write_phh(read_log(GOLDEN / "hunl.log")))
    rng = np.random.default_rng(5)
    path = tmp_path / "damaged.phhs"
    for _ in range(300):
        damaged = bytearray(text.encode())
        for place in rng.integers(0, len(damaged), size=3):
            damaged[place] = int(rng.choice(list(b"0123456789pdfcbrsm []',=\n#-x")))
        path.write_bytes(bytes(damaged))
        try:
            read_phh(path)
        except HandsError as error:
            assert "\n" not in str(error)


def test_a_portfolios_components_travel_in_phh(tmp_path: Path) -> None:
    log = tmp_path / "match.log"
    log.write_text("".join(f"{line}\n" for line in (GOLDEN / "hunl.log").read_text().splitlines()[:3]))
    (tmp_path / "match.alice.components.csv").write_text("0,hunl-ehs2-3\n1,tilt:preset=orange\n")
    hands = read_hands(log)
    assert hands.components == {"alice": ("hunl-ehs2-3", "tilt:preset=orange")}
    path = tmp_path / "out.phhs"
    path.write_text("".join(write_phh(hands)))
    assert "_components = ['hunl-ehs2-3', '']" in path.read_text()
    assert read_hands(path).components == hands.components


def test_a_pot_split_in_halves_reads_back_and_collects_halves(tmp_path: Path) -> None:
    log = tmp_path / "split.log"
    log.write_text(SPLIT_IN_HALVES)
    hands = read_log(log, validate=True)
    path = tmp_path / "split.phh"
    path.write_text("".join(write_phh(hands)).removeprefix("[1]\n"))
    assert "finishing_stacks = [2147483642, 2147483649.5, 2147483649.5]" in path.read_text()
    assert_same_hands(hands, read_hands(path))
    odd_chip = path.read_text().replace("2147483649.5, 2147483649.5]", "2147483650, 2147483649]")
    path.write_text(odd_chip)  # as PokerKit writes it: the odd chip to one winner
    assert_same_hands(hands, read_hands(path))
    text = "".join(write_pokerstars(hands, WHEN))
    assert "b collected 12.5 from pot\nc collected 12.5 from pot\n" in text
    assert "Seat 1: a (small blind) folded before Flop\n" in text and "Total pot 25 | Rake 0" in text


def test_a_short_stacked_limit_raise_goes_all_in_as_the_rules_have_it(tmp_path: Path) -> None:
    """A limit raise capped by the stack (25, not 30) is the one limit raise, as in :mod:`poker.state`."""
    path = tmp_path / "short.phh"
    path.write_text(
        "variant = 'FT'\nantes = [0, 0]\nblinds_or_straddles = [5, 10]\nsmall_bet = 10\nbig_bet = 20\n"
        "starting_stacks = [25, 25]\nactions = ['d dh p1 4cKs', 'd dh p2 KhKc', 'p2 cbr 20', 'p1 cbr 25', 'p2 cc',"
        " 'd db 3s2hAh', 'd db 9d', 'd db 4s', 'p1 sm 4cKs', 'p2 sm KhKc']\nfinishing_stacks = [0, 50]\n"
    )
    hands = read_hands(path)
    assert hands.betting == ("rrc///",)
    assert hands.values.tolist() == [[-25.0, 25.0]]
    assert "'p1 cbr 25', 'p2 cc'" in "".join(write_phh(hands))
    path.write_text(path.read_text().replace("'p1 cbr 25'", "'p1 cbr 30'"))
    with pytest.raises(HandsError, match=r"actions\[3\] 'p1 cbr 30': a limit raise to 30 on this street; the limit is to 25"):
        read_hands(path)
