"""Imaginary observations over a table of hands: importance-sampling estimates of a
strategy's value from logged or simulated hands (Johanson ch7).

The estimators themselves (``basic``, ``early-folds``, ``all-cards``,
``all-cards+early-folds``), when each is unbiased (full or partial information,
on- or off-policy) and how one hand is weighted are in
:mod:`strategies.imaginary`, one hand at a time, where the portfolio agent uses
them too; this module runs them over every hand of a :class:`Hands` table
(:func:`estimate`) and returns per-hand columns whose means and intervals are
the estimates.

Also here: :func:`simulate_hands` plays seeded hands between policies (cards
from :class:`poker.deal.Dealer`, so same seed = same cards per position: a
duplicate match), and :func:`tree_policy` turns a public-tree strategy array
(a CFR solve) into a policy.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from analysis.hands import NO_SEED, Hands
from poker.deal import Dealer, private_hands
from poker.excerpt import quote
from poker.gamedef import Game
from poker.state import State
from poker.stats import Estimate, mean_ci
from strategies.base import PublicState
from strategies.imaginary import (
    CachedPolicy,
    HandEvaluator,
    ImportanceError,
    Policy,
    PolicyFn,
)

__all__ = [
    "Estimates",
    "ImportanceError",
    "Policy",
    "PolicyFn",
    "estimate",
    "per_hand",
    "player_positions",
    "positions_of",
    "simulate_hands",
    "tree_policy",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Estimates:
    """Per-hand estimates (``float64[n]``) of our chips per hand under σ.

    ``raw`` is the observed money (an estimate of σ̂'s value, not σ's,
    off-policy); ``basic`` … ``all_cards_early_folds`` the imaginary-observation
    estimators. Each has the expectation of σ's value where it is unbiased
    (see :mod:`strategies.imaginary`), so its mean with :func:`poker.stats.mean_ci`
    is the estimate and interval."""

    raw: FloatArray
    basic: FloatArray
    early_folds: FloatArray
    all_cards: FloatArray
    all_cards_early_folds: FloatArray

    def columns(self) -> dict[str, FloatArray]:
        """``{"raw": …, "basic": …, "early-folds": …, …}``."""
        return {
            "raw": self.raw,
            "basic": self.basic,
            "early-folds": self.early_folds,
            "all-cards": self.all_cards,
            "all-cards+early-folds": self.all_cards_early_folds,
        }

    def summary(self) -> dict[str, Estimate]:
        """Mean and 95% interval of each column."""
        return {name: mean_ci(values) for name, values in self.columns().items()}



# -- policies -------------------------------------------------------------------------


def tree_policy(tree: object, strategy: FloatArray) -> PolicyFn:
    """The policy of a public-tree strategy ``float64[D, A, H]`` (e.g.
    ``Solver.average_strategy()``) on ``tree`` (a
    :class:`strategies.cfr.tree.public.Tree` built without isomorphism)."""
    from strategies.cfr.tree.public import Tree

    if not isinstance(tree, Tree):
        raise TypeError(f"tree_policy needs a strategies.cfr.tree.public.Tree, got {type(tree).__name__}")
    index = {tree.key(int(node)): d for d, node in enumerate(tree.decision_nodes)}
    arrays = np.ascontiguousarray(strategy, dtype=np.float64)

    def policy(public: PublicState) -> FloatArray:
        board = ",".join(str(c) for c in public.board)
        key = public.state.betting_string() + (f"|{board}" if board else "")
        d = index.get(key)
        if d is None:
            raise ImportanceError(f"public state {key!r} is not a decision of the tree")
        node = int(tree.decision_nodes[d])
        if tree.actions(node) != public.actions:
            raise ImportanceError(f"actions at {key!r} differ from the tree's")
        rows: FloatArray = arrays[d, : len(public.actions), :].T.copy()
        return rows

    return policy



# -- the estimators -------------------------------------------------------------------


def positions_of(hands: Hands, name: str) -> IntArray:
    """``name``'s position in every hand.

    Raises:
        ImportanceError: ``name`` is missing from some hand (or holds two seats).
    """
    if name not in hands.names:
        raise ImportanceError(f"{hands.source}: no player named {quote(name)} (players: {', '.join(hands.names)})")
    held = hands.name_index == hands.names.index(name)
    count = held.sum(axis=1)
    if (count != 1).any():
        row = int(np.argmax(count != 1))
        raise ImportanceError(f"{hands.where(row)}: {quote(name)} holds {int(count[row])} positions")
    positions: IntArray = np.argmax(held, axis=1).astype(np.int64)
    return positions


def player_positions(
    hands: Hands, player: str | int | Sequence[int] | IntArray, error: type[ImportanceError] = ImportanceError
) -> IntArray:
    """``player``'s position in every hand: a name in ``hands.names``, one position, or a position per hand.

    Raises:
        ImportanceError: ``name`` is missing from some hand; ``error``: a position out of range.
    """
    if isinstance(player, str):
        return positions_of(hands, player)
    positions: IntArray = np.broadcast_to(np.asarray(player, dtype=np.int64), (len(hands),))
    if ((positions < 0) | (positions >= hands.players)).any():
        raise error(f"positions must lie in 0..{hands.players - 1}")
    return positions


def per_hand(
    hands: Hands, positions: IntArray
) -> tuple[FloatArray, Iterator[tuple[str, int, str, list[list[int]], tuple[int, ...], float]]]:
    """The position's raw values, and each hand's ``(where, position, betting, hole, board, raw)``."""
    raw: FloatArray = hands.values[np.arange(len(hands)), positions].astype(np.float64)
    rows = (
        (
            hands.where(i),
            int(positions[i]),
            hands.betting[i],
            hands.hole[i].tolist(),
            tuple(int(c) for c in hands.board[i] if c >= 0),
            float(raw[i]),
        )
        for i in range(len(hands))
    )
    return raw, rows


def estimate(
    hands: Hands,
    player: str | int | Sequence[int] | IntArray,
    sigma: Policy,
    played: Policy | None = None,
    *,
    information: str = "full",
) -> Estimates:
    """Per-hand estimates of ``player``'s chips under ``sigma`` from ``hands``
    played by ``played`` (default ``sigma``: on-policy).

    ``player`` is a name in ``hands.names``, one position for every hand, or a
    position per hand. ``information`` is ``"full"`` (the opponent's cards are
    used in every hand) or ``"partial"`` (only at showdowns: biased, see
    :mod:`strategies.imaginary`).

    Raises:
        ImportanceError: a hand the strategies or the rules cannot explain (its
            ``file:line``), a game that is not two-player, a bad ``information``.
    """
    positions = player_positions(hands, player)
    evaluator = HandEvaluator(hands.game, sigma, played, information)
    raw, hand_args = per_hand(hands, positions)
    out = np.array([evaluator.hand(*args) for args in hand_args]).reshape(len(hands), 4)
    return Estimates(raw, out[:, 0].copy(), out[:, 1].copy(), out[:, 2].copy(), out[:, 3].copy())


# -- simulated matches ----------------------------------------------------------------


def simulate_hands(
    game: Game,
    players: Sequence[Policy],
    num_hands: int,
    *,
    seed: int,
    names: Sequence[str] | None = None,
    rotate: bool = True,
    action_seed: int | None = None,
) -> Hands:
    """``num_hands`` hands between ``players`` (one policy per seat), each action
    drawn from the acting player's policy row for its holding.

    Player ``k`` sits at position ``(k + hand) % P`` (``rotate``, as the dealer
    seats a match) or ``k``. Cards come from ``Dealer(game, seed=seed)``: the
    same seed deals the same cards per position, so seatings with the players
    permuted form a duplicate match. Actions use ``numpy``'s generator seeded
    with ``action_seed`` (``seed`` when None: then two seatings of one
    strategy against itself mirror each other's play, which a duplicate of
    agents drawing their own actions would not)."""
    count = game.num_players
    if len(players) != count:
        raise ImportanceError(f"{game.num_players} players needed, got {len(players)}")
    labels = tuple(names) if names is not None else tuple(f"p{k}" for k in range(count))
    if len(set(labels)) != count:
        raise ImportanceError(f"names {labels} must be {count} distinct names")
    policies = [CachedPolicy(p, game) for p in players]
    index = {tuple(int(c) for c in h): i for i, h in enumerate(private_hands(game))}
    dealer = Dealer(game, seed=seed)
    rng = np.random.default_rng(seed if action_seed is None else action_seed)
    holes = np.empty((num_hands, count, game.num_hole_cards), dtype=np.int8)
    boards = np.full((num_hands, sum(game.num_board_cards)), -1, dtype=np.int8)
    values = np.empty((num_hands, count))
    seating = np.empty((num_hands, count), dtype=np.int32)
    bettings: list[str] = []
    from poker.evaluate import rank_hands

    for h in range(num_hands):
        deal = dealer.next_hand()
        seat_of = [(p - h) % count if rotate else p for p in range(count)]  # position -> player
        rows = [index[tuple(sorted(deal.hole[p]))] for p in range(count)]
        state = State(game)
        while not state.finished:
            p = state.current_player()
            seen = deal.board[: game.total_board_cards(state.round)]
            answer, actions = policies[seat_of[p]](state, seen)
            row = answer[rows[p]]
            cumulative = np.cumsum(row)
            pick = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
            state = state.apply(actions[min(pick, len(actions) - 1)])
        betting = state.betting_string()
        bettings.append(betting)
        shown = game.total_board_cards(state.round)
        boards[h, :shown] = deal.board[:shown]
        holes[h] = deal.hole
        if state.is_showdown():
            cards = np.array([tuple(deal.hole[p]) + deal.board[:shown] for p in range(count)], dtype=np.int8)
            result = state.values([int(r) for r in rank_hands(cards)])
        else:
            result = state.values()
        values[h] = [float(v) for v in result]
        seating[h] = seat_of
    return Hands(
        game=game,
        source=f"simulated(seed={seed})",
        hand_id=np.arange(num_hands, dtype=np.int64),
        values=values,
        names=labels,
        name_index=seating,
        hole=holes,
        board=boards,
        betting=tuple(bettings),
        line=np.arange(1, num_hands + 1, dtype=np.int64),
        seed=np.full(num_hands, seed if seed >= 0 else NO_SEED, dtype=np.int64),
    )
