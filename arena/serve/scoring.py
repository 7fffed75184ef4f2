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
longer change. AIVAT with a bot's own values costs about 0.4–0.6 s a hold'em
hand (a 1,000-hand match: minutes), so each estimator's answer for a match that
is over is also kept beside its logs (``estimates-NAME.npz``, with the bot and
:data:`ESTIMATES_VERSION` it was made with): a restarted service's leaderboard
reads it instead of estimating every match again."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from analysis.hand_files import read_seatings
from analysis.hands import Hands
from analysis.match_score import DEFAULT_ESTIMATORS, Alternative, Estimator, MatchScore, Proposal, ScoreError, score_match
from poker.gamedef import load_game

from arena.serve.store import MatchRow

__all__ = ["ESTIMATES_VERSION", "Scoring", "kept_estimator"]

#: Raised whenever an estimator's values for the same hands change (a new value
#: function): estimates kept with another version are made again.
ESTIMATES_VERSION: Final = 1


def kept_estimator(estimator: Estimator, directory: Path) -> Estimator:
    """``estimator`` whose answer for a match that is over is kept in
    ``directory`` (``estimates-NAME.npz``) and read back while the hands, the
    known policies and :data:`ESTIMATES_VERSION` are the same; a file that
    cannot be read is made again."""
    path = directory / f"estimates-{getattr(estimator, '__name__', 'estimator')}.npz"

    def kept(every: Hands, policies: Mapping[str, str]) -> list[Alternative]:
        key = {"version": ESTIMATES_VERSION, "policies": dict(sorted(policies.items())), "hands": every.hand_id.tolist()}
        try:
            with np.load(path, allow_pickle=False) as stored:
                about = json.loads(str(stored["about"]))
                if about["key"] == key:
                    return [
                        {name: Proposal(label, stored[f"{k}/{name}"], note) for name, label, note in alternative}
                        for k, alternative in enumerate(about["alternatives"])
                    ]
        except (OSError, ValueError, KeyError, TypeError):
            pass  # not there, damaged or of other hands: estimated again
        found: list[Alternative] = [
            {name: Proposal(*item) for name, item in alternative.items()} for alternative in estimator(every, policies)
        ]
        proposals = [{name: Proposal(*item) for name, item in a.items()} for a in found]
        about = {"key": key, "alternatives": [[[n, p.label, p.note] for n, p in a.items()] for a in proposals]}
        payload: dict[str, Any] = {f"{k}/{name}": p.values for k, a in enumerate(proposals) for name, p in a.items()}
        payload["about"] = np.array(json.dumps(about))
        partial = path.with_suffix(".partial.npz")
        try:
            np.savez(partial, **payload)
            os.replace(partial, path)
        except OSError:  # a full disk: the answer stands, unkept
            partial.unlink(missing_ok=True)
        return found

    return kept


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
        tables = read_seatings(self.seating_paths(row), game)
        policies = {names[1]: row.opponent} if over else None
        directory = self.seating_paths(row)[0].parent
        estimators = tuple(kept_estimator(e, directory) for e in DEFAULT_ESTIMATORS) if over else ()
        score = score_match(
            tables, names, game=game, hands=row.hands, policies=policies, estimators=estimators,
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
