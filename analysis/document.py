"""The document ``arena analyze`` prints (as a table or JSON) and writes as an
HTML report: per player results of hand histories, the duplicate estimate when
they are the seatings of duplicate matches, the all-in adjusted estimate of
no-limit logs, and a portfolio's components; :mod:`analysis.estimators` adds
the estimators of one player's strategy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from analysis.breakdown import estimate, summarize
from analysis.duplicate import DuplicateSet, combined_estimates, find_duplicates
from analysis.estimators import AIVAT_VALUES, EQUITY_VALUES, PORTFOLIO_VALUES
from analysis.hands import Hands, HandsError, concat
from analysis.records import is_records
from poker.stats import Estimate, Unit, unit_of
from analysis.tables import plural, table_lines
from poker.gamedef import shipped_name

__all__ = ["analyze", "allin_document", "component_rows", "format_report"]


def _json_estimate(estimate: Estimate, unit: Unit) -> dict[str, Any]:
    scaled = estimate.scaled(unit.per_chip)
    return {"hands": estimate.n, "mean": scaled.mean, "ci95": None if math.isnan(scaled.half_width) else scaled.half_width}


def analyze(tables: Sequence[Hands], every: Hands | None = None) -> dict[str, Any]:
    """The report as a JSON-ready document (means in the game's unit); ``every`` is
    ``concat(tables)`` when the caller has it already.

    Raises:
        HandsError: logs of different games.
        DuplicateError: logs that look like one duplicate match but do not pair.
    """
    if every is None:
        every = concat(tables)
    game = every.game
    unit = unit_of(game)
    sets, _ = find_duplicates(tables)
    players = []
    for row in summarize(every):
        entry = {"name": row.name, "total_chips": row.total, **_json_estimate(row.estimate, unit)}
        entry["std"] = None if math.isnan(row.std) else row.std * unit.per_chip
        players.append(entry)
    document: dict[str, Any] = {
        "game": shipped_name(game) or "game",
        "unit": unit.name,
        "logs": [t.source for t in tables],
        "hands": len(every),
        "skipped_lines": {t.source: list(t.skipped) for t in tables if t.skipped},
        "players": players,
        "duplicate": None,
    }
    if sets:
        document["duplicate"] = _duplicate_document(sets, unit)
    if not game.is_limit:
        document["allin"] = allin_document(tables, every)
    if every.components:
        document["components"] = component_rows(every)
    return document


def component_rows(every: Hands) -> list[dict[str, Any]]:
    """Per portfolio agent and component, the hands that component played and
    their mean, std-dev and 95% interval in the game's unit (money: the
    components' hands are not a random sample of the deals once the choice
    depends on what came before, so these say how each was used and fared, not
    what each is worth)."""
    unit = unit_of(every.game)
    rows = []
    for name, labels in every.components.items():
        chips = every.name_values(name)
        column = np.array(labels, dtype=object)
        for label in dict.fromkeys(label for label in labels if label):
            played = chips[(column == label) & ~np.isnan(chips)]
            std = float(np.std(played, ddof=1)) * unit.per_chip if played.size > 1 else None
            rows.append({"name": name, "component": label, **_json_estimate(estimate(played), unit), "std": std})
    return rows


def _duplicate_document(sets: Sequence[DuplicateSet], unit: Unit) -> dict[str, Any]:
    estimates = combined_estimates(sets)
    return {
        "sets": [[t.source for t in d.tables] for d in sets],
        "hands": sum(d.hand_id.size for d in sets),
        "players": [{"name": name, **_json_estimate(e, unit)} for name, e in estimates.items()],
    }


def allin_document(tables: Sequence[Hands], every: Hands) -> dict[str, Any]:
    """The all-in adjusted estimate (:mod:`analysis.allin`) of no-limit logs:
    per player over every hand, and the duplicate estimate of the adjusted
    values when the logs are duplicate seatings; ``every`` is ``concat(tables)``.

    Raises:
        HandsError: a hand whose betting or cards the adjustment cannot read.
    """
    from analysis.allin import AllInError, adjusted_hands

    try:
        adjusted, result = adjusted_hands(every)
    except AllInError as error:
        raise HandsError(str(error)) from None
    unit = unit_of(every.game)
    players = []
    for row in summarize(adjusted):
        entry = {"name": row.name, **_json_estimate(row.estimate, unit)}
        entry["std"] = None if math.isnan(row.std) else row.std * unit.per_chip
        players.append(entry)
    starts = np.cumsum([0] + [len(t) for t in tables])
    split = [replace(t, values=adjusted.values[a:b]) for t, a, b in zip(tables, starts[:-1], starts[1:])]
    sets, _ = find_duplicates(split)
    return {
        "hands_adjusted": int(result.adjusted.sum()),
        "players": players,
        "duplicate": _duplicate_document(sets, unit) if sets else None,
    }


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _player_lines(players: list[dict[str, Any]], unit: str) -> list[str]:
    """A table of per-player rows (with a std-dev column when the rows have one)."""
    std = all("std" in p for p in players)
    rows = [["player", "hands", unit, *(["std-dev"] if std else []), "95% CI"]]
    for p in players:
        ci = "-" if p["ci95"] is None else f"±{p['ci95']:.3f}"
        rows.append([p["name"], str(p["hands"]), _number(p["mean"]), *([_number(p["std"])] if std else []), ci])
    return table_lines(rows)


def _values_summary(about: dict[str, Any]) -> str:
    if about["aivat_values"] == AIVAT_VALUES:
        return f"{about['strategy']} against itself"
    if about["aivat_values"] == PORTFOLIO_VALUES:
        return "each hand's component against itself"
    if about["aivat_values"] == EQUITY_VALUES:
        return "pot share by showdown equity"
    return str(about["aivat_values"])  # a bot's own values (analysis.known_values): its entry's line


def format_report(document: dict[str, Any]) -> str:
    """The table form of :func:`analyze`'s document."""
    unit = document["unit"]
    logs = document["logs"]
    lines = [f"{document['game']}: {plural(document['hands'], 'hand')} in {plural(len(logs), 'log')}, {unit}"]
    lines += _player_lines(document["players"], unit)
    for source, skipped in document["skipped_lines"].items():
        what = "damaged record" if is_records(source) else "damaged line"
        lines.append(f"skipped {plural(len(skipped), what)} of {source}: {', '.join(map(str, skipped[:10]))}{' …' if len(skipped) > 10 else ''}")
    duplicate = document["duplicate"]
    if duplicate is not None:
        sets = duplicate["sets"]
        lines.append(
            f"duplicate: {plural(len(sets), 'set')} of {len(sets[0])} seatings, "
            f"{plural(duplicate['hands'], 'hand')} (each averaged over its seatings)"
        )
        lines += _player_lines(duplicate["players"], unit)
    allin = document.get("allin")
    if allin is not None:
        lines.append(
            f"all-in adjusted: {allin['hands_adjusted']} of {document['hands']} hands all in before the board was"
            " complete, valued at their expectation over the remaining board"
        )
        lines += _player_lines(allin["players"], unit)
        if allin["duplicate"] is not None:
            lines.append("duplicate, all-in adjusted (each hand averaged over its seatings)")
            lines += _player_lines(allin["duplicate"]["players"], unit)
    components = document.get("components")
    if components:
        lines.append("portfolio components (the hands each played)")
        rows = [["player", "component", "hands", unit, "std-dev", "95% CI"]]
        for c in components:
            ci = "-" if c["ci95"] is None else f"±{c['ci95']:.3f}"
            rows.append([c["name"], c["component"], str(c["hands"]), _number(c["mean"]), _number(c["std"]), ci])
        lines += table_lines(rows, left=(0, 1))
    chosen = document.get("estimators")
    if chosen:
        about = document["estimated"]
        lines.append(
            f"estimators for {about['player']} playing {about['strategy']} (on-policy, full information;"
            f" AIVAT values: {_values_summary(about)})"
        )
        rows = [["estimator", "hands", unit, "std-dev", "95% CI"]]
        for e in chosen:
            rows.append([e["name"], str(e["hands"]), _number(e["mean"]), _number(e["std"]), f"±{e['ci95']:.3f}"])
        lines += table_lines(rows)
    return "\n".join(lines)
