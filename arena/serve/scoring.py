"""A hosted match's score: its seating logs read as hands and scored by
:func:`analysis.match_score.score_match`, the one function that scores every
match (``arena match``'s table and ``results.json`` too). ``GET
/api/matches/ID``'s ``result`` is its JSON form with each seating's port, the
match page renders that document, and the leaderboard pools the scores'
per-hand values.

While a match plays its result is the money alone (raw and duplicate: cheap
enough for every poll); once it is over the hosted bot's known policy is
added (AIVAT in Kuhn and Leduc from the public tree, and for the bots with
their own values, :mod:`analysis.known_values`: ``hulhe-ir50``; the all-in
adjusted value in no-limit games; each player's ``aivat`` names its value
function), and the score is kept, as the logs of a match that is over no
longer change. AIVAT with a bot's own values costs up to about 0.3 s a hold'em
hand (a 1,000-hand match: minutes, once)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from analysis.hand_files import read_hands
from analysis.hands import Hands, HandsError
from analysis.match_score import DEFAULT_ESTIMATORS, MatchScore, ScoreError, score_match
from poker.gamedef import load_game

from arena.serve.store import MatchRow

__all__ = ["Scoring"]


class Scoring:
    """The scores of the matches of one service. ``seating_paths`` names a
    match's log of each seating, there or not yet (the host's files)."""

    def __init__(self, seating_paths: Callable[[MatchRow], list[Path]]) -> None:
        self.seating_paths = seating_paths
        #: The score of each match that is over, by id.
        self.over: dict[str, MatchScore] = {}

    def score(self, row: MatchRow, names: tuple[str, str], *, over: bool) -> MatchScore:
        """The match's score as its logs stand (``names``: the user's seat name,
        the bot's); ``over``: with the estimators, kept for the next call. A
        match the user's agent aborted (``row.culprit``) is charged the hands it
        left (:func:`analysis.match_score.score_match`'s ``left``).

        Raises:
            ScoreError: seatings that do not pair (not a log our dealer wrote).
        """
        if over and row.id in self.over:
            return self.over[row.id]
        game = load_game(row.game)
        tables: list[Hands | None] = []
        for path in self.seating_paths(row):
            try:
                tables.append(read_hands(path, game, skip_damaged=True) if path.is_file() else None)
            except HandsError:  # a log the dealer has not begun
                tables.append(None)
        policies = {names[1]: row.opponent} if over else None
        score = score_match(
            tables, names, game=game, hands=row.hands, policies=policies, estimators=DEFAULT_ESTIMATORS if over else (),
            left=names[0] if row.culprit == "user" else None,
        )
        if over:
            self.over[row.id] = score
        return score

    def result(self, row: MatchRow, names: tuple[str, str], *, over: bool) -> dict[str, Any]:
        """``GET /api/matches/ID``'s ``result``: :meth:`analysis.match_score.MatchScore.to_json`
        with each seating's ``port``."""
        try:
            document = self.score(row, names, over=over).to_json()
        except ScoreError as problem:
            return {"hands": 0, "seatings": [], "players": [], "duplicate": None, "error": str(problem)}
        document["seatings"] = [{"port": port, **seating} for port, seating in zip(row.ports, document["seatings"])]
        return document
