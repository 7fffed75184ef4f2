"""The hosted arena's leaderboard: each user's agent against each hosted bot
over the finished matches of a game, and the rankings ``arena rank`` gives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analysis.ranking import ranking_document
from analysis.scoring import MatchResult as ScoredMatch
from analysis.scoring import Results, ScoringError
from poker.gamedef import Game
from poker.stats import unit_of

from arena.serve.scoring import Scoring, duplicate_values, estimate_document
from arena.serve.store import MatchRow

__all__ = ["leaderboard"]


def leaderboard(
    game_name: str, game: Game, matches: Sequence[tuple[MatchRow, tuple[str, str]]], scoring: Scoring, min_hands: int
) -> dict[str, Any]:
    """``GET /api/leaderboard``'s document from the game's finished ``matches``
    (each with its seat names: the user's, the bot's); a (user, bot) pair is
    ranked once it has ``min_hands`` hands."""
    unit = unit_of(game)
    pairs: dict[tuple[str, str], dict[str, list[float]]] = {}
    scored = []
    for row, names in matches:
        user = names[0]
        seatings = scoring.seatings(row, game)
        entry = pairs.setdefault((user, row.opponent), {"duplicate": [], "raw": [], "aivat": []})
        entry["raw"] += [hand[names[0]] for hands, _ in seatings for hand in hands.values()]
        aivat = scoring.aivat(row, game, names)
        entry["aivat"] += aivat if aivat is not None else []
        if row.duplicate:
            entry["duplicate"] += duplicate_values(seatings, names[0])
        played = sum(len(hands) for hands, _ in seatings)
        chips = sum(hand[names[0]] for hands, _ in seatings for hand in hands.values())
        if played:
            scored.append(ScoredMatch(row.id, {user: chips, f"bot:{row.opponent}": -chips}, played))
    table: list[dict[str, Any]] = []
    for (user, bot), values in sorted(pairs.items()):
        best = values["duplicate"] if len(values["duplicate"]) >= 2 else values["raw"]
        hands = len(values["raw"])
        table.append({
            "user": user,
            "bot": bot,
            "hands": hands,
            "duplicate": estimate_document(values["duplicate"], unit),
            "raw": estimate_document(values["raw"], unit),
            "aivat": estimate_document(values["aivat"], unit) if len(values["aivat"]) == hands else None,
            "estimate": estimate_document(best, unit),
            "ranked": hands >= min_hands,
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
