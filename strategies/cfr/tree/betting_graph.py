"""The betting tree of a three-player limit game under a betting cut, one row per
distinct betting situation: what sampled three-player CFR
(:mod:`strategies.cfr.solvers.sampled_multiplayer`) walks and a three-player
bucket strategy file (:mod:`strategies.cfr.strategy_file`) is checked against.

The tree is that of the game with the raise caps ``max_raises`` (the *betting
cut*, default the game's own): the rules are ``poker.state``'s, asked once per
distinct betting situation (:func:`build_betting_graph`). The tree is never
stored node by node: :class:`BettingGraph` keeps one row per situation and the
decision counters that number the tree's decisions (see
:mod:`strategies.cfr.solvers._sampled_kernels`), so hold'em's full tree (9.7
million decisions, 14.2 million terminals) is a few thousand rows and an agent
finds its node by walking the real betting from the root. :func:`table_rows`
says how many rows a strategy table on it has under a card abstraction.
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
from poker.state import Action, State
from strategies.cfr.abstraction.bucketing import Recall
from strategies.cfr.abstraction.card_abstraction import parse_abstraction_spec
from strategies.cfr.abstraction.card_tables import AbstractionError
from strategies.cfr.tree.multi import PLAYERS
from strategies.cfr.tree.public import TreeError, tree_actions

__all__ = [
    "ACTIONS",
    "DECISION",
    "MAX_ROUNDS",
    "MAX_SIGNATURES",
    "TERMINAL",
    "BettingGraph",
    "bucket_widths",
    "build_betting_graph",
    "parse_cut",
    "table_rows",
]

#: Row kinds of :attr:`BettingGraph.kind` (the kernels read them too).
DECISION, TERMINAL = 0, 1
#: Distinct betting situations a graph may have (3p limit hold'em: a few
#: thousand); building one takes ~30 us, so a hostile header costs < 1 s.
MAX_SIGNATURES = 20_000
#: Rounds a graph's counters have room for, and actions a row has room for (fold, call, raise).
MAX_ROUNDS = 4
ACTIONS = 3
_CODES = 27  # weak orderings of three hand ranks, 9 * o0 + 3 * o1 + o2


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
        counters = [0] * MAX_ROUNDS
        for action in _actions(state):
            if self.kind[s] != DECISION:
                return None
            step = _child_of(self.action_type[s, : self.num_actions[s]], action)
            if step is None:
                return None
            for r in range(MAX_ROUNDS):
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
    if game.num_players != PLAYERS or not game.is_limit:
        raise TreeError("sampled three-player CFR solves three-player limit games")
    if game.num_rounds > MAX_ROUNDS:
        raise TreeError(f"sampled three-player CFR handles at most {MAX_ROUNDS} rounds; the game has {game.num_rounds}")
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
        table = np.zeros((_CODES, PLAYERS))
        kids: list[int] = []
        actions: list[Action] = []
        if state.finished:
            for code in range(_CODES) if state.is_showdown() else [0]:
                order = None if not state.is_showdown() else (code // 9, code // 3 % 3, code % 3)
                table[code] = [float(v) for v in state.values(order)]
            if not state.is_showdown():
                table[:] = table[0]
            counts = [0] * MAX_ROUNDS
        else:
            actions = tree_actions(state, None)
            kids = [visit(state.apply(a)) for a in actions]
            counts = [0] * MAX_ROUNDS
            counts[state.round] = 1
            for k in kids:
                counts = [x + y for x, y in zip(counts, count[k], strict=True)]
        row = len(kind)
        rows[key] = row
        kind.append(TERMINAL if state.finished else DECISION)
        player.append(-1 if state.finished else state.current_player())
        round_.append(state.round)
        children.append(kids)
        types.append([int(a.type) for a in actions])
        count.append(counts)
        value.append(table)
        return row

    root = visit(State(abstract))
    n = len(kind)
    child = np.full((n, ACTIONS), -1, dtype=np.int64)
    action_type = np.full((n, ACTIONS), -1, dtype=np.int8)
    offset = np.zeros((n, ACTIONS, MAX_ROUNDS), dtype=np.int64)
    counts_array = np.array(count, dtype=np.int64)
    for s in range(n):
        running = np.zeros(MAX_ROUNDS, dtype=np.int64)
        if kind[s] == DECISION:
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
