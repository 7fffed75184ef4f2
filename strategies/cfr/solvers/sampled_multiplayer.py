"""External-sampling MCCFR for three-player limit games over card buckets:
Abou Risk & Szafron's 3-player limit hold'em agents (PR2, IR16) within one machine.

Reference: Abou Risk & Szafron (2010), 'Using Counterfactual Regret Minimization to
Create Competitive Multiplayer Poker Agents': ordinary CFR run on a
three-player abstract game, E[HS^2] percentile buckets, perfect recall with 2
buckets (PR2, river cap cut from 4 bets to 3 to fit memory, calling when the
real game goes past the cut) or imperfect recall with 16 (IR16). Their CFR
walked the whole betting tree per sampled deal for weeks; here each iteration
samples one deal (three hands and the board) and runs one *external-sampling*
traversal per position (Lanctot et al. 2009): the traverser's actions are all
explored and its regrets updated, the other two positions' actions are sampled
from their current strategies. Regrets are float32, the average strategy's sums
float64 (a hot information set is visited hundreds of millions of times: a
float32 sum stops growing at 2^24 visits).

The betting tree is that of the game with the raise caps ``max_raises`` (the
*betting cut*, default the game's own), kept as one row per distinct betting
situation (:class:`strategies.cfr.tree.betting_graph.BettingGraph`): hold'em's
full tree (9.7 million decisions, 14.2 million terminals) is a few thousand rows
and an agent finds its node by walking the real betting from the root.

Information sets are (decision, current bucket): the card abstraction
(:func:`strategies.cfr.abstraction.card_abstraction.load_abstraction`) says what a
bucket remembers (``ehs2:16:imperfect``: IR16's, the round's own E[HS^2]
bucket; a perfect-recall spec: the bucket sequence). Spec ``none`` (games
with at most two board cards: 3p Kuhn and Leduc) buckets (hand, board)
losslessly, so the solve is of the real game and its seven-step epsilon is
measured exactly by expanding the table onto
:func:`strategies.cfr.tree.multi.build_multi_tree`'s tree.

Averaging: the average strategy of position ``(traverser + 1) % 3`` is updated
where it acts on each traversal, by its current strategy with weight 1
(OpenSpiel's simple averaging; with three players it weights an information
set's histories by the other positions' reach too, as all sampled averaging
does). Determinism: iteration t of a seed draws the same deal and the same
actions however the run is split (a counter-based stream), and the kernels are
single-threaded, so the same seed and iterations give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game
from poker.state import ActionType, State
from strategies.cfr.abstraction.card_abstraction import (
    CardAbstraction,
    NullAbstraction,
    load_abstraction,
)
from strategies.cfr.abstraction.card_tables import AbstractionError, Progress, card_tables
from strategies.cfr.solvers import _sampled_kernels as _k
from strategies.cfr.tree.betting_graph import ACTIONS as _ACTIONS
from strategies.cfr.tree.betting_graph import DECISION, BettingGraph, bucket_widths, build_betting_graph, parse_cut
from strategies.cfr.tree.betting_graph import MAX_ROUNDS as _MAX_ROUNDS
from strategies.cfr.tree.multi import MultiTree
from strategies.cfr.tree.multi import PLAYERS as _PLAYERS
from strategies.cfr.tree.public import tree_actions

__all__ = ["ALGORITHM", "BucketTable", "SampledCFR"]

#: The ``--algorithm`` name and the strategy file's ``algorithm``.
ALGORITHM = "es-mccfr"
#: The settings key of the card abstraction's digest (None: lossless buckets).
ABSTRACTION_DIGEST = "abstraction_digest"
_BATCH = 4096  # deals per kernel call


Buckets = CardAbstraction | NullAbstraction


@dataclass(frozen=True, eq=False)
class BucketTable:
    """Where a table's rows are: the graph, each round's columns (``width``:
    buckets per decision) and the first row of each round's block (``base``)."""

    graph: BettingGraph
    abstraction: Buckets

    @cached_property
    def width(self) -> npt.NDArray[np.int64]:
        game = self.graph.game
        widths = bucket_widths(game, self.abstraction.name)
        return np.array(widths + (1,) * (_MAX_ROUNDS - game.num_rounds), dtype=np.int64)

    @cached_property
    def base(self) -> npt.NDArray[np.int64]:
        sizes = self.graph.count[self.graph.root] * self.width
        return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)

    @property
    def rows(self) -> int:
        return int((self.graph.count[self.graph.root] * self.width).sum())

    def row_actions(self) -> npt.NDArray[np.int8]:
        g = self.graph
        out = np.zeros(self.rows, dtype=np.int8)
        _k.row_actions(g.root, g.kind, g.round, g.num_actions, g.child, g.offset, self.base, self.width, out)
        return out

    def first_row(self, row_and_counters: tuple[int, tuple[int, ...]]) -> int:
        """The first table row of a located decision (add the bucket)."""
        s, counters = row_and_counters
        r = int(self.graph.round[s])
        return int(self.base[r] + counters[r] * self.width[r])

    def hand_buckets(self, round_: int, board: Sequence[int]) -> npt.NDArray[np.int64]:
        """Every private hand's bucket at ``round_`` (-1: clashes with the board)."""
        game = self.graph.game
        board = list(board)[: game.total_board_cards(round_)]
        if isinstance(self.abstraction, CardAbstraction):
            return self.abstraction.buckets(round_, board).astype(np.int64)
        hands = private_hands(game)
        deck = sorted(game.deck())
        position = {c: i for i, c in enumerate(deck)}
        boards = math.comb(len(deck), len(board))
        spots = sorted(position[c] for c in board)
        code = spots[0] if len(spots) == 1 else spots[1] * (spots[1] - 1) // 2 + spots[0] if spots else 0
        clash = np.isin(hands, board).any(axis=1)
        return np.where(clash, -1, np.arange(len(hands)) * boards + code).astype(np.int64)


class SampledCFR:
    """External-sampling MCCFR state: ``regret`` (float32) and ``cumulative``
    (float64), both ``[rows, 3]`` of a :class:`BucketTable`; ``seed`` fixes every
    deal and draw (see the module docstring)."""

    def __init__(self, table: BucketTable, *, seed: int = 0) -> None:
        if not 0 <= seed < 1 << 63:
            raise ValueError(f"seed {seed} is outside 0..2^63-1")
        self.table = table
        self.seed = seed
        self.regret = np.zeros((table.rows, _ACTIONS), dtype=np.float32)
        self.cumulative = np.zeros((table.rows, _ACTIONS), dtype=np.float64)
        self.iteration = 0
        game = table.graph.game
        self._deck = np.array(sorted(game.deck()), dtype=np.int64)
        self._cards = _PLAYERS * game.num_hole_cards + game.total_board_cards(game.num_rounds - 1)
        tables = card_tables(game)
        self._hand_sets = tables.hand_sets
        self._hand_cards = tables.hands
        self._position = np.full(64, -1, dtype=np.int64)
        self._position[self._deck] = np.arange(len(self._deck))
        self._total = np.array([game.total_board_cards(r) for r in range(game.num_rounds)], dtype=np.int64)

    @property
    def game(self) -> Game:
        return self.table.graph.game

    def buckets(self, deals: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """``[n, 3, rounds]`` buckets of each position on each deal."""
        game = self.game
        out = np.empty((len(deals), _PLAYERS, _MAX_ROUNDS), dtype=np.int64)
        out[:, :, game.num_rounds :] = 0
        view = out[:, :, : game.num_rounds]
        inner = np.empty((len(deals), _PLAYERS, game.num_rounds), dtype=np.int64)
        abstraction = self.table.abstraction
        if isinstance(abstraction, CardAbstraction):
            _k.abstract_buckets(deals, game.num_hole_cards, abstraction.kernel_data, self._hand_sets,
                                self._hand_cards, inner)  # fmt: skip
        else:
            _k.lossless_buckets(
                deals, game.num_hole_cards, self._hand_sets, self._position, len(self._deck), self._total, inner
            )
        view[...] = inner
        return out

    def deals(self, start: int, count: int) -> npt.NDArray[np.int64]:
        out = np.empty((count, self._cards), dtype=np.int64)
        _k.deal_batch(self.seed, start, self._deck, out)
        return out

    def run(self, iterations: int) -> None:
        graph, table = self.table.graph, self.table
        done = 0
        while done < iterations:
            step = min(_BATCH, iterations - done)
            start = self.iteration + done
            deals = self.deals(start, step)
            codes = np.empty(step, dtype=np.int64)
            _k.showdown_codes(deals, self.game.num_hole_cards, codes)
            buckets = self.buckets(deals)
            arrays = (*graph.kernel_arrays(), table.base, table.width)
            _k.iterate(self.seed, start, buckets, codes, graph.root, arrays, self.regret, self.cumulative)
            done += step
        self.iteration += iterations

    def average_strategy(self) -> npt.NDArray[np.float32]:
        """``float32[rows, 3]``: normalised sums, uniform over a row's actions where empty."""
        out = np.empty((self.table.rows, _ACTIONS), dtype=np.float32)
        _k.normalise(self.cumulative, self.table.row_actions(), out)
        return out

    def load_arrays(
        self, *, iteration: int, regret: npt.NDArray[np.floating[Any]], cumulative: npt.NDArray[np.floating[Any]]
    ) -> None:
        """Continue from a checkpoint's arrays (shapes checked when its file was read)."""
        self.regret[...] = regret
        self.cumulative[...] = cumulative
        self.iteration = iteration


def make_table(game: Game, spec: str, cut: Sequence[int] | None, *, progress: Progress | None = None) -> BucketTable:
    """The bucket table of ``game`` under a betting cut and card abstraction spec
    (read from the cache or built)."""
    graph = build_betting_graph(game, cut)
    bucket_widths(game, spec)
    abstraction = load_abstraction(spec, game, progress=progress)
    return BucketTable(graph, abstraction)


def policy_rows(
    table: BucketTable, strategy: npt.NDArray[np.floating[Any]], state: State, board: Sequence[int]
) -> npt.NDArray[np.float64]:
    """``float64[H, n]``: every private hand's policy over ``tree_actions(state)``
    (the real game's legal actions) at the real decision ``state``: the table's
    row where the betting is in the cut tree (a raise the cut tree lacks gets 0),
    uniform for hands clashing with the board.

    Raises:
        KeyError: the real betting went past the cut (the agent then calls).
    """
    located = table.graph.locate(state)
    if located is None or table.graph.kind[located[0]] != DECISION:
        raise KeyError(f"betting {state.betting_string()!r} is past the strategy's betting cut")
    s = located[0]
    first = table.first_row(located)
    buckets = table.hand_buckets(state.round, board)
    real = tree_actions(state, None)
    n_tree = int(table.graph.num_actions[s])
    rows = np.zeros((len(buckets), len(real)))
    ok = buckets >= 0
    picked = np.asarray(strategy[first + buckets[ok], :n_tree], dtype=np.float64)
    for a in range(n_tree):
        column = next(i for i, action in enumerate(real) if int(action.type) == int(table.graph.action_type[s, a]))
        rows[ok, column] = picked[:, a]
    rows[~ok] = 1.0 / len(real)
    return rows


def expand(table: BucketTable, strategy: npt.NDArray[np.floating[Any]], tree: MultiTree) -> npt.NDArray[np.float64]:
    """The table's strategy as ``float64[D, A, H]`` on the full three-player tree
    of :func:`strategies.cfr.tree.multi.build_multi_tree` (small games),
    for its exact seven-step epsilon. Decisions past the betting cut call."""
    out = np.zeros((tree.num_decisions, tree.max_actions, len(tree.hands)))
    for node in tree.decision_nodes:
        state, board = tree.states[int(node)], tree.boards[int(node)]
        d = int(tree.decision_index[node])
        try:
            rows = policy_rows(table, strategy, state, board)
        except KeyError:
            calls = [i for i, a in enumerate(tree_actions(state, None)) if a.type is ActionType.CALL]
            out[d, calls[0], :] = 1.0
            continue
        out[d, : rows.shape[1], :] = rows.T
    return out



def bucket_table(game: Game, spec: str, cut: str, digest: str | None) -> BucketTable:
    """The :class:`BucketTable` a ``three-player-buckets`` strategy file names (its
    card abstraction read from the cache or built), checked against the
    abstraction digest the file recorded, so a different abstraction of the
    same name is refused.

    Raises:
        AbstractionError: the abstraction differs or cannot be made.
        TreeError: the cut does not fit the game.
    """
    table = make_table(game, spec, parse_cut(cut, game))
    found = table.abstraction.digest if isinstance(table.abstraction, CardAbstraction) else None
    if digest != found:
        raise AbstractionError(
            f"card abstraction {spec} in the cache (digest {found}) is not the one the strategy was solved with"
            f" (digest {digest}); solve the strategy again"
        )
    return table
