"""AIVAT with a re-solving bot's own values, recorded while it played.

The re-solving agent (:mod:`strategies.resolve.agent`, ``hunl-modicum`` in
HUNL) knows at each of its decisions its policy for its whole range and, from
its lookahead, the opponent's *counterfactual values*: for every holding ``o``
of the opponent, ``c(s, o) = Σ_h r(h) u_opp(s, h, o)``, the opponent's chips
below public state ``s`` summed over our reach ``r`` there (both players
playing the re-solve's strategies from ``s`` on). With ``record=PATH`` it writes
them (:mod:`strategies.resolve.recording`); this module turns them into AIVAT's
terms (Burch, Schmid, Moravčík, Morrill & Bowling 2018, "AIVAT: A New Variance
Reduction Technique for Agent Evaluation in Imperfect Information Games"), the
terms of :class:`analysis.aivat.Aivat`, without re-solving anything.

**What AIVAT needs, and why counterfactual values give it.** With every card
known (a dealer's log) and our own holding averaged over our range (the
imaginary observations of :mod:`analysis.aivat`), the hand is a process over
public states given the opponent's holding ``o``: at our decision the action
``b`` comes with probability ``P(b) = Σ_h r(h) σ(b|h) / Σ_h r(h)``, at a deal
the cards ``d`` with probability ``∝ Σ_h r(h) [h misses d]``, ``r`` the deal's
probability of each of our holdings given ``o`` and the board times σ's
probability of our actions so far. The estimate is our payoff at the observed
end averaged over our final range, minus at each chance event and each of our
decisions ``f(after) − E[f(after)]``; each such term has mean zero given the
past whatever ``f`` is, as long as ``f`` of every possible outcome is fixed
before the event. So ``f`` need not be a value per holding of ours: AIVAT only
ever uses the range average ``V̄(s; o) = Σ_h r(h) V(s, h, o) / Σ_h r(h)``, and in
a two-player zero-sum game our chips are minus the opponent's, so

    ``V̄(s; o) = −c(s, o) / Σ_{h misses o} r_s(h)``,

``r_s`` the re-solve's own reach of ours at ``s`` (its range times its policy):
the opponent's counterfactual value of its *actual* holding, per unit of our
range, is our value at ``s`` against that holding (what the AIVAT paper's
DeepStack evaluation used: the bot's own re-solve values). It holds the part of
the variance the opponent's cards bring, which values of our holdings against
the opponent's *range* (the other half of what a re-solve computes) cannot.

**Where the terms come from**, every one computed before its event from the
public history alone (so each correction keeps mean zero and the estimate stays
unbiased, however good or bad the values are):

* the deal of the hands: the root solve's values (the same every hand),
  ``V̄(root; o)`` minus its mean over the opponent's holdings (each equally likely);
* each of our decisions: the re-solve's values below each of its actions, with
  the recorded policy for ``P(b)``; the action taken must be one of the
  re-solve's and have positive probability for the holding we held and our
  range (else the hand is refused: the record is not what played it);
* each deal of board cards with betting to come whose chance node was in the
  last re-solve's lookahead and whose deals are few (HUNL's turn and river):
  the values below every possible deal, recorded from that lookahead. The flop
  (19,600 flops), an all-in's run-out and a deal after the opponent left the
  lookahead go uncorrected: whether a deal is corrected depends on the history
  before it, never on the cards, so leaving one out costs variance, not bias.

The opponent's decisions are not corrected (its policy is unknown). The values
are the re-solve's (best-response values of an exact lookahead, iteration
averages of a depth-limited one: :class:`strategies.resolve.resolver.Resolution`),
not the value of the profile being played: they decide how much variance goes,
never the mean. Recorded float32 numbers are read as they are, for the taken
outcome and its alternatives alike.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgpack
import numpy as np
import numpy.typing as npt

from analysis.aivat import Aivat, AivatError, terminal_payoffs
from analysis.hands import NO_SEED, Hands
from analysis.importance import per_hand, player_positions
from poker.deal import private_hands
from poker.gamedef import Game
from strategies.base import Strategy
from strategies.imaginary import card_bits, check_value, holding_bits, replay_hand
from strategies.resolve.recording import RECORD_FORMAT

__all__ = ["HandValues", "Point", "play_through_hooks", "read_values", "recorded_aivat"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Range mass below which a state counts as out of our range.
_TINY = 1e-12


@dataclass(frozen=True)
class Point:
    """One recorded point of a hand (:mod:`strategies.resolve.recording`):
    ``kind`` root, decision or chance; ``outcomes`` the action texts or the
    deals; ``policy`` ``[H, A]`` (decisions); ``values`` ``[K, H]`` our value in
    chips below each outcome against each holding of the opponent."""

    kind: str
    betting: str
    board: tuple[int, ...]
    outcomes: tuple[str, ...] | tuple[tuple[int, ...], ...]
    policy: FloatArray | None
    values: FloatArray


@dataclass(frozen=True)
class HandValues:
    """A hand's record: the recorder's ``position`` and its points in order."""

    hand: int
    position: int
    points: tuple[Point, ...]


def _array(raw: object, dtype: str, shape: tuple[int, ...], where: str) -> FloatArray:
    data = zlib.decompress(raw) if isinstance(raw, bytes) else b""
    if len(data) != np.dtype(dtype).itemsize * math.prod(shape):
        raise AivatError(f"{where}: an array of {shape} numbers expected")
    return np.frombuffer(data, dtype=dtype).astype(np.float64).reshape(shape)


def _point(raw: object, holdings: int, where: str) -> Point:
    if not isinstance(raw, dict) or raw.get("kind") not in ("root", "decision", "chance"):
        raise AivatError(f"{where}: not a recorded point")
    kind = str(raw["kind"])
    outcomes: tuple[str, ...] | tuple[tuple[int, ...], ...]
    if kind == "chance":
        outcomes = tuple(tuple(int(c) for c in deal) for deal in raw.get("deals", ()))
    else:
        outcomes = tuple(str(a) for a in raw.get("actions", ()))
    count = len(outcomes) if kind != "root" else 1
    return Point(
        kind,
        str(raw.get("betting", "")),
        tuple(int(c) for c in raw.get("board", ())),
        outcomes,
        _array(raw.get("policy"), "<f4", (holdings, count), where) if kind == "decision" else None,
        _array(raw.get("values"), "<f2", (count, holdings), where),
    )


def read_values(path: str | Path, game: Game) -> dict[int, HandValues]:
    """The records in ``path`` by hand id (a hand recorded twice, a resumed
    seating's replayed hand, keeps its last record).

    Raises:
        AivatError: an unreadable file or a record that is not one of
            :mod:`strategies.resolve.recording`'s for ``game`` (one line).
    """
    holdings = len(private_hands(game))
    out: dict[int, HandValues] = {}
    try:
        with Path(path).open("rb") as stream:
            for number, record in enumerate(msgpack.Unpacker(stream, raw=False), start=1):
                where = f"{path}: record {number}"
                if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
                    raise AivatError(f"{where}: not a {RECORD_FORMAT} record")
                points = tuple(_point(p, holdings, where) for p in record.get("points", ()))
                hand = int(record["hand"])
                out[hand] = HandValues(hand, int(record["position"]), points)
    except OSError as error:
        raise AivatError(f"{path}: {error.strerror or error}") from None
    except (ValueError, KeyError, TypeError, zlib.error, msgpack.UnpackException) as error:
        raise AivatError(f"{path}: not a file of recorded values ({error})") from None
    return out


class _Scorer:
    """The per-hand AIVAT terms from a hand's recorded points (module docstring)."""

    def __init__(self, game: Game) -> None:
        if game.num_players != 2:
            raise AivatError(f"AIVAT is implemented for two players, not {game.num_players}")
        self.game = game
        self.holdings = private_hands(game)
        self.bits = holding_bits(self.holdings)
        self.index = {tuple(int(c) for c in h): i for i, h in enumerate(self.holdings)}

    def hand(
        self, record: HandValues, where: str, position: int, betting: str, hole: Sequence[Sequence[int]], board: tuple[int, ...], raw: float
    ) -> tuple[float, float, float, float]:
        """(value, chance, chance baseline, decisions) of one hand."""
        if record.position != position:
            raise AivatError(f"{where}: the values were recorded in position {record.position}, the hand has it in {position}")
        ours = tuple(sorted(int(c) for c in hole[position]))
        theirs = tuple(sorted(int(c) for c in hole[1 - position]))
        k, o = self.index.get(ours), self.index.get(theirs)
        if k is None or o is None:
            raise AivatError(f"{where}: hole cards {ours}, {theirs} are not holdings of the game")
        points = iter(record.points)
        root = next(points, None)
        if root is None or root.kind != "root":
            raise AivatError(f"{where}: the record has no root solve")
        # The deal of the opponent's holding: each is as likely (ours is averaged over our range).
        chance = float(root.values[0, o] - root.values[0].mean())
        baseline = float(root.values[0].mean())
        decisions = 0.0
        r: FloatArray = ((self.bits & self.bits[o]) == 0).astype(np.float64)
        pending = next(points, None)
        line = replay_hand(self.game, betting)
        seen: tuple[int, ...] = ()
        for state, action in line.steps:
            if state.current_player() == position:
                point = pending
                if point is None or point.kind != "decision" or point.betting != state.betting_string() or point.board != seen:
                    raise AivatError(f"{where}: no recorded decision at {state.betting_string()!r}")
                pending = next(points, None)
                assert point.policy is not None
                if str(action) not in point.outcomes:
                    raise AivatError(f"{where}: {action} at {state.betting_string()!r} is not an action of the recorded re-solve")
                a = point.outcomes.index(str(action))
                taken = r * point.policy[:, a]
                if point.policy[k, a] <= 0 or taken.sum() <= _TINY:
                    raise AivatError(f"{where}: the recorded policy gives probability 0 to {action} at {state.betting_string()!r}")
                below = point.values[:, o]
                decisions += float(below[a] - (r @ point.policy) @ below / r.sum())
                r = taken
            after = state.apply(action)
            shown = self.game.total_board_cards(after.round)
            if after.finished or shown <= len(seen):
                continue
            dealt = tuple(sorted(board[len(seen) : shown]))
            if pending is not None and pending.kind == "chance" and pending.betting == after.betting_string():
                point, pending = pending, next(points, None)
                deals = [d for d in point.outcomes if isinstance(d, tuple)]
                if dealt not in deals or len(deals) != math.comb(len(self.game.deck()) - len(seen), len(dealt)):
                    raise AivatError(f"{where}: the recorded deals at {after.betting_string()!r} are not every deal")
                # P(d) ∝ the mass of our range that misses d; no deal holds the opponent's cards.
                held = card_bits(theirs)
                fits = np.array([0.0 if card_bits(d) & held else float(r @ ((self.bits & card_bits(d)) == 0)) for d in deals])
                expected = float(fits @ point.values[:, o] / fits.sum())
                chance += float(point.values[deals.index(dealt), o]) - expected
                baseline += expected
            r = np.where((self.bits & card_bits(dealt)) == 0, r, 0.0)
            seen = board[:shown]
        if pending is not None:
            raise AivatError(f"{where}: the record has a point the hand never reached ({pending.kind} at {pending.betting!r})")
        r = np.where((self.bits & card_bits(board[len(seen) :])) == 0, r, 0.0)  # an all-in's run-out: uncorrected
        values = terminal_payoffs(self.holdings, position, line.final, board, theirs)
        check_value(where, betting, float(values[k]), raw)
        return float(r @ values / r.sum()), chance, baseline, decisions


def recorded_aivat(hands: Hands, player: str | int | Sequence[int] | IntArray, records: Mapping[int, HandValues]) -> Aivat:
    """AIVAT terms of ``player``'s hands (a re-solving agent that recorded
    ``records``, by hand id: :func:`read_values`), every card known.

    Raises:
        AivatError: a hand without a record, a record that does not match its
            hand (another position, a decision or deal the hand did not have), a
            recorded policy that gives the action taken probability 0, a value
            the rules do not give, a game that is not two-player.
    """
    positions = player_positions(hands, player, AivatError)
    scorer = _Scorer(hands.game)
    raw, rows = per_hand(hands, positions)
    out = np.empty((len(hands), 4))
    for i, args in enumerate(rows):
        record = records.get(int(hands.hand_id[i]))
        if record is None:
            raise AivatError(f"{args[0]}: no recorded values for hand {int(hands.hand_id[i])}")
        out[i] = scorer.hand(record, *args)
    return Aivat(raw, out[:, 0].copy(), out[:, 1].copy(), out[:, 2].copy(), out[:, 3].copy(), np.zeros(len(hands)))


def play_through_hooks(game: Game, players: Sequence[Strategy], num_hands: int, *, seed: int, names: tuple[str, str] = ("bot", "other")) -> Hands:
    """``num_hands`` hands between two strategies in this process, through the
    hooks the agent client calls (``new_hand``, ``observe`` of every view,
    ``act``; :func:`strategies.portfolio.play_hands`), as a :class:`Hands`
    table: what a recording agent's values are scored against without a
    dealer (tests, ``benchmarks/variance_hunl.py``). Players alternate
    positions; cards come from ``Dealer(game, seed=seed)``; hand ids count from 0."""
    from poker.deal import Dealer
    from poker.hand_rank import hand_values
    from poker.protocol import view_of
    from poker.state import State

    dealer = Dealer(game, seed=seed)
    hole = np.empty((num_hands, 2, game.num_hole_cards), dtype=np.int8)
    board = np.full((num_hands, sum(game.num_board_cards)), -1, dtype=np.int8)
    values = np.empty((num_hands, 2))
    seats = np.empty((num_hands, 2), dtype=np.int32)
    betting = []
    for h in range(num_hands):
        deal = dealer.next_hand()
        seat_of = [(p - h) % 2 for p in range(2)]  # position -> player
        state = State(game)
        for p in range(2):
            players[seat_of[p]].new_hand(view_of(state, deal, hand_id=h, viewer=p))
        while True:
            for p in range(2):
                players[seat_of[p]].observe(view_of(state, deal, hand_id=h, viewer=p))
            if state.finished:
                break
            mover = state.current_player()
            state = state.apply(players[seat_of[mover]].act(view_of(state, deal, hand_id=h, viewer=mover)))
        shown = sum(game.num_board_cards) if state.is_showdown() else game.total_board_cards(state.round)
        values[h] = [float(v) for v in hand_values(state, deal.hole, deal.board[:shown])]
        hole[h], board[h, :shown], seats[h] = deal.hole, deal.board[:shown], seat_of
        betting.append(state.betting_string())
    ids = np.arange(num_hands, dtype=np.int64)
    return Hands(game, "in-process", ids, values, names, seats, hole, board, tuple(betting), ids, np.full(num_hands, NO_SEED))
