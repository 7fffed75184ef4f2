"""One way to score a match: :func:`score_match` turns the hands of a match's
seatings (as read from their logs) and its players' names into every figure
the project shows for it — ``arena match``'s table and ``results.json``, the
hosted match's ``result`` and page, the leaderboard, tournaments' chips and
``arena play``'s closing table — so that none of them computes a mean of its
own and they agree to the last digit.

Per player, in chips per hand (:meth:`MatchScore.to_json` scales to the game's unit):

* **raw**: its result in every hand of every seating that finished it;
* **duplicate** (several seatings of the same cards, the seats permuted:
  :mod:`analysis.duplicate`): its result in each hand averaged over the
  seatings, over the hands *every* seating finished (a hand only some seatings
  finished would weigh some seats more than others); the seatings must hold the
  same cards in those hands;
* **estimators**: the lower-variance unbiased ones that apply, each a
  :data:`Estimator` (pluggable: a caller passes its own list): the all-in
  adjusted value in no-limit games (:mod:`analysis.allin`) and AIVAT where a
  player's policy is known and either the public tree gives exact values (Kuhn,
  Leduc: :func:`analysis.estimators.aivat_column`) or the player is a bot with
  its own value function (:mod:`analysis.known_values`: ``hulhe-ir50``). A
  hand's value is averaged over the seatings as the duplicate one is;
* **best**: of the estimators, the one with the narrowest interval (None when
  none applies); **estimate**, the headline figure, is the duplicate estimate
  where there is one of two hands or more, else the raw one.

A match one player *left* (its agent quit, timed out or hung up: ``left``)
is charged for it: each hand a seating did not finish counts as a hand in
which that player lost :func:`poker.gamedef.max_loss` (paid to the others in equal shares),
in every figure above. No hand can cost more, so whatever a player's
stopping rule, quitting cannot raise its expected figure over playing on
(docs/hosting.md, The abort rule).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from analysis.breakdown import estimate
from analysis.duplicate import DuplicateError, pair, seating_means
from analysis.hands import Hands, HandsError, concat
from poker.gamedef import Game, max_loss
from poker.stats import Estimate, Unit, interval_shown, unit_of

__all__ = [
    "ScoreError",
    "Estimated",
    "PlayerScore",
    "SeatingScore",
    "MatchScore",
    "Estimator",
    "Alternative",
    "Proposal",
    "allin_adjusted",
    "aivat_of_known_policies",
    "DEFAULT_ESTIMATORS",
    "score_match",
    "estimate_json",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class ScoreError(ValueError):
    """Seatings that cannot be scored as one match: a log of another game, a name
    that holds two positions in a hand, or duplicate seatings whose cards or
    players differ (the message says where)."""


@dataclass(frozen=True)
class Estimated:
    """One estimator's value of each hand for one player (chips), and its estimate."""

    estimator: str
    hand_id: IntArray
    values: FloatArray
    #: What the estimator rests on, where it says (AIVAT: its value function).
    note: str = ""

    @cached_property
    def estimate(self) -> Estimate:
        """Mean and 95% interval (a NaN half-width under two hands); made once, as
        the best estimator is chosen by it and every reader shows it."""
        return estimate(self.values)


@dataclass(frozen=True)
class PlayerScore:
    """A player's figures over the match (chips per hand; ``chips`` in total)."""

    name: str
    chips: float
    raw: Estimated
    duplicate: Estimated | None
    estimators: tuple[Estimated, ...]
    #: Hands charged to this player for leaving (:func:`score_match`'s ``left``).
    charged: int = 0

    @property
    def best(self) -> Estimated | None:
        """The estimator with the narrowest interval; None when none applies."""
        usable = [e for e in self.estimators if not math.isnan(e.estimate.half_width)]
        return min(usable, key=lambda e: e.estimate.half_width) if usable else None

    @property
    def aivat(self) -> Estimated | None:
        """The AIVAT estimate (``aivat``, or ``-aivat of NAME`` for the opponent of a
        player whose policy is known); None when AIVAT does not apply."""
        return next((e for e in self.estimators if e.estimator == "aivat" or e.estimator.startswith("-aivat of ")), None)

    @property
    def estimate(self) -> Estimated:
        """The headline figure: the duplicate one of two hands or more, else the raw one."""
        if self.duplicate is not None and self.duplicate.values.size >= 2:
            return self.duplicate
        return self.raw


@dataclass(frozen=True)
class SeatingScore:
    """One seating: its finished hands and whether it is complete."""

    hands: int
    complete: bool


@dataclass(frozen=True)
class MatchScore:
    """:func:`score_match`'s answer."""

    game: Game
    names: tuple[str, ...]
    seatings: tuple[SeatingScore, ...]
    players: tuple[PlayerScore, ...]

    @property
    def hands(self) -> int:
        """Finished hands over every seating."""
        return sum(seating.hands for seating in self.seatings)

    @property
    def complete(self) -> bool:
        return all(seating.complete for seating in self.seatings)

    def player(self, name: str) -> PlayerScore:
        return next(p for p in self.players if p.name == name)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (the hosted match's ``result``), means and intervals in the
        game's unit: ``hands``, ``seatings`` (``hands``, ``complete``), ``players``
        (``name``, ``chips``, ``estimate`` the raw one, ``estimators``, ``best``,
        ``aivat`` (its AIVAT estimate with ``value_function``, where AIVAT applies),
        ``charged`` the hands charged to it for leaving),
        ``duplicate`` (name -> estimate; None with one seating); every estimate
        :func:`estimate_json`, None under two hands."""
        unit = unit_of(self.game)
        return {
            "hands": self.hands,
            "seatings": [{"hands": s.hands, "complete": s.complete} for s in self.seatings],
            "players": [
                {
                    "name": p.name,
                    "chips": p.chips,
                    "estimate": estimate_json(p.raw, unit),
                    "estimators": [estimate_json(e, unit, named=True) for e in p.estimators],
                    "best": estimate_json(p.best, unit, named=True),
                    "aivat": estimate_json(p.aivat, unit, named=True),
                    "charged": p.charged,
                }
                for p in self.players
            ],
            "duplicate": None if len(self.seatings) < 2 else {
                p.name: estimate_json(p.duplicate, unit) for p in self.players
            },
        }


def estimate_json(estimated: Estimated | None, unit: Unit, *, named: bool = False) -> dict[str, Any] | None:
    """``mean``, 95% ``interval``, ``hands``, ``unit`` and ``interval_shown``
    (whether a page shows the interval: :func:`poker.stats.interval_shown`
    of its hands, or duplicate pairs), and ``estimator`` when ``named``, with
    ``value_function`` where the estimator names what it rests on; None for
    no estimate or one under two hands."""
    if estimated is None or estimated.values.size < 2:
        return None
    scaled = estimated.estimate.scaled(unit.per_chip)
    document: dict[str, Any] = {"estimator": estimated.estimator} if named else {}
    document.update(mean=scaled.mean, interval=[scaled.low, scaled.high], hands=scaled.n, unit=unit.name,
                    interval_shown=interval_shown(scaled.n))
    if named and estimated.note:
        document["value_function"] = estimated.note
    return document


class Proposal(NamedTuple):
    """One player's figure in an :data:`Alternative`: the estimator's name, its
    value of each row of the seatings' hands joined (NaN where it has none), and
    what it rests on (AIVAT: its value function; shown in the JSON)."""

    label: str
    values: FloatArray
    note: str = ""


#: One way an estimator may score a match: per player, a :class:`Proposal` (or
#: a plain ``(label, values)`` pair).
Alternative = dict[str, Proposal | tuple[str, FloatArray]]
#: A lower-variance unbiased estimator: from the seatings' hands joined (seating
#: by seating) and the known policies (name -> strategy spec), its alternatives
#: (empty where it does not apply); :func:`score_match` keeps the narrowest.
Estimator = Callable[[Hands, Mapping[str, str]], list[Alternative]]


def allin_adjusted(every: Hands, policies: Mapping[str, str]) -> list[Alternative]:
    """No-limit: each hand all in before the board was complete valued at its
    expectation over the rest of the board (:mod:`analysis.allin`); needs no policy."""
    from analysis.allin import AllInError, adjusted_hands

    if every.game.is_limit:
        return []
    try:
        adjusted, _ = adjusted_hands(every)
    except AllInError:
        return []
    return [{name: ("all-in adjusted", adjusted.name_values(name)) for name in every.names}]


def aivat_of_known_policies(every: Hands, policies: Mapping[str, str]) -> list[Alternative]:
    """Two-player games, for each player whose policy is known: AIVAT with the
    value function of its bot's entry in :mod:`analysis.known_values` (e.g.
    ``hulhe-ir50``'s look-ahead on its own policy), else, in limit games whose
    public tree gives exact values (Kuhn, Leduc), the strategy against itself
    on the tree; both fixed before the data. The other player's value is its
    negative (``-aivat of NAME``: the game is zero-sum). A player whose hands
    its policy could not have played, or whose entry does not apply, gets none."""
    from analysis.estimators import EstimatorError, aivat_column

    if every.game.num_players != 2:
        return []
    alternatives: list[Alternative] = []
    for name in every.names:
        if name not in policies:
            continue
        try:
            hands, column, note = aivat_column(every, name, policies[name], known_only=True)
        except EstimatorError:
            continue
        if len(hands) != len(every):  # a player absent from some hands: not a two-player match of these names
            continue
        (other,) = [n for n in every.names if n != name]
        alternatives.append({name: Proposal("aivat", column, note), other: Proposal(f"-aivat of {name}", -column, note)})
    return alternatives


#: The estimators every match is scored with.
DEFAULT_ESTIMATORS: Final[tuple[Estimator, ...]] = (allin_adjusted, aivat_of_known_policies)


def _charged_ids(tables: Sequence[Hands | None], hands: int) -> list[IntArray]:
    """Per seating, the hands it did not finish: those after its last finished
    one (every hand of a seating with none)."""
    charged = []
    for table in tables:
        first = int(table.hand_id.max()) + 1 if table is not None and len(table) else 0
        charged.append(np.arange(first, max(first, hands), dtype=np.int64))
    return charged


def _complete(table: Hands | None, hands: int) -> bool:
    return table is not None and table.score is not None and len(table) == hands


def _total(table: Hands, name: str) -> float:
    """``name``'s chips in a seating: its SCORE line's where the log has one
    (the dealer's own sum), else its hands' added in order, as the dealer adds them."""
    if table.score is not None and name in table.score[1]:
        return float(table.score[0][table.score[1].index(name)])
    total = 0.0
    for value in table.name_values(name).tolist():
        if not math.isnan(value):
            total += value
    return total


def _duplicate_ids(tables: Sequence[Hands]) -> IntArray:
    """The hands every seating finished, after checking that the seatings hold
    the same cards and seat every player in every position once in them.

    Raises:
        ScoreError: they do not (:func:`analysis.duplicate.pair`).
    """
    common = tables[0].hand_id
    for table in tables[1:]:
        common = np.intersect1d(common, table.hand_id)
    if not common.size:
        return common.astype(np.int64)
    try:
        pair([table.take(np.isin(table.hand_id, common)) for table in tables])
    except DuplicateError as problem:
        raise ScoreError(str(problem)) from None
    kept: IntArray = np.sort(common).astype(np.int64)
    return kept


def _averaged(label: str, hand_id: IntArray, values: FloatArray, kept: IntArray | None, note: str = "") -> Estimated:
    """Each hand's values averaged over the seatings that hold it (:func:`analysis.duplicate.seating_means`)."""
    return Estimated(label, *seating_means(hand_id, values, kept), note)


def score_match(
    seatings: Sequence[Hands | None],
    names: Sequence[str],
    *,
    game: Game,
    hands: int,
    policies: Mapping[str, str] | None = None,
    estimators: Sequence[Estimator] = DEFAULT_ESTIMATORS,
    left: str | None = None,
) -> MatchScore:
    """Score a match from each seating's hands (in seating order; None for a
    seating with no log yet) of ``game``. ``names`` are the players, in the order
    of the answer; ``hands`` the hands a seating plays when complete (a complete
    seating also has its SCORE line); ``policies`` maps a player's name to the
    strategy spec it plays where its policy is known (the estimators that need
    one apply to it alone); ``estimators`` replace :data:`DEFAULT_ESTIMATORS`;
    ``left`` names the player whose agent left the match: every hand after each
    seating's last finished one is charged to it (:func:`poker.gamedef.max_loss`) and counts
    in every figure as a hand played.

    Several seatings are a duplicate match: the duplicate estimate and every
    estimator's per-hand average are over the hands every seating finished
    (or was charged).

    Raises:
        ScoreError: a seating of another game, a name that holds two positions in
            a hand, duplicate seatings whose cards or players differ, or a
            ``left`` that is not one of ``names``.
    """
    names = tuple(names)
    if left is not None and left not in names:
        raise ScoreError(f"{left!r}, who left, is not a player of the match")
    for table in seatings:
        if table is not None and table.game != game:
            raise ScoreError(f"{table.source} is not a log of the match's game")
    played = [table for table in seatings if table is not None and len(table)]
    seating_scores = tuple(
        SeatingScore(len(table) if table is not None else 0, _complete(table, hands)) for table in seatings
    )
    nothing = np.zeros(0, dtype=np.int64)
    charged = _charged_ids(seatings, hands) if left is not None else [nothing for _ in seatings]
    charged_ids = np.concatenate(charged)
    if not played and not charged_ids.size:
        empty = Estimated("raw", nothing, np.zeros(0))
        nobody = tuple(PlayerScore(name, 0.0, empty, None if len(seatings) < 2 else empty, ()) for name in names)
        return MatchScore(game, names, seating_scores, nobody)
    every: Hands | None = None
    columns = {name: np.zeros(0) for name in names}
    if played:
        try:
            every = concat(played)
            columns = {name: every.name_values(name) for name in names}
        except HandsError as problem:
            raise ScoreError(str(problem)) from None
    hand_id = np.concatenate([every.hand_id if every is not None else nothing, charged_ids]).astype(np.int64)
    loss = max_loss(game)

    def charging(name: str, column: FloatArray) -> FloatArray:
        """``column`` (a value per played hand) with the charged hands after it."""
        per_hand = -loss if name == left else loss / (len(names) - 1)
        return np.concatenate([column, np.full(charged_ids.size, per_hand)])

    kept: IntArray | None = None
    if len(seatings) > 1:
        kept = _duplicate_ids(played) if len(played) == len(seatings) else nothing
        if left is not None:  # the hands every seating finished or was charged
            covered = [np.union1d(t.hand_id if t is not None else nothing, c) for t, c in zip(seatings, charged)]
            kept = functools.reduce(np.intersect1d, covered).astype(np.int64)
    found: list[dict[str, Estimated]] = []  # per estimator that applies, its narrowest alternative
    proposed = [] if every is None else [estimator(every, policies or {}) for estimator in estimators]
    for proposals in proposed:
        alternatives = [
            {
                name: _averaged(found.label, hand_id, charging(name, found.values), kept, found.note)
                for name, found in ((name, Proposal(*item)) for name, item in alternative.items())
            }
            for alternative in proposals
        ]
        widths = [(sum(e.estimate.half_width for e in scored.values()), k) for k, scored in enumerate(alternatives)]
        usable = [width for width in widths if not math.isnan(width[0])]
        if usable:
            found.append(alternatives[min(usable)[1]])
    players = []
    for name in names:
        column = charging(name, columns[name])
        mask = ~np.isnan(column)
        raw = Estimated("raw", hand_id[mask], column[mask])
        duplicate = None if kept is None else _averaged("duplicate", hand_id, column, kept)
        extra = tuple(scored[name] for scored in found if name in scored)
        chips = sum(_total(table, name) for table in played) + float(column[columns[name].size :].sum())
        players.append(PlayerScore(name, chips, raw, duplicate, extra, charged_ids.size if name == left else 0))
    return MatchScore(game, names, seating_scores, tuple(players))
