"""A match's results: each seating read back from its ``.log``, the match's
score (:func:`analysis.match_score.score_match`, the one scoring function the
hosted arena and tournaments use too) as the table ``arena match`` prints, the
best lower-variance estimates below it, and ``results.json``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.hand_files import read_hands
from analysis.hands import HandsError
from analysis.match_score import DEFAULT_ESTIMATORS, Estimator, MatchScore, PlayerScore, ScoreError, score_match
from analysis.tables import table_lines
from poker.stats import Estimate, Unit, format_chips, unit_of
from arena.match.plan import Bot, MatchError, MatchPlan, Outcome, SeatingResult
from dealer.log import LogError, read_log

__all__ = [
    "read_seating",
    "score_seatings",
    "format_table",
    "format_best",
    "write_results",
    "write_json",
]


def read_seating(plan: MatchPlan, index: int) -> SeatingResult:
    """A seating as its ``.log`` stands (no log: no hands).

    Raises:
        MatchError: an unreadable log, or one with hands that do not belong.
    """
    seating = plan.seatings[index]
    name = plan.match_name(index)
    log_path = plan.run_dir / f"{name}.log"
    err_path = plan.run_dir / f"{name}.err"
    values = np.full((plan.hands, len(plan.bots)), np.nan)
    totals = [0.0] * len(seating)
    if not log_path.exists():
        return SeatingResult(name, seating, values, tuple(totals), 0, False, 0)
    try:
        contents = read_log(log_path, plan.game)
    except LogError as error:
        raise MatchError(str(error)) from None
    bot_of_name = {plan.bots[b].name: b for b in seating}
    seat_of_name = {plan.bots[b].name: s for s, b in enumerate(seating)}
    for state_line in contents.hands:
        hand = state_line.hand_id
        if hand >= plan.hands or not np.isnan(values[hand]).all() or set(state_line.names) != set(bot_of_name):
            raise MatchError(f"{log_path}: hand {hand} does not belong to this plan or appears twice")
        for name_, value in zip(state_line.names, state_line.values):
            values[hand, bot_of_name[name_]] = value
            totals[seat_of_name[name_]] += value  # in hand order, as the dealer adds them
    played = len(contents.hands)
    complete = contents.score is not None and played == plan.hands
    if complete and contents.score is not None:
        totals = list(contents.score[0])
    warnings = 0
    if err_path.exists():
        warnings = sum(1 for line in err_path.read_text(errors="replace").splitlines() if line.startswith("WARNING"))
    return SeatingResult(name, seating, values, tuple(totals), played, complete, warnings)


# -- results ----------------------------------------------------------------------


def score_seatings(
    plan: MatchPlan, results: Sequence[SeatingResult], estimators: Sequence[Estimator] = DEFAULT_ESTIMATORS
) -> MatchScore:
    """The match's score (:func:`analysis.match_score.score_match`, with
    ``estimators``) from the seatings' logs, the strategy spec of each agent of
    ours its known policy (AIVAT applies to an agent whose strategy states one).

    Raises:
        MatchError: a log the hand reader refuses, or duplicate seatings whose cards differ.
    """
    try:
        tables = [
            read_hands(plan.run_dir / f"{r.match_name}.log", plan.game) if r.hands_played else None for r in results
        ]
        policies = {bot.name: str(bot.spec) for bot in plan.bots if bot.spec is not None}
        names = [bot.name for bot in plan.bots]
        return score_match(tables, names, game=plan.game, hands=plan.hands, policies=policies, estimators=estimators)
    except (HandsError, ScoreError) as error:
        raise MatchError(str(error)) from None


def _scored(plan: MatchPlan, score: MatchScore) -> list[tuple[Bot, PlayerScore]]:
    """The agents and their scores (in the plan's order), where the headline estimate has two hands or more."""
    return [(bot, player) for bot, player in zip(plan.bots, score.players) if player.estimate.values.size >= 2]


def _title(plan: MatchPlan, results: Sequence[SeatingResult]) -> str:
    kind = f"duplicate over {len(plan.seatings)} seatings, " if plan.duplicate else ""
    played = [r.hands_played for r in results]
    if all(r.complete for r in results):
        hands = f"{plan.hands} hands"
    elif plan.duplicate:
        hands = f"partial: {'+'.join(map(str, played))} of {len(played)}x{plan.hands} hands"
    else:
        hands = f"partial: {played[0]} of {plan.hands} hands"
    return f"{plan.game_arg}: {hands}, seed {plan.seed}, {kind}run dir {plan.run_dir}"


def format_table(plan: MatchPlan, score: MatchScore, results: Sequence[SeatingResult]) -> str:
    """The title line, then one row per agent (its chips and the score's headline
    estimate: duplicate or raw); every column as wide as its widest cell."""
    unit = unit_of(plan.game)
    header = ("agent", "strategy", "total chips", unit.name, "95% CI")
    cells = [header]
    for bot, player in _scored(plan, score):
        estimate = player.estimate.estimate.scaled(unit.per_chip)
        cells.append(
            (bot.name, str(bot.spec), format_chips(player.chips), f"{estimate.mean:.3f}", f"±{estimate.half_width:.3f}")
        )
    # agent and strategy are left-aligned, the numbers right-aligned
    lines = [_title(plan, results), *table_lines(cells, left=(0, 1))]
    return "\n".join(lines)


def format_best(plan: MatchPlan, score: MatchScore) -> str:
    """The lines below the results table: each agent's best lower-variance
    estimate (:attr:`analysis.match_score.PlayerScore.best`); "" when none applies."""
    unit = unit_of(plan.game)
    kind = "; each hand averaged over its seatings" if plan.duplicate else ""
    cells = [("agent", "best estimator", unit.name, "95% CI")]
    for bot, player in zip(plan.bots, score.players):
        if player.best is not None:
            estimate = player.best.estimate.scaled(unit.per_chip)
            cells.append((bot.name, player.best.estimator, f"{estimate.mean:.3f}", f"±{estimate.half_width:.3f}"))
    if len(cells) == 1:
        return ""
    title = f"best unbiased estimate beside the money (lower variance{kind}):"
    return "\n".join([title, *table_lines(cells, left=(0, 1))])


def write_results(plan: MatchPlan, outcome: Outcome, score: MatchScore) -> None:
    """``results.json``: the plan, each seating, and per agent the score's figures
    (``agents``: chips and the headline estimate, listed once it has two hands;
    ``best_estimates``: each agent's best lower-variance estimate)."""
    unit = unit_of(plan.game)
    partial = not all(r.complete for r in outcome.results)
    document = {
        "game": plan.game_arg,
        "hands": plan.hands,
        "seed": plan.seed,
        "unit": unit.name,
        "partial": partial,
        "hands_played": [r.hands_played for r in outcome.results],
        "matches": [
            {
                "name": r.match_name,
                "names": [plan.bots[b].name for b in r.seating],
                "hands_played": r.hands_played,
                "totals": list(r.totals),
                "warnings": r.warnings,
            }
            for r in outcome.results
        ],
        "agents": [
            {
                "name": bot.name,
                "strategy": str(bot.spec),
                "seed": bot.seed,
                "total_chips": player.chips,
                **_estimate_fields(player.estimate.estimate, unit),
            }
            for bot, player in _scored(plan, score)
        ],
        "best_estimates": [
            {"name": bot.name, "estimator": player.best.estimator, **_estimate_fields(player.best.estimate, unit)}
            for bot, player in zip(plan.bots, score.players)
            if player.best is not None
        ],
    }
    write_json(plan.run_dir / "results.json", document)


def _estimate_fields(estimate: Estimate, unit: Unit) -> dict[str, Any]:
    """``mean``, ``ci95`` (in the game's unit) and ``hands`` of results.json."""
    return {"mean": estimate.mean * unit.per_chip, "ci95": estimate.half_width * unit.per_chip, "hands": estimate.n}


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write whole or not at all (a signal or full disk leaves the old file)."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(json.dumps(document, indent=2) + "\n")
    scratch.replace(path)
