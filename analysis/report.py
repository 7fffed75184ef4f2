"""``arena analyze --report PATH.html``: a self-contained HTML report of a match.

One file with inline CSS and its plots as base64 PNG images (matplotlib, Agg
backend): nothing else to fetch. It holds the per-player table, the duplicate
table (when the logs are duplicate seatings), the estimator table (when
``--strategy``/``--player`` named a strategy), the mean per position, a plot of
each player's cumulative winnings with a 95% band (``±1.96·s·√n`` after ``n``
hands, ``s`` the player's standard deviation per hand) and a plot comparing the
estimators' means with their 95% intervals.
"""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path
from typing import Any

import numpy as np

from analysis.breakdown import by_position, cumulative
from analysis.hands import Hands
from analysis.stats import Z_95, unit_of

__all__ = ["render_report", "write_report"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; }
th { text-align: left; background: #f4f4f4; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
p.note { color: #555; font-size: 0.9em; }
img { max-width: 100%; }
"""


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<td class="n">-</td>'
    if isinstance(value, float):
        return f'<td class="n">{value:.3f}</td>'
    if isinstance(value, int):
        return f'<td class="n">{value}</td>'
    return f"<td>{html.escape(str(value))}</td>"


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


def render_report(document: dict[str, Any], hands: Hands) -> str:
    """The HTML text of the report of ``document`` (:func:`analysis.cli.analyze`'s,
    with ``estimators`` when computed) over ``hands`` (every hand of the logs)."""
    unit = document["unit"]
    per_chip = unit_of(hands.game).per_chip
    title = f"{document['game']}: {document['hands']} hands"
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n",
        f"<h1>{html.escape(title)}</h1>\n",
        f'<p class="note">logs: {html.escape(", ".join(document["logs"]))}; unit {html.escape(unit)}</p>\n',
        "<h2>Players</h2>\n",
        _table(
            ["player", "hands", unit, "std-dev", "95% CI ±", "total chips"],
            [[p["name"], p["hands"], p["mean"], p["std"], p["ci95"], float(p["total_chips"])] for p in document["players"]],
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
        "</body>\n</html>\n",
    ]
    return "".join(parts)


def write_report(path: Path, document: dict[str, Any], hands: Hands) -> None:
    """Write :func:`render_report` to ``path``.

    Raises:
        OSError: the file cannot be written.
    """
    path.write_text(render_report(document, hands), encoding="utf-8")
