"""The hosted arena's leaderboard: each user's agent against each hosted bot
over the matches of a game that count, and the rankings ``arena rank`` gives.
Every figure is pooled from the matches' scores (:mod:`arena.serve.scoring`,
:func:`analysis.match_score.score_match`): a pair's raw, duplicate and AIVAT
values are the per-hand values of its matches put together.

Like is compared with like: a game's aliases are one game (``kuhn`` and
``kuhn.limit.2p``), ranks and rankings are per hosted bot (a result against a
weak bot says nothing about one against a strong bot), and only pairs with
``min_hands`` hands whose estimate shows its interval
(:func:`poker.stats.interval_shown`, the one rule) are ranked: a rank says one
entry is above another, which a mean without its interval does not, whatever
``min_rank_hands`` a service is given. A match counts when it finished or when the
user's agent aborted it (charged the hands it left: docs/hosting.md, The abort
rule); one the service or the bot cut short does not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from analysis.match_score import Estimated, MatchScore, estimate_json
from analysis.ranking import ranking_document
from analysis.scoring import MatchResult as ScoredMatch
from analysis.scoring import Results, ScoringError
from poker.gamedef import Game, GameDefError, load_game
from poker.stats import unit_of

from arena.serve.scoring import Scoring
from arena.serve.store import MatchRow

__all__ = ["leaderboard", "counts"]


def _pooled(label: str, parts: Sequence[Estimated]) -> Estimated:
    return Estimated(
        label,
        np.concatenate([part.hand_id for part in parts] or [np.zeros(0, dtype=np.int64)]),
        np.concatenate([part.values for part in parts] or [np.zeros(0)]),
    )


def counts(row: MatchRow) -> bool:
    """Whether a match that is over counts on the leaderboard: finished, or
    aborted by the user's agent (leaving must never help); never practice (a
    chosen seed, a remote agent's duplicate: cards the user could know); once
    its estimators are in (until then its ``result`` says ``pending``)."""
    if row.practice or (row.result or {}).get("pending"):
        return False
    return row.status == "finished" or (row.status == "aborted" and row.culprit == "user")


def _headline(score: MatchScore) -> Estimated:
    """The user's per-hand values that the estimate pools from one match: each
    hand's duplicate value in a duplicate match (every hand of a match that
    counts is in it: finished, or charged), its raw value in a single seating.
    Either is an unbiased value of a hand at the seat positions' average, so
    the pool uses every hand and never lets a few duplicate hands replace many
    raw ones."""
    user = score.players[0]
    return user.duplicate if user.duplicate is not None and user.duplicate.values.size else user.raw


def leaderboard(
    game_name: str, game: Game, matches: Sequence[tuple[MatchRow, tuple[str, str]]], scoring: Scoring, min_hands: int
) -> dict[str, Any]:
    """``GET /api/leaderboard``'s document from the ``matches`` that are over
    (each with its seat names: the user's, the bot's); those of ``game`` under
    any of its names that :func:`counts` are pooled. Per (user, bot) pair:
    ``raw`` over every hand, ``duplicate`` over the duplicate hands, ``aivat``
    (the user's ``-aivat of BOT``, where every match of the pair has it),
    ``estimate`` (every match's :func:`_headline` values), ``ranked`` once it
    has ``min_hands`` hands and an estimate whose interval is shown, then ``rank`` among the ranked
    pairs of the same bot. ``rankings``: per bot, ``arena rank``'s document of
    the ranked pairs' matches against it."""
    unit = unit_of(game)
    same: dict[str, bool] = {}
    pairs: dict[tuple[str, str], dict[str, list[Estimated]]] = {}
    scored: dict[tuple[str, str], list[ScoredMatch]] = {}
    for row, names in matches:
        if row.game not in same:
            try:
                same[row.game] = load_game(row.game) == game
            except GameDefError:  # a game file no longer there: not this game
                same[row.game] = False
        if not same[row.game] or not counts(row):
            continue
        score = scoring.score(row, names, over=True)
        user, bot = score.players
        entry = pairs.setdefault((user.name, row.opponent), {"raw": [], "duplicate": [], "aivat": [], "estimate": []})
        entry["raw"].append(user.raw)
        entry["estimate"].append(_headline(score))
        if user.duplicate is not None:
            entry["duplicate"].append(user.duplicate)
        entry["aivat"] += [e for e in user.estimators if e.estimator == f"-aivat of {bot.name}"]
        if user.raw.values.size:
            chips = {user.name: user.chips, f"bot:{row.opponent}": bot.chips}
            scored.setdefault((user.name, row.opponent), []).append(ScoredMatch(row.id, chips, user.raw.values.size))
    table: list[dict[str, Any]] = []
    for (user_name, bot_name), parts in sorted(pairs.items()):
        raw = _pooled("raw", parts["raw"])
        headline = estimate_json(_pooled("estimate", parts["estimate"]), unit)
        aivat = _pooled("aivat", parts["aivat"]) if len(parts["aivat"]) == len(parts["raw"]) else None
        table.append({
            "user": user_name,
            "bot": bot_name,
            "hands": raw.values.size,
            "duplicate": estimate_json(_pooled("duplicate", parts["duplicate"]), unit),
            "raw": estimate_json(raw, unit),
            "aivat": estimate_json(aivat, unit),
            "estimate": headline,
            "ranked": raw.values.size >= min_hands and headline is not None and headline["interval_shown"],
        })
    rankings: dict[str, Any] = {}
    for bot_name in sorted({e["bot"] for e in table}):
        ranked = sorted((e for e in table if e["bot"] == bot_name and e["ranked"]), key=lambda e: -e["estimate"]["mean"])
        for place, entry_of_table in enumerate(ranked, 1):
            entry_of_table["rank"] = place
        results = [match for e in ranked for match in scored.get((e["user"], bot_name), [])]
        if results:
            try:
                rankings[bot_name] = ranking_document(Results(tuple(results), "the service"), game, game_name, 0, 0)
            except ScoringError as problem:
                rankings[bot_name] = {"error": str(problem)}
    return {"game": game_name, "unit": unit.name, "min_hands": min_hands, "entries": table, "rankings": rankings or None}
