"""``arena rank --report PATH.html``: one self-contained page whose crosstable is
shaded by sign exactly where a cell's 95% interval excludes 0."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.commands import rank as cli_rank

HEADS_UP = """match,player,value,hands
1,a,300,100
1,b,-300,100
2,a,320,100
2,b,-320,100
3,a,-50,100
3,c,50,100
4,a,60,100
4,c,-60,100
5,b,10,100
5,c,-10,100
6,b,400,100
6,c,-400,100
"""

# four players, every triple twice: a wins steadily, d loses steadily, b and c in between
THREE = "match,player,value,hands\n" + "".join(
    f"{t}{k},{p},{v},60\n"
    for t, (trio, values) in enumerate(
        {"abc": ((30, -10, -20), (33, -20, -13)), "abd": ((25, 5, -30), (28, 2, -30)),
         "acd": ((20, 10, -30), (21, 12, -33)), "bcd": ((4, 30, -34), (-10, 38, -28))}.items()
    )
    for k, match in enumerate(values)
    for p, v in zip(trio, match)
)  # fmt: skip


@pytest.mark.parametrize("source", ["heads-up", "3-player"])
def test_report_shades_the_significant_cells(source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.csv"
    results.write_text(HEADS_UP if source == "heads-up" else THREE)
    argv = [str(results), "--bootstrap", "50", "--game", "hulhe" if source == "heads-up" else "kuhn3p"]
    page_path = tmp_path / "report.html"
    assert cli_rank.main([*argv, "--report", str(page_path)]) == 0
    text = capsys.readouterr().out
    assert cli_rank.main([*argv, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    page = page_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and 'src="http' not in page
    assert page.count("data:image/png;base64,") == 2  # bankroll with intervals; P(row beats column)
    table = page[page.index('<table id="crosstable">') : page.index("</table>", page.index('<table id="crosstable">'))]
    shaded = re.findall(r'<td class="n( win| loss)?">([^<]*)</td>', table)
    entries = [c for c in doc["crosstable"]["cells"]] + list(doc["crosstable"]["totals"].values())
    expected = {"win": 0, "loss": 0}
    for e in entries:
        if e["ci95"] is not None and abs(e["mean"]) > e["ci95"]:
            expected["win" if e["mean"] > 0 else "loss"] += 1
    assert {"win": sum(s == " win" for s, _ in shaded), "loss": sum(s == " loss" for s, _ in shaded)} == expected
    assert expected["win"] > 0 and expected["loss"] > 0
    for name in doc["bankroll"]:
        assert f"<th>{name}</th>" in table
    assert f"unit {doc['unit']} ({doc['game']})" in page and text.startswith(doc["results"])


def test_report_path_that_cannot_be_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "r.csv"
    results.write_text(HEADS_UP)
    assert cli_rank.main([str(results), "--report", str(tmp_path / "missing" / "r.html")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("arena rank: error: ") and err.count("\n") == 1 and "missing/r.html" in err
