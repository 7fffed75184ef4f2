"""LBR's value against a card-aware target, exactly, in Leduc.

test_lbr.py checks LBR exactly against card-blind chumps only: their actions say
nothing about their cards, so LBR's range never moves and a broken Bayes
update or card removal goes unseen. Here the target bets, calls and folds by
its card, whether it pairs the board and even its suit, stochastically (so a
range that kept the board's card would weigh a hand that plays differently
from its twin), and LBR's exact expected winnings are computed twice over
every deal:

* **the module's play**: :func:`strategies.lbr.lbr_hand` over every branch of
  the target's sampled actions, each finished hand weighted by the probability
  of its draws (:mod:`tests.strategies.lbr_branches`);
* **by brute force**: the game tree walked here, LBR's range at each of its
  decisions computed from scratch as the posterior of the target's hand
  (uniform over the hands that avoid LBR's card and the board, times the
  target's probability of every action it took), and LBR's choice that of
  :func:`strategies.lbr.decide` given that range.

The two agree only if the module's running range is that posterior.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import numpy.typing as npt
import pytest

from poker.deal import Deal, private_hands
from poker.gamedef import load_game
from poker.hand_rank import hand_values
from poker.protocol import MatchState
from poker.state import CALL, FOLD, Action, ActionType, State
from strategies.base import PublicState, Strategy
from strategies.cfr.best_response.exact import best_response, strategy_from_policy
from strategies.cfr.tree.public import build_tree
from strategies.lbr import LbrConfig, Rollouts, decide
from tests.strategies.lbr_branches import deals, expected_hand

LEDUC = load_game("leduc")
CONFIG = LbrConfig("fcpa", frozenset({0, 1}))
HANDS = [int(hand[0]) for hand in private_hands(LEDUC)]  # one card each: Q Q K K A A
LOWEST_RANK = min(card // 4 for card in HANDS)

# By strength: the card's rank (0 Q, 1 K, 2 A), 3 + rank with a pair on the board.
_RAISE_FREE = (0.15, 0.35, 0.6, 0.72, 0.81, 0.93)  # when nothing is owed
_FOLD_FACING = (0.7, 0.4, 0.15, 0.05, 0.02, 0.01)
_RAISE_FACING = (0.1, 0.2, 0.45, 0.6, 0.7, 0.9)
#: With a heart it folds this much less and bets this much more (within 0..1).
_HEART_FOLDS_LESS, _HEART_BETS_MORE = 0.3, 0.2
HEARTS = HANDS[0] % 4


class Tells(Strategy):
    """A Leduc player whose actions give its card away, in part: stronger hands
    bet and raise more and fold less (the tables above), hearts more than spades."""

    def act(self, view: MatchState) -> Action:  # pragma: no cover - only its policy is asked for
        return CALL

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        facing = public.state.can_fold()
        out = np.zeros((len(HANDS), len(public.actions)))
        for row, card in enumerate(HANDS):
            rank = card // 4 - LOWEST_RANK
            strength = rank + 3 * any(b // 4 == card // 4 for b in public.board)
            fold = _FOLD_FACING[strength] if facing else 0.0
            bet = (_RAISE_FACING if facing else _RAISE_FREE)[strength]
            if card % 4 == HEARTS:
                fold, bet = max(0.0, fold - _HEART_FOLDS_LESS), min(1.0, bet + _HEART_BETS_MORE)
            for column, action in enumerate(public.actions):
                if action == FOLD:
                    out[row, column] = fold
                elif action.type is ActionType.RAISE:
                    out[row, column] = bet
            called = [c for c, action in enumerate(public.actions) if action == CALL]
            out[row, called[0]] = 1.0 - out[row].sum()
        return out


TARGET = Tells()


def _posterior(lbr_card: int, board: tuple[int, ...], history: Sequence[tuple[PublicState, int]]) -> npt.NDArray[np.float64]:
    """The target's hand given LBR's card, the board and the target's actions so far."""
    weights = np.array([0.0 if card == lbr_card or card in board else 1.0 for card in HANDS])
    for public, column in history:
        weights = weights * TARGET.policy(public)[:, column]
    normalised: npt.NDArray[np.float64] = weights / weights.sum()
    return normalised


def _brute_value(deal: Deal, position: int) -> float:
    """LBR's expected chips in ``position`` by walking the game tree (module docstring)."""
    lbr_card, target_row = deal.hole[position][0], HANDS.index(deal.hole[1 - position][0])

    def walk(state: State, history: tuple[tuple[PublicState, int], ...]) -> float:
        if state.finished:
            return float(hand_values(state, deal.hole, deal.board)[position])
        board = deal.board[: LEDUC.total_board_cards(state.round)]
        if state.current_player() == position:
            if state.round not in CONFIG.rounds:
                return walk(state.apply(CALL), history)
            rollouts = Rollouts(LEDUC, (lbr_card,), board)
            choice = decide(state, board, _posterior(lbr_card, board, history), TARGET, rollouts, CONFIG.actions)
            return walk(state.apply(choice.action), history)
        public = PublicState(state, board)
        row = TARGET.policy(public)[target_row]
        return sum(
            float(p) * walk(state.apply(action), (*history, (public, column)))
            for column, (action, p) in enumerate(zip(public.actions, row))
            if p > 0
        )

    return walk(State(LEDUC), ())


@cache
def _values() -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(module, brute force) values: ``[deal, position]``."""
    every = deals(LEDUC)
    module = np.array([[expected_hand(LEDUC, TARGET, deal, position, CONFIG) for position in (0, 1)] for deal in every])
    brute = np.array([[_brute_value(deal, position) for position in (0, 1)] for deal in every])
    return module, brute


def test_the_target_gives_its_card_away() -> None:
    # Not a chump in disguise: its opening bet, its fold to a bet and its flop bet
    # differ by card (rows Qh Qs Kh Ks Ah As).
    opening = TARGET.policy(PublicState(State(LEDUC)))[:, 1]
    assert opening == pytest.approx([0.35, 0.15, 0.55, 0.35, 0.8, 0.6])
    facing = State(LEDUC).apply(Action(ActionType.RAISE))
    assert TARGET.policy(PublicState(facing))[:, 0] == pytest.approx([0.4, 0.7, 0.1, 0.4, 0.0, 0.15])
    flop = TARGET.policy(PublicState(State(LEDUC).apply(CALL).apply(CALL), (HANDS[2],)))[:, 1]
    assert flop == pytest.approx([0.35, 0.15, 1.0, 0.81, 0.8, 0.6])  # the kings pair the board: strength 3 + 1


def test_lbr_tracks_the_posterior_of_a_card_aware_target_exactly() -> None:
    module, brute = _values()
    np.testing.assert_allclose(module, brute, rtol=0, atol=1e-12)


def test_lbr_against_the_card_aware_target_is_below_its_best_response() -> None:
    module, _ = _values()
    tree = build_tree(LEDUC)
    exact_br = best_response(tree, strategy_from_policy(tree, TARGET)).exploitability
    lbr_value = float(module.mean())
    # LBR is a legal strategy: its exact value is a lower bound of the best response's.
    assert 0 < lbr_value < exact_br
