"""The rankings of a tournament's results as one document (total bankroll,
bankroll and series instant run-off, the crosstable with 95% intervals, a
bootstrap over matches) and its table form: what ``arena rank`` and ``arena
tournament`` print, so a tournament and ``arena rank`` of its database agree."""

from __future__ import annotations

import math
from typing import Any

from analysis.report import cell_text, crosstable_grid
from analysis.scoring import Crosstable, Ranking, Results, Runoff, rank
from poker.stats import Estimate, Unit, unit_of
from analysis.tables import table_lines
from poker.gamedef import Game, shipped_name

__all__ = ["document", "format_report", "ranking_document", "RAW", "INTERVAL"]

RAW = Unit("chips/hand", 1.0)
INTERVAL = "95% normal interval over each pairing's matches (none from one match); totals combine their cells'"


def _value(value: float, unit: Unit) -> float:
    return value * unit.per_chip


def _estimate(estimate: Estimate, unit: Unit) -> dict[str, Any]:
    scaled = estimate.scaled(unit.per_chip)
    return {"mean": scaled.mean, "ci95": None if math.isnan(scaled.half_width) else scaled.half_width, "matches": scaled.n}


def _rounds(runoff: Runoff, unit: Unit | None) -> list[dict[str, Any]]:
    return [
        {
            "remaining": list(r.remaining),
            "scores": {p: (s if unit is None else _value(s, unit)) for p, s in r.scores.items()},
            "eliminated": list(r.eliminated),
            "by_previous_scores": r.by_previous,
        }
        for r in runoff.rounds
    ]


def _crosstable(table: Crosstable, unit: Unit) -> dict[str, Any]:
    return {
        "unit": unit.name,
        "interval": INTERVAL,
        "cells": [{"player": c.player, "opponents": list(c.opponents), **_estimate(c.estimate, unit)} for c in table.cells],
        "totals": {p: _estimate(e, unit) for p, e in table.totals.items()},
    }


def document(ranking: Ranking, unit: Unit, game: str | None) -> dict[str, Any]:
    """The JSON report: rankings best first, run-off rounds, crosstable, bootstrap."""
    results = ranking.results
    boot = ranking.bootstrap
    return {
        "results": results.source,
        "matches": len(results.matches),
        "players_per_match": results.seats,
        "game": game,
        "unit": unit.name,
        "bankroll": [p for p, _ in ranking.bankroll],
        "bankroll_runoff": ranking.bankroll_runoff.order,
        "series_runoff": [list(g) for g in ranking.series_runoff.groups],
        "bankroll_runoff_groups": [list(g) for g in ranking.bankroll_runoff.groups],
        "bankroll_runoff_rounds": _rounds(ranking.bankroll_runoff, unit),
        "series_runoff_rounds": _rounds(ranking.series_runoff, None),
        "crosstable": _crosstable(ranking.crosstable, unit),
        "bootstrap": None
        if boot is None
        else {
            "samples": boot.samples,
            "seed": boot.seed,
            "resampling": "each pairing's matches with replacement",
            "p_beats": boot.p_beats,
            "same_ranking": boot.same,
            "first": boot.first,
        },
    }


def _runoff_lines(groups: list[list[str]], rounds: list[dict[str, Any]], what: str, unit: str) -> list[str]:
    rows = [["rank", "player", f"{what} when out"]]
    scores: dict[str, str] = {}
    for r in rounds:
        for p in r["eliminated"]:
            value = r["scores"].get(p)
            scores[p] = "-" if value is None else (f"{value:+g}" if what == "points" else cell_text({"mean": value, "ci95": None}, unit))
    place = 1
    for group in groups:
        label = f"{place}{'=' if len(group) > 1 else ''}"
        rows += [[label, p, scores.get(p, "-")] for p in group]
        place += len(group)
    return table_lines(rows, left=(0, 1))


def format_report(doc: dict[str, Any]) -> str:
    """The table form of :func:`document`."""
    unit = doc["unit"]
    unit_text = f"{unit} ({doc['game']})" if doc["game"] else f"{unit}, raw chips per hand (--game GAME for its unit)"
    table = doc["crosstable"]
    totals = table["totals"]
    lines = [
        f"{doc['results']}: {doc['matches']} {'heads-up' if doc['players_per_match'] == 2 else '3-player'} "
        f"matches among {len(doc['bankroll'])} players; unit {unit_text}",
        f"intervals: {INTERVAL}",
        "",
        "total bankroll (mean over opponents of the per-match mean per hand)",
    ]
    rows = [["rank", "player", unit, "95% CI"]]
    for place, p in enumerate(doc["bankroll"], 1):
        mean, _, ci = cell_text(totals[p], unit).partition(" ")
        rows.append([str(place), p, mean, ci or "-"])
    lines += table_lines(rows, left=(0, 1))
    lines += ["", f"bankroll instant run-off (lowest total among the remaining out first; {unit})"]
    lines += _runoff_lines(doc["bankroll_runoff_groups"], doc["bankroll_runoff_rounds"], unit, unit)
    lines += ["", "series instant run-off (fewest series won among the remaining out first, ties together)"]
    lines += _runoff_lines(doc["series_runoff"], doc["series_runoff_rounds"], "points", unit)
    lines += ["", f"crosstable ({unit}, mean ±95% half-width over matches)"]
    header, grid = crosstable_grid(doc)
    heads_up = doc["players_per_match"] == 2
    lines.append("row player's result against the column player" if heads_up else "column player's result against the row's two opponents")
    rows = [header] + [[label] + ["-" if c is None else cell_text(c, unit) for c in row] for label, row in grid]
    lines += table_lines(rows)
    order = doc["bankroll"]
    boot = doc["bootstrap"]
    if boot is not None:
        lines += ["", f"bootstrap: {boot['samples']} samples (seed {boot['seed']}), {boot['resampling']}"]
        lines.append("P(row's total bankroll beats column's)")
        rows = [[""] + order]
        for a in order:
            rows.append([a] + ["-" if a == b else f"{boot['p_beats'][a][b]:.3f}" for b in order])
        lines += table_lines(rows)
        for rule, share in boot["same_ranking"].items():
            leaders = ", ".join(f"{p} {v:.3f}" for p, v in sorted(boot["first"][rule].items(), key=lambda i: -i[1]) if v > 0)
            lines.append(f"{rule}: same ranking in {share:.3f} of samples; first: {leaders}")
    return "\n".join(lines)


def ranking_document(results: Results, game: Game | None, game_name: str | None, samples: int, seed: int) -> dict[str, Any]:
    """Rank ``results`` and return :func:`document` in ``game``'s unit (raw chips
    per hand without one): what ``arena rank`` and ``arena tournament`` print.

    Raises:
        ScoringError: a run-off meets players with no match among them while others have.
    """
    unit = RAW if game is None else unit_of(game)
    name = None if game is None else shipped_name(game) or game_name or "the database's game"
    return document(rank(results, samples=samples, seed=seed), unit, name)
