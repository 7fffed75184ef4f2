"""A match's results: each seating read back from its ``.log``, per agent the
chips and the (duplicate) mean per hand with its 95% interval, the best
unbiased estimate beside the money, and ``results.json``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.stats import Estimate, Unit, format_chips, mean_ci
from analysis.tables import table_lines
from arena.match.plan import Bot, MatchError, MatchPlan, Outcome, SeatingResult
from dealer.log import LogError, read_log

__all__ = [
    "read_seating",
    "AgentRow",
    "hand_means",
    "summarize",
    "format_table",
    "BestRow",
    "best_estimates",
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


@dataclass(frozen=True)
class AgentRow:
    """One line of the results table; ``estimate`` is in chips per hand."""

    bot: Bot
    total_chips: float
    estimate: Estimate


def hand_means(results: Sequence[SeatingResult]) -> npt.NDArray[np.float64]:
    """``[hands, bots]``: each hand averaged over the seatings that finished it;
    hands no seating finished are left out."""
    stacked = np.array([r.values for r in results])  # [seatings, hands, bots]
    played = ~np.isnan(stacked[:, :, 0])
    counts = played.sum(axis=0)
    kept = counts > 0
    sums = np.where(np.isnan(stacked), 0.0, stacked).sum(axis=0)
    per_hand: npt.NDArray[np.float64] = sums[kept] / counts[kept, None]
    return per_hand


def summarize(plan: MatchPlan, results: Sequence[SeatingResult]) -> list[AgentRow]:
    """Per agent: chips over all seatings, and the (duplicate) per-hand mean.

    Raises:
        ValueError: fewer than two hands were played.
    """
    per_hand = hand_means(results)
    totals = [sum(r.totals[r.seating.index(b)] for r in results) for b in range(len(plan.bots))]
    return [AgentRow(bot, float(totals[b]), mean_ci(per_hand[:, b])) for b, bot in enumerate(plan.bots)]


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


def format_table(plan: MatchPlan, rows: Sequence[AgentRow], unit: Unit, results: Sequence[SeatingResult] = ()) -> str:
    """The title line, then one row per agent; every column as wide as its widest cell."""
    header = ("agent", "strategy", "total chips", unit.name, "95% CI")
    cells = [header]
    for row in rows:
        estimate = row.estimate.scaled(unit.per_chip)
        cells.append(
            (
                row.bot.name,
                str(row.bot.spec),
                format_chips(row.total_chips),
                f"{estimate.mean:.3f}",
                f"±{estimate.half_width:.3f}",
            )
        )
    # agent and strategy are left-aligned, the numbers right-aligned
    lines = [_title(plan, results), *table_lines(cells, left=(0, 1))]
    return "\n".join(lines)


@dataclass(frozen=True)
class BestRow:
    """An agent's best available estimate (:func:`best_estimates`), chips per hand."""

    bot: Bot
    estimator: str
    estimate: Estimate


def _per_hand_mean(hand_id: npt.NDArray[np.int64], values: npt.NDArray[np.float64]) -> Estimate:
    """The mean, with its interval, of each hand's values averaged over the
    seatings that played it (one seating: the values themselves)."""
    _, index = np.unique(hand_id, return_inverse=True)
    averaged = np.bincount(index, weights=values) / np.bincount(index)
    return mean_ci(averaged)


def best_estimates(plan: MatchPlan, results: Sequence[SeatingResult]) -> list[BestRow]:
    """Each agent's lowest-variance unbiased estimate that the match allows,
    from the seatings' logs; empty when none beats the money of the table.

    * no-limit: **all-in adjusted** (:mod:`analysis.allin`): hands all in
      before the board was complete valued at their expectation over the rest;
    * two-player limit games whose public tree can be built (Kuhn, Leduc):
      **AIVAT** (:func:`analysis.estimators.aivat_column`; hold'em's equity value
      function costs too much per hand for the end of every match: ``arena
      analyze --strategy`` has it) for an agent whose strategy
      states its policy, with the value function of that strategy against
      itself, fixed before the match; where both agents' strategies do, the one
      with the narrower interval; the other agent's is its negative (``-aivat
      of NAME``: the game is zero-sum), so the two rows agree.

    With ``--duplicate`` each hand's values are averaged over the seatings first,
    as in the table. Logs the estimators cannot read give no rows."""
    from analysis.allin import AllInError, adjusted_hands
    from analysis.estimators import EstimatorError, aivat_column
    from analysis.hand_files import read_hands
    from analysis.hands import HandsError, concat

    try:
        tables = [read_hands(plan.run_dir / f"{r.match_name}.log", plan.game) for r in results if r.hands_played]
        every = concat(tables)
    except HandsError:
        return []
    game = plan.game
    if not game.is_limit:
        try:
            adjusted, _ = adjusted_hands(every)
        except AllInError:
            return []
        rows = []
        for bot in plan.bots:
            chips = adjusted.name_values(bot.name)
            played = ~np.isnan(chips)
            rows.append(BestRow(bot, "all-in adjusted", _per_hand_mean(adjusted.hand_id[played], chips[played])))
        return rows
    if game.num_players != 2:
        return []
    columns: dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}
    for b, bot in enumerate(plan.bots):
        try:
            hands, column = aivat_column(every, bot.name, str(bot.spec), tree_only=True)
        except EstimatorError:
            continue
        columns[b] = (hands.hand_id, column)
    if not columns:
        return []
    estimates = {b: _per_hand_mean(*column) for b, column in columns.items()}
    best = min(estimates, key=lambda b: estimates[b].half_width)
    other = 1 - best
    hand_id, column = columns[best]
    negated = BestRow(plan.bots[other], f"-aivat of {plan.bots[best].name}", _per_hand_mean(hand_id, -column))
    rows = [BestRow(plan.bots[best], "aivat", estimates[best]), negated]
    return sorted(rows, key=lambda row: plan.bots.index(row.bot))


def format_best(plan: MatchPlan, rows: Sequence[BestRow], unit: Unit) -> str:
    """The lines :func:`best_estimates` adds below the results table."""
    kind = "; each hand averaged over its seatings" if plan.duplicate else ""
    cells = [("agent", "best estimator", unit.name, "95% CI")]
    for row in rows:
        estimate = row.estimate.scaled(unit.per_chip)
        cells.append((row.bot.name, row.estimator, f"{estimate.mean:.3f}", f"±{estimate.half_width:.3f}"))
    title = f"best unbiased estimate beside the money (lower variance{kind}):"
    return "\n".join([title, *table_lines(cells, left=(0, 1))])


def write_results(
    plan: MatchPlan, outcome: Outcome, rows: Sequence[AgentRow], unit: Unit, best: Sequence[BestRow] = ()
) -> None:
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
                "name": row.bot.name,
                "strategy": str(row.bot.spec),
                "seed": row.bot.seed,
                "total_chips": row.total_chips,
                **_estimate_fields(row.estimate, unit),
            }
            for row in rows
        ],
    }
    document["best_estimates"] = [
        {"name": row.bot.name, "estimator": row.estimator, **_estimate_fields(row.estimate, unit)} for row in best
    ]
    write_json(plan.run_dir / "results.json", document)


def _estimate_fields(estimate: Estimate, unit: Unit) -> dict[str, Any]:
    """``mean``, ``ci95`` (in the game's unit) and ``hands`` of results.json."""
    return {"mean": estimate.mean * unit.per_chip, "ci95": estimate.half_width * unit.per_chip, "hands": estimate.n}


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write whole or not at all (a signal or full disk leaves the old file)."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_text(json.dumps(document, indent=2) + "\n")
    scratch.replace(path)
