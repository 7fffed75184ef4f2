"""All-in adjustment: a hand's value at an all-in is its expectation over the board still to come.

When the players still in a no-limit hand are all in before the board is
complete, nobody acts again: the rest of the board only adds luck. The ACPC's
``all_in_expectation`` (a utility shipped with the reference dealer; the no-limit
competitions' "all-in equity" from 2014) replaces such a hand's values by their **exact
average over every completion of the remaining board**. :func:`allin_values` does the
same: a hand is adjusted when it ended at a showdown and board cards were dealt after
the last round in which anyone acted; its values become the mean, over every way to deal
the missing board cards from the cards no player holds and the board does not show, of
what the rules (:meth:`poker.state.State.values`, side pots included) pay with those
cards. Other hands keep their values.

Why it is unbiased: the dealer deals the missing cards uniformly from those
same cards, and nothing after the all-in depends on them (no one acts), so the
replaced value is the conditional expectation of the real one given everything
up to the all-in; the mean over hands estimates the same value with the
run-out's variance removed. It needs every player's hole cards, which a dealer's
log has (full information).

The enumeration is one numba pass per adjusted hand (:func:`_outcome_counts`):
for every completion it ranks each player still in (:func:`poker.evaluate.rank_cardset`)
and counts the *outcome*, which player beats which; the rules' payoff is then
worked out once per distinct outcome, a handful per hand (heads-up: win, tie,
lose). A heads-up pre-flop all-in in hold'em is C(48, 5) = 1,712,304 run-outs,
about 0.06 s (``benchmarks/allin.py``). Hands with the same betting, cards and
board up to the all-in (the seatings of a duplicate match) are enumerated once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import numpy.typing as npt
from numba import njit

from analysis.hands import Hands
from poker import _eval_kernels as _k
from poker.evaluate import card_bit, rank_cardset
from poker.gamedef import Game
from poker.state import State
from strategies.imaginary import ImportanceError, replay_hand

__all__ = ["AllIn", "AllInError", "allin_values", "allin_point", "adjusted_hands", "runout_expectation"]

FloatArray = npt.NDArray[np.float64]
#: Most players an outcome code can hold (``players ** players`` codes).
_MAX_PLAYERS: Final = 6


class AllInError(ValueError):
    """Hands the adjustment cannot read: a betting that does not finish, cards missing."""


@dataclass(frozen=True)
class AllIn:
    """:func:`allin_values`' answer: ``values`` float64[n, P] chips by position
    (adjusted hands replaced, the others as logged), ``adjusted`` bool[n] the
    hands replaced, ``runouts`` int64[n] the completions each adjusted hand
    averaged over (0 for the others)."""

    values: FloatArray
    adjusted: npt.NDArray[np.bool_]
    runouts: npt.NDArray[np.int64]


@njit(cache=True, nogil=True)
def _outcome_counts(
    player_sets: np.ndarray, live: np.ndarray, board_set: int, undealt: np.ndarray, index: np.ndarray
) -> np.ndarray:
    """How often each outcome happens over the completions ``undealt[index[b]]``.

    The outcome of one completion is ``Σ_p above_p · P**p`` where ``above_p`` is
    the number of live players whose hand ranks strictly above ``p``'s (0 for a
    folded ``p``): it fixes who wins which pot, and nothing else does."""
    players = player_sets.shape[0]
    codes = 1
    for _ in range(players):
        codes *= players
    counts = np.zeros(codes, dtype=np.int64)
    ranks = np.zeros(players, dtype=np.int64)
    for b in range(index.shape[0]):
        full = np.int64(board_set)
        for j in range(index.shape[1]):
            full |= card_bit(undealt[index[b, j]])
        for p in range(players):
            ranks[p] = rank_cardset(player_sets[p] | full) if live[p] else -1
        code = 0
        scale = 1
        for p in range(players):
            above = 0
            if live[p]:
                for q in range(players):
                    if live[q] and ranks[q] > ranks[p]:
                        above += 1
            code += above * scale
            scale *= players
        counts[code] += 1
    return counts


@functools.cache
def _completions(cards: int, missing: int) -> npt.NDArray[np.int8]:
    """Every ``missing``-subset of ``range(cards)`` (int8: a hold'em pre-flop
    all-in's 1.7 M rows take 8.6 MB, computed once)."""
    index: npt.NDArray[np.int8] = _k.combination_indices(cards, missing).astype(np.int8)
    return index


def allin_point(game: Game, final: State) -> int | None:
    """Board cards shown at the all-in of a finished hand, or ``None`` when the
    hand is not adjusted (a fold ended it, or the board was complete when the
    last player acted)."""
    if not final.is_showdown():
        return None
    acted = [r for r, actions in enumerate(final.actions) if actions]
    last = acted[-1] if acted else 0
    known = game.total_board_cards(last)
    return known if known < game.total_board_cards(game.num_rounds - 1) else None


def runout_expectation(
    game: Game, final: State, hole: npt.ArrayLike, board: npt.ArrayLike, known: int
) -> tuple[FloatArray, int]:
    """Each position's chips in the finished hand ``final`` averaged over every
    completion of ``board[:known]`` from the cards no player holds: (values,
    completions counted).

    Raises:
        AllInError: hole or board cards missing (``-1``) or repeated.
    """
    players = game.num_players
    holes = np.asarray(hole, dtype=np.int64).reshape(players, game.num_hole_cards)
    shown = np.asarray(board, dtype=np.int64)[:known]
    used = np.concatenate([holes.ravel(), shown])
    if (used < 0).any() or np.unique(used).size != used.size:
        raise AllInError(f"cards {used.tolist()} are not every player's hole cards and the board, each once")
    deck = np.array(sorted(game.deck()), dtype=np.int64)
    undealt = np.setdiff1d(deck, used)
    missing = game.total_board_cards(game.num_rounds - 1) - known
    live = np.array([not folded for folded in final.folded])
    player_sets = _k.cardsets(np.ascontiguousarray(holes))
    board_set = int(_k.cardsets(shown[None, :])[0]) if known else 0
    counts = _outcome_counts(player_sets, live, board_set, undealt, _completions(undealt.size, missing))
    total = int(counts.sum())
    out = np.zeros(players)
    for code in np.flatnonzero(counts):
        above = [(int(code) // players**p) % players for p in range(players)]
        out += float(counts[code]) * np.array([float(v) for v in final.values([players - 1 - a for a in above])])
    return out / total, total


def allin_values(hands: Hands) -> AllIn:
    """The all-in adjusted values of every hand (module docstring).

    Raises:
        AllInError: a betting that does not replay to a finished hand, more than
            :data:`_MAX_PLAYERS` players, or cards missing in an adjusted hand.
    """
    game = hands.game
    if game.num_players > _MAX_PLAYERS:
        raise AllInError(f"the all-in adjustment handles up to {_MAX_PLAYERS} players, not {game.num_players}")
    values = hands.values.copy()
    adjusted = np.zeros(len(hands), dtype=bool)
    runouts = np.zeros(len(hands), dtype=np.int64)
    finals: dict[str, tuple[State, int | None]] = {}
    done: dict[tuple[object, ...], tuple[FloatArray, int]] = {}
    for row, betting in enumerate(hands.betting):
        found = finals.get(betting)
        if found is None:
            try:
                final = replay_hand(game, betting).final
            except ImportanceError as error:
                raise AllInError(f"{hands.where(row)}: {error}") from None
            found = finals[betting] = (final, allin_point(game, final))
        final, known = found
        if known is None:
            continue
        key = (betting, hands.hole[row].tobytes(), hands.board[row, :known].tobytes())
        result = done.get(key)
        if result is None:
            try:
                result = done[key] = runout_expectation(game, final, hands.hole[row], hands.board[row], known)
            except AllInError as error:
                raise AllInError(f"{hands.where(row)}: {error}") from None
        values[row], runouts[row] = result
        adjusted[row] = True
    return AllIn(values, adjusted, runouts)


def adjusted_hands(hands: Hands) -> tuple[Hands, AllIn]:
    """``hands`` with every value replaced by :func:`allin_values`' (so every
    per-player, per-position and duplicate statistic applies to it unchanged),
    and the adjustment itself."""
    result = allin_values(hands)
    return replace(hands, values=result.values), result
