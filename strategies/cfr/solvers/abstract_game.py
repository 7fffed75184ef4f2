"""A perfect-recall card abstraction solved as an explicit abstract game (CFR+).

Reference: Johanson (2016) thesis 'Robust Strategies and Counter-Strategies':
ch2 best response and exploitability (walk with the opponent's reach vector, max at
our decisions, sum at the opponent's; exploitability = mean of the two
best-response values), ch3/ch9 CFR and CFR+ and ch5-6
abstraction (perfect recall = hierarchical buckets; ch6: the 5-bucket perfect-recall
E[HS²] abstraction, 5^4 = 625 bucket sequences, "CFR reached within 3 mbb/g of
equilibrium in under 10 hours" on 2009 hardware).
An abstract strategy's *abstract-game* exploitability measures how well the
abstract game was solved, not how it plays the real game.

With **perfect recall** a player's private state in the abstract game is its
whole bucket sequence (round r: ``k_0 * ... * k_r`` sequences, the
:class:`~strategies.cfr.abstraction.card_abstraction.CardAbstraction` numbering, so ``seq_{r-1}
= seq_r // k_r``), and its information sets are exactly the pairs (betting node,
own bucket sequence): they are nested, so the abstract game is an ordinary
perfect-recall two-player game and CFR+ and best response apply as written.

The abstract game's chance deals a **joint** pair of last-round bucket
sequences: card removal correlates the two players' buckets. Its tables, over n
last-round sequences, computed once by exact enumeration of the real deals:

* ``joint[s1, s2]`` = number of full deals (hole cards 1, hole cards 2, board in
  deal order) whose last-round sequences are (s1, s2);
* ``showdown[s1, s2]`` = the sum over those deals of sign(hand 1 vs hand 2 at
  showdown): +1 when the holder of s1 wins, -1 when it loses, 0 on a tie.

Earlier rounds' joint weights are marginals of ``joint`` (reshape n into
(n_r, n / n_r) and sum). Hold'em goes over the 134459 canonical rivers with
their suit-class sizes and the 20 orders in which each can be dealt (flop, turn,
river); see :mod:`strategies.cfr.solvers._abstract_kernels` for the O(H m) per-board
counting. Other abstractions (tests, lossless ones) are enumerated board by board.

CFR+ (Burch thesis §4.1.1; the project's conventions of
:class:`strategies.cfr.solvers.solver.Solver`): alternating updates, regret-matching+,
average weight ``max(t - delay, 0)``; the output is the average (the thesis's
HULHE solve with CFR+ kept the current strategy instead). On the betting tree
(:func:`strategies.cfr.tree.betting.build_betting_tree`) each node carries one value per
bucket sequence of its round; a round change broadcasts the parent's reach to
the child's sequences (each extension of a sequence inherits its reach) and sums
the child's values back. Terminal values of position p against the opponent
reach r: a fold at round r gives ``payoff * (J_r r)``, a showdown ``stake *
(S_p r)`` (``S_0 = S``, ``S_1 = -S^T``); all showdown terminals go through one
matrix product per pass (T x n @ n x n, BLAS), and the folds of each round
another. Tables are divided by the number of deals, so values are chips per
hand. Zero-sum payoffs only.

Best response is the same pass with the maximum over the responder's actions
per (node, own sequence), which is exact because those are its information
sets; exploitability is the mean of the two best-response values (Johanson
Eq 2.3), in chips per hand (:func:`strategies.cfr.best_response.exact.to_mbb` for mbb/g).

The strategy arrays are ``float64[A, R]`` in the bucket-table layout of
:func:`strategies.cfr.solvers.pcs.row_layout` (decision row d owns one column per
sequence of its round), so a solved table is a
:class:`strategies.cfr.solvers.pcs.PCSStrategy` and fits a bucket-layout strategy file.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.evaluate import rank_hands
from poker.gamedef import Game, format_game
from strategies.cfr.abstraction.bucketing import Recall
from strategies.cfr.abstraction.cache_files import (
    CacheFileError,
    default_cache_dir,
    expect_arrays,
    read_arrays,
    write_arrays,
)
from strategies.cfr.abstraction.card_abstraction import Abstraction, CardAbstraction, file_slug
from strategies.cfr.abstraction.card_tables import card_tables, deal_orders
from strategies.cfr.solvers import _abstract_kernels as _k
from strategies.cfr.tree.betting import BettingTree, build_betting_tree
from strategies.cfr.tree.public import BettingAbstraction, NodeKind

__all__ = [
    "AbstractCFR",
    "AbstractGame",
    "AbstractGameError",
    "AbstractRestriction",
    "JointTables",
    "enumerate_joint_tables",
    "joint_tables",
    "joint_tables_path",
    "load_joint_tables",
    "sequence_counts",
]

FORMAT = "acpc-arena-joint-bucket-tables"
FORMAT_VERSION = 1
#: The board-by-board enumeration refuses games with more deal orders of the board than this.
MAX_ENUMERATED_BOARDS = 200_000
#: At most this many last-round bucket sequences: the abstract game keeps several
#: dense n x n tables (int64 counts, float64 matrices), 128 MB each at this size.
MAX_SEQUENCES = 4096
#: ``progress(done, total)`` after each chunk of canonical boards.
Progress = Callable[[int, int], None]


class AbstractGameError(ValueError):
    """An abstraction, table or strategy the abstract game cannot use."""


@dataclass(frozen=True, eq=False)
class JointTables:
    """Exact deal counts over pairs of last-round bucket sequences, ``int64[n, n]``:
    ``joint`` (deals) and ``showdown`` (sum of showdown signs for the row's holder)."""

    joint: npt.NDArray[np.int64]
    showdown: npt.NDArray[np.int64]

    @property
    def deals(self) -> int:
        """Total number of deals (hole cards of both players and the board in deal order)."""
        return int(self.joint.sum())


def sequence_counts(abstraction: Abstraction, game: Game) -> list[int]:
    """Bucket sequences per round, checked to nest (each round's count a multiple
    of the last) and to fit the dense tables (at most :data:`MAX_SEQUENCES`)."""
    counts = [abstraction.num_buckets(r) for r in range(game.num_rounds)]
    if counts[-1] > MAX_SEQUENCES:
        raise AbstractGameError(
            f"{counts[-1]} last-round bucket sequences: the abstract game's {counts[-1]} x {counts[-1]} tables"
            f" are too big (at most {MAX_SEQUENCES} sequences); use fewer buckets"
        )
    for r in range(1, game.num_rounds):
        if counts[r] % counts[r - 1]:
            raise AbstractGameError(
                f"round {r} has {counts[r]} buckets, not a multiple of round {r - 1}'s {counts[r - 1]}:"
                " the abstract game needs perfect-recall bucket sequences"
            )
    return counts


def joint_tables(
    abstraction: CardAbstraction, *, workers: int | None = None, progress: Progress | None = None
) -> JointTables:
    """:class:`JointTables` of a perfect-recall :class:`CardAbstraction` by exact
    enumeration over its game's canonical final boards (hold'em: 134459 rivers,
    20 deal orders each), ``workers`` threads (default every core)."""
    game = abstraction.game
    if abstraction.recall is not Recall.PERFECT:
        raise AbstractGameError(f"abstraction {abstraction.name!r} has imperfect recall; the abstract game needs perfect")
    if game.num_players != 2:
        raise AbstractGameError(f"the abstract game is for 2 players; the game has {game.num_players}")
    n = sequence_counts(abstraction, game)[-1]
    cards = card_tables(game)
    boards, orbit = cards.canonical[int(cards.total_cards[-1])]
    orders = deal_orders(game)
    data = abstraction.kernel_data
    chunk = 256
    bounds = [(s, min(s + chunk, len(boards))) for s in range(0, len(boards), chunk)]

    def work(start: int, stop: int) -> npt.NDArray[np.int64]:
        tables = np.zeros((n, n, 2), dtype=np.int64)
        histograms = np.zeros(((stop - start) * len(orders), n))
        _k.joint_counts(boards[start:stop], orbit[start:stop], orders, data, n, tables, histograms)
        weights = np.repeat(orbit[start:stop], len(orders)).astype(np.float64)
        # Exact in float64: a chunk's sums stay far below 2^53.
        outer = (histograms.T * weights) @ histograms
        tables[:, :, 0] += np.rint(outer).astype(np.int64)
        tables[:, :, 0] -= np.diag(np.rint(weights @ histograms).astype(np.int64))
        return tables

    total = np.zeros((n, n, 2), dtype=np.int64)
    with ThreadPoolExecutor(max_workers=max(1, workers or os.cpu_count() or 1)) as pool:
        for done, tables in enumerate(pool.map(lambda b: work(*b), bounds), start=1):
            total += tables
            if progress is not None:
                progress(done, len(bounds))
    wins = total[:, :, 1]
    return JointTables(joint=np.ascontiguousarray(total[:, :, 0]), showdown=wins - wins.T)


def enumerate_joint_tables(game: Game, abstraction: Abstraction) -> JointTables:
    """:class:`JointTables` of any abstraction whose ``bucket_rounds`` numbers
    perfect-recall sequences (round r's sequence = round r+1's // k_{r+1}), by
    going over every board in deal order and every pair of hands (small games:
    at most :data:`MAX_ENUMERATED_BOARDS` boards)."""
    counts = sequence_counts(abstraction, game)
    n = counts[-1]
    deck = sorted(game.deck())
    boards: list[tuple[int, ...]] = [()]
    for r in range(game.num_rounds):
        boards = [
            b + c for b in boards for c in itertools.combinations([x for x in deck if x not in b], game.num_board_cards[r])
        ]
        if len(boards) > MAX_ENUMERATED_BOARDS:
            raise AbstractGameError(f"{len(boards)} boards by round {r}: too many to enumerate one by one")
    hands = private_hands(game).astype(np.int64)
    hand_sets = np.zeros((len(hands), max(deck) + 1), dtype=bool)
    for column in hands.T:
        hand_sets[np.arange(len(hands)), column] = True
    clash = (hand_sets.astype(np.int64) @ hand_sets.T.astype(np.int64)) > 0
    joint = np.zeros((n, n), dtype=np.int64)
    showdown = np.zeros((n, n), dtype=np.int64)
    for board in boards:
        valid = ~hand_sets[:, list(board)].any(axis=1)
        seqs = np.asarray(abstraction.bucket_rounds(list(board)), dtype=np.int64)[:, valid]
        if (seqs < 0).any():
            raise AbstractGameError(f"the abstraction gives no bucket to a hand that fits the board {list(board)}")
        for r in range(1, game.num_rounds):
            if not np.array_equal(seqs[r] // (counts[r] // counts[r - 1]), seqs[r - 1]):
                raise AbstractGameError(
                    f"on board {list(board)} round {r}'s bucket sequences do not extend round {r - 1}'s"
                )
        last = seqs[-1]
        ranks = rank_hands(np.concatenate([hands[valid], np.tile(np.array(board, dtype=np.int64), (int(valid.sum()), 1))], axis=1))
        fits = ~clash[np.ix_(valid, valid)]
        sign = np.sign(ranks[:, None].astype(np.int64) - ranks[None, :]) * fits
        np.add.at(joint, (last[:, None], last[None, :]), fits.astype(np.int64))
        np.add.at(showdown, (last[:, None], last[None, :]), sign)
    return JointTables(joint=joint, showdown=showdown)


def load_joint_tables(
    abstraction: CardAbstraction,
    *,
    cache_dir: Path | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> JointTables:
    """:func:`joint_tables`, read from ``cache_dir`` (default
    :func:`~strategies.cfr.abstraction.cache_files.default_cache_dir`, beside the
    abstraction) if computed before, else computed and written there (an
    unreadable file is computed again). The file is keyed by
    :func:`joint_tables_path`: the abstraction's digest, so tables are never
    reused for a rebuilt or different abstraction of the same name."""
    path = joint_tables_path(abstraction, cache_dir)
    expected = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "game": format_game(abstraction.game),
        "abstraction": abstraction.name,
        "abstraction_digest": abstraction.digest,
    }
    if path.exists():
        try:
            n = abstraction.num_buckets(abstraction.game.num_rounds - 1)
            square = ("<i8", (n, n))
            header, arrays = read_arrays(path, expect=expect_arrays({"joint": square, "showdown": square}))
        except CacheFileError:  # damaged: computed again below
            header, arrays = {}, {}
        if all(header.get(key) == value for key, value in expected.items()) and {"joint", "showdown"} <= set(arrays):
            return JointTables(joint=arrays["joint"], showdown=arrays["showdown"])
    tables = joint_tables(abstraction, workers=workers, progress=progress)
    write_arrays(path, expected, {"joint": tables.joint, "showdown": tables.showdown})
    return tables


def joint_tables_path(abstraction: CardAbstraction, cache_dir: Path | None = None) -> Path:
    """Where :func:`load_joint_tables` keeps ``abstraction``'s tables: named by its
    spec and :attr:`~strategies.cfr.abstraction.card_abstraction.CardAbstraction.digest` (a hash
    of the game, the spec and the bucket look-up tables)."""
    directory = cache_dir or default_cache_dir()
    return directory / f"joint-{file_slug(abstraction.name)}-{abstraction.digest}.msgpack"


class AbstractGame:
    """The betting tree of ``game`` (no-limit: ``betting``, default that of
    :func:`build_betting_tree`) with bucket-sequence vectors, and the terminal
    tables of :class:`JointTables`; the arrays the kernels walk. ``single``
    runs the terminal matrix products in float32 (twice as fast; tree values,
    regrets and averages stay float64)."""

    def __init__(
        self,
        game: Game,
        sequences: list[int] | tuple[int, ...],
        tables: JointTables,
        *,
        betting: BettingAbstraction | None = None,
        single: bool = False,
    ) -> None:
        if game.num_players != 2:
            raise AbstractGameError(f"the abstract game is for 2 players; the game has {game.num_players}")
        if len(sequences) != game.num_rounds:
            raise AbstractGameError(f"{len(sequences)} sequence counts for a {game.num_rounds}-round game")
        n = sequences[-1]
        if tables.joint.shape != (n, n) or tables.showdown.shape != (n, n):
            raise AbstractGameError(f"joint tables must be {n} x {n}, got {tables.joint.shape}, {tables.showdown.shape}")
        if tables.deals <= 0:
            raise AbstractGameError("the joint table counts no deals")
        self.game = game
        self.sequences = tuple(int(s) for s in sequences)
        self.single = single
        self.tables = tables
        self.tree: BettingTree = build_betting_tree(game, betting)
        tree = self.tree
        total = float(tables.deals)
        joint = tables.joint.astype(np.float64) / total
        showdown = tables.showdown.astype(np.float64) / total
        dtype = np.float32 if single else np.float64
        # Matrices M with V = R @ M for each position (R: opponent reach rows).
        self._fold_matrix: list[tuple[npt.NDArray[np.floating[Any]], npt.NDArray[np.floating[Any]]]] = []
        for s in self.sequences:
            marginal = joint.reshape(s, n // s, s, n // s).sum(axis=(1, 3))
            self._fold_matrix.append((np.ascontiguousarray(marginal.T, dtype), np.ascontiguousarray(marginal, dtype)))
        self._showdown_matrix = (np.ascontiguousarray(showdown.T, dtype), np.ascontiguousarray(-showdown, dtype))
        # A node's vector runs over the sequences of its betting round (showdowns too).
        self.width = np.array([self.sequences[r] for r in tree.round], dtype=np.int64)
        self.offset = np.zeros(tree.num_nodes + 1, dtype=np.int64)
        self.offset[1:] = np.cumsum(self.width)
        decisions = tree.decision_nodes
        self.doff = np.zeros(tree.num_nodes, dtype=np.int64)
        self.row_start = np.zeros(len(decisions) + 1, dtype=np.int64)
        self.row_start[1:] = np.cumsum(self.width[decisions])
        self.doff[decisions] = self.row_start[:-1]
        self.kind = tree.kind.astype(np.int64)
        self.player = tree.player.astype(np.int64)
        self.first_child = tree.first_child.astype(np.int64)
        self.num_children = tree.num_children.astype(np.int64)
        self.decisions = decisions.astype(np.int64)
        self.showdowns = np.flatnonzero(tree.kind == NodeKind.SHOWDOWN).astype(np.int64)
        self.folds = [
            np.flatnonzero((tree.kind == NodeKind.FOLD) & (tree.round == r)).astype(np.int64)
            for r in range(game.num_rounds)
        ]
        payoff = tree.payoff
        self._showdown_scale = [np.ascontiguousarray(payoff[self.showdowns, p, 0]) for p in range(2)]
        self._fold_scale = [[np.ascontiguousarray(payoff[f, p, 0]) for f in self.folds] for p in range(2)]
        self._showdown_rows = np.zeros((len(self.showdowns), n), dtype)
        self._showdown_values = np.zeros_like(self._showdown_rows)
        self._fold_rows = [np.zeros((len(f), s), dtype) for f, s in zip(self.folds, self.sequences)]
        self._fold_values = [np.zeros_like(rows) for rows in self._fold_rows]

    @classmethod
    def from_abstraction(
        cls, abstraction: CardAbstraction, *, cache_dir: Path | None = None, workers: int | None = None,
        progress: Progress | None = None, betting: BettingAbstraction | None = None, single: bool = False,
    ) -> AbstractGame:  # fmt: skip
        """The abstract game of a perfect-recall card abstraction (tables from :func:`load_joint_tables`)."""
        tables = load_joint_tables(abstraction, cache_dir=cache_dir, workers=workers, progress=progress)
        game = abstraction.game
        return cls(game, sequence_counts(abstraction, game), tables, betting=betting, single=single)

    @property
    def max_actions(self) -> int:
        return self.tree.max_actions

    @property
    def column_player(self) -> npt.NDArray[np.int64]:
        """``int64[R]``: the position acting at each column's decision."""
        return np.repeat(self.player[self.decisions], self.width[self.decisions])

    @property
    def num_columns(self) -> int:
        """Columns of the strategy tables (one per decision and sequence of its round)."""
        return int(self.row_start[-1])

    def uniform(self) -> npt.NDArray[np.float64]:
        """The uniform strategy ``float64[A, R]``."""
        table = np.zeros((self.max_actions, self.num_columns))
        _k.normalise(table, self.num_children, self.decisions, self.doff, self.width, table)
        return table

    def reach(self, strategy: npt.NDArray[np.float64], position: int, out: npt.NDArray[np.float64]) -> None:
        """``position``'s reach (own actions only) at every node into ``out`` (flat)."""
        out[: self.sequences[0]] = 1.0
        _k.propagate_reach(
            self.kind, self.player, self.first_child, self.num_children, self.offset, self.width, self.doff,
            strategy, out, position,
        )  # fmt: skip

    def terminal_values(self, position: int, opponent_reach: npt.NDArray[np.float64], values: npt.NDArray[np.float64]) -> None:
        """``position``'s counterfactual values at every terminal into ``values``
        (flat), from the opponent's reach: one matrix product for all showdowns
        and one per round for the folds."""
        n = self.sequences[-1]
        _k.gather_rows(self.showdowns, self.offset, self.width, n, opponent_reach, self._showdown_rows)
        np.matmul(self._showdown_rows, self._showdown_matrix[position], out=self._showdown_values)
        _k.scatter_rows(
            self.showdowns, self.offset, self.width, self._showdown_scale[position], self._showdown_values, values
        )
        for r, nodes in enumerate(self.folds):
            if not len(nodes):
                continue
            rows, out = self._fold_rows[r], self._fold_values[r]
            _k.gather_rows(nodes, self.offset, self.width, self.sequences[r], opponent_reach, rows)
            np.matmul(rows, self._fold_matrix[r][position], out=out)
            _k.scatter_rows(nodes, self.offset, self.width, self._fold_scale[position][r], out, values)

    def check(self, strategy: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        shape = (self.max_actions, self.num_columns)
        if strategy.shape != shape:
            raise AbstractGameError(f"a strategy of this abstract game has shape {shape}, got {strategy.shape}")
        return np.ascontiguousarray(strategy, dtype=np.float64)

    def _root_values(self, strategy: npt.NDArray[np.float64], mode: int) -> tuple[float, float]:
        strategy = self.check(strategy)
        size = int(self.offset[-1])
        reach = np.zeros(size)
        values = np.zeros(size)
        out = []
        for position in range(2):
            self.reach(strategy, 1 - position, reach)
            self.terminal_values(position, reach, values)
            _k.decision_values(
                self.kind, self.player, self.first_child, self.num_children, self.offset, self.width, self.doff,
                position, mode, 0.0, strategy, strategy, strategy, reach, values, strategy, _NO_RESTRICTION,
            )  # fmt: skip
            out.append(float(values[: self.sequences[0]].sum()))
        return out[0], out[1]

    def best_response(self, strategy: npt.NDArray[np.float64]) -> tuple[float, float]:
        """Each position's best-response value (chips per hand) in the abstract game
        against the other position's part of ``strategy``."""
        return self._root_values(strategy, _k.MODE_BEST_RESPONSE)

    def profile_values(self, strategy: npt.NDArray[np.float64]) -> tuple[float, float]:
        """Each position's expected chips per hand when both play ``strategy``."""
        return self._root_values(strategy, _k.MODE_VALUE)

    def exploitability(self, strategy: npt.NDArray[np.float64]) -> float:
        """Mean of the two best-response values, chips per hand."""
        first, second = self.best_response(strategy)
        return (first + second) / 2


_NO_RESTRICTION = np.zeros(0)


@dataclass(frozen=True, eq=False)
class AbstractRestriction:
    """One position of an :class:`AbstractGame` forced to follow ``fixed`` with
    probability ``p_conf`` at each of its abstract information sets (data-biased
    response, Johanson thesis §6.5, Eq 6.1), the abstract game's form of
    :class:`strategies.cfr.solvers.solver.Restriction`.

    ``fixed`` is ``float64[A, R]`` and ``p_conf`` ``float64[R]`` in [0, 1], both
    in the game's column order (one column per decision node and bucket
    sequence); only the columns of ``position``'s decisions are read. p_conf = 0
    everywhere is a plain solve (bit for bit); 1 everywhere makes the other
    position's solution a best response to ``fixed`` in the abstract game."""

    position: int
    fixed: npt.NDArray[np.float64]
    p_conf: npt.NDArray[np.float64]


class AbstractCFR:
    """CFR+ on an :class:`AbstractGame`: alternating updates, regret-matching+,
    average weight ``max(t - delay, 0)``; tables ``float64[A, R]``.

    With a ``restriction`` (:class:`AbstractRestriction`) the restricted position
    plays ``p_conf * fixed + (1 - p_conf) * sigma`` (mixed before each pass, as
    the public-tree :class:`~strategies.cfr.solvers.solver.Solver` does); its
    regrets and average are those of the free part ``sigma``."""

    def __init__(self, game: AbstractGame, *, delay: int = 0, restriction: AbstractRestriction | None = None) -> None:
        if delay < 0:
            raise AbstractGameError(f"the averaging delay must be non-negative, got {delay}")
        self.game = game
        self.delay = delay
        self.iteration = 0
        shape = (game.max_actions, game.num_columns)
        self.regret = np.zeros(shape)
        self.cumulative = np.zeros(shape)
        self.sigma = game.uniform()
        size = int(game.offset[-1])
        self._reach = np.zeros((2, size))
        self._values = np.zeros(size)
        self.restriction = restriction
        self._play = self.sigma
        self._restricted = -1
        if restriction is not None:
            if restriction.position not in (0, 1):
                raise AbstractGameError(f"the restricted position must be 0 or 1, got {restriction.position}")
            if restriction.fixed.shape != shape or restriction.p_conf.shape != shape[1:]:
                raise AbstractGameError(
                    f"restriction arrays must have shapes {shape} and {shape[1:]},"
                    f" got {restriction.fixed.shape} and {restriction.p_conf.shape}"
                )
            if not ((restriction.p_conf >= 0) & (restriction.p_conf <= 1)).all():
                raise AbstractGameError("p_conf must lie in [0, 1]")
            self._restricted = restriction.position
            self._columns = np.flatnonzero(game.column_player == restriction.position)
            self._fixed = np.ascontiguousarray(restriction.fixed[:, self._columns], dtype=np.float64)
            self._keep_columns = np.ascontiguousarray(restriction.p_conf[self._columns], dtype=np.float64)
            self._keep = np.zeros(game.num_columns)
            self._keep[self._columns] = self._keep_columns
            self._play = self.sigma.copy()

    def _mix(self) -> None:
        """The restricted position's played strategy from the current ``sigma``
        (columns of the other position are ``sigma``'s, copied once: they are
        never read from ``_play``, whose reach and values use ``sigma``)."""
        free = self.sigma[:, self._columns]
        self._play[:, self._columns] = free + self._keep_columns * (self._fixed - free)

    def run(self, iterations: int) -> None:
        """Run ``iterations`` more iterations."""
        if iterations < 0:
            raise AbstractGameError(f"iterations must be non-negative, got {iterations}")
        g = self.game
        for _ in range(iterations):
            t = self.iteration + 1
            weight = float(max(t - self.delay, 0))
            for position in range(2):
                if self._restricted >= 0:
                    self._mix()
                own = self._play if position == self._restricted else self.sigma
                other = self._play if 1 - position == self._restricted else self.sigma
                keep = self._keep if position == self._restricted else _NO_RESTRICTION
                g.reach(own, position, self._reach[position])
                g.reach(other, 1 - position, self._reach[1 - position])
                g.terminal_values(position, self._reach[1 - position], self._values)
                _k.decision_values(
                    g.kind, g.player, g.first_child, g.num_children, g.offset, g.width, g.doff, position,
                    _k.MODE_CFR_PLUS, weight, self.sigma, self.regret, self.cumulative, self._reach[position],
                    self._values, own, keep,
                )  # fmt: skip
            self.iteration = t

    def load_arrays(
        self, *, iteration: int, regret: npt.NDArray[np.float64], cumulative: npt.NDArray[np.float64]
    ) -> None:
        """Continue from saved tables (a checkpoint of the same abstract game and
        delay). The current strategy is regret-matched from ``regret`` with the
        arithmetic of the update itself, so the run goes on bit for bit as if
        never stopped."""
        shape = self.regret.shape
        if regret.shape != shape or cumulative.shape != shape:
            raise AbstractGameError(
                f"checkpoint arrays have shapes {regret.shape}, {cumulative.shape}; the abstract game needs {shape}"
            )
        if iteration < 0:
            raise AbstractGameError(f"the checkpoint's iteration must be non-negative, got {iteration}")
        self.regret[...] = regret
        self.cumulative[...] = cumulative
        self.iteration = iteration
        g = self.game
        _k.normalise(self.regret, g.num_children, g.decisions, g.doff, g.width, self.sigma)

    def average(self) -> npt.NDArray[np.float64]:
        """The normalised cumulative strategy ``float64[A, R]`` (uniform where never reached)."""
        out = np.zeros_like(self.cumulative)
        g = self.game
        _k.normalise(self.cumulative, g.num_children, g.decisions, g.doff, g.width, out)
        return out

    def exploitability(self) -> float:
        """Abstract-game exploitability of the average strategy, chips per hand."""
        return self.game.exploitability(self.average())

