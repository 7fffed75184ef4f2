"""Modicum's continuation strategies and their values at a depth limit
(Brown, Sandholm & Amos, "Depth-Limited Solving for Imperfect-Information
Games", NeurIPS 2018).

A depth-limited re-solve stops at the end of the current street. What a hand is
worth there depends on how both players go on, and in an imperfect-information
game no single value per hand is right: the opponent could have switched to
another way of playing the rest of the hand. Modicum lets the opponent *pick*,
at every depth-limit leaf and for every private hand, one of K continuation
strategies; the re-solve then has to be good against the best pick, so it is
robust without a trained value network. The K strategies are a blueprint (a
small abstract-game solution) and versions of it biased toward folding,
calling and raising: at every decision below the leaf the probabilities of
that kind of action are multiplied by :data:`BIAS_FACTOR` and renormalised.
The player re-solving plays the blueprint below the leaf.

**The blueprint** (:class:`Blueprint`, read by :func:`load_blueprint`) is an
abstract-game strategy file (``arena solve GAME --algorithm abstract``): a
perfect-recall card abstraction, so a hand's private state in round r is its
bucket *sequence* and the abstract game's chance deals pairs of sequences with
exact joint counts (:mod:`strategies.cfr.solvers.abstract_game`).

**Values at a leaf** (:class:`ContinuationValues`). For a node of the
blueprint's betting tree that starts round r+1 and each continuation k, one
backward pass over the subtree below it gives ``V_k[s0, s1]``: position 0's
expected chips from there given both players' round-r sequences, when the
chooser plays continuation k and the other the blueprint. Values are matrices
over sequence pairs: a decision of position 0 mixes the children's rows by its
strategy, one of position 1 the columns; a round change averages the child
over the pairs of extensions by the joint deal counts; a fold pays its fixed
amount and a showdown its stake times the mean showdown sign of the pair. The
cost is the subtree's nodes times (sequences)^2, with no loop over hands.

**From sequences to hands** (:class:`ContinuationEvaluator`). On the real board
each hand h has its round-r sequence ``s(h)``; with the opponent's reach r at
the leaf, position 0's counterfactual value is ``v(h) = sum_s V[s(h), s] *
R_s(h)``, ``R_s(h)`` the reach of the opponent's hands in sequence s that share
no card with h (per-card inclusion-exclusion, :func:`_kernels.sequence_values`),
and position 1's likewise with ``-V`` transposed: the engine's counterfactual
units, linear in the other's reach, vectorised over hands. Within a sequence
pair the value is the abstract game's average (the blueprint's card
abstraction); with no abstraction (spec ``none``, small games) it is exact.
A leaf reached by betting off the blueprint's tree takes the node the
translated betting reaches (:func:`abstract_history`), its values scaled by
the ratio of the real pot to that node's.

**Within a sequence** (``within`` W > 0, ``resolve:within_bucket=W``, in a
round of at most :data:`WITHIN_SEQUENCES` sequences) each hand's value gets W
times its showdown value's spread about its sequence's mean: ``W * (sd(h) -
mean_s sd)``, ``sd`` the check-down value of the pot at the leaf against the
other's reach (:class:`~strategies.resolve.evaluators.Runouts` on at most
:data:`WITHIN_BOARDS` seeded run-outs), the mean over the hands of ``s(h)``
weighted by the player's own reach (uniform over them where it has none). A
sequence's own-reach-weighted total is unchanged, the blueprint's say about it
kept; within it the stronger hands are worth more. Why: with a few buckets a
street (HUNL's blueprint: 3), every hand of a bucket had one value, so a
re-solve could only fold or defend whole buckets; against local best
response's flop bets after a called pot raise the bot folded 55 % of its range
(benchmarks/hunl_flop_spot.py: LBR's gain 707 mbb a spot; 545 with W = 1).
The values carried across the deal (:meth:`ContinuationEvaluator.deal_values`,
the next street's constraints) stay the sequences' own: the next street's
re-solve tells hands apart by its own, finer, sequences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game, shipped_name
from poker.state import Action, ActionType, State
from strategies.base import StrategyError
from strategies.cfr.abstraction.card_abstraction import Abstraction
from strategies.cfr.solvers.abstract_game import AbstractGame
from strategies.cfr.tree.public import BettingAbstraction, NodeKind, tree_actions
from strategies.resolve import _kernels
from strategies.resolve.evaluators import Evaluator, HandTable, Runouts, StreetValues, is_holdem
from strategies.translation import map_probabilities, pot_fraction

if TYPE_CHECKING:
    from strategies.resolve.preflop_leaves import FlopAveraged

__all__ = [
    "BIASES",
    "BIAS_FACTOR",
    "SHIPPED_BLUEPRINTS",
    "AbstractStep",
    "Blueprint",
    "CarriedByBlueprint",
    "ContinuationEvaluator",
    "ContinuationLeaves",
    "ContinuationValues",
    "abstract_history",
    "blueprint_locate",
    "load_blueprint",
    "open_blueprint",
]

#: The continuation strategies, in order: the blueprint and its fold-, call- and raise-biased versions.
BIASES = ("blueprint", "fold", "call", "raise")
#: Modicum's bias: the biased kind of action's probabilities times this, then renormalised.
BIAS_FACTOR = 5.0

#: Boards (and leaf bettings) whose tables an evaluator keeps before it starts over.
CACHED_BOARDS = 4096
#: Run-outs of a board behind the within-sequence spread (``within``): a seeded
#: sample (every completion where there are no more). On the flop spot 8
#: screened as well as 64 (545 vs 563 mbb) at an eighth of the cost (1.5 ms
#: a set of 36 leaves, twice an iteration).
WITHIN_BOARDS = 8
#: The spread applies where the blueprint has at most this many sequences in the
#: leaf's round: where its buckets hold the most hands (HUNL: the flop's 9, of
#: about 150 hands each), not on the turn (27): there it put the bot's p99 at
#: 2.6 s a decision (8 boards; 4.3 s with every river), over issue 22's 2 s.
WITHIN_SEQUENCES = 9

_KIND_OF = {ActionType.FOLD: 1, ActionType.CALL: 2, ActionType.RAISE: 3}
_SEQUENCE_VALUES: Callable[..., None] = _kernels.sequence_values


@dataclass(frozen=True, eq=False)
class Blueprint:
    """An abstract-game strategy: ``game`` (the betting tree and joint tables),
    ``sequences`` (each hand's bucket sequence per round and board, in
    ``game``'s column order) and ``strategy`` (``float64[A, R]`` in ``game``'s
    layout)."""

    game: AbstractGame
    sequences: Abstraction
    strategy: npt.NDArray[np.float64]

    @property
    def betting(self) -> BettingAbstraction | None:
        """The betting abstraction of the blueprint's tree (None: a limit game)."""
        return self.game.tree.abstraction

    def rows(self, node: int, board: Sequence[int]) -> npt.NDArray[np.float64]:
        """The blueprint's action probabilities ``float64[H, n]`` at decision
        ``node`` for every private hand on ``board`` (uniform for hands that
        clash with it)."""
        game = self.game
        n = int(game.num_children[node])
        seq = self.sequences.buckets(int(game.tree.round[node]), list(board)).astype(np.int64)
        columns = int(game.doff[node]) + np.maximum(seq, 0)
        rows: npt.NDArray[np.float64] = self.strategy[:n, columns].T.copy()
        rows[seq < 0] = 1.0 / n
        return rows


def load_blueprint(path: str | Path) -> Blueprint:
    """The blueprint in the abstract-game strategy file or compact playing file at
    ``path``: the one place that knows the blueprint's storage. A compact file
    (:mod:`strategies.cfr.compact`, what ships) carries its card abstraction
    and plays its quantized probabilities ``q / levels``; a strategy file's card
    abstraction comes from the cache
    (:func:`strategies.cfr.abstraction.card_abstraction.load_abstraction`, built
    there the first time). The joint bucket tables are read from the file's
    directory when they lie beside it (the shipped blueprint's do: a few
    minutes to build), else from the cache or built there too.

    Raises:
        StrategyFileError: not an abstract-game strategy file or its compact file.
        OSError: it cannot be read.
    """
    from strategies.cfr.abstraction.card_abstraction import CardAbstraction, load_abstraction
    from strategies.cfr.compact import load_playing
    from strategies.cfr.solvers.abstract_game import joint_tables_path
    from strategies.cfr.solvers.abstract_solve import ALGORITHM, AbstractSolve, LosslessSequences
    from strategies.cfr.strategy_file import BUCKETS, StrategyFileError

    saved = load_playing(path)
    if saved.layout != BUCKETS or saved.algorithm != ALGORITHM:
        raise StrategyFileError(f"{path}: a blueprint must be an abstract-game strategy file (arena solve --algorithm abstract)")
    abstraction = saved.cards if saved.cards is not None else load_abstraction(saved.card_abstraction, saved.game)
    beside = Path(path).parent
    cache_dir = beside if isinstance(abstraction, CardAbstraction) and joint_tables_path(abstraction, beside).is_file() else None
    solve = AbstractSolve.build(abstraction, betting=saved.abstraction, cache_dir=cache_dir)
    sequences = abstraction if isinstance(abstraction, CardAbstraction) else LosslessSequences(saved.game)
    strategy = saved.arrays["strategy"].astype(np.float64)
    if saved.levels:
        strategy /= saved.levels
    return Blueprint(solve.game, sequences, solve.from_file(strategy))


#: The blueprints that ship, by game: HUNL's is the named bot ``hunl-modicum``'s playing file
#: (:mod:`strategies.bots`, which plays it through ``resolve:evaluator=continuations``); its
#: ``Bot`` entry holds the solve's options, and ``arena bots build hunl-modicum`` rebuilds it.
SHIPPED_BLUEPRINTS = {
    "holdem.nolimit.2p.reverse_blinds": Path(__file__).resolve().parents[1] / "data" / "hunl-modicum.compact"
}


def open_blueprint(game: Game, path: str | Path | None, strategy: str) -> Blueprint:
    """The blueprint of ``game`` at ``path`` (None: the one that ships for the
    game, :data:`SHIPPED_BLUEPRINTS`), for the options of ``strategy``.

    Raises:
        StrategyError: none ships, the file cannot be read, or it is another game's (one line).
    """
    from strategies.cfr.strategy_file import StrategyFileError

    if path is None:
        name = shipped_name(game)
        if name is None or name not in SHIPPED_BLUEPRINTS:
            raise StrategyError(
                f"strategy {strategy!r}: no blueprint ships for this game; give blueprint=PATH"
                " (arena solve GAME --algorithm abstract ... -o PATH)"
            )
        path = SHIPPED_BLUEPRINTS[name]
    try:
        blueprint = load_blueprint(path)
    except (StrategyFileError, OSError, ValueError) as error:
        raise StrategyError(f"strategy {strategy!r}: {error}") from None
    if blueprint.game.game != game:
        raise StrategyError(f"strategy {strategy!r}: the blueprint was solved for another game")
    return blueprint


def biased(blueprint: Blueprint, bias: int) -> npt.NDArray[np.float64]:
    """Continuation ``bias`` (an index of :data:`BIASES`) of the blueprint's table."""
    if bias == 0:
        return blueprint.strategy
    game = blueprint.game
    tree = game.tree
    factor = np.ones_like(blueprint.strategy)
    for node in game.decisions:
        start, width = int(game.doff[node]), int(game.width[node])
        for a in range(int(game.num_children[node])):
            child = tree.states[int(game.first_child[node]) + a]
            taken = child.actions[tree.states[node].round][-1]
            if _KIND_OF[taken.type] == bias:
                factor[a, start : start + width] = BIAS_FACTOR
    table = blueprint.strategy * factor
    total = table.sum(axis=0)
    out: npt.NDArray[np.float64] = table / np.where(total > 0, total, 1.0)
    return out


class ContinuationValues:
    """``V_k`` at the blueprint's round-starting nodes (module docstring), for
    ``k`` over the first ``count`` of :data:`BIASES`, cached per (node, chooser)."""

    def __init__(self, blueprint: Blueprint, count: int = len(BIASES)) -> None:
        if not 1 <= count <= len(BIASES):
            raise ValueError(f"between 1 and {len(BIASES)} continuation strategies, got {count}")
        self.blueprint = blueprint
        self.count = count
        game = blueprint.game
        tables = game.tables
        n = game.sequences[-1]
        joint = tables.joint.astype(np.float64)
        showdown = tables.showdown.astype(np.float64)
        self._joint: list[npt.NDArray[np.float64]] = []
        self._sign: list[npt.NDArray[np.float64]] = []
        for s in game.sequences:
            j = joint.reshape(s, n // s, s, n // s).sum(axis=(1, 3))
            w = showdown.reshape(s, n // s, s, n // s).sum(axis=(1, 3))
            self._joint.append(j)
            self._sign.append(np.divide(w, j, out=np.zeros_like(w), where=j > 0))
        #: The continuation strategies ``float64[K, A, R]``.
        self.tables = np.stack([biased(blueprint, k) for k in range(count)])
        self._payoff = game.tree.payoff[:, 0, 0]
        self._cache: dict[tuple[int, int], npt.NDArray[np.float64]] = {}

    def check_down(self, round_: int, stake: float) -> npt.NDArray[np.float64]:
        """Position 0's chips ``[n_r, n_r]`` when ``stake`` each is shown down with
        round-r sequences: the value of a leaf off the blueprint's tree."""
        out: npt.NDArray[np.float64] = stake * self._sign[round_]
        return out

    def at(self, node: int, chooser: int) -> npt.NDArray[np.float64]:
        """``V[K, n_r, n_r]`` (position 0's chips) at ``node``, a node of the
        blueprint's tree that starts round r+1, over round-r sequence pairs."""
        key = (node, chooser)
        known = self._cache.get(key)
        if known is None:
            r = int(self.blueprint.game.tree.round[node])
            dealt = self.after_deal(node, chooser)
            known = self._cache[key] = self._lift(dealt, r, r - 1, self.blueprint.game.sequences[r - 1])
        return known

    def after_deal(self, node: int, chooser: int) -> npt.NDArray[np.float64]:
        """``V[K, n_{r+1}, n_{r+1}]`` at ``node`` as :meth:`at`, but over the
        round-(r+1) sequence pairs: the values once the next street's cards are
        known, which continual re-solving carries across the deal."""
        key = (-1 - node, chooser)
        known = self._cache.get(key)
        if known is None:
            known = self._cache[key] = self._compute(node, chooser)
        return known

    def _compute(self, root: int, chooser: int) -> npt.NDArray[np.float64]:
        game = self.blueprint.game
        tree = game.tree
        order = [root]
        for node in order:
            first = int(game.first_child[node])
            order.extend(range(first, first + int(game.num_children[node])))
        blueprint = self.blueprint.strategy
        values: dict[int, npt.NDArray[np.float64]] = {}
        for node in reversed(order):
            round_ = int(tree.round[node])
            kind = int(tree.kind[node])
            if kind == NodeKind.FOLD:
                values[node] = np.full((1, 1, 1), self._payoff[node])
                continue
            if kind == NodeKind.SHOWDOWN:
                values[node] = (self._payoff[node] * self._sign[round_])[None]
                continue
            player = int(tree.player[node])
            start, width = int(game.doff[node]), int(game.width[node])
            total = np.zeros((self.count, width, width))
            first = int(game.first_child[node])
            for a in range(int(game.num_children[node])):
                child = self._lift(values.pop(first + a), int(tree.round[first + a]), round_, width)
                if player == chooser:
                    sigma = self.tables[:, a, start : start + width]
                else:
                    sigma = np.broadcast_to(blueprint[a, start : start + width], (self.count, width))
                total += sigma[:, :, None] * child if player == 0 else sigma[:, None, :] * child
            values[node] = total
        return values[root]

    def _lift(self, child: npt.NDArray[np.float64], below: int, round_: int, width: int) -> npt.NDArray[np.float64]:
        """A child's values in its parent's round ``round_`` (``width`` sequences):
        a fold's constant as it is; a later round's averaged over the extensions
        of each pair by the joint deal counts."""
        if below == round_ or child.shape[1] == 1:
            return child
        joint = self._joint[below]
        m = joint.shape[0] // width
        weighted = (child * joint[None]).reshape(child.shape[0], width, m, width, m).sum(axis=(2, 4))
        parent = self._joint[round_]
        out: npt.NDArray[np.float64] = np.divide(weighted, parent[None], out=np.zeros_like(weighted), where=parent[None] > 0)
        return out


#: ``locate(leaf state)``: the blueprint node a leaf's betting reaches and the pot ratio (real / node), or None.
Locate = Callable[[State], "tuple[int, float] | None"]


class ContinuationEvaluator:
    """The depth-limit values of a street tree whose leaves are continuation
    picks (:func:`strategies.resolve.depth_limited.build_street_tree` with
    ``continuations``): leaf ``l`` with pick ``k`` is valued by ``V_k`` of the
    blueprint node ``locate`` gives for its state (module docstring). Leaves
    whose betting left the blueprint's tree (``locate`` gives None) are valued
    as a check-down: the showdown of the pot now, every continuation alike."""

    def __init__(
        self, values: ContinuationValues, chooser: int, locate: Locate, table: HandTable,
        flop_averaged: FlopAveraged | None = None, within: float = 0.0,
    ) -> None:  # fmt: skip
        self.values = values
        self.chooser = chooser
        self.locate = locate
        self.table = table
        #: Hold'em's pre-flop leaves by each hand's own flop sequences (:mod:`strategies.resolve.preflop_leaves`), or None.
        self.flop_averaged = flop_averaged
        #: The weight of each hand's showdown spread within its sequence (module docstring); 0: none.
        self.within = within
        self._classes: dict[tuple[str, int, int], npt.NDArray[np.float64]] = {}
        self._sequences: dict[tuple[int, tuple[int, ...]], npt.NDArray[np.int64]] = {}
        self._leaf: dict[tuple[str, int, bool], npt.NDArray[np.float64]] = {}
        #: By (round, board): the spread's run-outs, live hands, sequences and sequence members.
        self._within: dict[tuple[int, tuple[int, ...]], tuple[Runouts, npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}

    def _sequence(self, round_: int, board: tuple[int, ...]) -> npt.NDArray[np.int64]:
        key = (round_, board)
        known = self._sequences.get(key)
        if known is None:
            if len(self._sequences) >= CACHED_BOARDS:  # a long match deals ever new boards
                self._sequences.clear()
            known = self._sequences[key] = self.values.blueprint.sequences.buckets(round_, list(board)).astype(np.int64)
        return known

    def _matrix(self, state: State, k: int, dealt: bool = False) -> npt.NDArray[np.float64]:
        """Position 0's ``V_k`` at the leaf ``state`` over round-r sequence pairs,
        or over round-(r+1) pairs once the next cards are ``dealt``."""
        key = (state.betting_string(), k, dealt)
        known = self._leaf.get(key)
        if known is None:
            if len(self._leaf) >= CACHED_BOARDS:  # off-tree sizes make ever new bettings
                self._leaf.clear()
            found = self.locate(state)
            round_ = state.round if dealt else state.round - 1
            if found is None:
                known = self.values.check_down(round_, float(min(state.spent)))
            else:
                node, scale = found
                known = scale * (self.values.after_deal if dealt else self.values.at)(node, self.chooser)[k]
            self._leaf[key] = known
        return known

    def _class_matrix(self, state: State, k: int, p: int) -> npt.NDArray[np.float64]:
        """Position ``p``'s class matrix ``[169, 169]`` at the pre-flop leaf ``state``
        under pick ``k``: ``V_k`` over flop sequence pairs averaged over every flop."""
        assert self.flop_averaged is not None
        key = (state.betting_string(), k, p)
        known = self._classes.get(key)
        if known is None:
            if len(self._classes) >= CACHED_BOARDS:
                self._classes.clear()
            known = self._classes[key] = self.flop_averaged.matrix(self._matrix(state, k, dealt=True), p)
        return known

    def class_values(
        self, leaves: Sequence[State], continuation: npt.NDArray[np.int8], p: int, opponent: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64] | None:
        """Position ``p``'s values ``[L, H]`` at pre-flop leaves by :attr:`flop_averaged`,
        or None where there is none or the opponent's reach ``[L, H]`` is not the same across a class."""
        if self.flop_averaged is None:
            return None
        class_reach = self.flop_averaged.hand_classes.reach(opponent)
        if class_reach is None:
            return None
        matrices = np.stack([self._class_matrix(s, int(k), p) for s, k in zip(leaves, continuation)])
        return self.flop_averaged.values(class_reach, matrices)

    def _hand_values(
        self, round_: int, board: tuple[int, ...], matrices: npt.NDArray[np.float64], p: int,
        opponent: npt.NDArray[np.float64], group: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.float64]:  # fmt: skip
        """Position ``p``'s value ``[L, H]`` of each hand at the leaves: the row of
        its round-``round_`` sequence on ``board`` in its own chips (``V`` for
        position 0, ``-V`` transposed for 1; ``matrices`` are position 0's
        ``[L, n, n]``) against the other's reach ``opponent[group[l]]`` over the
        hands sharing no card with it, by sequence (:func:`_kernels.sequence_values`)."""
        own = matrices if p == 0 else -np.swapaxes(matrices, 1, 2)
        out = np.empty((len(matrices), opponent.shape[-1]))
        _SEQUENCE_VALUES(
            np.ascontiguousarray(own), group, np.ascontiguousarray(opponent), self._sequence(round_, board), self.table.slots, out
        )
        return out

    def spread(
        self, round_: int, board: tuple[int, ...], leaves: Sequence[State], reach: npt.NDArray[np.float64], p: int
    ) -> npt.NDArray[np.float64]:
        """Position ``p``'s showdown spread ``[L, H]`` within its round-``round_``
        sequences at the leaves (module docstring: ``sd(h) - mean_s sd``), the
        reaches ``reach[2, L, H]``; zero on hands that clash with ``board``."""
        known = self._within.get((round_, board))
        if known is None:
            if len(self._within) >= CACHED_BOARDS:
                self._within.clear()
            live = self.table.board_mask(board)
            sequence = self._sequence(round_, board)
            members = np.zeros((len(sequence), int(sequence.max()) + 1))
            members[np.arange(len(sequence)), sequence] = live  # [H, n]: the live hands of each sequence
            known = self._within[(round_, board)] = (Runouts(self.table, board, max_boards=WITHIN_BOARDS), live, sequence, members)
        runouts, live, sequence, members = known
        showdown = runouts.values(reach[1 - p], np.array([float(min(s.spent)) for s in leaves])) * live  # [L, H]
        own = reach[p] * live
        weight = own @ members  # [L, n]
        count = live @ members
        uniform = np.divide(showdown @ members, count, out=np.zeros(weight.shape), where=count > 0)
        weighted = np.divide((own * showdown) @ members, weight, out=uniform, where=weight > 0)
        out: npt.NDArray[np.float64] = (showdown - weighted[:, sequence]) * live
        return out

    def street_values(
        self, board: tuple[int, ...], leaves: Sequence[State], continuation: npt.NDArray[np.int8],
        reach: npt.NDArray[np.float64], positions: tuple[int, ...] = (0, 1),
    ) -> StreetValues:  # fmt: skip
        """The values ``[2, L, H]`` of ``positions`` (0 for the other) at the
        leaves for the reaches ``[2, L, H]``, with the spread within sequences
        where :attr:`within` asks for it (not on pre-flop leaves valued by hand
        class, which need none). The K picks of one leaf share its
        state and the other player's reach: the chooser's values split that
        reach by sequence once per leaf, not per pick."""
        n_leaves, n_hands = reach.shape[1], reach.shape[2]
        out = np.zeros((2, n_leaves, n_hands))
        if not n_leaves:
            return out, [], None
        round_ = leaves[0].round - 1
        matrices = np.stack([self._matrix(s, int(k)) for s, k in zip(leaves, continuation)])  # [L, n, n]
        first: dict[int, int] = {}
        group = np.array([first.setdefault(id(state), len(first)) for state in leaves])
        for p in positions:
            opponent = reach[1 - p]  # [L, H]
            by_class = self.class_values(leaves, continuation, p, opponent) if round_ == 0 else None
            if by_class is not None:
                out[p] = by_class
                continue
            if p == self.chooser:  # the other's reach: one row per leaf state
                out[p] = self._hand_values(round_, board, matrices, p, opponent[np.unique(group, return_index=True)[1]], group)
            else:
                out[p] = self._hand_values(round_, board, matrices, p, opponent, np.arange(n_leaves))
            if self.within and self.values.blueprint.game.sequences[round_] <= WITHIN_SEQUENCES:
                out[p] += self.within * self.spread(round_, board, leaves, reach, p)
        return out, [], None

    def deal_values(
        self, leaf: State, board: tuple[int, ...], reach: npt.NDArray[np.float64], picks: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """The chooser's values ``[H]`` at the depth limit ``leaf`` once the next
        street's cards are dealt (``board`` holds them), the other's reach
        ``reach[H]`` there (zero on hands that clash with ``board``) and the
        chooser's pick probabilities ``picks[K, H]`` per hand (its average
        strategy at the limit): each hand's values under the K continuations on
        this board, by round-(r+1) sequences, mixed by its picks. Averaged over
        the deals (weighted by the other's reach that each leaves) they are the
        leaf's values (:meth:`street_values`) mixed the same way: what continual
        re-solving carries as the chooser's constraints on the next street."""
        matrices = np.stack([self._matrix(leaf, k, dealt=True) for k in range(len(picks))])  # [K, n, n]
        by_pick = self._hand_values(leaf.round, board, matrices, self.chooser, reach[None, :], np.zeros(len(picks), dtype=np.int64))
        out: npt.NDArray[np.float64] = (picks * by_pick).sum(axis=0)
        return out


class ContinuationLeaves:
    """Continuation leaves for continual re-solving (``resolve:evaluator=continuations``):
    from street ``first_round`` on (1: the pre-flop street's leaves are valued
    otherwise, by :class:`CarriedByBlueprint`), each depth limit of a re-solve is
    the opponent's pick among the continuations of ``values``, valued by a
    :class:`ContinuationEvaluator` whose chooser is that opponent. In hold'em,
    where pre-flop leaves take blueprint values (picked, or ``blueprint_before``),
    each hand is valued by its own flop sequences averaged over every flop
    (:mod:`strategies.resolve.preflop_leaves`), not by the blueprint's few
    pre-flop buckets."""

    def __init__(
        self, values: ContinuationValues, table: HandTable, first_round: int, blueprint_before: float = 0.0, within: float = 0.0
    ) -> None:
        self.values = values
        self.first_round = first_round
        #: The blueprint's share of the values at the streets before ``first_round``
        #: (:class:`CarriedByBlueprint`): 0 their evaluator's (``equity``), 1 the blueprint's.
        self.blueprint_before = blueprint_before
        locate = blueprint_locate(values.blueprint)
        flop_averaged = None
        if (first_round == 0 or blueprint_before > 0) and is_holdem(table.game):
            from strategies.resolve.preflop_leaves import FlopAveraged

            flop_averaged = FlopAveraged(values.blueprint.sequences, table.cards.astype(np.int64), values.blueprint.game.sequences[1])
        self._by_chooser = tuple(ContinuationEvaluator(values, chooser, locate, table, flop_averaged, within) for chooser in range(2))

    def evaluator(self, chooser: int) -> ContinuationEvaluator:
        """The evaluator whose continuations ``chooser`` picks (its caches are kept)."""
        return self._by_chooser[chooser]

    def blueprint_street_values(self, leaves: Sequence[State], reach: npt.NDArray[np.float64]) -> StreetValues | None:
        """Both positions' values ``[2, L, H]`` at the first street's depth limits
        ``leaves`` for the reaches ``[2, L, H]`` when both play the blueprint from
        there on. In hold'em each hand by its own flop sequences
        (:mod:`strategies.resolve.preflop_leaves`), None where the reaches differ
        within a hand class (the blueprint's 3 pre-flop buckets would put AA and 77
        together); in other games by the blueprint's first-round sequences (with no
        card abstraction, Leduc's, the exact values)."""
        evaluator = self._by_chooser[0]  # pick 0 is the blueprint for both players
        picks = np.zeros(len(leaves), dtype=np.int8)
        if evaluator.flop_averaged is None:
            return evaluator.street_values((), leaves, picks, reach)
        out = np.zeros(reach.shape)
        for p in range(2):
            values = evaluator.class_values(leaves, picks, p, reach[1 - p])
            if values is None:
                return None
            out[p] = values
        return out, [], None

    def blueprint_values(self, leaf: State, board: tuple[int, ...], reach: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Both positions' values ``[2, H]`` on ``board`` (the next street's cards
        dealt) at the depth limit ``leaf``, the reaches ``reach[2, H]`` there,
        when both play the blueprint from there on."""
        blueprint_only = np.zeros((self.values.count, reach.shape[1]))
        blueprint_only[0] = 1.0
        return np.stack([self._by_chooser[p].deal_values(leaf, board, reach[1 - p], blueprint_only) for p in range(2)])


class CarriedByBlueprint(Evaluator):
    """``leaves``' values at the street's end (or, ``by_blueprint`` > 0, that
    share of the blueprint's where :meth:`ContinuationLeaves.blueprint_street_values`
    applies, hold'em's pre-flop, and the rest ``leaves``'), and the blueprint's values carried across the deal
    (:meth:`ContinuationLeaves.blueprint_values`): the streets before
    ``resolve:evaluator=continuations`` picks (HUNL's pre-flop). The next
    street's re-solve values its own leaves by the continuations; its
    constraints, the opponent's values here, must be in the same terms: check-down equity gives a hand that will face bets the share of
    the pot it would win by showing down, and a gadget whose constraints give the
    opponent's weak hands that much lets it fold to their bets far more often than
    they could earn by bluffing (against local best response: pre-flop calls
    folded on the flop)."""

    def __init__(self, leaves: Evaluator, continuations: ContinuationLeaves, by_blueprint: float = 0.0) -> None:
        self.by_blueprint = by_blueprint
        self.game = leaves.game
        self.table = leaves.table
        self.name = leaves.name
        self.leaves = leaves
        self.continuations = continuations

    def leaf_values(
        self, board: tuple[int, ...], pots: npt.NDArray[np.float64], reach: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        return self.leaves.leaf_values(board, pots, reach)

    def street_values(
        self, board: tuple[int, ...], leaves: Sequence[State], continuation: npt.NDArray[np.int8],
        reach: npt.NDArray[np.float64], positions: tuple[int, ...] = (0, 1),
    ) -> StreetValues:  # fmt: skip
        """The blueprint's values by each hand's flop sequences where ``by_blueprint``
        and they apply (hold'em's pre-flop), mixed with ``leaves``' by that
        share, else ``leaves``'."""
        if self.by_blueprint and leaves and leaves[0].round == 1:
            known = self.continuations.blueprint_street_values(leaves, reach)
            if known is not None:
                weight = self.by_blueprint
                if weight == 1.0:
                    return known
                own, _, _ = super().street_values(board, leaves, continuation, reach, positions)
                return weight * known[0] + (1.0 - weight) * own, known[1], known[2]
        return super().street_values(board, leaves, continuation, reach, positions)

    def board_values(
        self, board: tuple[int, ...], pot: float, reach: npt.NDArray[np.float64], leaf: State | None = None
    ) -> npt.NDArray[np.float64]:
        if leaf is None:
            return self.leaves.board_values(board, pot, reach)
        return self.continuations.blueprint_values(leaf, board, reach)


def blueprint_locate(blueprint: Blueprint) -> Locate:
    """``locate`` for :class:`ContinuationEvaluator`: the blueprint node a
    depth-limit leaf's betting reaches (read on the blueprint's tree by
    :func:`abstract_history`) and the pot ratio, or None off the tree."""
    nodes = blueprint.game.tree.node_of_key

    def locate(leaf: State) -> tuple[int, float] | None:
        _, abstract = abstract_history(leaf, blueprint.betting)
        if abstract is None or abstract.finished:
            return None
        return nodes[abstract.betting_string()], pot_ratio(leaf, abstract)

    return locate


@dataclass(frozen=True)
class AbstractStep:
    """One real action read on the blueprint's tree: the real state before it,
    the action, the abstract state before it and the abstract action indices
    with their weights (summing to 1)."""

    real: State
    action: Action
    abstract: State
    weights: tuple[tuple[int, float], ...]


def abstract_history(real: State, betting: BettingAbstraction | None) -> tuple[list[AbstractStep], State | None]:
    """The real betting of ``real`` read on a betting abstraction's tree from the
    start of the hand: one :class:`AbstractStep` per real action (a raise
    between two abstract sizes splits by the pseudo-harmonic mapping,
    :func:`strategies.translation.map_probabilities`) and the abstract state
    reached. The walk follows the heaviest mapping; from where the abstract hand
    parts from the real one (a different round or player to act, or over) the
    rest is left out and the state reached is None."""
    game = real.game
    before = abstract = State(game)
    steps: list[AbstractStep] = []
    for action in (a for round_actions in real.actions for a in round_actions):
        actions = tree_actions(abstract, betting)
        weights = _map_action(abstract, actions, before, action)
        if not weights:
            return steps, None
        steps.append(AbstractStep(before, action, abstract, tuple(weights)))
        abstract = abstract.apply(actions[max(weights, key=lambda w: w[1])[0]])
        before = before.apply(action)
        if abstract.finished != before.finished or (
            not before.finished and (abstract.round != before.round or abstract.current_player() != before.current_player())
        ):
            return steps, None
    return steps, abstract


def _map_action(abstract: State, actions: list[Action], before: State, action: Action) -> list[tuple[int, float]]:
    """Abstract action indices and weights for the real ``action`` taken in ``before``."""
    if action.type is not ActionType.RAISE:
        same = [i for i, a in enumerate(actions) if a.type is action.type]
        return [(same[0], 1.0)] if same else []
    raises = [i for i, a in enumerate(actions) if a.type is ActionType.RAISE]
    if not raises:
        return []
    bounds, abstract_bounds = before.raise_bounds(), abstract.raise_bounds()
    if bounds is not None and abstract_bounds is not None and action.size >= bounds[1] and actions[raises[-1]].size >= abstract_bounds[1]:
        return [(raises[-1], 1.0)]  # all-in to all-in
    if before.game.is_limit:
        return [(raises[0], 1.0)]
    fractions = [pot_fraction(abstract, actions[i].size) for i in raises]
    x = pot_fraction(before, action.size)
    return [(raises[k], p) for k, p in map_probabilities(x, fractions) if p > 0]


def pot_ratio(real: State, abstract: State) -> float:
    """Chips both players have committed in ``real`` over those in ``abstract``."""
    return float(min(real.spent)) / max(float(min(abstract.spent)), 1.0)
