"""Tournament scoring (analysis.scoring) and `arena rank` (analysis.cli_rank).

Acceptance: Abou Risk & Szafron (2010)'s Table 3 (with the two corrections listed in
tests/fixtures/seed003/README.md) and Table 5
reproduce the published bankroll and elimination orders; hand-built heads-up
fixtures pin both run-off variants, ties included; CSV errors are one line with
the line number (exit 1), usage exits 2.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from arena.commands import rank as cli_rank
from analysis.scoring import (
    Results,
    ResultsError,
    ScoringError,
    bankroll,
    bankroll_runoff,
    bootstrap,
    cells_of,
    crosstable,
    load_results,
    rank,
    read_csv,
    series_runoff,
)

SEED003 = Path(__file__).resolve().parents[1] / "fixtures" / "seed003"
HANDS = 1_200_000  # one matchup: 6 seatings × 200,000 hands
BIG_BLIND = 10  # holdem.limit.3p


def crosstable_rows(path: Path) -> tuple[list[list[str]], dict[str, int]]:
    """The paper's table as `match,player,value,hands` rows (one match per triple),
    and its published overall row (mb/h)."""
    with open(path, newline="") as handle:
        table = list(csv.reader(handle))
    header = table[0][1:]
    triples: dict[tuple[str, ...], dict[str, int]] = {}
    overall: dict[str, int] = {}
    for row in table[1:]:
        if row[0] == "Overall":
            overall = {p: int(v) for p, v in zip(header, row[1:])}
            continue
        pair = row[0].split()
        assert len(pair) == 2 and all(p in header for p in pair), row
        for player, cell in zip(header, row[1:]):
            if cell == "-":
                assert player in pair, (row[0], player)
                continue
            assert player not in pair, (row[0], player)
            triple = tuple(sorted({*pair, player}, key=header.index))
            assert player not in triples.setdefault(triple, {}), (triple, player)
            triples[triple][player] = int(cell) * HANDS * BIG_BLIND // 1000
    assert len(triples) == 35
    rows = [["match", "player", "value", "hands"]]
    for triple in sorted(triples, key=lambda t: [header.index(p) for p in t]):
        assert sorted(triples[triple]) == sorted(triple), triple  # each triple filled three times
        rows += [["+".join(triple), p, str(triples[triple][p]), str(HANDS)] for p in triple]
    return rows, overall


@pytest.mark.parametrize("table", ["table3", "table5"])
def test_results_fixtures_are_the_crosstables(table: str) -> None:
    rows, _ = crosstable_rows(SEED003 / f"{table}_crosstable.csv")
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    assert (SEED003 / f"{table}_results.csv").read_bytes() == out.getvalue().encode()


def test_table3_tournament_1() -> None:
    _, overall = crosstable_rows(SEED003 / "table3_crosstable.csv")
    results = read_csv(SEED003 / "table3_results.csv")
    assert len(results.matches) == 35 and results.seats == 3
    cells = cells_of(results)
    ranked = bankroll(cells)
    assert [p for p, _ in ranked] == ["PR2", "IR16S", "IR16L", "Poki", "AR", "Probe", "AC"]
    for player, total in ranked:  # the published overall row, to its rounding
        assert abs(total * 1000 / BIG_BLIND - overall[player]) <= 0.5, player
    runoff = bankroll_runoff(cells)
    assert runoff.order == ["IR16L", "IR16S", "PR2", "Poki", "Probe", "AR", "AC"]
    # eliminated one at a time: AC, AR, Probe, Poki, then the last matchup ranks the final three
    assert [r.eliminated for r in runoff.rounds] == [("AC",), ("AR",), ("Probe",), ("Poki",), ("PR2",), ("IR16L", "IR16S")]
    final = runoff.rounds[4].scores
    assert {p: round(v * 1000 / BIG_BLIND) for p, v in final.items()} == {"IR16L": 50, "IR16S": 48, "PR2": -98}
    assert runoff.rounds[-1].by_previous
    assert series_runoff(cells).order == runoff.order


def test_table5_tournament_2() -> None:
    _, overall = crosstable_rows(SEED003 / "table5_crosstable.csv")
    cells = cells_of(read_csv(SEED003 / "table5_results.csv"))
    published = ["IR16", "Ex16", "Un16", "ExM2", "UnM2", "PR2", "Poki"]
    ranked = bankroll(cells)
    assert [p for p, _ in ranked] == published
    for player, total in ranked:
        assert abs(total * 1000 / BIG_BLIND - overall[player]) <= 0.5, player
    assert bankroll_runoff(cells).order == published  # "the rankings for both events were identical"
    assert series_runoff(cells).order == published


def write(tmp_path: Path, rows: list[tuple[str, str, float, int]], name: str = "r.csv") -> Path:
    path = tmp_path / name
    lines = ["match,player,value,hands"] + [f"{m},{p},{v:g},{h}" for m, p, v, h in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def heads_up(pairs: Mapping[tuple[str, str], Sequence[tuple[float, int]]]) -> list[tuple[str, str, float, int]]:
    """Zero-sum heads-up matches: per pair, (first player's chips, hands) per match."""
    rows = []
    for (a, b), matches in pairs.items():
        for i, (chips, hands) in enumerate(matches):
            rows += [(f"{a}-{b}-{i}", a, chips, hands), (f"{a}-{b}-{i}", b, -chips, hands)]
    return rows


# Fixture A: A exploits the chump D and loses a little to B and C; B and C tie.
# Rates (row's chips per hand against the column; hands 100 unless noted):
#            A     B     C     D    total bankroll (mean of the row)
#   A        .    -1    -1   +10    8/3     (A-D: two matches, +1500/100 = 15 and
#   B       +1     .     0    +2    1        +1000/200 = 5: the per-match mean 10,
#   C       +1     0     .    +2    1        not the pooled 2500/300)
#   D      -10    -2    -2     .   -14/3
# bankroll: A, then B = C (by name), D.
# Bankroll run-off: {A,B,C,D}: D lowest (−14/3) out. {A,B,C}: A (−1−1)/2 = −1,
#   B (1+0)/2 = ½, C ½: A out. {B,C}: 0 and 0, tied: out together. Ranking (B C), A, D.
# Series run-off: A loses to B and C, beats D: −1; B beats A and D, ties C: +2; C +2;
#   D −3: out. {A,B,C}: A −2 out; {B,C}: 0, 0: out together. Same groups.
FIXTURE_A_PAIRS: dict[tuple[str, str], list[tuple[float, int]]] = {
    ("A", "B"): [(-100, 100)],
    ("A", "C"): [(-100, 100)],
    ("A", "D"): [(1500, 100), (1000, 200)],
    ("B", "C"): [(0, 100)],
    ("B", "D"): [(200, 100)],
    ("C", "D"): [(200, 100)],
}
FIXTURE_A = heads_up(FIXTURE_A_PAIRS)

# Fixture B: R, P, S play rock-paper-scissors (P beats R by 1, S beats P by 1,
# R beats S by 5); X loses to all (to R by 1, to P and S by 3).
#            R     P     S     X    total
#   R        .    -1    +5    +1    5/3
#   P       +1     .    -1    +3    1
#   S       -5    +1     .    +3   -1/3
#   X       -1    -3    -3     .   -7/3
# bankroll: R, P, S, X.
# Bankroll run-off: X out; {R,P,S}: R (−1+5)/2 = 2, P 0, S −2: S out; {R,P}: R −1,
#   P +1: R out; P alone (ranked by the last round). Ranking P, R, S, X.
# Series run-off: R, P, S each win one and lose one of their cycle and beat X: +1 each;
#   X −3 out. {R,P,S}: 0 each, all tied: out together. Ranking (P R S), X.
FIXTURE_B = heads_up(
    {
        ("R", "P"): [(-100, 100)],
        ("P", "S"): [(-100, 100)],
        ("S", "R"): [(-500, 100)],
        ("X", "R"): [(-100, 100)],
        ("X", "P"): [(-300, 100)],
        ("X", "S"): [(-300, 100)],
    }
)


def test_heads_up_fixture_a_ties(tmp_path: Path) -> None:
    results = read_csv(write(tmp_path, FIXTURE_A))
    cells = cells_of(results)
    ranked = bankroll(cells)
    assert [p for p, _ in ranked] == ["A", "B", "C", "D"]
    assert [v for _, v in ranked] == pytest.approx([8 / 3, 1, 1, -14 / 3])
    runoff = bankroll_runoff(cells)
    assert runoff.groups == (("B", "C"), ("A",), ("D",))
    assert [r.eliminated for r in runoff.rounds] == [("D",), ("A",), ("B", "C")]
    assert dict(runoff.rounds[1].scores) == pytest.approx({"A": -1, "B": 0.5, "C": 0.5})
    series = series_runoff(cells)
    assert series.groups == (("B", "C"), ("A",), ("D",))
    assert [dict(r.scores) for r in series.rounds] == [
        {"A": -1, "B": 2, "C": 2, "D": -3},
        {"A": -2, "B": 1, "C": 1},
        {"B": 0, "C": 0},
    ]
    table = crosstable(results)
    a_d = table.cell("A", ["D"]).estimate
    assert (a_d.mean, a_d.n) == (10, 2)
    assert a_d.half_width == pytest.approx(1.96 * math.sqrt(50) / math.sqrt(2))
    assert math.isnan(table.cell("A", ["B"]).estimate.half_width)  # one match: no interval
    assert table.totals["A"].mean == pytest.approx(8 / 3)
    assert math.isnan(table.totals["A"].half_width)  # a cell without an interval: none for the total


def test_total_interval_combines_cells(tmp_path: Path) -> None:
    # A's cells: against B the rates 1 and 3 (mean 2), against C 0 and 4 (mean 2)
    rows = heads_up({("A", "B"): [(10, 10), (30, 10)], ("A", "C"): [(0, 10), (40, 10)], ("B", "C"): [(0, 10), (0, 10)]})
    table = crosstable(read_csv(write(tmp_path, rows)))
    ab, ac = table.cell("A", ["B"]).estimate, table.cell("A", ["C"]).estimate
    assert ab.half_width == pytest.approx(1.96 * math.sqrt(2) / math.sqrt(2))
    total = table.totals["A"]
    assert (total.mean, total.n) == (2, 4)
    assert total.half_width == pytest.approx(math.sqrt(ab.half_width**2 + ac.half_width**2) / 2)
    assert table.totals["B"].half_width == pytest.approx(ab.half_width / 2)  # B-C: no spread


def test_heads_up_fixture_b_runoffs_differ(tmp_path: Path) -> None:
    cells = cells_of(read_csv(write(tmp_path, FIXTURE_B)))
    assert [p for p, _ in bankroll(cells)] == ["R", "P", "S", "X"]
    runoff = bankroll_runoff(cells)
    assert runoff.groups == (("P",), ("R",), ("S",), ("X",))
    assert runoff.rounds[-1].by_previous and runoff.rounds[-1].remaining == ("P",)
    series = series_runoff(cells)
    assert series.groups == (("P", "R", "S"), ("X",))
    assert [dict(r.scores) for r in series.rounds] == [{"P": 1, "R": 1, "S": 1, "X": -3}, {"P": 0, "R": 0, "S": 0}]


def test_bootstrap_is_seeded_and_complementary(tmp_path: Path) -> None:
    rows = heads_up({**FIXTURE_A_PAIRS, ("B", "C"): [(0, 100), (150, 100), (-250, 100)]})  # B-C: 0, +1.5, −2.5
    results = read_csv(write(tmp_path, rows))
    first, again = bootstrap(results, 200, seed=3), bootstrap(results, 200, seed=3)
    assert first == again
    for a in results.players:
        for b in results.players:
            if a != b:
                assert first.p_beats[a][b] + first.p_beats[b][a] == pytest.approx(1)
    assert first.p_beats["A"]["D"] == 1
    assert 0 < first.p_beats["B"]["C"] < 1  # B and C swap places in some samples
    assert 0 < first.same["bankroll"] < 1
    assert sum(first.first["bankroll"].values()) >= 1
    assert bootstrap(results, 0).same == {"bankroll": 0, "bankroll_runoff": 0, "series_runoff": 0}
    # a tournament stores matches as they finish: the same matches in another order resample alike
    shuffled = Results(tuple(reversed(results.matches)), results.source)
    assert bootstrap(shuffled, 200, seed=3) == first


def test_bootstrap_shares_are_the_resampling_probabilities(tmp_path: Path) -> None:
    # A-B: two matches, A at +2 and -2 a hand; A-C: A +3; B-C: B +1. A's rate
    # against B in a sample is r = +2, 0 or -2 (draws 1/4, 1/2, 1/4); totals
    # A (r + 3)/2, B (1 - r)/2, C -2. Bankroll: A, B, C as observed unless r = -2:
    # same 3/4, first A 3/4, B 1/4. Both run-offs drop C, then A and B meet
    # head to head: tied (as observed) when r = 0: same 1/2, first (ties all
    # count) A 3/4, B 3/4.
    rows = heads_up({("A", "B"): [(200, 100), (-200, 100)], ("A", "C"): [(300, 100)], ("B", "C"): [(100, 100)]})
    drawn = bootstrap(read_csv(write(tmp_path, rows)), 2000, seed=3)
    # Each sample's outcome is decided by r alone, so these hold in every sample
    # (to the rounding of the shares):
    bankroll_first, same = drawn.first["bankroll"], drawn.same
    assert drawn.p_beats["A"]["B"] == bankroll_first["A"] == same["bankroll"]
    assert bankroll_first["B"] == pytest.approx(1 - same["bankroll"], abs=1e-12)
    assert drawn.p_beats["A"]["C"] == drawn.p_beats["B"]["C"] == 1 and bankroll_first["C"] == 0
    for rule in ("bankroll_runoff", "series_runoff"):
        first = drawn.first[rule]
        assert first["A"] == bankroll_first["A"] and first["C"] == 0
        assert first["A"] + first["B"] == pytest.approx(1 + same[rule], abs=1e-12)  # a tied sample counts both first
    # And the shares are the probabilities (seeded, so deterministic; 0.035 is 3.6
    # binomial standard deviations of 2000 samples):
    assert same["bankroll"] == pytest.approx(3 / 4, abs=0.035) and bankroll_first["B"] == pytest.approx(1 / 4, abs=0.035)
    assert same["bankroll_runoff"] == same["series_runoff"] == pytest.approx(1 / 2, abs=0.035)
    assert drawn.first["series_runoff"]["B"] == pytest.approx(3 / 4, abs=0.035)


def test_incomplete_tournament_cannot_run_off(tmp_path: Path) -> None:
    rows = heads_up({("A", "B"): [(100, 100)], ("C", "D"): [(100, 100)]})
    results = read_csv(write(tmp_path, rows))
    assert [p for p, _ in bankroll(cells_of(results))] == ["A", "C", "B", "D"]
    with pytest.raises(ScoringError, match="incomplete"):
        rank(results)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli_rank.main(list(argv))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_table3(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(SEED003 / "table3_results.csv"), "--game", "holdem.limit.3p", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["bankroll"] == ["PR2", "IR16S", "IR16L", "Poki", "AR", "Probe", "AC"]
    assert doc["bankroll_runoff"] == ["IR16L", "IR16S", "PR2", "Poki", "Probe", "AR", "AC"]
    assert doc["series_runoff"] == [["IR16L"], ["IR16S"], ["PR2"], ["Poki"], ["Probe"], ["AR"], ["AC"]]
    table = doc["crosstable"]
    assert table["unit"] == doc["unit"] == "mbb/g"
    cell = next(c for c in table["cells"] if c["player"] == "PR2" and c["opponents"] == ["IR16L", "IR16S"])
    assert cell == {"player": "PR2", "opponents": ["IR16L", "IR16S"], "mean": pytest.approx(-98), "ci95": None, "matches": 1}
    assert table["totals"]["PR2"]["mean"] == pytest.approx(529.8, abs=0.05)
    assert doc["bootstrap"] is None


def test_cli_table_heads_up_raw_chips(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, str(write(tmp_path, FIXTURE_B)), "--bootstrap", "20", "--seed", "1")
    assert code == 0
    assert "unit chips/hand, raw chips per hand (--game GAME for its unit)" in out
    assert "series instant run-off" in out and "1=    P" in out and "4     X" in out
    assert "P(row's total bankroll beats column's)" in out
    code, out, _ = run(capsys, str(write(tmp_path, FIXTURE_B)), "--game", "kuhn", "--format", "json")
    assert json.loads(out)["unit"] == "chips/hand" and json.loads(out)["series_runoff"] == [["P", "R", "S"], ["X"]]
    code, out, _ = run(capsys, str(write(tmp_path, FIXTURE_B)), "--game", "hulhe", "--format", "json")
    doc = json.loads(out)
    assert doc["unit"] == "mbb/g"
    assert doc["crosstable"]["totals"]["R"]["mean"] == pytest.approx(5 / 3 * 1000 / 10)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("match,player,value\nm,a,1\n", "r.csv:1: missing column hands"),
        ("match,player,value,hands\nm,a,1,10\nm,b,x,10\n", "r.csv:3: value 'x' is not a number"),
        ("match,player,value,hands\nm,a,1,10\nm,b,-1,ten\n", "r.csv:3: hands 'ten' is not a number"),
        ("match,player,value,hands\nm,a,1,10\nm,b,-1,10\nn,a,1,10\n", "r.csv:4: match 'n' has 1 player (a match has 2 or 3)"),
        ("match,player,value,hands\nm,a,1,10\nm,a,-1,10\n", "r.csv:3: player 'a' appears twice in match 'm' (line 2)"),
        ("match,player,value,hands\nm,a,1,10\nm,b,-1,20\n", "r.csv:3: match 'm' has 10 hands on line 2, 20 here"),
        ("match,player,value,hands\nm,a,1,0\nm,b,-1,0\n", "r.csv:2: hands '0' is not a positive integer"),
        ("match,player,value,hands\nm,a,1,2.5\nm,b,-1,2.5\n", "r.csv:2: hands '2.5' is not a positive integer"),
        ("match,player,value,hands\nm,a,nan,1\n", "r.csv:2: value 'nan' is not a finite number"),
        ("match,player,value,hands\nm,a,1\n", "r.csv:2: 3 fields, the header has 4"),
        ("", "r.csv:1: empty file"),
        ("match,player,value,hands\n", "r.csv: no matches"),
        (
            "match,player,value,hands\nm,a,1,10\nm,b,-1,10\nn,a,1,10\nn,b,1,10\nn,c,-2,10\n",
            "r.csv:4: match 'n' has 3 players but match 'm' (line 2) has 2",
        ),
    ],
)
def test_csv_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(ResultsError) as error:
        read_csv(path)
    assert str(error.value).startswith(f"{path.parent}/{message}") and "\n" not in str(error.value)
    code, out, err = run(capsys, str(path))
    assert code == 1 and out == ""
    assert err == f"arena rank: error: {error.value}\n"


def test_other_failures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "missing.csv"))  # a missing input is usage: docs/exit-statuses.md
    assert code == 2 and err.startswith("arena rank: error: argument RESULTS: no such file or directory: ")
    database = tmp_path / "t.sqlite"
    sqlite3.connect(database).execute("create table t (x)").connection.commit()
    code, _, err = run(capsys, str(database))
    assert code == 1 and err == f"arena rank: error: {database}: not an arena tournament database (no such table: results)\n"
    code, _, err = run(capsys, str(tmp_path))
    assert code == 1 and err == f"arena rank: error: {tmp_path}: a directory without tournament.db (an arena tournament's output directory)\n"
    incomplete = write(tmp_path, heads_up({("A", "B"): [(1, 10)], ("C", "D"): [(1, 10)]}))
    code, _, err = run(capsys, str(incomplete))
    assert code == 1 and "incomplete" in err and err.count("\n") == 1


@pytest.mark.parametrize("hands", [2.5, 0, "ten"])
def test_a_tournament_database_with_a_bad_hand_count_is_refused(tmp_path: Path, hands: object) -> None:
    # arena tournament writes whole counts; a fraction would have been cut to an int and scored.
    database = tmp_path / "tournament.db"
    connection = sqlite3.connect(database)
    connection.execute("CREATE TABLE tournament (key TEXT PRIMARY KEY, value TEXT)")
    connection.execute("CREATE TABLE results (match TEXT, player TEXT, value REAL, hands INTEGER)")
    connection.executemany("INSERT INTO results VALUES (?, ?, ?, ?)", [("n", "a", 1.0, hands), ("n", "b", -1.0, hands)])
    connection.commit()
    connection.close()
    with pytest.raises(ResultsError) as error:
        load_results(tmp_path)
    assert str(error.value) == f"{database}: match 'n': hands '{hands}' is not a positive integer"


@pytest.mark.parametrize(
    "argv",
    [[], ["r.csv", "--format", "xml"], ["r.csv", "--bootstrap", "-1"], ["r.csv", "--bootstrap", "x"], ["r.csv", "--game", "no-such-game"]],
)
def test_usage_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]) -> None:
    write(tmp_path, FIXTURE_A)
    args = [str(tmp_path / a) if a == "r.csv" else a for a in argv]
    code, out, err = run(capsys, *args)
    assert code == 2 and out == "" and err.startswith("arena rank: error:")


README_CSV = """match,player,value,hands
1,cfr,4500,3000
1,always-call,-4500,3000
2,cfr,3300,3000
2,always-call,-3300,3000
3,cfr,600,3000
3,exploiter,-600,3000
4,cfr,300,3000
4,exploiter,-300,3000
5,exploiter,12000,3000
5,always-call,-12000,3000
6,exploiter,9000,3000
6,always-call,-9000,3000
"""

README_OUTPUT = """results.csv: 6 heads-up matches among 3 players; unit mbb/g (holdem.limit.2p.reverse_blinds)
intervals: 95% normal interval over each pairing's matches (none from one match); totals combine their cells'

total bankroll (mean over opponents of the per-match mean per hand)
rank  player        mbb/g  95% CI
1     exploiter     167.5   ±49.2
2     cfr            72.5   ±20.2
3     always-call  -240.0   ±52.8

bankroll instant run-off (lowest total among the remaining out first; mbb/g)
rank  player       mbb/g when out
1     cfr                    15.0
2     exploiter             -15.0
3     always-call          -240.0

series instant run-off (fewest series won among the remaining out first, ties together)
rank  player       points when out
1     cfr                       +1
2     exploiter                 -1
3     always-call               -2

crosstable (mbb/g, mean ±95% half-width over matches)
row player's result against the column player
                exploiter           cfr  always-call         total
exploiter               -    -15.0 ±9.8  350.0 ±98.0   167.5 ±49.2
cfr             15.0 ±9.8             -  130.0 ±39.2    72.5 ±20.2
always-call  -350.0 ±98.0  -130.0 ±39.2            -  -240.0 ±52.8
"""


def test_readme_example(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example the README's `arena rank` section shows, verbatim."""
    (tmp_path / "results.csv").write_text(README_CSV)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "results.csv", "--game", "hulhe")
    assert code == 0
    assert out == README_OUTPUT
