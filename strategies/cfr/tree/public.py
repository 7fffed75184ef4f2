"""The public tree of a two-player game, flattened into arrays for the kernels.

Reference: Johanson (2016) thesis ch2 §2.4 (public states, Definition 2: a
partition of histories that no information set crosses) and Burch
(2017) thesis Algorithm 3 (the public-tree form of CFR). A node is a
public state: the betting (a :class:`poker.state.State`) and the board dealt so
far. The private cards are not in the tree: every node carries, in the kernels,
one value per private hand of each player.

Every rule comes from :mod:`poker.state`: the legal actions of a node are
``state.legal_actions(...)``, raise sizes are clamped into ``state.raise_bounds()``
and children are ``state.apply(action)``. Limit games are built exactly. No-limit
games go through a :class:`BettingAbstraction`: fold (when legal), call, raises to
listed fractions of the pot and all-in, each clamped to the legal range, duplicates
dropped.

Node kinds: decision, chance (deal the next round's board cards: one child per
set of cards, in ``itertools.combinations`` order of the remaining deck), fold
terminal and showdown terminal. A hand that ends all-in before the last round is
run out by one chance node that deals every missing board card at once.

Layout. Nodes come in *groups* of subtrees of the same shape: the same kinds,
actors, action and deal counts all the way down (each node's *signature*). The
children a group makes for one action (or all its deals) form one contiguous
*block*, and every block joins the group of its signature, wherever in the tree
it was made: Leduc's round two is one group of 15 nodes per betting history (5
round-one histories x 3 board classes with isomorphism), and every fold by the
same position is one group. So the kernels sweep a decision group and each
child block as one vector of ``size * H`` values, with few, wide groups. Groups
are laid out highest subtree first (a parent precedes its children); child ``a``
of decision node ``n`` is ``action_child[n, a]``, and for the ``k``-th node of a
group it is ``action_child[start, a] + k``; a chance node's deals are contiguous
from ``first_child[n]``. N nodes, G groups, D decision nodes, B distinct boards,
H private hands, A the most actions at a node:

=================  ===============  ==============================================
``kind``           int8[N]          :class:`NodeKind`
``player``         int8[N]          position to act (decision), position that
                                    folded (fold terminal), else -1
``round``          int8[N]          betting round of the node's state
``parent``         int32[N]         -1 at the root
``action_index``   int32[N]         index of the node among its parent's children
``first_child``    int32[N]         first child id (0 for terminals)
``action_child``   int32[N, A]      child id per action at decisions, else -1
``num_children``   int32[N]         actions (decision), boards (chance), else 0
``group_start``    int32[G + 1]     group g is nodes ``group_start[g]`` up to
                                    ``group_start[g + 1]``
``decision_index`` int32[N]         row in the strategy arrays (node order, so
                                    a group's rows are contiguous), -1 elsewhere
``board_index``    int32[N]         row in ``boards`` / ``board_mask``
``spent``          int64[N, 2]      chips committed per position
``chance_weight``  float64[N]       1 / (deals the chance node can make once both
                                    players' hands are known), 0 elsewhere
``board_mask``     float64[B, H]    1 where the hand shares no card with the board
``hand_rank``      int32[B, H]      ``poker.evaluate`` rank of hand + board on the
                                    boards of showdown terminals, -1 if the hand
                                    clashes with the board (or no showdown there)
``rank_order``     int32[B, H]      the valid hands of each board by rank, weakest
                                    first; ``num_valid[b]`` of them
``image_start``    int32[N + 1]     a chance child n stands for the boards of the
                                    suit permutations ``image_perm[image_start[n]
                                    : image_start[n + 1]]`` (just the identity,
                                    0, unless the tree uses suit isomorphism)
``hand_perm``      int32[P, H]      hand_perm[p, h]: the hand permutation p maps
                                    onto h (row 0 is the identity)
=================  ===============  ==============================================

Three or more players and private-hand dimensions other than "every
``num_hole_cards`` subset of the deck" (card abstraction) are later extensions;
the builder rejects games it cannot represent with a :class:`TreeError`.
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game
from poker.state import Action, ActionType, State

__all__ = [
    "MAX_ENTRIES",
    "NO_LIMIT_DEFAULT",
    "BettingAbstraction",
    "DecisionRows",
    "KeyedTree",
    "KernelTree",
    "NodeKind",
    "Tree",
    "TreeError",
    "board_key",
    "build_tree",
    "buildable_tree",
    "parse_bet_sizes",
    "terminal_payoff",
    "suit_maps",
    "tree_actions",
    "zero_sum_payoff",
]


#: Codes of :attr:`Tree.outcome` (they index a payoff table ``(lose, tie, win, 0)``).
LOSE, TIE, WIN, NO_SHOWDOWN = 0, 1, 2, 3
#: Trees with at most this many private hands get dense showdown tables.
DENSE_MAX_HANDS = 64


class TreeError(ValueError):
    """A game, root or abstraction the public-tree builder cannot represent."""


class NodeKind(enum.IntEnum):
    DECISION = 0
    CHANCE = 1
    FOLD = 2
    SHOWDOWN = 3


class KernelTree(NamedTuple):
    """The arrays of a :class:`Tree` that the numba kernels read
    (:mod:`strategies.cfr.tree._kernels`), by name. A NamedTuple because numba
    takes one as a single typed tuple argument and compiles a field read such as
    ``tree.board_mask`` to the same static access as an index: the names cost the
    kernels nothing, and no caller depends on the order. ``hand_cards`` is
    :attr:`Tree.hand_slots`; the rest are the :class:`Tree` arrays of the same
    name (module docstring)."""

    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    first_child: npt.NDArray[np.int32]
    action_child: npt.NDArray[np.int32]
    num_children: npt.NDArray[np.int32]
    decision_index: npt.NDArray[np.int32]
    board_index: npt.NDArray[np.int32]
    chance_weight: npt.NDArray[np.float64]
    group_start: npt.NDArray[np.int32]
    board_mask: npt.NDArray[np.float64]
    hand_cards: npt.NDArray[np.int64]
    hand_rank: npt.NDArray[np.int32]
    rank_order: npt.NDArray[np.int32]
    num_valid: npt.NDArray[np.int32]
    outcome: npt.NDArray[np.int8]
    sign: npt.NDArray[np.float64]
    image_start: npt.NDArray[np.int32]
    image_perm: npt.NDArray[np.int32]
    hand_perm: npt.NDArray[np.int32]


@dataclass(frozen=True)
class BettingAbstraction:
    """The raises a no-limit tree keeps: ``pot_fractions`` of the pot after calling
    (raise to ``max_spent + fraction * (pot + amount_to_call)``, rounded to the
    nearest chip) and, if ``all_in``, the whole stack. Every size is clamped into
    the legal range of the state, so a fraction below the minimum raise becomes
    the minimum raise. Limit games keep every legal action, and building a limit
    tree with an abstraction is an error rather than silently ignored."""

    pot_fractions: tuple[float, ...] = (1.0,)
    all_in: bool = True

    def __post_init__(self) -> None:
        bad = [f for f in self.pot_fractions if not (f > 0 and math.isfinite(f))]
        if bad:
            raise TreeError(f"pot fractions must be positive and finite, got {bad[0]!r}")

    def raise_to_sizes(self, state: State) -> list[int]:
        """Raise-to chips of the kept raises in ``state`` (legal, sorted, distinct)."""
        bounds = state.raise_bounds()
        if bounds is None:
            return []
        low, high = bounds
        pot_after_call = sum(state.spent) + state.amount_to_call()
        sizes = {min(max(state.max_spent + round(f * pot_after_call), low), high) for f in self.pot_fractions}
        if self.all_in:
            sizes.add(high)
        return sorted(sizes)

    def describe(self) -> str:
        """Short text for headers and logs, e.g. ``"pot fractions 0.5,1; all-in"``."""
        fractions = ",".join(f"{f:g}" for f in self.pot_fractions) or "none"
        return f"pot fractions {fractions}; {'all-in' if self.all_in else 'no all-in'}"


#: No-limit default: fold, call, pot-sized raise, all-in (the DeepStack-Leduc set).
NO_LIMIT_DEFAULT = BettingAbstraction()


def parse_bet_sizes(text: str | None) -> BettingAbstraction:
    """The betting abstraction of ``--bet-sizes F,F,...`` (pot fractions; None:
    the default, pot and all-in).

    Raises:
        TreeError: not a comma-separated list of positive numbers.
    """
    if text is None:
        return BettingAbstraction()
    try:
        fractions = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise TreeError(f"--bet-sizes {text!r} is not a comma-separated list of numbers") from None
    return BettingAbstraction(fractions)


@dataclass(frozen=True, eq=False)
class Tree:
    """A flattened public tree; see the module docstring for the array layout."""

    game: Game
    abstraction: BettingAbstraction | None
    hands: npt.NDArray[np.int8]
    states: tuple[State, ...]
    boards: tuple[tuple[int, ...], ...]
    kind: npt.NDArray[np.int8]
    player: npt.NDArray[np.int8]
    round: npt.NDArray[np.int8]
    parent: npt.NDArray[np.int32]
    action_index: npt.NDArray[np.int32]
    first_child: npt.NDArray[np.int32]
    action_child: npt.NDArray[np.int32]
    num_children: npt.NDArray[np.int32]
    group_start: npt.NDArray[np.int32]
    decision_index: npt.NDArray[np.int32]
    board_index: npt.NDArray[np.int32]
    spent: npt.NDArray[np.int64]
    chance_weight: npt.NDArray[np.float64]
    board_mask: npt.NDArray[np.float64]
    hand_rank: npt.NDArray[np.int32]
    rank_order: npt.NDArray[np.int32]
    num_valid: npt.NDArray[np.int32]
    isomorphism: bool
    image_start: npt.NDArray[np.int32]
    image_perm: npt.NDArray[np.int32]
    hand_perm: npt.NDArray[np.int32]

    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    @property
    def num_hands(self) -> int:
        return len(self.hands)

    @property
    def decision_nodes(self) -> npt.NDArray[np.int32]:
        """Node id of each decision row, ``int32[D]``."""
        return np.flatnonzero(self.kind == NodeKind.DECISION).astype(np.int32)

    @property
    def num_decisions(self) -> int:
        return int(np.count_nonzero(self.kind == NodeKind.DECISION))

    @property
    def max_actions(self) -> int:
        decisions = self.kind == NodeKind.DECISION
        return int(self.num_children[decisions].max()) if decisions.any() else 0

    def children(self, node: int) -> list[int]:
        """Child ids of ``node`` in action (or deal) order."""
        count = int(self.num_children[node])
        if self.kind[node] == NodeKind.DECISION:
            return [int(c) for c in self.action_child[node, :count]]
        first = int(self.first_child[node])
        return list(range(first, first + count))

    def actions(self, node: int) -> tuple[Action, ...]:
        """The actions of a decision node, in child order."""
        return tuple(self.states[c].actions[self.states[node].round][-1] for c in self.children(node))

    def key(self, node: int) -> str:
        """The public state as text: betting string, then the board cards by id,
        e.g. ``"crc/r|6"``. Unique per node; strategy files use it to check that
        a stored strategy belongs to the tree it is loaded on."""
        board = ",".join(str(c) for c in self.boards[self.board_index[node]])
        suffix = f"|{board}" if board else ""
        if self.kind[node] == NodeKind.CHANCE:
            suffix += "|deal"
        return self.states[node].betting_string() + suffix

    @cached_property
    def kernel_arrays(self) -> KernelTree:
        """The arrays the kernels take, as one :class:`KernelTree`."""
        return KernelTree(
            kind=self.kind,
            player=self.player,
            first_child=self.first_child,
            action_child=self.action_child,
            num_children=self.num_children,
            decision_index=self.decision_index,
            board_index=self.board_index,
            chance_weight=self.chance_weight,
            group_start=self.group_start,
            board_mask=self.board_mask,
            hand_cards=self.hand_slots,
            hand_rank=self.hand_rank,
            rank_order=self.rank_order,
            num_valid=self.num_valid,
            outcome=self.outcome,
            sign=self.sign,
            image_start=self.image_start,
            image_perm=self.image_perm,
            hand_perm=self.hand_perm,
        )

    def padded_kernel_arrays(self, width: int) -> KernelTree:
        """:attr:`kernel_arrays` with the hand axis padded to ``width`` hands: the
        extra hands clash with every board (mask 0, rank -1, no showdown), hold a
        card of their own past the deck (so the kernels' per-card sums of the real
        hands are unchanged) and map onto themselves under every suit permutation.
        With zero root reach they add only exact zeros to the real hands' values."""
        n_hands = self.num_hands
        if width < n_hands:
            raise TreeError(f"cannot pad {n_hands} hands to {width}")
        extra = width - n_hands

        def pad(array: npt.NDArray[Any], axes: tuple[int, ...], value: float) -> npt.NDArray[Any]:
            widths = [(0, extra if axis in axes else 0) for axis in range(array.ndim)]
            return np.pad(array, widths, constant_values=value)

        dense = self.outcome.shape[0] > 0
        return self.kernel_arrays._replace(
            board_mask=pad(self.board_mask, (1,), 0.0),
            hand_cards=pad(self.hand_slots, (0,), len(self.game.deck())),
            hand_rank=pad(self.hand_rank, (1,), -1),
            rank_order=pad(self.rank_order, (1,), 0),
            outcome=pad(self.outcome, (1, 2), NO_SHOWDOWN) if dense else self.outcome,
            sign=pad(self.sign, (1, 2), 0.0) if dense else self.sign,
            hand_perm=np.concatenate(
                [self.hand_perm, np.tile(np.arange(n_hands, width, dtype=np.int32), (len(self.hand_perm), 1))], axis=1
            ),
        )

    @cached_property
    def sign(self) -> npt.NDArray[np.float64]:
        """:attr:`outcome` as +1 (win), -1 (lose), 0 (tie or no showdown) floats,
        ``float64[B, H, H]``; empty when :attr:`outcome` is."""
        codes = self.outcome
        sign: npt.NDArray[np.float64] = (codes == WIN).astype(np.float64) - (codes == LOSE).astype(np.float64)
        return sign

    @cached_property
    def outcome(self) -> npt.NDArray[np.int8]:
        """Showdown outcome of every pair of hands on every board, ``int8[B, H, H]``
        (:data:`LOSE`, :data:`TIE`, :data:`WIN` for the row hand, :data:`NO_SHOWDOWN`
        where the hands clash with each other or the board), for trees with at most
        :data:`DENSE_MAX_HANDS` hands; an empty ``int8[0, 0, 0]`` otherwise, and
        the kernels then use the O(H) sorted sweep. For a handful of hands one
        pass over an H x H table beats the sweep's bookkeeping (Leduc: about 7x)."""
        if self.num_hands > DENSE_MAX_HANDS:
            return np.zeros((0, 0, 0), dtype=np.int8)
        ranks = self.hand_rank[:, :, None], self.hand_rank[:, None, :]
        codes = np.where(ranks[0] > ranks[1], WIN, np.where(ranks[0] < ranks[1], LOSE, TIE)).astype(np.int8)
        invalid = (self.hand_rank[:, :, None] < 0) | (self.hand_rank[:, None, :] < 0) | _clash_matrix(self.hands)[None]
        codes[invalid] = NO_SHOWDOWN
        return codes

    @cached_property
    def hand_slots(self) -> npt.NDArray[np.int64]:
        """``hands`` with each card replaced by its index in the sorted deck."""
        deck = np.array(sorted(self.game.deck()), dtype=np.int64)
        return np.searchsorted(deck, self.hands).astype(np.int64)

    @cached_property
    def decision_player(self) -> npt.NDArray[np.int8]:
        """Position to act at each decision row, ``int8[D]``."""
        return self.player[self.decision_nodes]

    @cached_property
    def num_actions(self) -> npt.NDArray[np.int32]:
        """Actions at each decision row, ``int32[D]``."""
        return self.num_children[self.decision_nodes]

    def root_pairs(self, reach0: npt.NDArray[np.float64], reach1: npt.NDArray[np.float64]) -> float:
        """Sum of ``reach0[h] * reach1[o]`` over pairs of hands that share no card
        with each other nor with the root board: the probability mass that the
        kernels' counterfactual values at the root are to be divided by."""
        mask = self.board_mask[self.board_index[0]]
        return float((reach0 * mask) @ self._compatible @ (reach1 * mask))

    @cached_property
    def _compatible(self) -> npt.NDArray[np.float64]:
        compatible: npt.NDArray[np.float64] = (~_clash_matrix(self.hands)).astype(np.float64)
        return compatible

    @cached_property
    def payoff(self) -> npt.NDArray[np.float64]:
        """The real game's payoffs (:func:`zero_sum_payoff`), computed once and
        shared: do not modify it (take :func:`zero_sum_payoff` for a copy to tilt).
        It is not flagged read-only because numba compiles read-only arrays as a
        separate type, doubling the kernels' compile time."""
        return zero_sum_payoff(self)


def _clash_matrix(hands: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.bool_]:
    """``bool[H, H]``: the two hands share a card."""
    flags = np.zeros((len(hands), int(hands.max()) + 1), dtype=bool)
    for column in range(hands.shape[1]):
        flags[np.arange(len(hands)), hands[:, column]] = True
    shared: npt.NDArray[np.bool_] = (flags.astype(np.int32) @ flags.T.astype(np.int32)) > 0
    return shared


def suit_maps(game: Game, isomorphism: bool) -> list[dict[int, int]]:
    """Card maps of the permutations of the game's suits, the identity first: all
    of them with ``isomorphism``, else the identity alone."""
    deck = sorted(game.deck())
    suits = sorted({c % 4 for c in deck})
    return [
        {c: (c // 4) * 4 + dict(zip(suits, image, strict=True))[c % 4] for c in deck}
        for image in (itertools.permutations(suits) if isomorphism else [tuple(suits)])
    ]


def board_key(game: Game, board: tuple[int, ...], round_: int) -> tuple[int, ...]:
    """The board through ``round_`` as the public tree lists it: each round's cards ascending."""
    key: list[int] = []
    for r in range(round_ + 1):
        start = game.total_board_cards(r - 1) if r else 0
        key.extend(sorted(board[start : game.total_board_cards(r)]))
    return tuple(key)


class KeyedTree(Protocol):
    """What :meth:`DecisionRows.of` reads of a tree: its decisions and their keys."""

    @property
    def game(self) -> Game: ...

    @property
    def decision_nodes(self) -> npt.NDArray[np.integer[Any]]: ...

    @property
    def decision_index(self) -> npt.NDArray[np.integer[Any]]: ...

    def key(self, node: int) -> str: ...


class DecisionRows:
    """Where a decision of the real game sits in a tree's strategy arrays.

    ``rows`` maps the tree's decision keys (:meth:`Tree.key`) to their rows. A
    tree built with suit isomorphism keeps one board per suit class: a decision
    on any other board is found through the first suit permutation (the
    identity first) that maps its board onto a kept one, and that permutation
    also says which stored hand column stands for each real hand. Players of a
    strategy file and listings of it both go through here, so they read the
    same numbers."""

    def __init__(self, game: Game, rows: dict[str, int], isomorphism: bool) -> None:
        self.game = game
        self.rows = rows
        hands = private_hands(game)
        index = {tuple(int(c) for c in h): i for i, h in enumerate(hands)}
        self.card_maps = suit_maps(game, isomorphism)
        self.columns = [
            np.array([index[tuple(sorted(card_map[int(c)] for c in h))] for h in hands], dtype=np.int64)
            for card_map in self.card_maps
        ]

    @classmethod
    def of(cls, tree: KeyedTree, *, isomorphism: bool) -> DecisionRows:
        """The rows of ``tree``'s strategy arrays (a :class:`Tree` or a three-player tree)."""
        return cls(tree.game, {tree.key(int(n)): int(tree.decision_index[n]) for n in tree.decision_nodes}, isomorphism)

    def find(self, state: State, board: tuple[int, ...]) -> tuple[int, npt.NDArray[np.int64]] | None:
        """``(row, columns)`` of the decision ``state`` with ``board`` (the cards of
        its rounds, in dealing order): real hand ``h`` reads column ``columns[h]``
        of the row; ``None`` if the tree has no such decision."""
        betting = state.betting_string()
        for card_map, columns in zip(self.card_maps, self.columns, strict=True):
            key = board_key(self.game, tuple(card_map[c] for c in board), state.round)
            row = self.rows.get(f"{betting}|{','.join(map(str, key))}" if key else betting)
            if row is not None:
                return row, columns
        return None

    def expand(self, strategy: npt.NDArray[np.float64], full: Tree) -> npt.NDArray[np.float64]:
        """``strategy`` (``float64[D, A, H]`` on the tree of :attr:`rows`) on ``full``,
        the same game's tree without suit isomorphism: every value copied, none
        computed.

        Raises:
            TreeError: a decision of ``full`` that the strategy's tree does not have.
        """
        out = np.zeros((full.num_decisions, strategy.shape[1], strategy.shape[2]), dtype=np.float64)
        for d, node in enumerate(full.decision_nodes):
            state, board = full.states[node], full.boards[full.board_index[node]]
            found = self.find(state, board)
            if found is None:
                raise TreeError(f"decision {full.key(int(node))!r} is not in the strategy's tree")
            row, columns = found
            out[d] = strategy[row][:, columns]
        return out


def tree_actions(state: State, abstraction: BettingAbstraction | None) -> list[Action]:
    """The actions a tree keeps at ``state``: all legal ones in a limit game, the
    abstraction's in a no-limit game (fold and call when legal, then raises)."""
    if state.game.is_limit:
        return state.legal_actions()
    if abstraction is None:
        raise TreeError("a no-limit tree needs a betting abstraction")
    sizes = abstraction.raise_to_sizes(state)
    if sizes:
        return state.legal_actions(sizes)
    return [a for a in state.legal_actions() if a.type is not ActionType.RAISE]


#: Nodes x private hands a public tree may hold (each solver array of that shape
#: takes 8 bytes an entry: 400 MB); re-solving lookaheads share the limit.
MAX_ENTRIES = 50_000_000


def build_tree(
    game: Game,
    abstraction: BettingAbstraction | None = None,
    *,
    root: State | None = None,
    board: Sequence[int] = (),
    isomorphism: bool = False,
    max_entries: int = MAX_ENTRIES,
) -> Tree:
    """The public tree of ``game`` below ``root`` (default: the start of a hand).

    ``board`` holds the board cards dealt so far: exactly
    ``game.total_board_cards(root.round)`` of them, unless the root is a chance
    point (the round's cards not yet dealt), where it may hold the previous
    rounds' cards. No-limit games use ``abstraction`` (default
    :data:`NO_LIMIT_DEFAULT`); limit games take none.

    With ``isomorphism`` the first round that deals board cards keeps one board
    per class of suit-isomorphic boards (Johanson thesis ch2 §2.4): the tree then
    stands for strategies and ranges that are symmetric under suit permutations,
    which CFR from uniform ranges produces, and is several times smaller
    (Leduc: 3 boards instead of 6; hold'em: 1755 flops instead of 22100).

    ``max_entries`` bounds nodes x private hands (each solver array of that shape
    takes 8 bytes per entry); a bigger tree raises :class:`TreeError` early
    instead of exhausting memory (full hold'em is far beyond it).

    Raises:
        TreeError: not a two-player game, more than two hole cards, a root and
            board that do not fit together, an abstraction on a limit game, or
            a tree over ``max_entries``.
    """
    if game.num_players != 2:
        raise TreeError(f"the public-tree solver handles 2 players; the game has {game.num_players}")
    if game.num_hole_cards > 2:
        raise TreeError(f"card removal is implemented for 1 or 2 hole cards; the game deals {game.num_hole_cards}")
    if game.is_limit and abstraction is not None:
        raise TreeError("a limit game has no betting abstraction: every legal action is in the tree")
    if not game.is_limit and abstraction is None:
        abstraction = NO_LIMIT_DEFAULT
    root = State(game) if root is None else root
    if root.game != game:
        raise TreeError("the root state belongs to another game")
    board = tuple(board)
    deck = set(game.deck())
    if len(set(board)) != len(board) or not deck.issuperset(board):
        raise TreeError(f"board {list(board)} repeats a card or holds a card outside the deck")
    low = game.total_board_cards(root.round - 1) if root.round > 0 else 0
    if not low <= len(board) <= game.total_board_cards(root.round):
        raise TreeError(
            f"a root in round {root.round} needs {game.total_board_cards(root.round)} board cards"
            f" (or {low} before they are dealt), got {len(board)}"
        )
    if isomorphism and board:
        raise TreeError("suit isomorphism needs a root with no board cards dealt yet")
    return _Builder(game, abstraction, isomorphism, max_entries).build(root, board)


def buildable_tree(game: Game, abstraction: BettingAbstraction | None) -> Tree | None:
    """The game's public tree, or None when it cannot be built (too big): what a
    real-game exploitability needs, where a solve over an abstraction measures
    the real game only when it can."""
    try:
        return build_tree(game, abstraction)
    except TreeError:
        return None


@dataclass(eq=False)
class _Group:
    """A group while the tree is built: its nodes (state, board, parent as
    ``(group, member)``, index among the parent's children, suit permutations of
    chance children), then the child blocks it made (one ``(group, offset)`` per
    action, or one for all deals, ``per_node`` each) and its first node id."""

    kind: NodeKind
    detail: int  # :meth:`_Builder.classify`'s: cards dealt, position to act or folder
    states: list[State] = field(default_factory=list)
    boards: list[tuple[int, ...]] = field(default_factory=list)
    parents: list[tuple[_Group | None, int]] = field(default_factory=list)
    action_index: list[int] = field(default_factory=list)
    images: list[list[int]] = field(default_factory=list)
    blocks: list[tuple[_Group, int]] = field(default_factory=list)
    per_node: int = 0
    start: int = 0


class _Builder:
    def __init__(self, game: Game, abstraction: BettingAbstraction | None, isomorphism: bool, max_entries: int) -> None:
        self.game = game
        self.max_entries = max_entries
        self.abstraction = abstraction
        self.isomorphism = isomorphism
        self.hands = private_hands(game)
        self.deck = sorted(game.deck())
        self.board_ids: dict[tuple[int, ...], int] = {}
        self.showdown_boards: set[int] = set()
        # Keyed by id(state): each betting state is one object, made once by
        # expand() and alive for the whole build, and hashing a State's action
        # tuples costs more than the rest of the lookup.
        self.shapes: dict[tuple[int, int], tuple[int, int]] = {}
        self.signatures: dict[tuple[int, int, tuple[int, ...]], int] = {}
        self.children: dict[int, list[State]] = {}
        # Suit permutations of the game's suits (the identity first) as card maps,
        # and hand_perm[p, h] = the hand that permutation p maps onto hand h.
        self.card_maps = suit_maps(game, isomorphism)
        index = {tuple(int(c) for c in h): i for i, h in enumerate(self.hands)}
        inverses = [{v: k for k, v in card_map.items()} for card_map in self.card_maps]
        self.hand_perm = np.array(
            [[index[tuple(sorted(inverse[int(c)] for c in h))] for h in self.hands] for inverse in inverses],
            dtype=np.int32,
        )

    def board_id(self, board: tuple[int, ...]) -> int:
        return self.board_ids.setdefault(board, len(self.board_ids))

    def shape(self, state: State, board_size: int) -> tuple[int, int]:
        """(signature, height) of the subtree below ``state`` with ``board_size``
        board cards dealt: equal signatures mean subtrees of the same shape (kinds,
        actors, action and deal counts at every node), whose nodes can share groups.
        The height (longest path to a terminal) orders the groups: a parent is
        always higher than its children."""
        key = (id(state), board_size)
        known = self.shapes.get(key)
        if known is not None:
            return known
        kind, detail = self.classify(state, board_size)
        if kind == NodeKind.CHANCE:
            below = [self.shape(state, board_size + detail)]
        elif kind == NodeKind.DECISION:
            below = [self.shape(child, board_size) for child in self.expand(state)]
        else:
            below = []
        signature = (int(kind), detail, tuple(s for s, _ in below))
        result = (self.signatures.setdefault(signature, len(self.signatures)), 1 + max((h for _, h in below), default=-1))
        self.shapes[key] = result
        return result

    def classify(self, state: State, board_size: int) -> tuple[NodeKind, int]:
        """The node kind of ``state`` with ``board_size`` board cards, with the cards
        a chance node deals, the position to act at a decision or the folder."""
        game = self.game
        wanted = game.total_board_cards(game.num_rounds - 1) if state.is_showdown() else game.total_board_cards(state.round)
        if board_size < wanted and not (state.finished and not state.is_showdown()):
            return NodeKind.CHANCE, wanted - board_size
        if state.finished:
            return (NodeKind.SHOWDOWN, -1) if state.is_showdown() else (NodeKind.FOLD, state.folded.index(True))
        return NodeKind.DECISION, state.current_player()

    def expand(self, state: State) -> list[State]:
        """The children of a decision state, in action order (computed once per state)."""
        children = self.children.get(id(state))
        if children is None:
            children = [state.apply(action) for action in tree_actions(state, self.abstraction)]
            self.children[id(state)] = children
        return children

    def build(self, root: State, root_board: tuple[int, ...]) -> Tree:
        groups = self.grouped(root, root_board)
        start = 0
        for group in groups:
            group.start = start
            start += len(group.states)
        n_nodes = start
        max_actions = max((len(g.blocks) for g in groups if g.kind == NodeKind.DECISION), default=1)
        kind = np.empty(n_nodes, dtype=np.int8)
        player = np.full(n_nodes, -1, dtype=np.int8)
        parent = np.full(n_nodes, -1, dtype=np.int32)
        action_index = np.full(n_nodes, -1, dtype=np.int32)
        first_child = np.zeros(n_nodes, dtype=np.int32)
        action_child = np.full((n_nodes, max_actions), -1, dtype=np.int32)
        num_children = np.zeros(n_nodes, dtype=np.int32)
        chance_weight = np.zeros(n_nodes, dtype=np.float64)
        group_start = np.array([g.start for g in groups] + [n_nodes], dtype=np.int32)
        images: list[list[int]] = []
        hole_cards = 2 * self.game.num_hole_cards
        for group in groups:
            nodes = slice(group.start, group.start + len(group.states))
            ids = np.arange(group.start, group.start + len(group.states), dtype=np.int32)
            kind[nodes] = group.kind
            parent[nodes] = [-1 if p is None else p.start + k for p, k in group.parents]
            action_index[nodes] = group.action_index
            images.extend(group.images)
            if group.kind == NodeKind.DECISION:
                player[nodes] = group.detail
                num_children[nodes] = len(group.blocks)
                for a, (child, offset) in enumerate(group.blocks):
                    action_child[nodes, a] = child.start + offset + ids - group.start
                first_child[nodes] = action_child[nodes, 0]
            elif group.kind == NodeKind.CHANCE:
                (child, offset), = group.blocks
                per_node = group.per_node
                num_children[nodes] = per_node
                first_child[nodes] = child.start + offset + (ids - group.start) * per_node
                remaining = len(self.deck) - len(group.boards[0]) - hole_cards
                chance_weight[nodes] = 1.0 / math.comb(remaining, group.detail)
            elif group.kind == NodeKind.FOLD:
                player[nodes] = group.detail
        states = tuple(s for g in groups for s in g.states)
        boards = [b for g in groups for b in g.boards]
        board_index = np.array([self.board_id(b) for b in boards], dtype=np.int32)
        for group in groups:
            if group.kind == NodeKind.SHOWDOWN:
                self.showdown_boards.update(self.board_id(b) for b in group.boards)
        board_list = sorted(self.board_ids, key=self.board_ids.__getitem__)
        image_start = np.zeros(n_nodes + 1, dtype=np.int32)
        image_start[1:] = np.cumsum([len(i) for i in images])
        board_mask, hand_rank, rank_order, num_valid = self.board_tables(board_list)
        decision_index = np.full(n_nodes, -1, dtype=np.int32)
        decisions = np.flatnonzero(kind == NodeKind.DECISION)
        decision_index[decisions] = np.arange(len(decisions), dtype=np.int32)
        return Tree(
            game=self.game,
            abstraction=self.abstraction,
            hands=self.hands,
            states=states,
            boards=tuple(board_list),
            kind=kind,
            player=player,
            round=np.array([s.round for s in states], dtype=np.int8),
            parent=parent,
            action_index=action_index,
            first_child=first_child,
            action_child=action_child,
            num_children=num_children,
            group_start=group_start,
            decision_index=decision_index,
            board_index=board_index,
            spent=np.array([s.spent for s in states], dtype=np.int64).reshape(n_nodes, 2),
            chance_weight=chance_weight,
            board_mask=board_mask,
            hand_rank=hand_rank,
            rank_order=rank_order,
            num_valid=num_valid,
            isomorphism=self.isomorphism,
            image_start=image_start,
            image_perm=np.array([p for i in images for p in i], dtype=np.int32),
            hand_perm=self.hand_perm,
        )

    def grouped(self, root: State, root_board: tuple[int, ...]) -> list[_Group]:
        """The nodes in groups, in layout order. Every block of nodes a parent group
        creates (one per action, or the deals) joins the group of its signature;
        groups are expanded highest first, so a group is complete before it is
        expanded and precedes its children."""
        hands = len(self.hands)
        levels: dict[int, list[_Group]] = {}
        open_groups: dict[int, _Group] = {}
        total = 0

        def join(
            states: list[State],
            boards: list[tuple[int, ...]],
            parents: list[tuple[_Group | None, int]],
            indices: list[int],
            images: list[list[int]],
        ) -> tuple[_Group, int]:
            nonlocal total
            total += len(states)
            if total * hands > self.max_entries:
                raise TreeError(
                    f"the public tree holds more than {total} nodes x {hands} hands, over the limit of"
                    f" {self.max_entries:,} (max_entries); solve a subtree, a smaller game or an abstraction instead"
                )
            signature, height = self.shape(states[0], len(boards[0]))
            group = open_groups.get(signature)
            if group is None:
                kind, detail = self.classify(states[0], len(boards[0]))
                group = open_groups[signature] = _Group(kind, detail)
                levels.setdefault(height, []).append(group)
            offset = len(group.states)
            group.states.extend(states)
            group.boards.extend(boards)
            group.parents.extend(parents)
            group.action_index.extend(indices)
            group.images.extend(images)
            return group, offset

        join([root], [root_board], [(None, 0)], [-1], [[]])
        order: list[_Group] = []
        for height in range(max(levels), -1, -1):
            for group in levels.get(height, []):
                order.append(group)
                size = len(group.states)
                members: list[tuple[_Group | None, int]] = [(group, k) for k in range(size)]
                if group.kind == NodeKind.DECISION:
                    children = [self.expand(state) for state in group.states]
                    group.blocks = [
                        join([c[a] for c in children], list(group.boards), members, [a] * size, [[] for _ in members])
                        for a in range(len(children[0]))
                    ]
                elif group.kind == NodeKind.CHANCE:
                    deals = [self.deals(board, group.detail) for board in group.boards]
                    group.per_node = len(deals[0])
                    group.blocks = [
                        join(
                            [s for s in group.states for _ in range(group.per_node)],
                            [deal for node_deals in deals for deal, _ in node_deals],
                            [m for m in members for _ in range(group.per_node)],
                            list(range(group.per_node)) * size,
                            [perms for node_deals in deals for _, perms in node_deals],
                        )
                    ]
        return order

    def deals(self, board: tuple[int, ...], dealt: int) -> list[tuple[tuple[int, ...], list[int]]]:
        """The boards a chance node at ``board`` deals, each with the suit
        permutations (ids into :attr:`hand_perm`) whose images it stands for:
        every deal with the identity alone, or with isomorphism at an empty board
        one deal per class of suit-isomorphic deals."""
        remaining = [c for c in self.deck if c not in board]
        combos = [board + combo for combo in itertools.combinations(remaining, dealt)]
        if not (self.isomorphism and not board):
            return [(combo, [0]) for combo in combos]
        result = []
        seen: set[tuple[int, ...]] = set()
        for combo in combos:
            if combo in seen:
                continue
            perms: dict[tuple[int, ...], int] = {}
            for p, card_map in enumerate(self.card_maps):
                perms.setdefault(tuple(sorted(card_map[c] for c in combo)), p)
            seen.update(perms)
            result.append((combo, sorted(perms.values())))
        return result

    def board_tables(
        self, boards: list[tuple[int, ...]]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        from poker.evaluate import rank_hands

        n_hands = len(self.hands)
        board_mask = np.zeros((len(boards), n_hands), dtype=np.float64)
        hand_rank = np.full((len(boards), n_hands), -1, dtype=np.int32)
        rank_order = np.zeros((len(boards), n_hands), dtype=np.int32)
        num_valid = np.zeros(len(boards), dtype=np.int32)
        for b, board in enumerate(boards):
            valid = ~(self.hands[:, :, None] == np.array(board, dtype=np.int64)).any(axis=(1, 2))
            board_mask[b] = valid
            if b not in self.showdown_boards:
                continue
            rows = self.hands[valid]
            cards = np.concatenate([rows, np.tile(np.array(board, dtype=np.int64), (len(rows), 1))], axis=1)
            hand_rank[b, valid] = rank_hands(cards)
            order = np.flatnonzero(valid)[np.argsort(hand_rank[b, valid], kind="stable")]
            rank_order[b, : len(order)] = order
            num_valid[b] = len(order)
        return board_mask, hand_rank, rank_order, num_valid


def zero_sum_payoff(tree: Tree) -> npt.NDArray[np.float64]:
    """The real game's terminal payoffs, ``float64[N, 2, 3]`` (see
    :mod:`strategies.cfr.tree._kernels`): at a fold the folder loses its chips and the
    other position wins them (slot 0); at a showdown the stake is the smaller
    commitment (the rest goes back to the bigger stack) and each position has
    ``[win, tie, lose] = [stake, 0, -stake]``. Other payoff arrays of this shape
    (tilts) are what makes a solve non-zero-sum."""
    return terminal_payoff(tree.kind, tree.player, tree.spent)


def terminal_payoff(
    kind: npt.NDArray[np.int8], player: npt.NDArray[np.int8], spent: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """:func:`zero_sum_payoff` from a tree's node kinds, folders and commitments
    (shared by :class:`Tree` and :class:`strategies.cfr.tree.betting.BettingTree`)."""
    payoff = np.zeros((len(kind), 2, 3), dtype=np.float64)
    folds = np.flatnonzero(kind == NodeKind.FOLD)
    folder = player[folds].astype(np.int64)
    lost = spent[folds, folder].astype(np.float64)
    payoff[folds, folder, :] = -lost[:, None]
    payoff[folds, 1 - folder, :] = lost[:, None]
    showdowns = np.flatnonzero(kind == NodeKind.SHOWDOWN)
    stake = spent[showdowns].min(axis=1).astype(np.float64)
    payoff[showdowns, :, 0] = stake[:, None]
    payoff[showdowns, :, 2] = -stake[:, None]
    return payoff
