"""What the re-solving agent knew at each of its decisions, written while it plays.

AIVAT (Burch, Schmid, Moravčík, Morrill & Bowling 2018, "AIVAT: A New Variance
Reduction Technique for Agent Evaluation in Imperfect Information Games") with a
re-solving bot's own values, as DeepStack's evaluation ran it, needs at each of
the bot's decisions its policy for its whole range and the values of every
action it could take, and at each deal of board cards the values of every deal
that could have come. The bot computes all of them while it plays; re-solving
the hand again to score a match (:meth:`ResolvingStrategy.policy`) costs what
the match cost. So the agent, given ``record=PATH``, appends one msgpack record
per hand to PATH as the hand ends (flushed then: a killed match keeps its
finished hands), read back by :mod:`analysis.recorded_values`.

A record is a map: ``hand`` (the dealer's hand id), ``position`` (the agent's),
``holdings`` (the number of private hands ``H``, rows of
:func:`poker.deal.private_hands`) and ``points``, in the order they happened,
each a map with ``kind``, ``betting`` (the betting string where it happens),
``board`` (the cards dealt before it, dealing order) and ``values`` ``[K, H]``:
for each of the point's K outcomes and each holding ``o`` of the opponent, our
value in chips below the outcome against ``o``, over our range there,

    ``V̄(o) = −c(o) / Σ_{h misses o} r(h)``,

``c`` the opponent's counterfactual values in the re-solve (its chips summed
over our reach ``r`` below the outcome: in a zero-sum game minus ours), 0 where
no holding of ours that misses ``o`` gets there (zlib-compressed float16,
little-endian: HUNL's pots fit its range, within 0.05 %). Kinds:

* ``"root"``: the hand's root solve (both ranges uniform), one outcome.
* ``"decision"``: one of our decisions: ``actions`` (ACPC action texts, the
  lookahead's root actions, the outcomes) and ``policy`` ``[H, A]`` (zlib
  float32), the re-solve's average strategy of every holding of ours (what
  :meth:`act` drew from).
* ``"chance"``: a deal of board cards with betting still to come, whose chance
  node is in our last re-solve's lookahead (below our last action and the
  opponent's actions since): ``dealt`` the cards that came (ascending) and
  two rows, ``V̄`` below them and its expectation over every deal the node
  could have brought, ``Σ_d P(d | o) V̄_d(o)`` with ``P(d | o)`` our range's
  mass that misses ``d`` and ``o`` (0 where ``d`` holds a card of ``o``): the
  deal's distribution given the public history and the opponent's holding,
  from the range the bot played with (its own float64 numbers), ``r`` in
  ``V̄_d`` our reach at the node without the holdings ``d`` blocks. Each
  deal's values were computed by the lookahead solved before the cards came;
  the record keeps only what AIVAT reads of them (the values of every turn or
  river card would be 130 KB a deal). Recorded only where there are at most
  :data:`MAX_DEALS` deals (HUNL's turn and river, not its flop): a rule of
  the game and the round, never of the cards that came.

Every number was computed before the event it describes (a deal's values by
the lookahead solved before the cards came, an action's before it was drawn),
from the public history only: the control variates built on them keep mean
zero. Values of the opponent's holdings, not of ours: they hold the
opponent's actual cards' part of the variance, which ours (against its range)
cannot see (:mod:`analysis.recorded_values` says how they become AIVAT's terms).
"""

from __future__ import annotations

import itertools
import math
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

import msgpack
import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game, max_loss
from poker.protocol import MatchState
from poker.state import Action, State
from strategies.base import StrategyError
from strategies.cfr.tree.public import NodeKind, board_key

if TYPE_CHECKING:
    from strategies.resolve.resolver import Resolution

__all__ = ["MAX_DEALS", "RECORD_FORMAT", "ValueRecorder", "per_range"]

#: The most deals a chance point values (the lookahead's values below each, one
#: evaluation a deal): HUNL's turn (49 cards) and river (48), not its flop (19,600).
MAX_DEALS: Final = 64
#: The ``format`` of every record (a reader refuses another).
RECORD_FORMAT: Final = "resolve-values/1"
#: Our reach below which an outcome counts as out of our range.
_TINY: Final = 1e-12


def _floats(array: npt.NDArray[np.float64], dtype: str = "<f2") -> bytes:
    """An array as zlib-compressed little-endian bytes (float16 values: chips within 0.05 %)."""
    return zlib.compress(np.ascontiguousarray(array, dtype=dtype).tobytes(), 1)


def per_range(counterfactual: npt.NDArray[np.float64], mass: npt.NDArray[np.float64], most: float) -> npt.NDArray[np.float64]:
    """Our value in chips against each holding of the opponent, ``[K, H]``, from
    its counterfactual values ``[K, H]`` summed over our reach below each of K
    outcomes, ``mass[k, o]`` that reach's total over our holdings that miss
    ``o`` (module docstring); within ``most`` chips either way, what a hand can
    win or lose (a depth-limited re-solve's values, averaged over iterations
    with their own reach, can overshoot for an action it all but never takes,
    and float16 would overflow)."""
    out: npt.NDArray[np.float64] = np.where(mass > _TINY, -counterfactual / np.where(mass > _TINY, mass, 1.0), 0.0)
    return np.clip(out, -most, most)


@dataclass
class _Hand:
    """One hand being recorded: its points, and where the last re-solve's
    lookahead has got to (``source`` and ``node``: None once the opponent left it)."""

    hand_id: int
    position: int
    points: list[dict[str, object]] = field(default_factory=list)
    source: Resolution | None = None
    node: int = 0
    reach: npt.NDArray[np.float64] | None = None  # ours at ``node``, in ``source``'s units
    state: State | None = None


class ValueRecorder:
    """Appends each hand's record to ``path`` (module docstring). The agent calls
    :meth:`begin` at a hand's start, :meth:`decision` at each of its actions and
    :meth:`observe` with every state the dealer sends; the record is written when
    a state shows the hand over.

    Raises:
        StrategyError: ``path`` cannot be opened for appending (one line).
    """

    def __init__(self, game: Game, path: str | Path) -> None:
        self.game = game
        self.path = Path(path)
        try:
            self._file: BinaryIO | None = self.path.open("ab")
        except OSError as error:
            raise StrategyError(f"strategy 'resolve': record={path}: {error.strerror or error}") from None
        self._hand: _Hand | None = None
        bits = np.array([sum(1 << int(c) for c in h) for h in private_hands(game)], dtype=np.uint64)
        self._bits = bits
        self._compatible = ((bits[:, None] & bits[None, :]) == 0).astype(np.float64)
        self._most = max_loss(game)
        deck = sorted(game.deck())
        self._deals = {
            round_: [tuple(cards) for cards in itertools.combinations(deck, game.num_board_cards[round_])]
            for round_ in range(1, game.num_rounds)
            if game.num_board_cards[round_] and math.comb(len(deck), game.num_board_cards[round_]) <= MAX_DEALS
        }
        #: Hands written.
        self.hands = 0
        #: Wall seconds spent recording (values per range, every deal's values, writing): the overhead.
        self.seconds = 0.0

    def begin(self, view: MatchState, root: Resolution) -> None:
        """A hand starts; ``root`` is the root solve for our position."""
        start = time.perf_counter()
        hand = _Hand(view.hand_id, view.viewer, state=State(self.game))
        values = per_range(root.br_values[1 - view.viewer, 0][None, :], root.ranges[view.viewer][None, :] @ self._compatible, self._most)
        hand.points.append({"kind": "root", "betting": "", "board": [], "values": _floats(values)})
        self._hand = hand
        self.seconds += time.perf_counter() - start

    def decision(self, state: State, board: tuple[int, ...], resolved: Resolution, action: Action) -> None:
        """Our decision at ``state``: the re-solve ``resolved`` we drew ``action`` from."""
        hand = self._hand
        if hand is None:
            return
        start = time.perf_counter()
        tree = resolved.tree
        actions = tree.actions(0)
        children = [int(tree.action_child[0, a]) for a in range(len(actions))]
        policy = resolved.root_policy()
        reach = resolved.ranges[resolved.position][None, :] * policy.T  # [A, H]
        values = per_range(resolved.br_values[1 - resolved.position, children], reach @ self._compatible, self._most)
        hand.points.append(
            {"kind": "decision", "betting": state.betting_string(), "board": list(board), "actions": [str(a) for a in actions],
             "policy": _floats(policy, "<f4"), "values": _floats(values)}
        )  # fmt: skip
        if action in actions:
            hand.source, hand.node, hand.reach = resolved, children[actions.index(action)], reach[actions.index(action)]
        else:
            hand.source = None
        self.seconds += time.perf_counter() - start

    def observe(self, view: MatchState) -> None:
        """Follow the actions since the last state: the opponent's along the
        lookahead, a deal with betting to come recorded (:meth:`_chance`), the
        record written when the hand is over."""
        hand = self._hand
        if hand is None or hand.state is None or view.hand_id != hand.hand_id:
            return
        start = time.perf_counter()
        state = hand.state
        target = view.state
        for round_ in range(state.round, target.round + 1):
            for action in target.actions[round_][len(state.actions[round_]) if round_ == state.round else 0 :]:
                if state.current_player() != hand.position:
                    self._follow(hand, action)
                after = state.apply(action)
                if after.round > state.round and not after.finished:
                    self._chance(hand, after, tuple(view.board[: self.game.total_board_cards(after.round)]))
                state = after
        hand.state = state
        if state.finished:
            self._write(hand)
            self._hand = None
        self.seconds += time.perf_counter() - start

    def _follow(self, hand: _Hand, action: Action) -> None:
        source = hand.source
        if source is None:
            return
        tree = source.tree
        node = hand.node
        if tree.kind[node] == NodeKind.DECISION and action in tree.actions(node):
            hand.node = int(tree.action_child[node, tree.actions(node).index(action)])
        else:
            hand.source = None

    def _chance(self, hand: _Hand, state: State, board: tuple[int, ...]) -> None:
        """The deal that brought ``board`` at ``state``: every deal's values at the
        lookahead's chance node, where it has one and the deals are few."""
        from strategies.resolve.street_tree import StreetTree

        source, node, round_ = hand.source, hand.node, state.round
        hand.source = None  # the next re-solve starts from the new street
        deals = self._deals.get(round_)
        if source is None or deals is None or hand.reach is None:
            return
        tree = source.tree
        if not (tree.kind[node] == NodeKind.CHANCE or (isinstance(tree, StreetTree) and tree.is_pick(node))):
            return
        seen = board[: self.game.total_board_cards(round_ - 1)]
        possible = [d for d in deals if not set(d) & set(seen)]
        came = tuple(sorted(board[len(seen) :]))
        counterfactual = np.stack([source.values_after_chance(node, board_key(self.game, seen + d, round_))[1] for d in possible])
        dealt = np.array([sum(1 << c for c in d) for d in possible], dtype=np.uint64)
        blocks = (self._bits[None, :] & dealt[:, None]) != 0  # [D, H]: holdings that hold a card of the deal
        reach = np.where(blocks, 0.0, hand.reach[None, :])  # [D, H]
        mass = reach @ self._compatible  # [D, O]
        values = per_range(counterfactual, mass, self._most)
        # P(d | o): our range's mass that misses both d and o; none where d holds a card of o.
        chances = np.where(blocks, 0.0, mass)
        total = chances.sum(axis=0)
        expected = np.where(total > _TINY, (chances * values).sum(axis=0) / np.where(total > _TINY, total, 1.0), 0.0)
        hand.points.append(
            {"kind": "chance", "betting": state.betting_string(), "board": list(seen), "dealt": list(came),
             "values": _floats(np.stack([values[possible.index(came)], expected]))}
        )  # fmt: skip

    def _write(self, hand: _Hand) -> None:
        if self._file is None:
            return
        record = {"format": RECORD_FORMAT, "hand": hand.hand_id, "position": hand.position, "points": hand.points}
        self._file.write(msgpack.packb(record, use_bin_type=True))
        self._file.flush()
        self.hands += 1

    def close(self) -> None:
        """The match is over: close the file (an unfinished hand is not written)."""
        if self._file is not None:
            self._file.close()
            self._file = None
