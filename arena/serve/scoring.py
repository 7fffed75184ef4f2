"""A hosted match's score, read from its seating logs: what ``GET
/api/matches/ID`` reports as ``result``, what the match page shows, and the
per-hand values the leaderboard pools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.estimators import EstimatorError, aivat_column
from analysis.hand_files import read_hands
from analysis.hands import HandsError, concat
from dealer.log import LogError, read_log
from poker.gamedef import Game, load_game
from poker.stats import Estimate, Unit, mean_ci, unit_of

from arena.serve.store import MatchRow

__all__ = ["Scoring", "Seatings", "duplicate_values", "estimate_document"]

#: Each seating's finished hands (hand id -> chips by seat name) and whether the seating is complete.
Seatings = list[tuple[dict[int, dict[str, float]], bool]]


def estimate_document(values: Sequence[float] | np.ndarray[Any, Any], unit: Unit) -> dict[str, Any] | None:
    """The API's form of a mean per hand: ``mean``, ``interval``, ``hands``, ``unit`` (None under two hands)."""
    if len(values) < 2:
        return None
    estimate: Estimate = mean_ci(np.asarray(values, dtype=np.float64)).scaled(unit.per_chip)
    return {"mean": estimate.mean, "interval": [estimate.low, estimate.high], "hands": estimate.n, "unit": unit.name}


def duplicate_values(seatings: Seatings, name: str) -> list[float]:
    """``name``'s duplicate value of each hand both seatings finished: its mean over the two."""
    (first, _), (second, _) = seatings
    return [(first[hand][name] + second[hand][name]) / 2 for hand in sorted(set(first) & set(second))]


class Scoring:
    """The scores of the matches of one service. ``seating_paths`` names a
    match's log of each seating, there or not yet (the host's files)."""

    def __init__(self, seating_paths: Callable[[MatchRow], list[Path]]) -> None:
        self.seating_paths = seating_paths
        #: Per finished match, the user's AIVAT value of each hand (None: AIVAT does not apply).
        self.aivat_values: dict[str, list[float] | None] = {}

    def aivat(self, row: MatchRow, game: Game, names: tuple[str, str]) -> list[float] | None:
        """The user's AIVAT value of each hand of a finished match: the negative
        of the hosted bot's, whose policy is known (two-player limit games whose
        public tree gives exact values; :func:`analysis.estimators.aivat_column`).
        None where it does not apply. Computed once per match."""
        if row.id not in self.aivat_values:
            values: list[float] | None = None
            if game.is_limit and game.num_players == 2:
                try:
                    logs = [path for path in self.seating_paths(row) if path.is_file()]
                    every = concat([read_hands(path, game) for path in logs])
                    _, column = aivat_column(every, names[1], row.opponent, tree_only=True)
                    values = [-float(value) for value in column]
                except (HandsError, EstimatorError, ValueError):
                    values = None
            self.aivat_values[row.id] = values
        return self.aivat_values[row.id]

    def seatings(self, row: MatchRow, game: Game) -> Seatings:
        """Each seating's finished hands and whether it is complete, as its log stands."""
        seatings = []
        for path in self.seating_paths(row):
            hands: dict[int, dict[str, float]] = {}
            complete = False
            if path.is_file():
                try:
                    contents = read_log(path, game)
                except LogError:
                    contents = None
                if contents is not None:
                    hands = {line.hand_id: dict(zip(line.names, line.values)) for line in contents.hands}
                    complete = contents.score is not None and len(hands) == row.hands
            seatings.append((hands, complete))
        return seatings

    def result(self, row: MatchRow, names: tuple[str, str]) -> dict[str, Any]:
        """What the seatings' logs hold: hands, chips, per-player means with 95%
        intervals and, when both seatings have hands, the duplicate estimate."""
        game = load_game(row.game)
        unit = unit_of(game)
        seatings = self.seatings(row, game)
        players = []
        for name in names:
            values = [hand[name] for hands, _ in seatings for hand in hands.values()]
            players.append({"name": name, "chips": float(sum(values)), "estimate": estimate_document(values, unit)})
        return {
            "hands": sum(len(hands) for hands, _ in seatings),
            "seatings": [
                {"port": port, "hands": len(hands), "complete": complete}
                for port, (hands, complete) in zip(row.ports, seatings)
            ],
            "players": players,
            "duplicate": None if not row.duplicate else {
                name: estimate_document(duplicate_values(seatings, name), unit) for name in names
            },
        }
