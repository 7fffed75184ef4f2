"""Evaluators at a lookahead's depth limit: both players' counterfactual values
at the end of the current street, given both ranges and the pot.

Continual re-solving (Burch 2017 thesis §6.1.1) cuts its lookahead at
the end of the street and asks an *evaluator* for both players' counterfactual
value vectors at each cut, the chance node that deals the next board cards. The
evaluator sees the public state (board and pot) and the two range vectors and
answers values of one equilibrium of the rest of the hand. Three kinds:

* ``exact``: no cut at all; the lookahead recurses to the end of the hand
  (:func:`strategies.resolve.lookahead.build_lookahead`). It is not an object here:
  the agent builds the engine's full tree instead.
* ``net`` (:class:`NetEvaluator`): a learned value network
  (:mod:`strategies.resolve.values`), trained by ``arena train-values`` on
  situations the engine solves exactly (DeepStack-Leduc's set-up).
* ``equity`` (:class:`EquityEvaluator`): a *weaker heuristic*, for games without a
  trained network (HUNL): every hand's value is what it would win if the pot were
  shown down now, averaged over the remaining boards (all of them, or a seeded
  sample), i.e. its pot share by equity against the opponent's range. It ignores
  all later betting, so it undervalues hands that play well and overvalues
  drawing hands that could be bet off their equity.

Values are counterfactual in the engine's units (:mod:`strategies.cfr.tree._kernels`):
``v_p(h) = sum_o reach_other(o) * (chips p wins with h against o)``, opponent
hands that clash with ``h`` or the board weighing nothing, and averaged over the
deals below with the probability of each deal given both private hands. In
those units ``reach_0 . v_0 + reach_1 . v_1 = 0`` for any zero-sum evaluation.

The run-outs (:class:`Runouts`) also give the lookahead its terminal values:
showdowns on the last street (one board: the real one) and all-in calls before
it (every completion of the board). Before hold'em's flop they are exact instead
of sampled (:func:`runouts_for`, :mod:`strategies.resolve.preflop_equity`).
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.evaluate import rank_hands
from poker.gamedef import Game
from poker.state import State
from strategies.resolve import _kernels
from strategies.resolve.preflop_equity import PreflopShowdowns

if TYPE_CHECKING:
    from strategies.resolve.values import ValueNet

__all__ = [
    "CACHED_RUNOUTS",
    "SUMMED_FROM_BOARDS",
    "EquityEvaluator",
    "Evaluator",
    "HandTable",
    "LeafEvaluator",
    "NetEvaluator",
    "Runouts",
    "StreetValues",
    "fold_reach",
    "is_holdem",
    "runouts_for",
]

_RUNOUT_VALUES: Callable[..., None] = _kernels.runout_values
_FOLD_REACH: Callable[..., None] = _kernels.fold_reach_rows

#: Boards an ``equity`` evaluation enumerates at most; beyond this it draws a seeded sample.
DEFAULT_MAX_BOARDS = 64
#: From how many boards :class:`Runouts` answers from a summed hands x hands table:
#: it costs about a sweep per board to build and a sweep of about 8 boards a call
#: (measured on hold'em: 32 boards, sweeps 2-5 ms a call of 4 nodes, the table 1-2 ms).
SUMMED_FROM_BOARDS = 16
#: Boards whose run-outs an :class:`EquityEvaluator` keeps, the oldest dropped: a
#: re-solve asks about its own board (every iteration) and, carrying values across
#: a deal, the one dealt. Without a bound a long match kept every board it saw
#: (340 KB a flop; with the summed table 7 MB more).
CACHED_RUNOUTS = 4
#: The most hands for a summed table (float32, hands x hands: 7 MB for hold'em's 1326).
SUMMED_MAX_HANDS = 2048


class HandTable:
    """The private hands of a game with the arrays the vectorised value code
    needs: ``cards`` (``int8[H, k]``) and ``slots`` (each card's index in the
    sorted deck, ``int64[H, k]``, as the engine's kernels number cards)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.cards = private_hands(game)
        self.deck = np.array(sorted(game.deck()), dtype=np.int64)
        self.slots = np.searchsorted(self.deck, self.cards).astype(np.int64)

    @property
    def num_hands(self) -> int:
        return len(self.cards)

    def board_mask(self, board: tuple[int, ...]) -> npt.NDArray[np.float64]:
        """1 for the hands that share no card with ``board``, ``float64[H]``."""
        if not board:
            return np.ones(self.num_hands)
        clash = (self.cards[:, :, None] == np.array(board, dtype=np.int64)[None, None, :]).any(axis=(1, 2))
        mask: npt.NDArray[np.float64] = (~clash).astype(np.float64)
        return mask


def fold_reach(table: HandTable, opp_reach: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """For each row of ``opp_reach`` (``[L, H]``) and each hand ``h``, the opponent
    reach over hands sharing no card with ``h``: the total minus the per-card sums
    of ``h``'s cards, plus ``h`` itself once for two-card hands
    (inclusion-exclusion; Johanson 2016 thesis ch2 §2.4), in the engine's numba kernel
    (single-threaded: a BLAS product here stalls on a busy machine)."""
    reach = np.ascontiguousarray(opp_reach, dtype=np.float64)
    out = np.empty_like(reach)
    _FOLD_REACH(reach, table.slots, out)
    return out


class Runouts:
    """Showdown values averaged over the completions of ``board`` to a full
    board: every completion if there are at most ``max_boards``, else
    ``max_boards`` completions drawn with a generator seeded by ``seed`` and the
    board (so a lookahead's values do not depend on what ran before). Each
    completion is weighted so the sum estimates the expectation given both
    private hands: ``comb(n, k) / (K * comb(n - 2 * hole, k))`` with ``n``
    cards left, ``k`` to deal and ``K`` completions kept (``1 / comb(n - 2 * hole,
    k)`` when all are kept, the engine's chance weight).

    A sorted sweep per board answers each call (boards x hands work). Asked a
    second time, by a re-solve that asks every iteration, a run-out set of at
    least :data:`SUMMED_FROM_BOARDS` boards first sums its boards into one hands
    x hands table (:func:`_kernels.showdown_sums`, once) and answers from it
    (hands x hands work whatever the boards): on hold'em's turn, 48 rivers, a
    quarter to a third of the sweeps' time. Both are the same sums up to
    rounding."""

    def __init__(self, table: HandTable, board: tuple[int, ...], *, max_boards: int = DEFAULT_MAX_BOARDS, seed: int = 0):
        game = table.game
        self.table = table
        self.board = board
        missing = game.total_board_cards(game.num_rounds - 1) - len(board)
        remaining = np.array([c for c in sorted(game.deck()) if c not in board], dtype=np.int64)
        n = len(remaining)
        total = math.comb(n, missing)
        if total <= max_boards:
            completions = np.array(list(itertools.combinations(remaining, missing)), dtype=np.int64).reshape(total, missing)
        else:
            rng = np.random.default_rng([seed, *board])
            keys = rng.random((max_boards, n))
            completions = np.sort(remaining[np.argsort(keys, axis=1)[:, :missing]], axis=1)
        boards = np.concatenate([np.tile(np.array(board, dtype=np.int64), (len(completions), 1)), completions], axis=1)
        self.boards = boards
        self.weight = total / (len(boards) * math.comb(n - 2 * game.num_hole_cards, missing))
        k_boards, n_hands = len(boards), table.num_hands
        hands = table.cards.astype(np.int64)
        clash = (hands[None, :, :, None] == boards[:, None, None, :]).any(axis=(2, 3))  # [K, H]
        ranks = np.full((k_boards, n_hands), -1, dtype=np.int32)
        valid = np.flatnonzero(~clash.ravel())
        rows = np.concatenate([np.repeat(hands[None], k_boards, axis=0), np.repeat(boards[:, None, :], n_hands, axis=1)], axis=2)
        ranks.ravel()[valid] = rank_hands(rows.reshape(k_boards * n_hands, -1)[valid])
        # Valid hands by rank, weakest first; the clashing ones after them, never read.
        self.n_valid = (~clash).sum(axis=1).astype(np.int32)
        self.order = np.argsort(np.where(clash, np.iinfo(np.int32).max, ranks), axis=1, kind="stable").astype(np.int32)
        self.ranks = ranks
        self._asked = 0
        self._sums: npt.NDArray[np.float32] | None = None

    def values(self, opp_reach: npt.NDArray[np.float64], stakes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Counterfactual values ``[L, H]`` of the hands of the player whose
        opponent has ``opp_reach`` (``[L, H]``) when ``stakes[l]`` chips each are
        shown down at node ``l`` (a sorted sweep per board serving every node,
        or the summed table: the class docstring)."""
        self._asked += 1
        if self._sums is None and self._asked > 1 and self._summable():
            self._sums = np.empty((self.table.num_hands, self.table.num_hands), dtype=np.float32)
            _kernels.showdown_sums(self.ranks, self.table.slots, self._sums)
        if self._sums is not None:
            rows = np.ascontiguousarray(opp_reach, dtype=np.float64)  # [L, H]
            summed = np.empty_like(rows)
            _kernels.summed_values(self._sums, rows, np.asarray(stakes, dtype=np.float64), self.weight, summed)
            return summed
        reach = np.ascontiguousarray(np.asarray(opp_reach, dtype=np.float64).T)  # [H, L]: the kernel's nodes run inside
        out = np.empty_like(reach)
        _RUNOUT_VALUES(reach, np.asarray(stakes, dtype=np.float64), self.table.slots, self.ranks, self.order, self.n_valid, self.weight, out)
        return out.T

    def both(self, reach: npt.NDArray[np.float64], stakes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Both players' values ``[2, L, H]`` for the reaches ``[2, L, H]``."""
        return np.stack([self.values(reach[1], stakes), self.values(reach[0], stakes)])

    def _summable(self) -> bool:
        """Whether the summed table pays (enough boards) and is small enough (hands)."""
        return len(self.boards) >= SUMMED_FROM_BOARDS and self.table.num_hands <= SUMMED_MAX_HANDS


def is_holdem(game: Game) -> bool:
    """A full 52-card deck, two hole cards and five board cards: the game of the pre-flop table."""
    return game.num_suits == 4 and game.num_ranks == 13 and game.num_hole_cards == 2 and game.total_board_cards(game.num_rounds - 1) == 5


def runouts_for(table: HandTable, board: tuple[int, ...], *, max_boards: int = DEFAULT_MAX_BOARDS, seed: int = 0) -> Runouts | PreflopShowdowns:
    """The run-outs of ``board``: before hold'em's flop every board exactly, by
    hand class (:class:`~strategies.resolve.preflop_equity.PreflopShowdowns`: a
    sample of the 2.6 million boards left each hand's equity off by about 0.1 at
    the 8 a decision can afford), else :class:`Runouts`."""
    if not board and is_holdem(table.game):
        return PreflopShowdowns(table.cards, lambda: Runouts(table, board, max_boards=max_boards, seed=seed))
    game = table.game
    if game.total_board_cards(game.num_rounds - 1) - len(board) == 1:
        max_boards = max(max_boards, len(table.deck))  # one card to come: every one (a river sample is a coin flip)
    return Runouts(table, board, max_boards=max_boards, seed=seed)


#: Values ``[2, L, H]`` at depth-limit leaves, the next street's deals and the values per deal (or None).
StreetValues = tuple[npt.NDArray[np.float64], list[tuple[int, ...]], npt.NDArray[np.float64] | None]


class LeafEvaluator(Protocol):
    """What a street tree's solver asks at its depth-limit leaves."""

    def street_values(
        self, board: tuple[int, ...], leaves: Sequence[State], continuation: npt.NDArray[np.int8],
        reach: npt.NDArray[np.float64], positions: tuple[int, ...] = (0, 1),
    ) -> StreetValues:  # fmt: skip
        """The players' values ``[2, L, H]`` at the leaves (their states, and
        the continuation picked at each, -1 where none is:
        :mod:`strategies.resolve.continuations`) for the reaches ``[2, L, H]``,
        with the values per deal of the next street's cards as
        :meth:`Evaluator.values_by_deal`; only ``positions``' values need be
        right (the solver's pass for one player reads only its own)."""
        ...


class Evaluator(ABC):
    """Both players' counterfactual values where a lookahead stops at the end of
    a street (see the module docstring for the units)."""

    #: The name in ``resolve:evaluator=NAME``.
    name: str

    def __init__(self, game: Game) -> None:
        self.game = game
        self.table = HandTable(game)

    @abstractmethod
    def leaf_values(
        self, board: tuple[int, ...], pots: npt.NDArray[np.float64], reach: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """Values ``[2, L, H]`` at ``L`` depth-limit leaves on ``board`` (the
        cards dealt so far; the next street's cards are still to come), each
        with ``pots[l]`` chips committed by each player and the reaches
        ``reach[2, L, H]``."""

    def values_by_deal(
        self, board: tuple[int, ...], pots: npt.NDArray[np.float64], reach: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.float64], list[tuple[int, ...]], npt.NDArray[np.float64] | None]:
        """:meth:`leaf_values`, with the values behind them per deal of the next
        street's cards (the boards and ``values[2, B, L, H]``) for an evaluator
        that has them (else ``[]`` and None): a re-solve averages them over its
        iterations, to carry the values of the deal that comes."""
        return self.leaf_values(board, pots, reach), [], None

    def street_values(
        self, board: tuple[int, ...], leaves: Sequence[State], continuation: npt.NDArray[np.int8],
        reach: npt.NDArray[np.float64], positions: tuple[int, ...] = (0, 1),
    ) -> StreetValues:  # fmt: skip
        """:class:`LeafEvaluator`'s question, answered from the pots alone (both positions)."""
        return self.values_by_deal(board, np.array([float(s.spent[0]) for s in leaves]), reach)

    @abstractmethod
    def board_values(
        self, board: tuple[int, ...], pot: float, reach: npt.NDArray[np.float64], leaf: State | None = None
    ) -> npt.NDArray[np.float64]:
        """Values ``[2, H]`` just after the next street's cards came (``board``
        includes them), with ``pot`` chips each and reaches ``[2, H]``
        (already zero on hands that clash with ``board``): what continual
        re-solving carries across a chance event. ``leaf`` is the depth limit's
        state, for an evaluator whose values depend on the betting that led
        there, not only on the pot."""


class EquityEvaluator(Evaluator):
    """The ``equity`` heuristic (module docstring): a showdown now, averaged over
    the remaining boards (at most ``max_boards`` of them, a seeded sample beyond)."""

    name = "equity"

    def __init__(self, game: Game, *, max_boards: int = DEFAULT_MAX_BOARDS, seed: int = 0) -> None:
        super().__init__(game)
        self.max_boards = max_boards
        self.seed = seed
        self._runouts: dict[tuple[int, ...], Runouts | PreflopShowdowns] = {}

    def runouts(self, board: tuple[int, ...]) -> Runouts | PreflopShowdowns:
        """The (cached) run-outs of ``board`` (:func:`runouts_for`)."""
        known = self._runouts.get(board)
        if known is None:
            if len(self._runouts) >= CACHED_RUNOUTS:  # a match deals ever new boards: drop the oldest
                self._runouts.pop(next(iter(self._runouts)))
            known = self._runouts[board] = runouts_for(self.table, board, max_boards=self.max_boards, seed=self.seed)
        return known

    def leaf_values(
        self, board: tuple[int, ...], pots: npt.NDArray[np.float64], reach: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        return self.runouts(board).both(reach, pots)

    def board_values(
        self, board: tuple[int, ...], pot: float, reach: npt.NDArray[np.float64], leaf: State | None = None
    ) -> npt.NDArray[np.float64]:
        values: npt.NDArray[np.float64] = self.runouts(board).both(reach[:, None, :], np.array([pot]))[:, 0]
        return values


class NetEvaluator(Evaluator):
    """A learned value network (:class:`strategies.resolve.values.ValueNet`) at
    the start of the street it was trained for: for each deal of that street's
    cards the network gives both players' values per hand as fractions of the
    pot for the two ranges (each masked by the new board and normalised), the
    zero-sum correction makes ``r_0 . y_0 + r_1 . y_1 = 0``, and the values are
    scaled back to counterfactual chips and averaged over the deals (DeepStack-
    Leduc's ``next_round_value``)."""

    name = "net"

    def __init__(self, game: Game, source: str | Path | ValueNet) -> None:
        """``source``: a value-net file for ``game``, or a loaded network."""
        from strategies.resolve.values import ValueNet, load_value_net

        super().__init__(game)
        self.net = source if isinstance(source, ValueNet) else load_value_net(source, game)

    @cached_property
    def _deal_weight(self) -> float:
        game = self.game
        n = len(game.deck()) - game.total_board_cards(self.net.round - 1)
        return 1.0 / math.comb(n - 2 * game.num_hole_cards, game.num_board_cards[self.net.round])

    def deals(self, board: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The boards after each deal of the net's street's cards to ``board``."""
        game = self.game
        if len(board) != game.total_board_cards(self.net.round - 1):
            raise ValueError(
                f"the value net evaluates the start of round {self.net.round + 1}; board {list(board)} is not the one before it"
            )
        remaining = [c for c in sorted(game.deck()) if c not in board]
        return [board + deal for deal in itertools.combinations(remaining, game.num_board_cards[self.net.round])]

    def leaf_values(
        self, board: tuple[int, ...], pots: npt.NDArray[np.float64], reach: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        return self.values_by_deal(board, pots, reach)[0]

    def values_by_deal(
        self, board: tuple[int, ...], pots: npt.NDArray[np.float64], reach: npt.NDArray[np.float64]
    ) -> tuple[npt.NDArray[np.float64], list[tuple[int, ...]], npt.NDArray[np.float64]]:
        deals = self.deals(board)
        masks = np.stack([self.table.board_mask(d) for d in deals])  # [B, H]
        n_leaves, n_hands = reach.shape[1], reach.shape[2]
        # Every (deal, leaf) pair is one row of the network's batch.
        masked = reach[:, None, :, :] * masks[None, :, None, :]  # [2, B, L, H]
        boards = np.repeat(np.arange(len(deals)), n_leaves)
        values = self.net.values(
            masked.reshape(2, -1, n_hands), np.tile(pots, len(deals)), [deals[b] for b in boards]
        ).reshape(2, len(deals), n_leaves, n_hands)
        leaf: npt.NDArray[np.float64] = self._deal_weight * values.sum(axis=1)
        return leaf, deals, values

    def board_values(
        self, board: tuple[int, ...], pot: float, reach: npt.NDArray[np.float64], leaf: State | None = None
    ) -> npt.NDArray[np.float64]:
        masked = reach * self.table.board_mask(board)[None, :]
        values: npt.NDArray[np.float64] = self.net.values(masked[:, None, :], np.array([float(pot)]), [board])[:, 0]
        return values
