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
*betting cut*, default the game's own): the rules are ``poker.state``'s, asked
once per distinct betting situation (:func:`build_betting_graph`). The tree is
never stored node by node: :class:`BettingGraph` keeps one row per situation
and the decision counters that number the tree's decisions (see
:mod:`strategies.cfr.solvers._sampled_kernels`), so hold'em's full tree (9.7
million decisions, 14.2 million terminals) is a few thousand rows and an agent
finds its node by walking the real betting from the root.

Information sets are (decision, current bucket): the card abstraction
(:func:`strategies.cfr.abstraction.card_abstraction.load_abstraction`) says what a
bucket remembers (``ehs2:16:imperfect``: IR16's, the round's own E[HS^2]
bucket; a perfect-recall spec: the bucket sequence). Spec ``none`` (games
with at most two board cards: 3p Kuhn and Leduc) buckets (hand, board)
losslessly, so the solve is of the real game and its seven-step epsilon is
measured exactly by expanding the table onto
:func:`strategies.cfr.solvers.multiplayer.build_multi_tree`'s tree.

Averaging: the average strategy of position ``(traverser + 1) % 3`` is updated
where it acts on each traversal, by its current strategy with weight 1
(OpenSpiel's simple averaging; with three players it weights an information
set's histories by the other positions' reach too, as all sampled averaging
does). Determinism: iteration t of a seed draws the same deal and the same
actions however the run is split (a counter-based stream), and the kernels are
single-threaded, so the same seed and iterations give the same bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game, format_game
from poker.state import Action, ActionType, State
from strategies.cfr.abstraction.bucketing import Recall
from strategies.cfr.abstraction.card_abstraction import (
    CardAbstraction,
    NullAbstraction,
    load_abstraction,
    parse_abstraction_spec,
)
from strategies.cfr.abstraction.card_tables import AbstractionError, Progress, card_tables
from strategies.cfr.solvers import _sampled_kernels as _k
from strategies.cfr.solvers.multiplayer import MultiTree
from strategies.cfr.tree.public import TreeError, tree_actions

__all__ = [
    "ALGORITHM",
    "MAX_SIGNATURES",
    "BettingGraph",
    "BucketTable",
    "SampledCFR",
    "build_betting_graph",
    "parse_cut",
]

#: The ``--algorithm`` name and the strategy file's ``algorithm``.
ALGORITHM = "es-mccfr"
#: The settings key of the card abstraction's digest (None: lossless buckets).
ABSTRACTION_DIGEST = "abstraction_digest"
#: Distinct betting situations a graph may have (3p limit hold'em: a few
#: thousand); building one takes ~30 us, so a hostile header costs < 1 s.
MAX_SIGNATURES = 20_000
_PLAYERS = 3
_MAX_ROUNDS = 4
_ACTIONS = 3
_CODES = 27  # weak orderings of three hand ranks, 9 * o0 + 3 * o1 + o2
_BATCH = 4096  # deals per kernel call


def parse_cut(text: str, game: Game) -> tuple[int, ...]:
    """``"3,4,4,3"`` as raise caps per round: each at least 1 and at most the game's.

    Raises:
        TreeError: the wrong number of rounds or a cap outside 1..the game's.
    """
    try:
        caps = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise TreeError(f"betting cut {text!r} is not a comma-separated list of raise caps") from None
    if len(caps) != game.num_rounds:
        raise TreeError(f"betting cut {text!r} has {len(caps)} caps; the game has {game.num_rounds} rounds")
    for cap, full in zip(caps, game.max_raises, strict=True):
        if not 1 <= cap <= full:
            raise TreeError(f"betting cut {text!r}: each cap must be in 1..the game's ({list(game.max_raises)})")
    return caps


def _key(state: State) -> tuple[Any, ...]:
    """What a limit betting situation's future depends on (not how it was reached)."""
    if state.finished:
        return (True, state.folded, state.spent)
    return (False, state.round, state.folded, state.spent, state.num_raises(), state.num_called(), state.current_player())


@dataclass(frozen=True, eq=False)
class BettingGraph:
    """The betting tree of a three-player limit game under a betting cut, as one
    row per distinct situation (see the module docstring). Rows: ``kind``
    (decision 0, terminal 1), ``player``, ``round``, ``num_actions``, ``child[s,
    a]``, ``action_type[s, a]`` (:class:`ActionType` of child a), ``offset[s, a,
    r]`` (counter steps to child a), ``count[s, r]`` (round-r decisions in the
    subtree) and ``value[s, code, p]`` (terminals: position p's chips for each
    weak ordering ``code`` of the hands; folds: the same for every code)."""

    game: Game
    cut: tuple[int, ...]
    root: int
    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    round: npt.NDArray[np.int8]
    num_actions: npt.NDArray[np.int8]
    child: npt.NDArray[np.int64]
    action_type: npt.NDArray[np.int8]
    offset: npt.NDArray[np.int64]
    count: npt.NDArray[np.int64]
    value: npt.NDArray[np.float64]

    @property
    def decisions(self) -> tuple[int, ...]:
        """Decisions of each round (of the expanded tree)."""
        return tuple(int(c) for c in self.count[self.root, : self.game.num_rounds])

    @cached_property
    def digest(self) -> str:
        """SHA-256 over the game, the cut and every row array (a strategy file's
        tree digest: its tables are never read onto another tree)."""
        digest = hashlib.sha256(f"{format_game(self.game)}\ncut {list(self.cut)}\n".encode())
        for name in ("kind", "player", "round", "num_actions", "child", "action_type", "offset", "count", "value"):
            array = np.ascontiguousarray(getattr(self, name))
            digest.update(f"{name} {array.dtype.str} {array.shape}\n".encode())
            digest.update(array.tobytes())
        return digest.hexdigest()

    def kernel_arrays(self) -> tuple[npt.NDArray[Any], ...]:
        return (self.kind, self.player, self.round, self.num_actions, self.child, self.offset, self.value)

    def locate(self, state: State) -> tuple[int, tuple[int, ...]] | None:
        """The (row, round counters) of the real ``state`` (same game, any caps),
        found by walking its actions from the root; None when the real betting
        went past the cut (a raise the cut tree does not have)."""
        s = self.root
        counters = [0] * _MAX_ROUNDS
        for action in _actions(state):
            if self.kind[s] != _k.DECISION:
                return None
            step = _child_of(self.action_type[s, : self.num_actions[s]], action)
            if step is None:
                return None
            for r in range(_MAX_ROUNDS):
                counters[r] += int(self.offset[s, step, r])
            s = int(self.child[s, step])
        return s, tuple(counters)


def _actions(state: State) -> list[Action]:
    return [a for round_actions in state.actions for a in round_actions]


def _child_of(types: npt.NDArray[np.int8], action: Action) -> int | None:
    hits = np.flatnonzero(types == int(action.type))
    return int(hits[0]) if len(hits) else None


def build_betting_graph(
    game: Game, cut: Sequence[int] | None = None, *, max_signatures: int = MAX_SIGNATURES
) -> BettingGraph:
    """The :class:`BettingGraph` of ``game`` with raise caps ``cut`` (default the
    game's), built from ``poker.state`` once per distinct situation.

    Raises:
        TreeError: not a three-player limit game of at most four rounds, or more
            than ``max_signatures`` situations.
    """
    if game.num_players != _PLAYERS or not game.is_limit:
        raise TreeError("sampled three-player CFR solves three-player limit games")
    if game.num_rounds > _MAX_ROUNDS:
        raise TreeError(f"sampled three-player CFR handles at most {_MAX_ROUNDS} rounds; the game has {game.num_rounds}")
    caps = tuple(game.max_raises) if cut is None else tuple(int(c) for c in cut)
    if len(caps) != game.num_rounds or any(not 1 <= c <= f for c, f in zip(caps, game.max_raises, strict=True)):
        raise TreeError(f"betting cut {list(caps)} does not fit the game's caps {list(game.max_raises)}")
    abstract = dataclasses.replace(game, max_raises=caps)
    rows: dict[tuple[Any, ...], int] = {}
    kind: list[int] = []
    player: list[int] = []
    round_: list[int] = []
    children: list[list[int]] = []
    types: list[list[int]] = []
    count: list[list[int]] = []
    value: list[npt.NDArray[np.float64]] = []

    def visit(state: State) -> int:
        key = _key(state)
        found = rows.get(key)
        if found is not None:
            return found
        if len(rows) >= max_signatures:
            raise TreeError(f"the betting tree has over {max_signatures:,} distinct betting situations")
        table = np.zeros((_CODES, _PLAYERS))
        kids: list[int] = []
        actions: list[Action] = []
        if state.finished:
            for code in range(_CODES) if state.is_showdown() else [0]:
                order = None if not state.is_showdown() else (code // 9, code // 3 % 3, code % 3)
                table[code] = [float(v) for v in state.values(order)]
            if not state.is_showdown():
                table[:] = table[0]
            counts = [0] * _MAX_ROUNDS
        else:
            actions = tree_actions(state, None)
            kids = [visit(state.apply(a)) for a in actions]
            counts = [0] * _MAX_ROUNDS
            counts[state.round] = 1
            for k in kids:
                counts = [x + y for x, y in zip(counts, count[k], strict=True)]
        row = len(kind)
        rows[key] = row
        kind.append(_k.TERMINAL if state.finished else _k.DECISION)
        player.append(-1 if state.finished else state.current_player())
        round_.append(state.round)
        children.append(kids)
        types.append([int(a.type) for a in actions])
        count.append(counts)
        value.append(table)
        return row

    root = visit(State(abstract))
    n = len(kind)
    child = np.full((n, _ACTIONS), -1, dtype=np.int64)
    action_type = np.full((n, _ACTIONS), -1, dtype=np.int8)
    offset = np.zeros((n, _ACTIONS, _MAX_ROUNDS), dtype=np.int64)
    counts_array = np.array(count, dtype=np.int64)
    for s in range(n):
        running = np.zeros(_MAX_ROUNDS, dtype=np.int64)
        if kind[s] == _k.DECISION:
            running[round_[s]] = 1
        for a, k in enumerate(children[s]):
            child[s, a] = k
            action_type[s, a] = types[s][a]
            offset[s, a] = running
            running = running + counts_array[k]
    return BettingGraph(
        game=game,
        cut=caps,
        root=root,
        kind=np.array(kind, dtype=np.int8),
        player=np.array(player, dtype=np.int8),
        round=np.array(round_, dtype=np.int8),
        num_actions=np.array([len(c) for c in children], dtype=np.int8),
        child=child,
        action_type=action_type,
        offset=offset,
        count=counts_array,
        value=np.array(value),
    )


def bucket_widths(game: Game, spec: str) -> tuple[int, ...]:
    """Buckets of each round for the card abstraction ``spec`` (read from the spec,
    nothing built): perfect recall multiplies the rounds' counts; ``none`` is
    lossless over (hand, board).

    Raises:
        AbstractionError: a bad spec, or ``none`` for a game with over two board cards.
    """
    parsed = parse_abstraction_spec(spec)
    if parsed is None:
        return _lossless_widths(game)
    counts = parsed.buckets_per_round(game)
    if parsed.recall is Recall.PERFECT:
        return tuple(math.prod(counts[: r + 1]) for r in range(game.num_rounds))
    return tuple(counts)


def table_rows(graph: BettingGraph, spec: str) -> int:
    """Rows of the tables of ``graph`` under the card abstraction ``spec``."""
    widths = bucket_widths(graph.game, spec)
    return sum(int(c) * w for c, w in zip(graph.decisions, widths, strict=True))


def _lossless_widths(game: Game) -> tuple[int, ...]:
    hands = len(private_hands(game))
    n = len(game.deck())
    widths = []
    for r in range(game.num_rounds):
        b = game.total_board_cards(r)
        if b > 2:
            raise AbstractionError("card abstraction 'none' buckets boards of at most two cards (3p Kuhn, Leduc)")
        widths.append(hands * math.comb(n, b))
    return tuple(widths)


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
    if located is None or table.graph.kind[located[0]] != _k.DECISION:
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
    of :func:`strategies.cfr.solvers.multiplayer.build_multi_tree` (small games),
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
