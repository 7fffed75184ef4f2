"""``arena analyze --report PATH.html``: a self-contained HTML report of a match;
``arena rank --report`` and ``arena tournament``: one of a tournament.

One file with inline CSS and its plots as base64 PNG images (matplotlib, Agg
backend): nothing else to fetch. It holds the per-player table, the duplicate
table (when the logs are duplicate seatings), the estimator table (when
``--strategy``/``--player`` named a strategy), the mean per position, a plot of
each player's cumulative winnings with a 95% band (``±1.96·s·√n`` after ``n``
hands, ``s`` the player's standard deviation per hand) and a plot comparing the
estimators' means with their 95% intervals.

The tournament report (:func:`render_rank_report`) is drawn from ``arena
rank``'s JSON document alone: the rankings and run-off rounds, the crosstable
with each cell shaded by sign where its 95% interval excludes 0 (the ACPC's
colour-coded crosstables), a plot of each total bankroll with its
interval and, with a bootstrap, a map of P(row beats column).
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from analysis.breakdown import by_position, cumulative
from analysis.hands import Hands
from poker.stats import Z_95, unit_of
from analysis.tables import plural

__all__ = ["render_report", "write_report", "crosstable_grid", "cell_text", "render_rank_report", "write_rank_report"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; }
th { text-align: left; background: #f4f4f4; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
p.note { color: #555; font-size: 0.9em; }
img { max-width: 100%; }
td.win { background: #cdeccd; } td.loss { background: #f6d0d0; }
"""


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<td class="n">-</td>'
    if isinstance(value, float):
        return f'<td class="n">{value:.3f}</td>'
    if isinstance(value, int):
        return f'<td class="n">{value}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _count(value: float | None) -> float | int | None:
    """A quantity that counts (chips won in total, series points) as an ``int``
    when it is whole, so that its cell reads "414" and not "414.000"; split pots
    can leave fractions of a chip, which keep their decimals."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _table(header: list[str], rows: list[list[Any]], table_id: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>\n" for row in rows)
    return f'<table id="{table_id}">\n<tr>{head}</tr>\n{body}</table>\n'


def _png(figure: Any) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    plt.close(figure)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{data}">\n'


def _page(title: str, body: list[str]) -> str:
    head = f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
    return "".join([head, f"<style>{_CSS}</style>\n</head>\n<body>\n<h1>{html.escape(title)}</h1>\n", *body, "</body>\n</html>\n"])


def _cumulative_plot(hands: Hands) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4))
    for name, running in cumulative(hands).items():
        if running.size == 0:
            continue
        played = np.diff(running, prepend=0.0)
        std = float(np.std(played, ddof=1)) if played.size > 1 else 0.0
        n = np.arange(1, running.size + 1)
        band = Z_95 * std * np.sqrt(n)
        (line,) = axes.plot(n, running, label=name)
        axes.fill_between(n, running - band, running + band, color=line.get_color(), alpha=0.15)
    axes.axhline(0, color="#888", linewidth=0.8)
    axes.set_xlabel("hands played")
    axes.set_ylabel("cumulative chips")
    axes.set_title("cumulative winnings (chips) with 95% band ±1.96·s·√n")
    axes.legend()
    return _png(figure)


def _estimator_plot(estimators: list[dict[str, Any]], unit_name: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 3.5))
    names = [e["name"] for e in estimators]
    x = np.arange(len(names))
    axes.bar(x, [e["mean"] for e in estimators], yerr=[e["ci95"] for e in estimators], capsize=4, color="#6a9fd4")
    axes.set_xticks(x, names, rotation=20, ha="right")
    axes.axhline(0, color="#888", linewidth=0.8)
    axes.set_ylabel(unit_name)
    axes.set_title("estimators: mean with 95% interval")
    return _png(figure)


def _allin_parts(allin: dict[str, Any] | None, hands: int, unit: str) -> list[str]:
    """The all-in adjusted tables (no-limit logs, :func:`analysis.document.allin_document`)."""
    if allin is None:
        return []
    parts = [
        "<h2>All-in adjusted</h2>\n",
        f'<p class="note">{allin["hands_adjusted"]} of {hands} hands all in before the board was complete, '
        "valued at their exact expectation over the remaining board (analysis.allin)</p>\n",
        _table(
            ["player", "hands", unit, "std-dev", "95% CI ±"],
            [[p["name"], p["hands"], p["mean"], p["std"], p["ci95"]] for p in allin["players"]],
            "allin",
        ),
    ]
    if allin["duplicate"] is not None:
        parts += [
            '<p class="note">duplicate, all-in adjusted: each hand averaged over its seatings</p>\n',
            _table(
                ["player", "hands", unit, "95% CI ±"],
                [[p["name"], p["hands"], p["mean"], p["ci95"]] for p in allin["duplicate"]["players"]],
                "allin-duplicate",
            ),
        ]
    return parts


def _component_parts(components: list[dict[str, Any]] | None, unit: str) -> list[str]:
    """Per portfolio component, the hands it played (:func:`analysis.document.component_rows`)."""
    if not components:
        return []
    return [
        "<h2>Portfolio components</h2>\n",
        '<p class="note">the hands each component played, from the agent\'s side file beside the log</p>\n',
        _table(
            ["player", "component", "hands", unit, "std-dev", "95% CI ±"],
            [[c["name"], c["component"], c["hands"], c["mean"], c["std"], c["ci95"]] for c in components],
            "components",
        ),
    ]


def render_report(document: dict[str, Any], hands: Hands) -> str:
    """The HTML text of the report of ``document`` (:func:`analysis.document.analyze`'s,
    with ``estimators`` when computed) over ``hands`` (every hand of the logs)."""
    unit = document["unit"]
    per_chip = unit_of(hands.game).per_chip
    title = f"{document['game']}: {plural(document['hands'], 'hand')}"
    parts = [
        f'<p class="note">logs: {html.escape(", ".join(document["logs"]))}; unit {html.escape(unit)}</p>\n',
        "<h2>Players</h2>\n",
        _table(
            ["player", "hands", unit, "std-dev", "95% CI ±", "total chips"],
            [[p["name"], p["hands"], p["mean"], p["std"], p["ci95"], _count(float(p["total_chips"]))] for p in document["players"]],
            "players",
        ),
    ]
    duplicate = document.get("duplicate")
    if duplicate is not None:
        parts += [
            "<h2>Duplicate</h2>\n",
            f'<p class="note">{len(duplicate["sets"])} set(s) of seatings, {duplicate["hands"]} hands, '
            "each hand's result averaged over its seatings</p>\n",
            _table(
                ["player", "hands", unit, "95% CI ±"],
                [[p["name"], p["hands"], p["mean"], p["ci95"]] for p in duplicate["players"]],
                "duplicate",
            ),
        ]
    parts += _allin_parts(document.get("allin"), document["hands"], unit)
    parts += _component_parts(document.get("components"), unit)
    chosen = document.get("estimators")
    if chosen:
        about = document["estimated"]
        parts += [
            "<h2>Estimators</h2>\n",
            f'<p class="note">{html.escape(about["player"])} playing {html.escape(about["strategy"])}: on-policy, '
            f"full information; AIVAT value function: {html.escape(about['aivat_values'])}</p>\n",
            _table(
                ["estimator", "hands", unit, "std-dev", "95% CI ±"],
                [[e["name"], e["hands"], e["mean"], e["std"], e["ci95"]] for e in chosen],
                "estimators",
            ),
            _estimator_plot(chosen, unit),
        ]
    positions = [e.scaled(per_chip) for e in by_position(hands)]
    parts += [
        "<h2>By position</h2>\n",
        _table(
            ["position", "hands", unit, "95% CI ±"],
            [[str(p), e.n, e.mean, e.half_width] for p, e in enumerate(positions)],
            "positions",
        ),
        "<h2>Cumulative winnings</h2>\n",
        _cumulative_plot(hands),
    ]
    return _page(title, parts)


def write_report(path: Path, document: dict[str, Any], hands: Hands) -> None:
    """Write :func:`render_report` to ``path``.

    Raises:
        OSError: the file cannot be written.
    """
    path.write_text(render_report(document, hands), encoding="utf-8")


# -- tournaments (arena rank / arena tournament) ---------------------------------------

Entry = dict[str, Any] | None


def crosstable_grid(doc: dict[str, Any]) -> tuple[list[str], list[tuple[str, list[Entry]]]]:
    """The crosstable of ``arena rank``'s document as a header and labelled rows
    of entries (``{"mean", "ci95"}`` or ``None``), players in bankroll order.
    Heads-up: a row per player, a column per opponent, then its total. Three
    players: a row per pair of opponents, a column per player, then the totals."""
    order = doc["bankroll"]
    table = doc["crosstable"]
    totals = table["totals"]
    cells = {(c["player"], tuple(c["opponents"])): c for c in table["cells"]}
    if doc["players_per_match"] == 2:
        rows = [(a, [cells.get((a, (b,))) for b in order] + [totals[a]]) for a in order]
        return ["", *order, "total"], rows
    pairs = sorted((tuple(sorted(o, key=order.index)) for _, o in cells), key=lambda o: [order.index(p) for p in o])
    grid = [(", ".join(ranked), [cells.get((p, tuple(sorted(ranked)))) for p in order]) for ranked in dict.fromkeys(pairs)]
    return ["opponents", *order], [*grid, ("total", [totals[p] for p in order])]


def cell_text(entry: dict[str, Any], unit: str) -> str:
    """``mean ±half-width`` to the unit's precision: a tenth of an mbb/g, a
    thousandth of a chip per hand (small games win fractions of a chip)."""
    mean, ci95 = entry["mean"], entry["ci95"]
    digits = 1 if unit == "mbb/g" else 3
    return f"{mean:.{digits}f}" if ci95 is None else f"{mean:.{digits}f} ±{ci95:.{digits}f}"


def _shaded(entry: Entry, unit: str) -> str:
    """A crosstable cell, shaded by sign when its 95% interval excludes 0."""
    if entry is None:
        return '<td class="n">-</td>'
    mean, ci95 = entry["mean"], entry["ci95"]
    text = cell_text(entry, unit)
    significant = ci95 is not None and abs(mean) > ci95
    shade = (" win" if mean > 0 else " loss") if significant else ""
    return f'<td class="n{shade}">{html.escape(text)}</td>'


def _runoff_rows(groups: list[list[str]], rounds: list[dict[str, Any]], *, points: bool = False) -> list[list[Any]]:
    """Place, player and score when out of a run-off; ``points``: the scores are series points (counts)."""
    out: dict[str, Any] = {}
    for r in rounds:
        for player in r["eliminated"]:
            score = r["scores"].get(player)
            out[player] = _count(score) if points else score
    rows, place = [], 1
    for group in groups:
        rows += [[f"{place}{'=' if len(group) > 1 else ''}", p, out.get(p)] for p in group]
        place += len(group)
    return rows


def _bankroll_plot(doc: dict[str, Any]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = doc["bankroll"]
    totals = doc["crosstable"]["totals"]
    means = [totals[p]["mean"] for p in order]
    widths = [totals[p]["ci95"] if totals[p]["ci95"] is not None else 0.0 for p in order]
    figure, axes = plt.subplots(figsize=(8, 0.5 * len(order) + 1.2))
    y = np.arange(len(order))[::-1]
    axes.errorbar(means, y, xerr=widths, fmt="o", capsize=4, color="#3b6ea8")
    axes.set_yticks(y, order)
    axes.axvline(0, color="#888", linewidth=0.8)
    axes.set_xlabel(doc["unit"])
    axes.set_title("total bankroll with 95% interval")
    return _png(figure)


def _p_beats_plot(doc: dict[str, Any]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = doc["bankroll"]
    p_beats = doc["bootstrap"]["p_beats"]
    grid = np.array([[np.nan if a == b else p_beats[a][b] for b in order] for a in order])
    figure, axes = plt.subplots(figsize=(1.0 * len(order) + 3, 0.8 * len(order) + 1.5))
    image = axes.imshow(grid, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(order)), order, rotation=30, ha="right")
    axes.set_yticks(range(len(order)), order)
    for i in range(len(order)):
        for j in range(len(order)):
            if i != j:
                axes.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=8)
    figure.colorbar(image, ax=axes)
    axes.set_title(f"P(row's total bankroll beats column's), {doc['bootstrap']['samples']} bootstrap samples")
    return _png(figure)


#: A section put before the rankings: its heading, a note (plain text), the
#: table's header and rows (``arena tournament``'s bots and forfeits).
Section = tuple[str, str, list[str], list[list[Any]]]


def render_rank_report(doc: dict[str, Any], title: str | None = None, sections: Sequence[Section] = ()) -> str:
    """The HTML text of a tournament report from ``arena rank``'s document
    (:func:`analysis.ranking.document`), after ``sections``."""
    unit = doc["unit"]
    kind = "heads-up" if doc["players_per_match"] == 2 else "3-player"
    title = title or f"{doc['results']}: {doc['matches']} {kind} matches"
    header, grid = crosstable_grid(doc)
    totals = doc["crosstable"]["totals"]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(f"<tr><th>{html.escape(label)}</th>{''.join(_shaded(e, unit) for e in row)}</tr>\n" for label, row in grid)
    parts = [
        *(
            f"<h2>{html.escape(heading)}</h2>\n<p class=\"note\">{html.escape(note)}</p>\n"
            + _table(header, rows, heading.lower().replace(" ", "_"))
            for heading, note, header, rows in sections
        ),
        f'<p class="note">{doc["matches"]} {kind} matches among {len(doc["bankroll"])} players; unit {html.escape(unit)}'
        f"{' (' + html.escape(doc['game']) + ')' if doc['game'] else ''}; intervals: 95% over each pairing's matches</p>\n",
        "<h2>Total bankroll</h2>\n",
        _table(
            ["rank", "player", unit, "95% CI ±"],
            [[i, p, totals[p]["mean"], totals[p]["ci95"]] for i, p in enumerate(doc["bankroll"], 1)],
            "bankroll",
        ),
        _bankroll_plot(doc),
        "<h2>Bankroll instant run-off</h2>\n",
        _table(
            ["rank", "player", f"{unit} when out"],
            _runoff_rows(doc["bankroll_runoff_groups"], doc["bankroll_runoff_rounds"]),
            "bankroll_runoff",
        ),
        "<h2>Series instant run-off</h2>\n",
        _table(["rank", "player", "points when out"], _runoff_rows(doc["series_runoff"], doc["series_runoff_rounds"], points=True), "series_runoff"),
        "<h2>Crosstable</h2>\n",
        '<p class="note">'
        + ("row player's result against the column player" if kind == "heads-up" else "column player's result against the row's two opponents")
        + f", {html.escape(unit)}, mean ±95% half-width; green: significantly positive, red: significantly negative</p>\n",
        f'<table id="crosstable">\n<tr>{head}</tr>\n{body}</table>\n',
    ]
    boot = doc["bootstrap"]
    if boot is not None:
        stable = "".join(
            f"<li>{html.escape(rule)}: the observed ranking in {share:.3f} of samples</li>\n" for rule, share in boot["same_ranking"].items()
        )
        parts += [
            "<h2>Bootstrap</h2>\n",
            f'<p class="note">{boot["samples"]} samples (seed {boot["seed"]}), {html.escape(boot["resampling"])}</p>\n',
            f"<ul>\n{stable}</ul>\n",
            _p_beats_plot(doc),
        ]
    return _page(title, parts)


def write_rank_report(path: Path, doc: dict[str, Any], title: str | None = None, sections: Sequence[Section] = ()) -> None:
    """Write :func:`render_rank_report` to ``path``.

    Raises:
        OSError: the file cannot be written.
    """
    path.write_text(render_rank_report(doc, title, sections), encoding="utf-8")
