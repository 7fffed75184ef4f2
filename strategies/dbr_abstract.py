"""RNR and DBR through a card abstraction: the opponent model counted per
*abstract* information set and the counter-strategy solved in the abstract game
(Johanson 2016 thesis ch6; the hold'em form of :mod:`strategies.dbr`).

Hold'em's public tree cannot be built, so a counter-strategy to a hold'em
opponent lives where our hold'em equilibria live: in the abstract game of a
perfect-recall card abstraction (:mod:`strategies.cfr.solvers.abstract_game`),
whose information sets are the pairs (betting node, own bucket sequence). The
thesis's hold'em models are counted the same way (§6.3: frequency counts per
abstract information set of the opponent's actions in full-information hands).

**Counting** (:func:`count_abstract_model`). For every logged hand the opponent
played (ACPC ``.log`` files show every hole card), each of its actions is
counted at the betting node before it and at the bucket sequence its real hole
cards and the board dealt so far fall in, computed exactly as the playing agent
computes its own (:class:`~strategies.cfr.solvers.pcs.PCSStrategy`: the
abstraction's ``buckets(round, board)`` in the strategy file's column order),
so the model's columns are the ones a counter-strategy plays from. Card
abstraction ``none`` (small games) counts per real information set and makes
this path the real game, the same model as :func:`strategies.dbr.count_model`.

**Solving** (:func:`abstract_counter_strategy`): ``sigma_fix`` and ``P_conf`` per
abstract information set from the same functions as the public-tree path
(:func:`strategies.dbr.restriction_arrays`: DBR's ``P_max * f(n_I)``, RNR's
``p`` everywhere), then for each of our positions ``q`` CFR+ on the abstract
game with the opponent at ``1 - q`` restricted
(:class:`~strategies.cfr.solvers.abstract_game.AbstractRestriction`); position
``q``'s columns of that solve's average are ours. The table is in the bucket
layout of the abstract solver's strategy files, so the equilibrium agent plays
it (``equilibrium:file=PATH``).

Exactness: ``P_max = 0`` is the unrestricted abstract solve bit for bit; ``P_max
= 1`` with every information set observed converges to the best response to the
model within the abstract game; with card abstraction ``none`` on Leduc the
result is the public-tree DBR's (tests).

No-limit: the logged betting is read as betting of the abstract game's
betting abstraction by the agent's own action translation (off-tree raises
split between the neighbouring abstract sizes by the pseudo-harmonic mapping,
weighted by its probabilities), so the model is of the opponent as the
counter-strategy will see it; counts are then fractional.

Limits: two players; perfect-recall card abstractions (the abstract game's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.excerpt import quote
from poker.protocol import ProtocolError, parse_betting
from poker.state import ActionType
from strategies.cfr.solvers.abstract_game import AbstractCFR, AbstractGame, AbstractRestriction
from strategies.cfr.solvers.abstract_solve import AbstractSolve
from strategies.cfr.tree.betting import BettingTree
from strategies.cfr.tree.public import BettingAbstraction, NodeKind
from strategies.dbr import _TOKEN, DEFAULT_ITERATIONS, DBRError, ObservedHands, observed_hands, restriction_arrays
from strategies.translation import translate

__all__ = [
    "AbstractModel",
    "abstract_counter_strategy",
    "abstract_exploitation",
    "count_abstract_model",
    "solve_abstract_restricted",
]

#: Iterations between progress reports (hold'em: about a second each).
_BATCH = 10


@dataclass(frozen=True, eq=False)
class AbstractModel:
    """Action counts of one opponent per abstract information set, ``counts
    float64[A, R]`` in the column order of ``solve.game`` (one column per
    decision node and bucket sequence; only the columns of nodes the opponent
    acted at are non-zero), from ``hands`` hands in which it played."""

    solve: AbstractSolve
    counts: npt.NDArray[np.float64]
    hands: int
    name: str = ""

    @property
    def game(self) -> AbstractGame:
        return self.solve.game

    @property
    def observations(self) -> npt.NDArray[np.float64]:
        """``n_I``: times the opponent was seen acting at each column, ``float64[R]``."""
        n: npt.NDArray[np.float64] = self.counts.sum(axis=0)
        return n

    def strategy(self) -> npt.NDArray[np.float64]:
        """``sigma_fix`` ``float64[A, R]``: the observed frequencies; always call
        where nothing was observed (thesis §6.3, footnote 5)."""
        g = self.game
        default = np.zeros_like(self.counts)
        for node in g.decisions:
            actions = g.tree.actions(int(node))
            call = next(i for i, a in enumerate(actions) if a.type is ActionType.CALL)
            default[call, g.doff[node] : g.doff[node] + g.width[node]] = 1.0
        n = self.observations
        seen = n > 0
        fixed: npt.NDArray[np.float64] = np.where(seen, self.counts / np.where(seen, n, 1.0), default)
        return fixed


def count_abstract_model(solve: AbstractSolve, hands: ObservedHands, opponent: str, *, showdown_only: bool = False) -> AbstractModel:
    """Count ``opponent``'s actions per abstract information set of ``solve`` over
    ``hands`` (no-limit betting through :func:`_translated_steps`).

    Raises:
        DBRError: the opponent is not in the hands, the game is not the
            solve's, or a limit hand's betting leaves the betting tree.
    """
    g = solve.game
    game = g.game
    if hands.game != game:
        raise DBRError("the hands are of a different game than the abstract game")
    seen, played = observed_hands(hands, opponent, private_hands(game), showdown_only=showdown_only)
    tree = g.tree
    buckets: dict[tuple[int, tuple[int, ...]], npt.NDArray[np.int32]] = {}
    counts = np.zeros((g.max_actions, g.num_columns))
    for (betting, board, position, row), times in seen.items():
        steps = _limit_steps(tree, betting, position) if game.is_limit else _translated_steps(tree, betting, position)
        for node, action, weight in steps:
            r = int(tree.round[node])
            dealt = board[: game.total_board_cards(r)]
            if (r, dealt) not in buckets:
                buckets[r, dealt] = solve.abstraction.buckets(r, list(dealt))
            sequence = int(buckets[r, dealt][row])
            if sequence < 0:
                raise DBRError(f"betting {quote(betting)}: hole cards clash with the board {list(dealt)}")
            counts[action, int(g.doff[node]) + sequence] += times * weight  # the file's column order
    return AbstractModel(solve, solve.from_file(counts), played, opponent)


def _limit_steps(tree: BettingTree, betting: str, position: int) -> list[tuple[int, int, float]]:
    """``(node, action index, 1.0)`` of each of ``position``'s actions in ``betting``,
    which must stay on the tree."""
    steps = []
    for match in _TOKEN.finditer(betting):
        token = match.group()
        if token == "/":
            continue
        prefix = betting[: match.start()]
        node = tree.node_of_key.get(prefix, -1)
        names = [str(a) for a in tree.actions(node)] if node >= 0 and tree.kind[node] == NodeKind.DECISION else []
        if token not in names:
            raise DBRError(f"betting {quote(betting)} leaves the betting tree at {quote(prefix)} (action {token!r})")
        if int(tree.player[node]) == position:
            steps.append((node, names.index(token), 1.0))
    return steps


def _translated_steps(tree: BettingTree, betting: str, position: int) -> list[tuple[int, int, float]]:
    """``(node, action index, weight)`` of ``position``'s actions in the no-limit
    ``betting`` read as betting of the tree's abstraction by the agent's own
    translation (:func:`strategies.translation.translate`, every path with its
    probability): an off-tree raise of either player is split between the
    neighbouring abstract sizes by the pseudo-harmonic mapping, as the agent
    would read it; on-tree betting is one path of weight 1. A raise whose real
    image several abstract raises share (clamped) is split evenly between them;
    decisions after the abstract and the real hand part (a raise read as
    all-in) are not counted."""
    abstraction = tree.abstraction if tree.abstraction is not None else BettingAbstraction()
    try:
        real = parse_betting(betting, tree.game)
    except ProtocolError as error:
        raise DBRError(f"betting {quote(betting)}: {error}") from None
    steps = []
    for path in translate(real, abstraction, player=position):
        for step in path.steps:
            node = tree.node_of_key[step.abstract.betting_string()]
            for index in step.indices:
                steps.append((node, index, path.probability / len(step.indices)))
    return steps


def solve_abstract_restricted(
    game: AbstractGame,
    position: int,
    fixed: npt.NDArray[np.float64] | None,
    confidence: npt.NDArray[np.float64] | None,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    delay: int = 0,
    progress: Callable[[int], object] | None = None,
) -> AbstractCFR:
    """The abstract-game CFR+ solver in which ``position``'s opponent is
    restricted to ``fixed`` with per-column probability ``confidence`` (None: a
    plain solve), after ``iterations`` iterations (``progress(n)`` after each
    batch of ``n``)."""
    restriction = None if fixed is None or confidence is None else AbstractRestriction(1 - position, fixed, confidence)
    solver = AbstractCFR(game, delay=delay, restriction=restriction)
    while solver.iteration < iterations:
        batch = min(_BATCH, iterations - solver.iteration)
        solver.run(batch)
        if progress is not None:
            progress(batch)
    return solver


def abstract_counter_strategy(
    model: AbstractModel,
    method: str,
    p: float,
    pconf: str = "0-10-linear",
    *,
    s: float = 1.0,
    iterations: int = DEFAULT_ITERATIONS,
    delay: int = 0,
    progress: Callable[[int], object] | None = None,
) -> npt.NDArray[np.float64]:
    """Our strategy ``float64[A, R]`` (the game's column order) for both
    positions: position ``q``'s columns are the average strategy of the
    restricted abstract game solved for seat ``q`` (``progress(n)`` after each
    batch of ``n`` iterations, ``2 * iterations`` in all)."""
    g = model.game
    fixed, confidence = restriction_arrays(model, method, p, pconf, s=s)
    owner = g.column_player
    out = np.zeros((g.max_actions, g.num_columns))
    for position in (0, 1):
        solver = solve_abstract_restricted(
            g, position, fixed, confidence, iterations=iterations, delay=delay, progress=progress
        )
        mine = owner == position
        out[:, mine] = solver.average()[:, mine]
    return out


def abstract_exploitation(game: AbstractGame, ours: npt.NDArray[np.float64], opponent: npt.NDArray[np.float64]) -> float:
    """Our expected chips per hand in the abstract game against ``opponent``
    (both ``float64[A, R]``, game column order), averaged over the two seats."""
    owner = game.column_player
    total = 0.0
    for position in (0, 1):
        profile = np.where((owner == position)[None, :], ours, opponent)
        total += game.profile_values(profile)[position]
    return total / 2
