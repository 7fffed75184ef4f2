"""``arena analyze --report``: a self-contained HTML report with the tables and base64 PNG plots."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from arena.commands.analyze import main
from arena.commands.match import main as arena_match

VOID = {"meta", "img", "br", "hr", "link", "input"}


class _Checker(HTMLParser):
    """Checks that tags nest and close; collects table ids, table texts and image sources."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.images: list[str] = []
        self.external: list[str] = []
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.images.append(values.get("src") or "")
        if tag in ("link", "script") or (tag == "img" and not (values.get("src") or "").startswith("data:")):
            self.external.append(tag)
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag == "table":
            self._table = self.tables.setdefault(values.get("id") or "", [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()
        if tag in ("td", "th") and self._table is not None and self._cell is not None:
            self._table[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def duplicate_leduc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """150 Leduc hands per seating, leduc-cfr against always-raise, seats swapped on the same cards."""
    run = tmp_path_factory.mktemp("leduc-dup")
    status = arena_match(
        ["leduc", "--hands", "150", "--seed", "5", "--duplicate", "--in-process", "--run-dir", str(run)]
        + ["leduc-cfr", "always-raise"]
    )
    assert status == 0 and (run / "match.2.log").is_file()
    return run


def parse(path: Path) -> tuple[str, _Checker]:
    text = path.read_text(encoding="utf-8")
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.stack == []
    return text, checker


def test_report_with_estimators_and_duplicate(
    duplicate_leduc: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.html"
    capsys.readouterr()
    argv = [str(duplicate_leduc), "--strategy", "leduc-cfr", "--player", "leduc-cfr", "--report", str(report)]
    assert main([*argv, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    text, checker = parse(report)
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    assert checker.external == []  # self-contained: no scripts, stylesheets or fetched images
    assert set(checker.tables) == {"players", "duplicate", "estimators", "positions"}
    players = checker.tables["players"]
    assert players[0] == ["player", "hands", "chips/hand", "std-dev", "95% CI ±", "total chips"]
    assert [row[:3] for row in players[1:]] == [
        [p["name"], str(p["hands"]), f"{p['mean']:.3f}"] for p in document["players"]
    ]
    assert [row[:3] for row in checker.tables["duplicate"][1:]] == [
        [p["name"], str(p["hands"]), f"{p['mean']:.3f}"] for p in document["duplicate"]["players"]
    ]
    assert [row[0] for row in checker.tables["estimators"][1:]] == [e["name"] for e in document["estimators"]]
    assert [row[3] for row in checker.tables["estimators"][1:]] == [f"{e['std']:.3f}" for e in document["estimators"]]
    positions = checker.tables["positions"]
    assert [row[:2] for row in positions[1:]] == [["0", "300"], ["1", "300"]]
    assert float(positions[1][2]) == pytest.approx(-float(positions[2][2]), abs=1e-3)  # zero sum
    assert len(checker.images) == 2  # estimator comparison, cumulative winnings
    for source in checker.images:
        prefix = "data:image/png;base64,"
        assert source.startswith(prefix)
        assert base64.b64decode(source[len(prefix) :], validate=True).startswith(b"\x89PNG\r\n\x1a\n")


def test_report_without_estimators(duplicate_leduc: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "plain.html"
    assert main([str(duplicate_leduc / "match.1.log"), "--report", str(report)]) == 0
    assert capsys.readouterr().out.startswith("leduc.limit.2p: 150 hands in 1 log, chips/hand")
    _, checker = parse(report)
    assert set(checker.tables) == {"players", "positions"}
    assert len(checker.images) == 1 and checker.images[0].startswith("data:image/png;base64,")


def test_report_of_no_limit_portfolio_logs_has_all_in_and_component_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A no-limit Leduc portfolio of two components against always-raise: the
    all-in tables (and their duplicate) and the per-component table are in the
    report with the JSON's figures."""
    run = tmp_path / "run"
    bots = ["portfolio:bots=leduc-nl-pot+always-call", "always-raise:size=max"]
    argv = ["leduc.nolimit", "--hands", "60", "--seed", "2", "--duplicate", "--in-process", "--run-dir", str(run)]
    assert arena_match([*argv, *bots]) == 0
    report = tmp_path / "nl.html"
    capsys.readouterr()
    assert main([str(run), "--report", str(report), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    _, checker = parse(report)
    assert {"allin", "allin-duplicate", "components"} <= set(checker.tables)
    assert document["allin"]["hands_adjusted"] > 0
    assert [row[:3] for row in checker.tables["allin"][1:]] == [
        [p["name"], str(p["hands"]), f"{p['mean']:.3f}"] for p in document["allin"]["players"]
    ]
    components = checker.tables["components"][1:]
    assert {row[1] for row in components} <= {"leduc-nl-pot", "always-call"}
    assert sum(int(row[2]) for row in components) == 120


def test_counts_read_as_integers_and_means_keep_three_decimals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Total chips and series points are counts: "4", not "4.000" (issue 20, §3.10)."""
    from arena.commands import rank as cli_rank

    log = tmp_path / "k.log"
    log.write_text("# name/game/hands/seed m kuhn 2 3\nSTATE:0:crc:Ks|Qs:2|-2:a|b\nSTATE:1:crc:Qs|Ks:2|-2:a|b\n")
    report = tmp_path / "k.html"
    assert main([str(log), "--report", str(report)]) == 0
    _, checker = parse(report)
    assert [row[2:] for row in checker.tables["players"][1:]] == [
        ["2.000", "0.000", "0.000", "4"],
        ["-2.000", "0.000", "0.000", "-4"],
    ]
    results = tmp_path / "r.csv"
    results.write_text("match,player,value,hands\n1,a,300,100\n1,b,-300,100\n2,a,20,100\n2,c,-20,100\n3,b,10,100\n3,c,-10,100\n")
    rank_report = tmp_path / "r.html"
    capsys.readouterr()
    assert cli_rank.main([str(results), "--bootstrap", "50", "--report", str(rank_report)]) == 0
    _, checker = parse(rank_report)
    assert [row[1:] for row in checker.tables["series_runoff"][1:]] == [["a", "1"], ["b", "-1"], ["c", "-2"]]
