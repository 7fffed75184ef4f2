"""Public chance sampling (PCS) CFR on the betting tree, tables indexed by card bucket.

Reference: Johanson (2016) thesis 'Robust Strategies and Counter-Strategies', ch3 (MCCFR
chance-sampling variants): PCS samples only the *public* chance events, here the whole
board of a hand, once per iteration; both positions' reach stays a vector over their
private hands, the walk returns a vector of counterfactual values, and terminals use the
O(n) fold and sorted-showdown evaluation with card removal (ch2 §2.4). Algorithm 1 there
runs one walk per position each iteration with the strategy recomputed from the latest
regrets, i.e. alternating updates, which is what we do (both walks share the iteration's
board).

Update rule: **vanilla CFR** by default, regret matching with the uniformly
weighted average (§6.1; Theorem 1 is stated for it), because CFR+'s clipping
(Burch thesis §4.1.1) throws away the negative regret that sampled noise would
later cancel: on Leduc with no abstraction, ``plus=True, linear=True`` reached
a lower exploitability in our runs at small iteration counts but stalled
above vanilla later (see the test file for the figures). Both are options:
``plus`` (regret-matching+) and ``linear`` (average weight ``max(t - delay, 0)``).

Private hands and buckets: reach and values stay over the real private hands
(those that fit the sampled board), so folds and showdowns are exact with card
removal; only the regret and average-strategy tables are indexed by bucket
(``Abstraction.bucket_rounds(board)``, one call per sampled board). At a
round-``r`` decision hand ``h`` plays ``sigma[node, :, bucket[r, h]]``; regrets
and average weights of the hands of one bucket add up in its column. With
:class:`~strategies.cfr.abstraction.card_abstraction.NullAbstraction` every hand is its own
bucket and PCS is an unbiased sampled form of vanilla CFR on the real game.

Importance weight: the board is drawn uniformly from the whole deck (round by
round, each round's cards sorted), so the probability of a board avoiding both
players' hands is the same for every pair of hands; terminal payoffs are
multiplied by its inverse (:func:`board_scale`), which makes each sampled
counterfactual value an unbiased estimate of the full-tree one. Hands that clash
with the sampled board get zero reach and no update on that iteration.

Layout: ``regret`` and ``cumulative`` are ``float64[A, R]``: decision row ``d`` of
the betting tree owns columns ``row_start[d] .. row_start[d + 1] - 1``, one per
bucket of its round.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.evaluate import rank_hands
from poker.gamedef import Game
from poker.protocol import MatchState
from poker.state import Action
from strategies.base import PublicState, Strategy
from strategies.cfr.abstraction.card_abstraction import (
    NULL_SPEC,
    Abstraction,
    NullAbstraction,
    buckets_by_round,
    load_abstraction,
)
from strategies.cfr.abstraction.card_tables import AbstractionError
from strategies.cfr.solvers import _pcs_kernels
from strategies.cfr.strategy_file import BUCKETS, PUBLIC_TREE, StrategyFile, StrategyFileError
from strategies.cfr.tree.betting import BettingTree, build_betting_tree
from strategies.cfr.tree.public import BettingAbstraction, NodeKind, Tree

__all__ = [
    "LosslessAbstraction",
    "PCSError",
    "PCSSolver",
    "PCSStrategy",
    "board_scale",
    "bucket_strategy",
    "exact_buckets",
    "resume_solver",
    "row_layout",
    "strategy_file",
    "tree_strategy",
]

#: Games with at most this many final boards get every board's tables up front
#: (and the lossless abstraction).
_CACHE_BOARDS = 100_000


class PCSError(ValueError):
    """Settings or arrays that do not fit the betting tree and abstraction."""


class LosslessAbstraction:
    """No card abstraction, in the form PCS tables need: a round-``r`` bucket is the
    pair (board dealt so far, private hand), so information sets are exactly the
    real game's. (:class:`NullAbstraction` numbers hands alone, which would merge
    one hand's information sets across boards; PCS replaces it with this.) Only
    for games with few boards: the tables have ``boards(r) * H`` columns per
    round-``r`` decision. Boards list each round's cards ascending."""

    def __init__(self, game: Game, max_boards: int = _CACHE_BOARDS) -> None:
        self.game = game
        self._hands = private_hands(game)
        deck = sorted(game.deck())
        prefixes: list[tuple[int, ...]] = [()]
        self._index: list[dict[tuple[int, ...], int]] = []
        for r in range(game.num_rounds):
            if r > 0:
                prefixes = [
                    p + c
                    for p in prefixes
                    for c in itertools.combinations([x for x in deck if x not in p], game.num_board_cards[r])
                ]
            if len(prefixes) > max_boards:
                raise PCSError(
                    f"{len(prefixes)} boards in round {r}: too many to solve without a card abstraction;"
                    " give one (e.g. ehs2:5:perfect)"
                )
            self._index.append({p: i for i, p in enumerate(prefixes)})

    @property
    def name(self) -> str:
        return NULL_SPEC

    def num_buckets(self, round: int) -> int:
        return len(self._index[round]) * len(self._hands)

    def buckets(self, round: int, board: Sequence[int]) -> npt.NDArray[np.int32]:
        key = self._key(round, board)
        if key not in self._index[round]:
            raise PCSError(f"board {list(board)} is not a round-{round} board of the game")
        out = self._index[round][key] * len(self._hands) + np.arange(len(self._hands), dtype=np.int32)
        out[np.isin(self._hands, list(board)).any(axis=1)] = -1
        return out.astype(np.int32)

    def bucket_rounds(self, board: Sequence[int]) -> npt.NDArray[np.int32]:
        return buckets_by_round(self, self.game, board)

    def bucket(self, round: int, hole: Sequence[int], board: Sequence[int]) -> int:
        row = {tuple(int(c) for c in h): i for i, h in enumerate(self._hands)}[tuple(sorted(int(c) for c in hole))]
        return int(self.buckets(round, board)[row])

    def _key(self, round: int, board: Sequence[int]) -> tuple[int, ...]:
        cards = [int(c) for c in board]
        key: list[int] = []
        for r in range(round + 1):
            key.extend(sorted(cards[self.game.total_board_cards(r - 1) if r else 0 : self.game.total_board_cards(r)]))
        return tuple(key)


def exact_buckets(game: Game, abstraction: Abstraction | None) -> Abstraction:
    """``abstraction``, with ``None`` and :class:`NullAbstraction` (spec ``none``)
    replaced by :class:`LosslessAbstraction`."""
    if abstraction is None or isinstance(abstraction, NullAbstraction):
        return LosslessAbstraction(game)
    return abstraction


def board_scale(game: Game) -> float:
    """Inverse probability that a board drawn from the whole deck avoids two given
    private hands: ``prod_r C(D - s_r, n_r) / C(D - 2k - s_r, n_r)`` over the
    rounds (``D`` deck size, ``k`` hole cards, ``s_r`` cards dealt before round
    ``r``, ``n_r`` dealt in it)."""
    deck = len(game.deck())
    held = 2 * game.num_hole_cards
    scale = 1.0
    dealt = 0
    for r in range(game.num_rounds):
        n = game.num_board_cards[r]
        scale *= math.comb(deck - dealt, n) / math.comb(deck - held - dealt, n)
        dealt += n
    return scale


def row_layout(tree: BettingTree, abstraction: Abstraction) -> npt.NDArray[np.int64]:
    """``int64[D + 1]`` first column of each decision row in the bucket tables (and the total)."""
    counts = [abstraction.num_buckets(int(tree.round[n])) for n in tree.decision_nodes]
    start = np.zeros(len(counts) + 1, dtype=np.int64)
    start[1:] = np.cumsum(counts)
    return start


def _all_boards(game: Game, limit: int = _CACHE_BOARDS) -> list[tuple[int, ...]] | None:
    """Every final board in deal order (each round's cards ascending), or None if
    there are more than ``limit``."""
    deck = sorted(game.deck())
    count, dealt = 1, 0
    for r in range(game.num_rounds):
        count *= math.comb(len(deck) - dealt, game.num_board_cards[r])
        dealt += game.num_board_cards[r]
    if count > limit:
        return None
    boards: list[tuple[int, ...]] = [()]
    for r in range(game.num_rounds):
        boards = [
            b + c for b in boards for c in itertools.combinations([x for x in deck if x not in b], game.num_board_cards[r])
        ]
    return boards


@dataclass(frozen=True)
class _Board:
    """The compact per-board arrays of one iteration."""

    valid: npt.NDArray[np.intp]
    hand_cards: npt.NDArray[np.int64]
    buckets: npt.NDArray[np.int32]
    ranks: npt.NDArray[np.int32]
    order: npt.NDArray[np.int32]


class PCSSolver:
    """PCS state on the betting tree of ``game``, advanced in place by :meth:`run`.

    Args:
        game: a two-player game.
        abstraction: card abstraction (default none: :class:`LosslessAbstraction`).
        betting: no-limit betting abstraction (limit games take none).
        seed: seed of the board sampler (``numpy.random.default_rng``).
        plus: regret-matching+ (clip regrets at zero) instead of regret matching.
        linear: average weight ``max(t - delay, 0)`` instead of 1 from ``t > delay``.
        delay: iterations left out of the average (or subtracted from the linear weight).
    """

    def __init__(
        self,
        game: Game,
        abstraction: Abstraction | None = None,
        *,
        betting: BettingAbstraction | None = None,
        seed: int = 0,
        plus: bool = False,
        linear: bool = False,
        delay: int = 0,
    ) -> None:
        if delay < 0:
            raise PCSError(f"the averaging delay must be non-negative, got {delay}")
        self.game = game
        self.abstraction = exact_buckets(game, abstraction)
        self.tree = build_betting_tree(game, betting)
        self.seed = seed
        self.plus = plus
        self.linear = linear
        self.delay = delay
        self.rng = np.random.default_rng(seed)
        self.iteration = 0
        tree = self.tree
        self.row_start = row_layout(tree, self.abstraction)
        self.num_buckets = np.array([self.abstraction.num_buckets(r) for r in range(game.num_rounds)], np.int64)
        self.row_actions = tree.num_children[tree.decision_nodes].astype(np.int64)
        width = int(self.row_start[-1])
        self.regret = np.zeros((tree.max_actions, width))
        self.cumulative = np.zeros((tree.max_actions, width))
        self._kernel_tree = (
            tree.kind,
            tree.player,
            tree.round,
            tree.first_child,
            tree.num_children,
            tree.decision_index,
        )
        self._payoff = tree.payoff
        self._scale = board_scale(game)
        self._hands = private_hands(game).astype(np.int64)
        self._deck = np.array(sorted(game.deck()), dtype=np.int64)
        self._slots = np.searchsorted(self._deck, self._hands).astype(np.int64)
        self._cuts = np.cumsum([0] + [game.num_board_cards[r] for r in range(game.num_rounds)])
        depth = np.zeros(tree.num_nodes, dtype=np.int64)
        for node in range(1, tree.num_nodes):
            depth[node] = depth[tree.parent[node]] + 1
        levels = int(depth.max()) + 2
        n = len(self._hands)
        self._reach = np.zeros((levels, 2, n))
        self._values = np.zeros((levels, n))
        self._child = np.zeros((levels, tree.max_actions, n))
        self._sigma = np.zeros((levels, tree.max_actions, int(self.num_buckets.max())))
        self._boards = _all_boards(game)
        self._stack = None if self._boards is None else self._stack_tables(self._boards)

    def _stack_tables(self, boards: list[tuple[int, ...]]) -> tuple[npt.NDArray[Any], ...]:
        """Every board's compact tables stacked (games with few boards), padded to H hands."""
        tables = [self._board(b) for b in boards]
        m, n, rounds = len(boards), len(self._hands), self.game.num_rounds
        buckets = np.zeros((m, rounds, n), dtype=np.int32)
        cards = np.zeros((m, n, self._hands.shape[1]), dtype=np.int64)
        ranks = np.zeros((m, n), dtype=np.int32)
        order = np.zeros((m, n), dtype=np.int32)
        valid = np.array([len(t.valid) for t in tables], dtype=np.int64)
        for i, t in enumerate(tables):
            k = len(t.valid)
            buckets[i, :, :k] = t.buckets
            cards[i, :k] = t.hand_cards
            ranks[i, :k] = t.ranks
            order[i, :k] = t.order
        return buckets, cards, ranks, order, valid

    def sample_board(self) -> tuple[int, ...]:
        """The next board from the sampler, uniform over the deals: in games with
        few boards one of :func:`_all_boards` (one ``integers`` draw), else drawn
        from the deck (each round's cards ascending)."""
        if self._boards is not None:
            return self._boards[int(self.rng.integers(len(self._boards)))]
        drawn = self._deck[self.rng.choice(len(self._deck), size=int(self._cuts[-1]), replace=False)]
        cards: list[int] = []
        for r in range(self.game.num_rounds):
            cards.extend(sorted(int(c) for c in drawn[self._cuts[r] : self._cuts[r + 1]]))
        return tuple(cards)

    def _board(self, board: tuple[int, ...]) -> _Board:
        cards = np.array(board, dtype=np.int64)
        valid = np.flatnonzero(~np.isin(self._hands, cards).any(axis=1))
        hands = self._hands[valid]
        if len(board):
            buckets = self.abstraction.bucket_rounds(list(board))[:, valid]
            ranks = rank_hands(np.concatenate([hands, np.tile(cards, (len(hands), 1))], axis=1))
        else:
            buckets = np.array([self.abstraction.buckets(0, [])[valid]], dtype=np.int32)
            ranks = rank_hands(hands)
        if (buckets < 0).any():
            raise PCSError(f"the card abstraction gives no bucket to a hand that fits the board {list(board)}")
        return _Board(
            valid=valid,
            hand_cards=np.ascontiguousarray(self._slots[valid]),
            buckets=np.ascontiguousarray(buckets, dtype=np.int32),
            ranks=np.ascontiguousarray(ranks, dtype=np.int32),
            order=np.argsort(ranks, kind="stable").astype(np.int32),
        )

    def iterate(self, board: Sequence[int]) -> None:
        """One iteration (both positions, alternating) on ``board`` (the cards of
        every round in deal order, each round's cards ascending)."""
        t = self.iteration + 1
        weight = float(max(t - self.delay, 0)) if self.linear else (1.0 if t > self.delay else 0.0)
        tables = self._board(tuple(int(c) for c in board))
        _pcs_kernels.pcs_iteration(
            self._kernel_tree,
            self._payoff,
            self.row_start,
            self.num_buckets,
            tables.buckets,
            tables.hand_cards,
            tables.ranks,
            tables.order,
            self._scale,
            self.regret,
            self.cumulative,
            weight,
            self.plus,
            self._reach,
            self._values,
            self._child,
            self._sigma,
            len(self._deck),
        )
        self.iteration = t

    def run(self, iterations: int) -> None:
        """Run ``iterations`` more iterations, each on a freshly sampled board."""
        if iterations < 0:
            raise PCSError(f"iterations must be non-negative, got {iterations}")
        if self._stack is None or self._boards is None:
            for _ in range(iterations):
                self.iterate(self.sample_board())
            return
        picks = self.rng.integers(len(self._boards), size=iterations)
        buckets, cards, ranks, order, valid = self._stack
        _pcs_kernels.pcs_batch(
            self._kernel_tree, self._payoff, self.row_start, self.num_buckets, picks, self.iteration + 1,
            self.linear, self.delay, buckets, cards, ranks, order, valid, self._scale, self.regret, self.cumulative,
            self.plus, self._reach, self._values, self._child, self._sigma, len(self._deck),
        )  # fmt: skip
        self.iteration += iterations

    def average(self) -> npt.NDArray[np.float64]:
        """The normalised cumulative strategy ``float64[A, R]`` (uniform where unvisited)."""
        out = np.zeros_like(self.cumulative)
        _pcs_kernels.normalise_rows(self.cumulative, self.row_start, self.row_actions, out)
        return out

    def current(self) -> npt.NDArray[np.float64]:
        """The regret-matched strategy the next iteration plays, ``float64[A, R]``."""
        positive = np.maximum(self.regret, 0.0)
        out = np.zeros_like(self.regret)
        _pcs_kernels.normalise_rows(positive, self.row_start, self.row_actions, out)
        return out

    def strategy(self) -> PCSStrategy:
        """The average strategy as a :class:`PCSStrategy`."""
        return PCSStrategy(self.game, self.abstraction, self.average(), betting=self.tree.abstraction, tree=self.tree)

    @property
    def settings(self) -> dict[str, Any]:
        """What a checkpoint needs to continue this run exactly (sampler state included)."""
        return {
            "seed": self.seed,
            "plus": self.plus,
            "linear_average": self.linear,
            "delay": self.delay,
            "rng_state": json.dumps(self.rng.bit_generator.state),
        }

    @classmethod
    def resume(
        cls,
        game: Game,
        abstraction: Abstraction,
        settings: dict[str, Any],
        *,
        iteration: int,
        regret: npt.NDArray[np.float64],
        cumulative: npt.NDArray[np.float64],
        betting: BettingAbstraction | None = None,
    ) -> PCSSolver:
        """A solver continuing a checkpoint (``settings`` from :attr:`settings`)."""
        solver = cls(
            game,
            abstraction,
            betting=betting,
            seed=int(settings.get("seed", 0)),
            plus=bool(settings.get("plus", False)),
            linear=bool(settings.get("linear_average", False)),
            delay=int(settings.get("delay", 0)),
        )
        if regret.shape != solver.regret.shape or cumulative.shape != solver.cumulative.shape:
            raise PCSError(
                f"checkpoint arrays have shapes {regret.shape}, {cumulative.shape};"
                f" the betting tree and abstraction need {solver.regret.shape}"
            )
        solver.regret[...] = regret
        solver.cumulative[...] = cumulative
        solver.iteration = iteration
        if "rng_state" in settings:
            try:
                solver.rng.bit_generator.state = json.loads(settings["rng_state"])
            except (ValueError, TypeError, KeyError) as error:
                raise PCSError(f"the checkpoint's sampler state is damaged: {error}") from None
        return solver


def strategy_file(solver: PCSSolver, exploitability: float | None, *, checkpoint: bool = True) -> StrategyFile:
    """A bucket-layout :class:`StrategyFile` of ``solver`` (average strategy, and
    regrets, cumulative strategy and sampler state when ``checkpoint``);
    ``exploitability`` is whatever was measured (chips per hand) or None."""
    arrays = {"strategy": solver.average()}
    if checkpoint:
        arrays.update(regret=solver.regret, cumulative=solver.cumulative)
    return StrategyFile(
        game=solver.game,
        abstraction=solver.tree.abstraction,
        algorithm="pcs",
        iterations=solver.iteration,
        exploitability=exploitability,
        arrays=arrays,
        settings=solver.settings,
        card_abstraction=solver.abstraction.name,
        layout=BUCKETS,
    )


def resume_solver(saved: StrategyFile, abstraction: Abstraction | None = None) -> PCSSolver:
    """The solver a PCS checkpoint continues (``abstraction`` default: rebuilt
    from the header's spec with :func:`load_abstraction`).

    Raises:
        StrategyFileError: not a PCS checkpoint.
    """
    if saved.layout != BUCKETS or saved.algorithm != "pcs":
        raise StrategyFileError(f"a {saved.algorithm} strategy file is not a PCS checkpoint")
    if "regret" not in saved.arrays or "cumulative" not in saved.arrays:
        raise StrategyFileError("the file holds no regrets and cumulative strategy to resume from")
    return PCSSolver.resume(
        saved.game,
        load_abstraction(saved.card_abstraction, saved.game) if abstraction is None else abstraction,
        saved.settings,
        iteration=saved.iterations,
        regret=saved.arrays["regret"],
        cumulative=saved.arrays["cumulative"],
        betting=saved.abstraction,
    )


def bucket_strategy(saved: StrategyFile) -> PCSStrategy:
    """The :class:`PCSStrategy` of a bucket-table strategy file (its card
    abstraction the one a compact file carries, else rebuilt from the header's
    spec with :func:`load_abstraction`).

    Raises:
        StrategyFileError: not a bucket table, or one that does not fit its card abstraction.
    """
    if saved.layout != BUCKETS:
        raise StrategyFileError("only a bucket-table strategy file has a bucket strategy")
    try:
        abstraction = saved.cards if saved.cards is not None else load_abstraction(saved.card_abstraction, saved.game)
        table = saved.arrays["strategy"]
        return PCSStrategy(saved.game, abstraction, table, betting=saved.abstraction, levels=saved.levels)
    except (AbstractionError, PCSError) as error:
        raise StrategyFileError(" ".join(f"card abstraction {saved.card_abstraction!r}: {error}".split())) from None


def tree_strategy(saved: StrategyFile, tree: Tree) -> npt.NDArray[np.float64]:
    """The strategy of a strategy file of either layout as ``float64[D, A, H]`` on
    ``tree`` (its :meth:`StrategyFile.build_tree`): a public-tree file's own
    array, a bucket table expanded by its :func:`bucket_strategy`.

    Raises:
        StrategyFileError: a bucket table that does not fit its card abstraction.
    """
    if saved.layout == PUBLIC_TREE:
        return saved.strategy
    return bucket_strategy(saved).tree_strategy(tree)


class PCSStrategy(Strategy):
    """A strategy in bucket tables (``float64[A, R]``, :func:`row_layout` columns)
    on the betting tree of ``game``: ``policy(public)`` gives row ``h`` =
    ``table[:, column of bucket(round, board)[h]]`` at the node of
    ``public.state``; hands that clash with the board get the uniform row.
    ``act`` samples the viewer's row with a seeded generator. ``levels`` > 0:
    the table is a compact file's ``uint8`` quantization, played as ``table /
    levels`` (the table stays a quarter of float32's size in memory)."""

    name = "pcs"

    def __init__(
        self,
        game: Game,
        abstraction: Abstraction,
        table: npt.NDArray[np.float64],
        *,
        betting: BettingAbstraction | None = None,
        tree: BettingTree | None = None,
        seed: int | None = None,
        levels: int = 0,
    ) -> None:
        self.game = game
        self.levels = levels
        self.abstraction = exact_buckets(game, abstraction)
        self.tree = build_betting_tree(game, betting) if tree is None else tree
        self.row_start = row_layout(self.tree, self.abstraction)
        if table.shape != (self.tree.max_actions, int(self.row_start[-1])):
            raise PCSError(
                f"a strategy table on this betting tree and abstraction has shape"
                f" {(self.tree.max_actions, int(self.row_start[-1]))}, got {table.shape}"
            )
        self.table = table
        self._rng = np.random.default_rng(seed)

    @cached_property
    def _hands(self) -> dict[tuple[int, ...], int]:
        return {tuple(int(c) for c in h): i for i, h in enumerate(private_hands(self.game))}

    def _node(self, public: PublicState) -> int:
        node = self.tree.node_of_key.get(public.state.betting_string())
        if node is None or self.tree.kind[node] != NodeKind.DECISION:
            raise PCSError(f"betting {public.state.betting_string()!r} is not a decision of the strategy's tree")
        if public.actions != self.tree.actions(node):
            raise PCSError(
                f"policy asked for actions {[str(a) for a in public.actions]} at {self.tree.key(node)!r};"
                f" the strategy's tree has {[str(a) for a in self.tree.actions(node)]}"
            )
        return node

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        node = self._node(public)
        n = int(self.tree.num_children[node])
        buckets = self.abstraction.buckets(int(self.tree.round[node]), list(public.board))
        base = int(self.row_start[self.tree.decision_index[node]])
        rows = self._probabilities(self.table[:n, base + np.maximum(buckets, 0)]).T
        rows[buckets < 0] = 1.0 / n
        return rows

    def _probabilities(self, block: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """``block`` of the table as probabilities, a fresh array (a float table's own dtype)."""
        if self.levels:
            return block / self.levels
        return block.copy()

    def act(self, view: MatchState) -> Action:
        node = self.tree.node_of_key.get(view.state.betting_string(), -1)
        if node < 0 or self.tree.kind[node] != NodeKind.DECISION:
            raise PCSError(f"betting {view.state.betting_string()!r} is not a decision of the strategy's tree")
        actions = self.tree.actions(node)
        board = view.board[: self.game.total_board_cards(view.state.round)]
        hole = tuple(sorted(int(c) for c in view.hole[view.viewer]))
        row = self.policy(PublicState(view.state, board, actions))[self._hands[hole]]
        return actions[int(self._rng.choice(len(actions), p=row / row.sum()))]

    def tree_strategy(self, tree: Tree) -> npt.NDArray[np.float64]:
        """This strategy as a public-tree array ``float64[D, A, H]`` on ``tree`` (a
        tree of the same game and betting, e.g. for the exact best response:
        the real-game exploitability of an abstract strategy)."""
        strategy = np.zeros((tree.num_decisions, tree.max_actions, tree.num_hands))
        cache: dict[tuple[int, tuple[int, ...]], npt.NDArray[np.int32]] = {}
        for d, node in enumerate(tree.decision_nodes):
            board = tree.boards[tree.board_index[node]]
            own = self.tree.node_of_key.get(tree.states[node].betting_string())
            if own is None:
                raise PCSError(f"node {tree.key(int(node))!r} of the tree is not in the strategy's betting tree")
            r = int(self.tree.round[own])
            if (r, board) not in cache:
                cache[(r, board)] = self.abstraction.buckets(r, list(board))
            buckets = cache[(r, board)]
            n = int(self.tree.num_children[own])
            base = int(self.row_start[self.tree.decision_index[own]])
            strategy[d, :n, :] = self._probabilities(self.table[:n, base + np.maximum(buckets, 0)])
            strategy[d, :n, buckets < 0] = 1.0 / n
        return strategy
