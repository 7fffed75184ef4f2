"""Restricted Nash response (RNR) and data-biased response (DBR) counter-strategies
built from observed hands (Johanson 2016 thesis 'Robust Strategies and
Counter-Strategies', ch6).

**Opponent model** (thesis §6.3, frequency counts). :func:`count_model` reads
ACPC hand histories (:class:`ObservedHands`: :class:`analysis.hands.Hands` from
ours or the reference dealer's ``.log`` files) and counts, for one named opponent, every action it took
at every information set it acted in: ``counts[d, a, h]`` on the public tree
(decision row ``d`` = position to act, betting and board; ``h`` = its private
hand; ``a`` = the action). The model is ``sigma_fix(I, a) = n(I, a) / n_I``;
where ``n_I = 0`` the default policy is *always call* (thesis §6.3, footnote 5).

Which observations count. The thesis builds its models from *full-information*
hands (both players' cards known). ACPC ``.log`` files are exactly that: the
dealer writes every hole card of every hand, folded ones included, so by
default every decision of the opponent in every logged hand is counted at its
true information set. In real play one sees the opponent's cards only at a
showdown; ``showdown_only=True`` (``arena dbr --showdown-only``) keeps only the
hands that reached a showdown, i.e. counts the information sets that such an
observer could have identified (this biases the model toward hands that call
down, which is why it is not the default). Information sets with no observation
get ``P_conf = 0`` in DBR, so they need no default policy there.

**RNR** (thesis §6.4): the opponent follows ``sigma_fix`` with probability ``p``
and is free otherwise. It is solved here through the solver's per-information-set
restriction hook (:class:`strategies.cfr.solvers.solver.Restriction`) with
``P_conf(I) = p`` at *every* opponent information set (unobserved ones playing
the always-call default). Deviation: the thesis's RNR flips one coin per game
(the forced opponent plays ``sigma_fix`` for the whole hand); the per-information-set
mix is the same game at ``p = 0`` (an equilibrium) and ``p = 1`` (a best response
to the model) and has the same failure modes in between (it trusts unobserved
and thinly observed information sets as much as well observed ones).

**DBR** (thesis §6.5, Eq 6.1): ``sigma_2(I) = P_conf(I) sigma_fix(I) + (1 -
P_conf(I)) sigma'_2(I)`` with ``P_conf(I) = P_max * f(n_I)`` (§6.5.2):

=================  ================================================
``1-step``         ``P_max`` if ``n >= 1`` else 0
``10-step``        ``P_max`` if ``n >= 10`` else 0
``0-10-linear``    ``P_max * min(n, 10) / 10``
``s-curve``        ``P_max * n / (s + n)`` (``s = 1`` by default)
=================  ================================================

**Solving.** For each of our positions ``q`` the restricted game (opponent at
``1 - q`` restricted) is solved with CFR+ (:class:`strategies.cfr.solvers.solver.Solver`,
``restriction=``); our rows of position ``q`` come from that solve's average
strategy. The result is a full ``[D, A, H]`` strategy for both seats, saved as a
strategy file (:mod:`strategies.cfr.strategy_file`, algorithm ``"rnr"`` or
``"dbr"``) that plays through any public-tree strategy agent.

Scope: two-player games whose public tree can be built without suit
isomorphism (Kuhn, Leduc, limit or within a no-limit betting abstraction whose
sizes the logs use exactly). Hold'em goes through a card abstraction:
:mod:`strategies.dbr_abstract` counts the model per abstract information set
and solves in the abstract game, with the same ``P_conf`` functions.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from poker.excerpt import quote
from poker.gamedef import Game
from poker.state import ActionType
from strategies.cfr.best_response.exact import profile_values
from strategies.cfr.solvers.solver import Algorithm, Restriction, Solver
from strategies.cfr.tree.public import Tree, board_key

__all__ = [
    "CountedModel",
    "DBRError",
    "METHODS",
    "PCONF_FUNCTIONS",
    "DEFAULT_ITERATIONS",
    "ObservedHands",
    "OpponentModel",
    "count_model",
    "observed_hands",
    "p_conf",
    "restriction_arrays",
    "solve_restricted",
    "counter_strategy",
    "exploitation",
    "random_strategy",
]

METHODS = ("rnr", "dbr")
PCONF_FUNCTIONS = ("0-10-linear", "1-step", "10-step", "s-curve")
#: CFR+ iterations per restricted solve (Leduc: a few milliseconds per 100).
DEFAULT_ITERATIONS = 4000

_TOKEN = re.compile(r"[fc]|r\d*|/")


class ObservedHands(Protocol):
    """The columns of observed hands a model is counted from, by position:
    ``names[name_index[i, p]]`` sat at position ``p`` of hand ``i`` with hole cards
    ``hole[i, p]``; ``board[i]`` (``-1`` past the round reached) and the ACPC
    ``betting[i]``; ``where(i)`` names the hand in an error line.

    :class:`analysis.hands.Hands` is such a table. Strategies stand below the
    analysis package (an agent runs without it), so they name the columns they
    read rather than import the table that the readers of logs build.
    """

    @property
    def game(self) -> Game: ...

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def name_index(self) -> npt.NDArray[np.int32]: ...

    @property
    def hole(self) -> npt.NDArray[np.int8]: ...

    @property
    def board(self) -> npt.NDArray[np.int8]: ...

    @property
    def betting(self) -> tuple[str, ...]: ...

    def __len__(self) -> int: ...

    def where(self, hand: int) -> str: ...


class DBRError(ValueError):
    """Logs, settings or trees a counter-strategy cannot be built from."""


@dataclass(frozen=True)
class OpponentModel:
    """Action counts of one opponent, ``counts float64[D, A, H]`` on ``tree``
    (only the rows of decisions the opponent acted at are non-zero), from
    ``hands`` hands in which it played."""

    tree: Tree
    counts: npt.NDArray[np.float64]
    hands: int
    name: str = ""

    @property
    def observations(self) -> npt.NDArray[np.float64]:
        """``n_I``: times the opponent was seen acting at each ``[D, H]``."""
        n: npt.NDArray[np.float64] = self.counts.sum(axis=1)
        return n

    def strategy(self) -> npt.NDArray[np.float64]:
        """``sigma_fix`` ``[D, A, H]``: the observed frequencies; always call
        where nothing was observed (thesis §6.3)."""
        n = self.observations
        default = np.zeros_like(self.counts)
        for d, node in enumerate(self.tree.decision_nodes):
            actions = self.tree.actions(int(node))
            call = next(i for i, a in enumerate(actions) if a.type is ActionType.CALL)
            default[d, call, :] = 1.0
        seen = n[:, None, :] > 0
        fixed: npt.NDArray[np.float64] = np.where(seen, self.counts / np.where(seen, n[:, None, :], 1.0), default)
        return fixed


def _lookup(tree: Tree) -> dict[tuple[str, tuple[int, ...]], int]:
    if tree.isomorphism:
        raise DBRError("opponent models are counted on a tree built without suit isomorphism")
    return {
        (tree.states[node].betting_string(), tree.boards[tree.board_index[node]]): d
        for d, node in enumerate(tree.decision_nodes)
    }


def observed_hands(
    hands: ObservedHands, opponent: str, private: npt.NDArray[np.integer[Any]], *, showdown_only: bool = False
) -> tuple[Counter[tuple[str, tuple[int, ...], int, int]], int]:
    """The hands ``opponent`` played, grouped: ``(betting, board, its position,
    its row in private)`` -> number of hands, and how many hands it played
    (showdowns only if ``showdown_only``).

    Raises:
        DBRError: the opponent is not in the hands, or its hole cards are no row of ``private``.
    """
    if opponent not in hands.names:
        raise DBRError(f"no player {quote(opponent)} in the hands; players: {', '.join(hands.names)}")
    hand_index = {tuple(int(c) for c in row): h for h, row in enumerate(private)}
    who = hands.names.index(opponent)
    seen: Counter[tuple[str, tuple[int, ...], int, int]] = Counter()
    played = 0
    for i in range(len(hands)):
        seats = np.flatnonzero(hands.name_index[i] == who)
        if seats.size != 1:
            continue
        betting = hands.betting[i]
        if showdown_only and "f" in betting:
            continue
        played += 1
        position = int(seats[0])
        hole = hand_index.get(tuple(sorted(int(c) for c in hands.hole[i, position])))
        if hole is None:
            raise DBRError(f"{hands.where(i)}: hole cards do not form a private hand of the game")
        seen[betting, tuple(int(c) for c in hands.board[i]), position, hole] += 1
    return seen, played


def count_model(tree: Tree, hands: ObservedHands, opponent: str, *, showdown_only: bool = False) -> OpponentModel:
    """Count ``opponent``'s actions per information set over ``hands``.

    Raises:
        DBRError: the opponent is not in the hands, the game is not the tree's,
            or a hand's betting or cards leave the tree (a raise size outside
            the betting abstraction).
    """
    if hands.game != tree.game:
        raise DBRError("the hands are of a different game than the tree")
    lookup = _lookup(tree)
    seen, played = observed_hands(hands, opponent, tree.hands, showdown_only=showdown_only)
    counts = np.zeros((tree.num_decisions, tree.max_actions, tree.num_hands))
    names = {d: [str(a) for a in tree.actions(int(node))] for d, node in enumerate(tree.decision_nodes)}
    for (betting, board, position, hole), times in seen.items():
        for match in _TOKEN.finditer(betting):
            token = match.group()
            if token == "/":
                continue
            prefix = betting[: match.start()]
            key = (prefix, board_key(tree.game, board, prefix.count("/")))
            d = lookup.get(key)
            if d is None or token not in names[d]:
                raise DBRError(f"betting {quote(betting)} leaves the tree at {quote(prefix)} (action {token!r})")
            if int(tree.player[tree.decision_nodes[d]]) == position:
                counts[d, names[d].index(token), hole] += times
    return OpponentModel(tree, counts, played, opponent)


def p_conf(function: str, n: npt.ArrayLike, p_max: float, *, s: float = 1.0) -> npt.NDArray[np.float64]:
    """``P_conf`` of observation counts ``n`` (thesis §6.5.2), scaled by ``p_max``."""
    if not 0.0 <= p_max <= 1.0:
        raise DBRError(f"P_max must lie in [0, 1], got {p_max}")
    counts = np.asarray(n, dtype=np.float64)
    if function == "1-step":
        f = (counts >= 1).astype(np.float64)
    elif function == "10-step":
        f = (counts >= 10).astype(np.float64)
    elif function == "0-10-linear":
        f = np.minimum(counts, 10.0) / 10.0
    elif function == "s-curve":
        if s <= 0:
            raise DBRError(f"the s-curve needs s > 0, got {s}")
        f = counts / (s + counts)
    else:
        raise DBRError(f"unknown P_conf function {quote(function)}; one of {', '.join(PCONF_FUNCTIONS)}")
    out: npt.NDArray[np.float64] = p_max * f
    return out


class CountedModel(Protocol):
    """An opponent model of observed frequencies: :class:`OpponentModel` (public
    tree) or :class:`strategies.dbr_abstract.AbstractModel` (abstract game)."""

    @property
    def observations(self) -> npt.NDArray[np.float64]: ...

    def strategy(self) -> npt.NDArray[np.float64]: ...


def restriction_arrays(
    model: CountedModel, method: str, p: float, pconf: str = "0-10-linear", *, s: float = 1.0
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``(fixed, p_conf)`` of ``method`` (``rnr``: ``p`` everywhere; ``dbr``:
    ``P_conf(n_I)`` with ``P_max = p``): ``[D, A, H]`` and ``[D, H]`` on the
    public tree, ``[A, R]`` and ``[R]`` in the abstract game."""
    if not 0.0 <= p <= 1.0:
        raise DBRError(f"p must lie in [0, 1], got {p}")
    if method == "rnr":
        confidence = np.full(model.observations.shape, float(p))
    elif method == "dbr":
        confidence = p_conf(pconf, model.observations, p, s=s)
    else:
        raise DBRError(f"unknown method {quote(method)}; one of {', '.join(METHODS)}")
    return model.strategy(), confidence


def solve_restricted(
    tree: Tree,
    position: int,
    fixed: npt.NDArray[np.float64] | None,
    confidence: npt.NDArray[np.float64] | None,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    algorithm: Algorithm | str = Algorithm.CFR_PLUS,
) -> Solver:
    """The solver of the game in which ``position``'s opponent is restricted to
    ``fixed`` with per-information-set probability ``confidence`` (None: no
    restriction, a plain solve), after ``iterations`` iterations."""
    restriction = None if fixed is None or confidence is None else Restriction(1 - position, fixed, confidence)
    solver = Solver(tree, algorithm, restriction=restriction)
    solver.run(iterations)
    return solver


def counter_strategy(
    model: OpponentModel,
    method: str,
    p: float,
    pconf: str = "0-10-linear",
    *,
    s: float = 1.0,
    iterations: int = DEFAULT_ITERATIONS,
    algorithm: Algorithm | str = Algorithm.CFR_PLUS,
) -> npt.NDArray[np.float64]:
    """Our strategy ``[D, A, H]`` for both positions: position ``q``'s rows are
    the average strategy of the restricted game solved for seat ``q``."""
    tree = model.tree
    fixed, confidence = restriction_arrays(model, method, p, pconf, s=s)
    out = np.zeros((tree.num_decisions, tree.max_actions, tree.num_hands))
    for position in (0, 1):
        solver = solve_restricted(tree, position, fixed, confidence, iterations=iterations, algorithm=algorithm)
        rows = tree.decision_player == position
        out[rows] = solver.average_strategy()[rows]
    return out


def exploitation(tree: Tree, ours: npt.NDArray[np.float64], opponent: npt.NDArray[np.float64]) -> float:
    """Our expected chips per hand against ``opponent`` (both ``[D, A, H]``),
    averaged over the two seats, so the game value cancels (thesis ch6:
    exploitation = utility against the opponent minus the game value)."""
    total = 0.0
    for position in (0, 1):
        rows = tree.decision_player == position
        profile = np.where(rows[:, None, None], ours, opponent)
        total += profile_values(tree, profile)[position]
    return total / 2


def random_strategy(tree: Tree, seed: int) -> npt.NDArray[np.float64]:
    """A fixed card-dependent strategy ``[D, A, H]`` for tests and benchmarks:
    each information set's row drawn from a flat Dirichlet (seeded)."""
    rng = np.random.default_rng(seed)
    strategy = np.zeros((tree.num_decisions, tree.max_actions, tree.num_hands))
    for d in range(tree.num_decisions):
        n = int(tree.num_actions[d])
        strategy[d, :n, :] = rng.dirichlet(np.ones(n), size=tree.num_hands).T
    return strategy
