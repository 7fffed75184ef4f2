"""The per-hand time budget starts again with every hand, and a spent match
budget cuts the dealer's wait short (:mod:`dealer.budget`; docs/protocol.md,
The dealer's rules).

The accounting is checked on :class:`~dealer.budget.TimeBudgets` with numbers
(no clock), and once each through a real dealer: a seat whose every hand
costs less than ``--t_hand`` but whose hands together cost more plays the
whole match, and a silent seat is stopped when its match budget, not the
600 s response limit, runs out. Real clocks, as in test_dealer_clock.py: each
comment gives the arithmetic and its margin for a loaded machine.
"""

from __future__ import annotations

from pathlib import Path

import trio

from dealer.budget import TimeBudgets
from dealer.server import MatchConfig
from poker.gamedef import load_game
from tests.dealer.dealer_clients import SILENT, Script, actions_of, run_match

HULHE = load_game("hulhe")
CALLS = actions_of("cc/cc/cc/cc")  # a limit hand checked down: four answers from each seat


def test_each_hand_gets_its_whole_hand_budget_again() -> None:
    budgets = TimeBudgets(2, response_us=1_000, hand_us=1_500, match_us=10_000)
    assert budgets.charge(1, send_us=0, recv_us=900)
    assert budgets.allowance_us(1) == 600  # 1500 - 900 left in this hand
    assert budgets.allowance_us(0) == 1_000  # only the seat that answered was charged
    budgets.new_hand()
    assert budgets.used_hand_us == [0, 0] and budgets.used_match_us == [0, 900]
    assert budgets.allowance_us(1) == 1_000  # the response limit binds again
    # 900 + 900 is over the hand budget in one hand, within it over two
    assert budgets.charge(1, send_us=0, recv_us=900)
    assert not budgets.charge(1, send_us=0, recv_us=900)


def test_the_match_budget_bounds_the_allowance_and_the_charge() -> None:
    budgets = TimeBudgets(2, response_us=1_000, hand_us=1_000, match_us=1_500)
    assert budgets.charge(0, send_us=10, recv_us=810)
    budgets.new_hand()
    assert budgets.allowance_us(0) == 700  # 1500 - 800 left in the match
    assert budgets.allowance_us(1) == 1_000
    assert budgets.charge(0, send_us=0, recv_us=700)  # exactly the rest is still in time
    assert budgets.allowance_us(0) == 0
    budgets.new_hand()
    assert not budgets.charge(0, send_us=0, recv_us=1)  # a new hand gives no more match time


def test_a_clock_set_back_charges_nothing() -> None:
    budgets = TimeBudgets(1, response_us=1_000, hand_us=1_000, match_us=1_000)
    assert budgets.charge(0, send_us=500, recv_us=100)
    assert budgets.used_hand_us == [0] and budgets.used_match_us == [0]


def _config(tmp_path: Path, num_hands: int, **options: object) -> MatchConfig:
    return MatchConfig("m", HULHE, "hulhe", num_hands, 11, ("P1", "P2"), log_dir=tmp_path, quiet=True, **options)  # type: ignore[arg-type]


async def test_a_dealer_renews_the_hand_budget_every_hand(tmp_path: Path) -> None:
    # Seat 2 takes 0.1 s per answer, 4 answers a hand: about 0.4 s of its 1.5 s
    # --t_hand in each hand (1.1 s to spare), 2.4 s over 6 hands. Were the hand
    # budget not renewed, the fourth hand could not finish.
    config = _config(tmp_path, 6, t_hand_ms=1500)
    slow = Script(default="c", delay_s=0.1)
    capture = await run_match(config, [Script(default="c"), slow], timeout_s=30)

    assert "ERROR" not in capture.stderr and capture.stderr.splitlines()[-1].startswith("SCORE:")
    assert capture.result.exit_status == 0 and capture.result.hands_played == 6


async def test_a_dealer_stops_waiting_when_the_match_budget_is_spent(tmp_path: Path) -> None:
    # --t_per_hand 500 over 2 hands: 1 s for seat 2's whole match, under a
    # 600 s --t_response and --t_hand. Seat 2 never answers in hand 0, so the
    # dealer must stop at 1 s ("ran out of time"), not wait the 600 s; the
    # 20 s guard of run_match leaves a loaded machine 19 s.
    config = _config(tmp_path, 2, t_per_hand_ms=500)
    started = trio.current_time()
    capture = await run_match(config, [Script(default="c"), Script(follow={0: [SILENT] * 8})], timeout_s=20)

    assert trio.current_time() - started >= 1.0
    assert capture.stderr.endswith("ERROR: seat 2 ran out of time\n")
    assert capture.result.exit_status == 1 and capture.result.hands_played == 0
