"""The hosted arena's leaderboard: each user's agent against each hosted bot
over the finished matches of a game, and the rankings ``arena rank`` gives.
Every figure is pooled from the matches' scores (:mod:`arena.serve.scoring`,
:func:`analysis.match_score.score_match`): a pair's raw, duplicate and AIVAT
values are the per-hand values of its matches put together."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from analysis.match_score import Estimated, estimate_json
from analysis.ranking import ranking_document
from analysis.scoring import MatchResult as ScoredMatch
from analysis.scoring import Results, ScoringError
from poker.gamedef import Game
from poker.stats import unit_of

from arena.serve.scoring import Scoring
from arena.serve.store import MatchRow

__all__ = ["leaderboard"]


def _pooled(label: str, parts: Sequence[Estimated]) -> Estimated:
    return Estimated(
        label,
        np.concatenate([part.hand_id for part in parts] or [np.zeros(0, dtype=np.int64)]),
        np.concatenate([part.values for part in parts] or [np.zeros(0)]),
    )


def leaderboard(
    game_name: str, game: Game, matches: Sequence[tuple[MatchRow, tuple[str, str]]], scoring: Scoring, min_hands: int
) -> dict[str, Any]:
    """``GET /api/leaderboard``'s document from the game's finished ``matches``
    (each with its seat names: the user's, the bot's). Per (user, bot) pair:
    ``raw`` over every hand, ``duplicate`` over the duplicate hands, ``aivat``
    (the user's ``-aivat of BOT``, where every match of the pair has it),
    ``estimate`` (the duplicate one where there is one); a pair is ranked once
    it has ``min_hands`` hands."""
    unit = unit_of(game)
    pairs: dict[tuple[str, str], dict[str, list[Estimated]]] = {}
    scored = []
    for row, names in matches:
        score = scoring.score(row, names, over=True)
        user, bot = score.players
        entry = pairs.setdefault((user.name, row.opponent), {"raw": [], "duplicate": [], "aivat": []})
        entry["raw"].append(user.raw)
        if user.duplicate is not None:
            entry["duplicate"].append(user.duplicate)
        entry["aivat"] += [e for e in user.estimators if e.estimator == f"-aivat of {bot.name}"]
        if score.hands:
            scored.append(ScoredMatch(row.id, {user.name: user.chips, f"bot:{row.opponent}": bot.chips}, score.hands))
    table: list[dict[str, Any]] = []
    for (user_name, bot_name), parts in sorted(pairs.items()):
        raw = _pooled("raw", parts["raw"])
        duplicate = _pooled("duplicate", parts["duplicate"])
        aivat = _pooled("aivat", parts["aivat"]) if len(parts["aivat"]) == len(parts["raw"]) else None
        table.append({
            "user": user_name,
            "bot": bot_name,
            "hands": raw.values.size,
            "duplicate": estimate_json(duplicate, unit),
            "raw": estimate_json(raw, unit),
            "aivat": estimate_json(aivat, unit),
            "estimate": estimate_json(duplicate if duplicate.values.size >= 2 else raw, unit),
            "ranked": raw.values.size >= min_hands,
        })
    ranked = sorted((e for e in table if e["ranked"] and e["estimate"] is not None), key=lambda e: -e["estimate"]["mean"])
    for place, row_of_table in enumerate(ranked, 1):
        row_of_table["rank"] = place
    rankings = None
    if scored:
        try:
            rankings = ranking_document(Results(tuple(scored), "the service"), game, game_name, 0, 0)
        except ScoringError as problem:
            rankings = {"error": str(problem)}
    return {"game": game_name, "unit": unit.name, "min_hands": min_hands, "entries": table, "rankings": rankings}
