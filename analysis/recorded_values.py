"""AIVAT with a re-solving bot's own values, recorded while it played.

The re-solving agent (:mod:`strategies.resolve.agent`, ``hunl-modicum`` in
HUNL) knows at each of its decisions its policy for its whole range and, from
its lookahead, the opponent's *counterfactual values*: for every holding ``o``
of the opponent, ``c(s, o) = Σ_h r(h) u_opp(s, h, o)``, the opponent's chips
below public state ``s`` summed over our reach ``r`` there (both players
playing the re-solve's strategies from ``s`` on). With ``record=PATH`` it writes
them (:mod:`strategies.resolve.recording`); this module turns them into AIVAT's
terms (Burch, Schmid, Moravčík, Morrill & Bowling 2018, "AIVAT: A New Variance
Reduction Technique for Agent Evaluation in Imperfect Information Games") by
the one estimator, :func:`analysis.aivat.aivat`, with :class:`RecordedValues`
as its value function and policy, without re-solving anything.

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
  the values below the cards that came and their expectation over every deal,
  recorded from that lookahead. The flop (19,600 flops), an all-in's run-out
  and a deal after the opponent left the lookahead go uncorrected: whether a
  deal is corrected depends on the history before it, never on the cards, so
  leaving one out costs variance, not bias;
* or, as a match's score does (:func:`recorded_source`), every deal by
  :class:`analysis.aivat.EquityValues` (pot share by showdown equity against
  the opponent's actual holding, fixed before the data; the flop and the
  run-outs included): each correction keeps mean zero on its own, whichever
  function it uses, and in HUNL the equity, exact for each pair of holdings,
  tracks a deal's luck better than the blueprint's few buckets that value the
  re-solves' depth limits.

The opponent's decisions are not corrected (its policy is unknown). The values
are the re-solve's (best-response values of an exact lookahead, iteration
averages of a depth-limited one: :class:`strategies.resolve.resolver.Resolution`),
not the value of the profile being played: they decide how much variance goes,
never the mean. Recorded float16/float32 numbers are read as they are, for the
taken outcome and its alternatives alike.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from pathlib import Path

import msgpack
import numpy as np
import numpy.typing as npt

from analysis.aivat import Aivat, AivatError, EquityValues, aivat
from analysis.hands import NO_SEED, Hands
from analysis.importance import player_positions
from analysis.known_values import KnownValues, KnownValuesError
from poker.deal import private_hands
from poker.gamedef import Game
from poker.protocol import ProtocolError, parse_action, parse_betting
from poker.state import Action, State
from strategies.base import PublicState, Strategy, on_columns
from strategies.cfr.tree.public import board_key
from strategies.resolve.recording import RECORD_FORMAT

__all__ = ["HandValues", "Point", "RecordedPolicy", "RecordedValues", "play_through_hooks", "read_values", "recorded_aivat", "recorded_source", "values_beside"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Range mass below which a state counts as out of our range.
_TINY = 1e-12


@dataclass(frozen=True)
class Point:
    """One recorded point of a hand (:mod:`strategies.resolve.recording`):
    ``kind`` root, decision or chance; ``outcomes`` the action texts, or the
    cards the deal brought; ``policy`` ``[H, A]`` (decisions); ``values``
    ``[K, H]`` our value in chips below each outcome against each holding of
    the opponent (a deal: below the cards that came, and its expectation over
    every deal)."""

    kind: str
    betting: str
    board: tuple[int, ...]
    outcomes: tuple[str, ...] | tuple[tuple[int, ...]]
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
    if kind == "chance":  # the deal that came: its values and their expectation over every deal
        outcomes = (tuple(int(c) for c in raw.get("dealt", ())),)
    else:
        outcomes = tuple(str(a) for a in raw.get("actions", ()))
    count = {"root": 1, "chance": 2}.get(kind, len(outcomes))
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


class RecordedValues:
    """The recorded values of some hands as AIVAT's value function and policy
    (:class:`analysis.aivat.ValueFunction` with ``expected_deal`` and
    ``root_mean``; :meth:`policy` a :data:`strategies.imaginary.Policy`), for
    :func:`analysis.aivat.aivat`, the one estimator.

    Looked up by the bot's position and the public state (betting, board): the
    re-solves are a function of the public history, so every hand that reaches a
    state recorded the same numbers there; records that disagree (two instances
    of the bot, a resumed seating's with another seed) are refused. The value
    at a state is ``V̄`` against the opponent's holding for every holding of ours
    alike (AIVAT reads only its average over our range: module docstring); at a
    deal no record holds (the flop, an all-in's run-out) it is 0 before and
    after, so that deal is not corrected.

    With ``deals`` (:class:`analysis.aivat.EquityValues`) every deal, the flop
    and an all-in's run-out included, is corrected by that value function
    instead, the bot's decisions and the hands' deal still by the records: each
    correction keeps mean zero on its own (any function fixed before its event
    will do), so the mix stays unbiased, and it cuts more variance than either
    alone in HUNL against always-call (``benchmarks/variance_hunl.py``: the
    recorded deals' values are the blueprint's few buckets, the equity exact for
    each pair of holdings).

    Raises:
        AivatError: records that disagree, or a decision no record holds (at
            :meth:`policy`).
    """

    def __init__(self, game: Game, records: Sequence[HandValues], deals: EquityValues | None = None) -> None:
        if game.num_players != 2:
            raise AivatError(f"AIVAT is implemented for two players, not {game.num_players}")
        self.game = game
        self.rows = len(private_hands(game))
        #: The value function of the deals, or None: the recorded deals' values.
        self.by_deals = deals
        #: (position, betting, board) -> V̄ against each holding of the opponent ``[H]``.
        self.values: dict[tuple[int, str, tuple[int, ...]], FloatArray] = {}
        #: (betting, board) -> our actions there and the policy ``[H, A]``.
        self.decisions: dict[tuple[str, tuple[int, ...]], tuple[tuple[Action, ...], FloatArray]] = {}
        #: (position, betting, board) of a deal -> ``V̄``'s expectation over the deals ``[H]``.
        self.deals: dict[tuple[int, str, tuple[int, ...]], FloatArray] = {}
        for record in records:
            for point in record.points:
                self._add(record, point)

    def key(self, board: Sequence[int]) -> tuple[int, ...]:
        """A board as the lookups hold it: each round's cards ascending."""
        rounds = [r for r in range(self.game.num_rounds) if self.game.total_board_cards(r) >= len(board)]
        return board_key(self.game, tuple(board), rounds[0] if rounds else self.game.num_rounds - 1)

    def _put(self, table: dict[Any, Any], key: object, value: Any, record: HandValues) -> None:
        found = table.setdefault(key, value)
        pairs = zip(found, value, strict=True) if isinstance(value, tuple) else [(found, value)]
        if not all(np.array_equal(a, b) for a, b in pairs):
            raise AivatError(f"hand {record.hand}: its record disagrees with an earlier hand's at {key!r} (another instance of the bot?)")

    def _add(self, record: HandValues, point: Point) -> None:
        p = record.position
        board = self.key(point.board)
        if point.kind == "root":
            self._put(self.values, (p, "", ()), point.values[0], record)
            return
        try:
            state = parse_betting(point.betting, self.game)
        except ProtocolError as error:
            raise AivatError(f"hand {record.hand}: a recorded betting {point.betting!r}: {error}") from None
        if point.kind == "chance":
            dealt = point.outcomes[0]
            assert isinstance(dealt, tuple)
            self._put(self.deals, (p, point.betting, board), point.values[1], record)
            self._put(self.values, (p, point.betting, self.key(point.board + dealt)), point.values[0], record)
            return
        actions = tuple(self._action(state, str(text), record) for text in point.outcomes)
        assert point.policy is not None
        self._put(self.decisions, (point.betting, board), (actions, point.policy), record)
        for action, row in zip(actions, point.values, strict=True):
            self._put(self.values, (p, state.apply(action).betting_string(), board), row, record)

    def _action(self, state: State, text: str, record: HandValues) -> Action:
        action, end = parse_action(text, self.game)
        if action is None or end != len(text) or not state.is_legal(action):
            raise AivatError(f"hand {record.hand}: {text!r} is not an action after {state.betting_string()!r}")
        return action

    # -- the value function ------------------------------------------------------------

    def _after_deal(self, state: State, board: tuple[int, ...]) -> bool:
        """Whether AIVAT asks for the value after a deal (before the new round's
        first action, or an all-in's finished hand with its run-out), not below
        one of the bot's actions."""
        fresh = state.round > 0 and not state.actions[state.round] and len(board) == self.game.total_board_cards(state.round)
        return state.finished or fresh

    def __call__(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray:
        if self.by_deals is not None and self._after_deal(state, board):
            return self.by_deals(position, state, board, theirs)
        found = self.values.get((position, state.betting_string(), self.key(board)))
        return np.full(self.rows, 0.0 if found is None else float(found[theirs]))

    def expected_deal(self, position: int, state: State, seen: tuple[int, ...], reach: FloatArray, theirs: int) -> float:
        """``Σ_d P(d | o) V̄_d(o)`` as the bot recorded it (from the range it
        played with, which ``reach`` repeats from the recorded policies); 0
        where no deal is recorded (the values after it are 0 too); with ``deals``,
        that value function's."""
        if self.by_deals is not None:
            return self.by_deals.expected_deal(position, state, seen, reach, theirs)
        found = self.deals.get((position, state.betting_string(), self.key(seen)))
        return 0.0 if found is None else float(found[theirs])

    def root_mean(self, position: int) -> float:
        """The mean of ``V̄(root)`` over the opponent's holdings, each as likely."""
        found = self.values.get((position, "", ()))
        return 0.0 if found is None else float(found.mean())

    @property
    def sigma(self) -> RecordedPolicy:
        """The recorded policy, AIVAT's σ."""
        return RecordedPolicy(self)


class RecordedPolicy:
    """The recorded re-solves' policy as a :data:`strategies.imaginary.Policy`
    (with ``actions``, the columns :class:`strategies.imaginary.CachedPolicy` asks
    for in no-limit games)."""

    def __init__(self, recorded: RecordedValues) -> None:
        self.recorded = recorded
        self._actions: dict[str, tuple[Action, ...]] = {}
        for (betting, _), (actions, _) in recorded.decisions.items():
            self._actions.setdefault(betting, actions)

    def actions(self, state: State) -> tuple[Action, ...]:
        """The recorded re-solve's actions at ``state`` (on any board)."""
        return self._actions.get(state.betting_string(), ())

    def __call__(self, public: PublicState) -> FloatArray:
        """The recorded policy at ``public`` on its columns.

        Raises:
            AivatError: no record holds a decision there."""
        found = self.recorded.decisions.get((public.state.betting_string(), self.recorded.key(public.board)))
        if found is None:
            raise AivatError(f"no recorded decision at {public.state.betting_string()!r} with board {list(public.board)}")
        actions, policy = found
        return on_columns("recorded", public, actions, policy)


def recorded_aivat(
    hands: Hands, player: str | int | Sequence[int] | IntArray, records: Mapping[int, HandValues], *, deals: EquityValues | None = None
) -> Aivat:
    """AIVAT terms of ``player``'s hands (a re-solving agent that recorded
    ``records``, by hand id: :func:`read_values`), every card known, by
    :func:`analysis.aivat.aivat` with :class:`RecordedValues` of those hands
    (``deals``: the value function of the board deals, else the recorded).

    Raises:
        AivatError: a hand without a record or recorded in another position,
            records that disagree, a decision no record holds, a recorded policy
            that gives the action taken probability 0, a value the rules do not
            give, a game that is not two-player.
    """
    positions = player_positions(hands, player, AivatError)
    mine = []
    for i, hand in enumerate(hands.hand_id):
        record = records.get(int(hand))
        if record is None:
            raise AivatError(f"{hands.where(i)}: no recorded values for hand {int(hand)}")
        if record.position != positions[i]:
            raise AivatError(f"{hands.where(i)}: hand {int(hand)} was recorded in position {record.position}, not {positions[i]}")
        mine.append(record)
    recorded = RecordedValues(hands.game, mine, deals)
    return aivat(hands, positions, recorded.sigma, recorded)


#: What :func:`recorded_source`'s value function is, for the documents and beside the figure.
RECORDED_VALUES: Final = (
    "RecordedValues: the bot's own re-solve values and policy, recorded as it played (the root solve, each"
    " decision's actions), fixed before each event; the board deals by showdown equity (EquityValues)"
)
#: The name ending of a bot's recorded values beside a seating's log (``arena.match.values_path``).
VALUES_SUFFIX: Final = ".values.msgpack"


def values_beside(log: Path, name: str) -> Path:
    """Where the bot ``name`` recorded its values for the seating whose log (or
    hand records) is ``log``: ``<match>.<name>.values.msgpack``."""
    stem = log.name.removesuffix(".hands.msgpack").removesuffix(".log")
    return log.parent / f"{stem}.{name}{VALUES_SUFFIX}"


def recorded_source(game: Game, spec: str, hands: Hands, player: str) -> KnownValues:
    """The :mod:`analysis.known_values` entry of the re-solving bots (``resolve``,
    ``hunl-modicum``): the values each seating's bot recorded beside its log
    (``hands.source``, seatings joined by ``+``), as one :class:`RecordedValues`.

    Raises:
        KnownValuesError: a seating without its recording (the bot was not
            seated with ``record=``), or records that cannot be read or disagree.
    """
    records: list[HandValues] = []
    try:
        for source in hands.source.split("+"):
            path = values_beside(Path(source), player)
            if not path.is_file():
                raise KnownValuesError(f"no values recorded beside {source} ({path.name}): {spec!r} was not seated with record=")
            records.extend(read_values(path, game).values())
        # A fresh EquityValues each time: its pre-flop samples follow the order it is asked
        # in, and a match scored twice must give the same figure.
        recorded = RecordedValues(game, records, EquityValues(game))
    except AivatError as error:
        raise KnownValuesError(str(error)) from None
    return KnownValues(recorded.sigma, recorded, RECORDED_VALUES)


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
