"""PokerKit (a test-only dependency) replays our hand histories: every hand of
limit and no-limit heads-up and three-player limit hold'em matches, exported as
PHH, ends with PokerKit's payoffs equal to the log's values; PHH that PokerKit
writes of the same hands reads back to the same hands; PokerKit's PokerStars
parser reads our PokerStars text to the same payoffs (no-limit: the only
PokerStars game it parses); a six-seat hand PokerKit played itself reads with
its payoffs. Skipped where PokerKit is not installed."""

from __future__ import annotations

import datetime
import warnings
from fractions import Fraction
from pathlib import Path

import pytest

from acpc_fixtures import SECTIONS, state_lines
from analysis.hand_files import read_hands
from analysis.hands import Hands
from analysis.logs import read_log
from analysis.holdem import seat_order
from analysis.phh import write_phh
from analysis.pokerstars import write_pokerstars
from holdem_matches import MATCHES, REFERENCE_SECTIONS, SPLIT_IN_HALVES, assert_same_hands
import needs
from poker.gamedef import load_game

pokerkit = needs.importorskip("pokerkit", "PokerKit")

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "pokerstars"


def exact(dividend: int, divisor: int) -> tuple[Fraction, int]:
    """Split pots exactly, as ACPC values do (PokerKit's default gives the odd chip to one winner)."""
    return Fraction(dividend) / divisor, 0


def assert_payoffs(histories: list[object], hands: Hands) -> None:
    """Each history replayed by PokerKit pays what the log says, seat by seat."""
    assert len(histories) == len(hands)
    order = seat_order(hands.game)
    for row, history in enumerate(histories):
        *_, final = iter(history)  # type: ignore[call-overload]
        assert [float(v) for v in final.payoffs] == [hands.values[row][p] for p in order], hands.state_line(row)


@pytest.mark.parametrize("game", MATCHES)
def test_pokerkit_replays_every_exported_hand_to_the_logs_payoffs(holdem_logs: dict[str, Path], game: str) -> None:
    log = read_hands(holdem_logs[game] / "match.log")
    histories = list(pokerkit.HandHistory.loads_all("".join(write_phh(log)), divmod=exact))
    assert_payoffs(histories, log)
    for row, history in enumerate(histories):
        *_, final = iter(history)
        assert [float(s) for s in final.stacks] == [float(s) for s in history.finishing_stacks], row
        assert history.players == [log.names_at(row)[p] for p in seat_order(log.game)]
        assert history.user_defined_fields["_hand_id"] == row and history.user_defined_fields["_seed"] == 7


@pytest.mark.parametrize("section", REFERENCE_SECTIONS)
def test_pokerkit_replays_the_reference_dealers_hands_to_their_payoffs(tmp_path: Path, section: str) -> None:
    log = tmp_path / "reference.log"
    log.write_text("".join(f"{line}\n" for line in state_lines(section)))
    hands = read_log(log, load_game(SECTIONS[section][0]))
    assert_payoffs(list(pokerkit.HandHistory.loads_all("".join(write_phh(hands)), divmod=exact)), hands)


def test_pokerkit_splits_a_pot_in_halves_as_the_log(tmp_path: Path) -> None:
    log = tmp_path / "split.log"
    log.write_text(SPLIT_IN_HALVES)
    hands = read_log(log)
    assert_payoffs(list(pokerkit.HandHistory.loads_all("".join(write_phh(hands)), divmod=exact)), hands)


@pytest.mark.parametrize("game", MATCHES)
def test_phh_pokerkit_writes_reads_back_to_the_same_hands(holdem_logs: dict[str, Path], tmp_path: Path, game: str) -> None:
    log = read_hands(holdem_logs[game] / "match.log")
    histories = list(pokerkit.HandHistory.loads_all("".join(write_phh(log))))
    path = tmp_path / "pokerkit.phhs"
    path.write_text(pokerkit.HandHistory.dumps_all(histories))
    assert_same_hands(log, read_hands(path))
    if not log.game.is_limit:  # without our fields too: the no-limit game is all in PHH's own
        for history in histories:
            history.user_defined_fields.clear()
        path.write_text(pokerkit.HandHistory.dumps_all(histories))
        assert_same_hands(log, read_hands(path), ids=False)


def test_pokerkit_parses_our_pokerstars_text_to_the_same_payoffs(holdem_logs: dict[str, Path]) -> None:
    when = datetime.datetime(2026, 11, 27, 6, 0, 0)
    for hands in (read_log(GOLDEN / "hunl.log"), read_hands(holdem_logs["hunl"] / "match.log")):
        with warnings.catch_warnings():  # PokerKit warns of its own field time_zone_abbreviation
            warnings.simplefilter("ignore", UserWarning)
            histories = list(pokerkit.HandHistory.from_pokerstars("".join(write_pokerstars(hands, when)), error_status=True))
        assert_payoffs(histories, hands)


def test_a_hand_pokerkit_played_at_six_seats_reads_with_its_payoffs(tmp_path: Path) -> None:
    """PHH from elsewhere (PokerKit's own play, as in its public datasets): mucked hands, ten-thousand stacks."""
    dealt_by_hand = (pokerkit.Automation.HOLE_DEALING, pokerkit.Automation.BOARD_DEALING)
    automations = tuple(a for a in pokerkit.Automation if a not in dealt_by_hand)
    game = pokerkit.NoLimitTexasHoldem(automations, False, 0, (50, 100), 100)
    state = game((10000,) * 6, 6)
    with warnings.catch_warnings():  # PokerKit advises against cards not next in its shuffled deck
        warnings.simplefilter("ignore", UserWarning)
        for cards in ("AsAd", "KsKd", "QsQd", "JsJd", "Ts9s", "2c7d"):
            state.deal_hole(cards)
        for act in ("f", 300, "f", "c", "f", "c", "Ah8c3d", "c", 500, "c", "c", "4h", "c", "c", "c", "9c", "c", "c", "c"):
            if act == "f":
                state.fold()
            elif act == "c":
                state.check_or_call()
            elif isinstance(act, int):
                state.complete_bet_or_raise_to(act)
            else:
                state.deal_board(act)
    history = pokerkit.HandHistory.from_game_state(game, state)
    history.players = [f"P{k}" for k in range(1, 7)]
    path = tmp_path / "six.phh"
    path.write_text(history.dumps())
    hands = read_hands(path)
    assert hands.betting == ("fr300fcfc/cr800cc/ccc/ccc",)
    assert [hands.values[0][p] for p in seat_order(hands.game)] == list(state.payoffs) == [-50, 1650, 0, -800, 0, -800]
    assert hands.names_at(0)[seat_order(hands.game)[1]] == "P2" and hands.hand_id.tolist() == [1]
