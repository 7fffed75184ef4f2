"""Tournament scoring (the ACPC's rules, docs/protocol.md, How the ACPC scores a
competition): total bankroll, bankroll and series instant
run-off, crosstables with 95% intervals, and a bootstrap over matches.

Results are matches of 2 or 3 players (:class:`MatchResult`: chips each player
won, and the match's hand count). A source is a CSV with the header
``match,player,value,hands`` (:func:`read_csv`, one row per player per match)
or a tournament database (:class:`TournamentDbSource`, ``arena tournament``'s);
:func:`load_results` picks the reader for a path from :data:`SOURCES`, so
another source plugs in by adding a :class:`ResultSource`.

Normalisation (total bankroll; Abou Risk & Szafron 2010, §4.4). Each match gives each player its
*rate*, chips won per hand (``value / hands``). A *group* is the set of players
of a match (a pair heads-up, a triple 3-player); a *cell* is a player's mean
rate over its group's matches (per-match means averaged over matches, not
pooled over hands). A player's **total bankroll** is the mean of its cells over
all its groups, i.e. its average win rate against each opponent (heads-up) or
each pair of opponents (3-player), so a pairing that played more matches does
not weigh more. Every ranking below is computed from the cells alone.

* **Bankroll**: players by total bankroll, best first.
* **Bankroll instant run-off**: S = all players; compute each player's
  total bankroll using only the groups whose players are all in S (3-player: the
  triples whose three players all remain); the lowest is eliminated (all tied
  lowest together, as in the series variant: the published rule does not say how
  to break a tie for last place) and ranks below everyone still in S;
  repeat. This is the "elimination event" of Abou Risk & Szafron (2010).
* **Series instant run-off**: between two players in S, the series winner
  is the one with the higher mean of its cells over the groups within S that hold
  both (heads-up: their one pairing); +1 to the winner, −1 to the loser, 0 each
  on a tie. All players tied for the fewest points are removed together.
* When the remaining players have no group among themselves (one player left;
  two left in a 3-player event), they are ranked by the scores of the last round
  that had data — Abou Risk & Szafron: "when three agents remain … they are ranked by win
  rate in that last matchup". Scores within ``1e-9`` (relative) are ties.

Intervals: a crosstable cell is the mean of its per-match rates with the 95%
normal interval over those matches (:func:`poker.stats.mean_ci`; none from a
single match). A total's interval combines its cells' as independent means
(``sqrt(Σ hᵢ²) / k`` over k cells). The bootstrap resamples each group's matches
with replacement (so every pairing keeps its match count), recomputes the
cells and every ranking, and reports P(row's total bankroll > column's), ties
counting one half, and how often each ranking comes out as observed.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from poker.excerpt import quote
from poker.stats import Estimate, mean_ci

__all__ = [
    "COLUMNS",
    "MatchResult",
    "Results",
    "ResultsError",
    "ScoringError",
    "ResultSource",
    "CsvSource",
    "TOURNAMENT_DB",
    "TournamentDbSource",
    "SOURCES",
    "read_csv",
    "load_results",
    "Group",
    "Cells",
    "cells_of",
    "bankroll_totals",
    "bankroll",
    "RunoffRound",
    "Runoff",
    "bankroll_runoff",
    "series_runoff",
    "CrossCell",
    "Crosstable",
    "crosstable",
    "Bootstrap",
    "bootstrap",
    "Ranking",
    "rank",
]

#: The CSV header (any column order; extra columns are ignored).
COLUMNS = ("match", "player", "value", "hands")

Group = frozenset[str]
#: Each group's cells: group → player → mean chips per hand over the group's matches.
Cells = Mapping[Group, Mapping[str, float]]

_REL_TOL = 1e-9
_ABS_TOL = 1e-12


class ResultsError(ValueError):
    """Results that cannot be read; the message is one line naming file and line."""


class ScoringError(ValueError):
    """Results that a ranking rule cannot score (an incomplete tournament)."""


@dataclass(frozen=True)
class MatchResult:
    """One match: chips each player won, over ``hands`` hands."""

    match: str
    values: Mapping[str, float]
    hands: int
    line: int = 0

    @property
    def group(self) -> Group:
        return frozenset(self.values)

    def rate(self, player: str) -> float:
        """``player``'s chips per hand in this match."""
        return self.values[player] / self.hands


@dataclass(frozen=True)
class Results:
    """The matches of one source, all with the same number of players."""

    matches: tuple[MatchResult, ...]
    source: str
    #: The game's definition text when the source records it (a tournament database).
    game: str | None = None

    @property
    def players(self) -> list[str]:
        return sorted({p for m in self.matches for p in m.values})

    @property
    def seats(self) -> int:
        return len(self.matches[0].values) if self.matches else 0


class ResultSource(Protocol):
    """A kind of results file: ``accepts`` looks at the path, ``load`` reads it."""

    def accepts(self, path: Path) -> bool: ...

    def load(self, path: Path) -> Results: ...


def _number(text: str, column: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ResultsError(f"{where}: {column} {quote(text)} is not a number") from None
    if not math.isfinite(value):
        raise ResultsError(f"{where}: {column} {quote(text)} is not a finite number")
    return value


def _hands(value: object, text: str, where: str) -> int:
    """A match's hand count: a whole number of at least 1 (rates divide by it;
    a fraction of a hand is a damaged file, not a count to round)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value == int(value) >= 1:
        return int(value)
    raise ResultsError(f"{where}: hands {quote(text)} is not a positive integer")


def _check(matches: Sequence[MatchResult], source: str) -> None:
    if not matches:
        raise ResultsError(f"{source}: no matches")
    seats = len(matches[0].values)
    for m in matches:
        if len(m.values) not in (2, 3):
            count = len(m.values)
            raise ResultsError(
                f"{source}:{m.line}: match {quote(m.match)} has {count} player{'s' * (count != 1)} (a match has 2 or 3)"
            )
        if len(m.values) != seats:
            raise ResultsError(
                f"{source}:{m.line}: match {quote(m.match)} has {len(m.values)} players but match "
                f"{quote(matches[0].match)} (line {matches[0].line}) has {seats}; one tournament has one size"
            )


def read_csv(path: Path | str) -> Results:
    """Matches from a CSV with the header ``match,player,value,hands``.

    Raises:
        ResultsError: a missing column, a bad number, a player twice in a match,
            rows of a match with different hand counts, a match with other than
            2 or 3 players, or matches of different sizes (one line, with the
            file and line number).
    """
    source = str(path)
    try:
        handle = open(path, newline="", encoding="utf-8")
    except OSError as error:
        raise ResultsError(f"{source}: {error.strerror or error}") from None
    matches: dict[str, tuple[int, dict[str, float], int, dict[str, int]]] = {}
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if header is None:
                raise ResultsError(f"{source}:1: empty file (expected the header {','.join(COLUMNS)})")
            names = [name.strip() for name in header]
            missing = [c for c in COLUMNS if c not in names]
            if missing:
                raise ResultsError(
                    f"{source}:1: missing column{'s' * (len(missing) > 1)} {', '.join(missing)} "
                    f"(expected the header {','.join(COLUMNS)})"
                )
            index = {c: names.index(c) for c in COLUMNS}
            for row in reader:
                where = f"{source}:{reader.line_num}"
                if not row or all(not cell.strip() for cell in row):
                    continue
                if len(row) < len(names):
                    raise ResultsError(f"{where}: {len(row)} fields, the header has {len(names)}")
                match, player = row[index["match"]].strip(), row[index["player"]].strip()
                if not match or not player:
                    raise ResultsError(f"{where}: empty {'match' if not match else 'player'}")
                value = _number(row[index["value"]].strip(), "value", where)
                hands_text = row[index["hands"]].strip()
                hands = _hands(_number(hands_text, "hands", where), hands_text, where)
                first, values, match_hands, lines = matches.setdefault(match, (reader.line_num, {}, hands, {}))
                if player in values:
                    raise ResultsError(f"{where}: player {quote(player)} appears twice in match {quote(match)} (line {lines[player]})")
                if hands != match_hands:
                    raise ResultsError(f"{where}: match {quote(match)} has {match_hands} hands on line {first}, {hands} here")
                values[player] = value
                lines[player] = reader.line_num
        except csv.Error as error:
            raise ResultsError(f"{source}:{reader.line_num}: {error}") from None
        except UnicodeDecodeError as error:
            raise ResultsError(f"{source}: not UTF-8 text ({error.reason})") from None
    results = tuple(MatchResult(name, values, hands, first) for name, (first, values, hands, _) in matches.items())
    _check(results, source)
    return Results(results, source)


class CsvSource:
    """The CSV source: any file that is not recognised by another source."""

    def accepts(self, path: Path) -> bool:
        return True

    def load(self, path: Path) -> Results:
        return read_csv(path)


#: The database ``arena tournament`` writes in its output directory.
TOURNAMENT_DB = "tournament.db"


class TournamentDbSource:
    """A tournament database (``arena tournament``'s ``OUTPUT/tournament.db``),
    or the output directory that holds one.

    Its ``results`` table has the CSV's four columns, one row per player per
    finished match, inserted with the match in one transaction, so the
    database and ``results.csv`` rank alike. The ``tournament`` table's config
    names the game, so the unit comes with the results. Opened read-only: a
    running tournament can be ranked as it goes (SQLite's WAL lets a reader in).
    """

    def accepts(self, path: Path) -> bool:
        if path.is_dir():
            return True
        try:
            with open(path, "rb") as handle:
                return handle.read(16) == b"SQLite format 3\x00"
        except OSError:
            return False

    def load(self, path: Path) -> Results:
        database = path / TOURNAMENT_DB if path.is_dir() else path
        if not database.is_file():
            raise ResultsError(f"{path}: a directory without {TOURNAMENT_DB} (an arena tournament's output directory)")
        source = str(database)
        matches: dict[str, dict[str, float]] = {}
        hands_of: dict[str, int] = {}
        try:
            connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
            try:
                rows = connection.execute("SELECT match, player, value, hands FROM results ORDER BY rowid").fetchall()
                config = connection.execute("SELECT value FROM tournament WHERE key = 'config'").fetchone()
            finally:
                connection.close()
        except sqlite3.Error as error:
            raise ResultsError(f"{source}: not an arena tournament database ({error})") from None
        for match, player, value, hands in rows:
            matches.setdefault(str(match), {})[str(player)] = float(value)
            hands_of[str(match)] = _hands(hands, str(hands), f"{source}: match {quote(str(match))}")
        game = None
        if config is not None:
            try:
                game = json.loads(config[0]).get("game")
            except (ValueError, AttributeError):
                game = None
        results = tuple(MatchResult(m, values, hands_of[m]) for m, values in matches.items())
        _check(results, source)
        return Results(results, source, game if isinstance(game, str) else None)


#: Readers tried in order; the first that accepts a path loads it.
SOURCES: list[ResultSource] = [TournamentDbSource(), CsvSource()]


def load_results(path: Path | str) -> Results:
    """The results in ``path``, read by the first of :data:`SOURCES` that accepts it."""
    where = Path(path)
    if not where.exists():
        raise ResultsError(f"{where}: no such file or directory")
    for reader in SOURCES:
        if reader.accepts(where):
            return reader.load(where)
    raise ResultsError(f"{where}: no reader for this file")  # pragma: no cover - CsvSource accepts all


def _rates(results: Results) -> dict[Group, tuple[list[str], npt.NDArray[np.float64]]]:
    """Per group: its players (sorted) and the per-match rates, one row per match.
    Groups and their matches come in a fixed order (by players, then match
    name), not the source's: a tournament stores matches as they finish, so the
    seeded bootstrap must not see that order."""
    rows: dict[Group, list[list[float]]] = {}
    for m in sorted(results.matches, key=lambda m: (sorted(m.group), m.match)):
        order = sorted(m.group)
        rows.setdefault(m.group, []).append([m.rate(p) for p in order])
    return {g: (sorted(g), np.asarray(r, dtype=np.float64)) for g, r in rows.items()}


def _cells_from(rates: Mapping[Group, tuple[list[str], npt.NDArray[np.float64]]]) -> dict[Group, dict[str, float]]:
    cells: dict[Group, dict[str, float]] = {}
    for group, (players, table) in rates.items():
        means = table.mean(axis=0)
        cells[group] = {p: float(v) for p, v in zip(players, means)}
    return cells


def cells_of(results: Results) -> dict[Group, dict[str, float]]:
    """Each group's cells: per player, the mean of its per-match chips per hand."""
    return _cells_from(_rates(results))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)


def bankroll_totals(cells: Cells, among: Collection[str] | None = None) -> dict[str, float] | None:
    """Each player's total bankroll (mean of its cells) over the groups whose
    players are all in ``among`` (default: every group); ``None`` when no group is.

    Raises:
        ScoringError: a player of ``among`` is in none of those groups while others are.
    """
    groups = [g for g in cells if among is None or g <= set(among)]
    if not groups:
        return None
    players = sorted(among) if among is not None else sorted({p for g in groups for p in g})
    totals: dict[str, float] = {}
    for player in players:
        own = [cells[g][player] for g in groups if player in g]
        if not own:
            raise ScoringError(f"{player} has no match with the other remaining players: the tournament is incomplete")
        totals[player] = math.fsum(own) / len(own)
    return totals


def bankroll(cells: Cells) -> list[tuple[str, float]]:
    """Players by total bankroll, best first (equal totals by name)."""
    totals = bankroll_totals(cells)
    if totals is None:
        return []
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


def _series_points(cells: Cells, among: Collection[str]) -> dict[str, float] | None:
    remaining = set(among)
    groups = [g for g in cells if g <= remaining]
    if not groups:
        return None
    points = dict.fromkeys(sorted(remaining), 0.0)
    for a, b in itertools.combinations(sorted(remaining), 2):
        shared = [g for g in groups if a in g and b in g]
        if not shared:
            raise ScoringError(f"{a} and {b} have no match among the remaining players: the tournament is incomplete")
        mean_a = math.fsum(cells[g][a] for g in shared) / len(shared)
        mean_b = math.fsum(cells[g][b] for g in shared) / len(shared)
        if _close(mean_a, mean_b):
            continue
        winner, loser = (a, b) if mean_a > mean_b else (b, a)
        points[winner] += 1
        points[loser] -= 1
    return points


@dataclass(frozen=True)
class RunoffRound:
    """One round: who remained, their scores, who was eliminated (tied lowest)."""

    remaining: tuple[str, ...]
    scores: Mapping[str, float]
    eliminated: tuple[str, ...]
    #: The remaining players had no match among themselves: they were ranked
    #: (all at once) by the previous round's ``scores``, repeated here.
    by_previous: bool = False


@dataclass(frozen=True)
class Runoff:
    """A run-off's ranking as groups of tied players, best first, and its rounds.

    A last round with ``by_previous`` ranked the players left when they had no
    match among themselves, by the previous round's scores.
    """

    groups: tuple[tuple[str, ...], ...]
    rounds: tuple[RunoffRound, ...] = field(default=())

    @property
    def order(self) -> list[str]:
        """The ranking, best first (tied players by name)."""
        return [p for g in self.groups for p in g]


def _by_score(players: Iterable[str], scores: Mapping[str, float]) -> list[tuple[str, ...]]:
    """Groups of equal score, lowest first."""
    ordered = sorted(players, key=lambda p: (scores[p], p))
    groups: list[list[str]] = []
    for p in ordered:
        if groups and _close(scores[groups[-1][0]], scores[p]):
            groups[-1].append(p)
        else:
            groups.append([p])
    return [tuple(sorted(g)) for g in groups]


def _runoff(players: Iterable[str], score: Callable[[Collection[str]], dict[str, float] | None]) -> Runoff:
    remaining = set(players)
    eliminated: list[tuple[str, ...]] = []
    rounds: list[RunoffRound] = []
    previous: dict[str, float] | None = None
    while remaining:
        scores = score(remaining)
        if scores is None:
            left = tuple(sorted(remaining))
            if previous is None:
                eliminated.append(left)
                rounds.append(RunoffRound(left, {}, left, by_previous=True))
            else:
                eliminated += _by_score(remaining, previous)
                rounds.append(RunoffRound(left, {p: previous[p] for p in left}, left, by_previous=True))
            break
        lowest = _by_score(remaining, scores)[0]
        rounds.append(RunoffRound(tuple(sorted(remaining)), scores, lowest))
        eliminated.append(lowest)
        remaining -= set(lowest)
        previous = scores
    return Runoff(tuple(reversed(eliminated)), tuple(rounds))


def _players(cells: Cells) -> list[str]:
    return sorted({p for g in cells for p in g})


def bankroll_runoff(cells: Cells) -> Runoff:
    """Bankroll instant run-off (the ACPC's; Abou Risk & Szafron's elimination event)."""
    return _runoff(_players(cells), lambda among: bankroll_totals(cells, among))


def series_runoff(cells: Cells) -> Runoff:
    """Series instant run-off (the ACPC's): fewest series points out, ties together."""
    return _runoff(_players(cells), lambda among: _series_points(cells, among))


@dataclass(frozen=True)
class CrossCell:
    """A player's results against one opponent (pair): mean chips per hand over
    the matches, the 95% half-width (NaN from one match), the match count."""

    player: str
    opponents: tuple[str, ...]
    estimate: Estimate


@dataclass(frozen=True)
class Crosstable:
    """Every cell, and each player's total bankroll with its combined interval."""

    cells: tuple[CrossCell, ...]
    totals: Mapping[str, Estimate]

    def cell(self, player: str, opponents: Iterable[str]) -> CrossCell:
        wanted = tuple(sorted(opponents))
        for c in self.cells:
            if c.player == player and c.opponents == wanted:
                return c
        raise KeyError((player, wanted))


def crosstable(results: Results) -> Crosstable:
    """Cells in chips per hand with 95% intervals over matches, and totals."""
    cells: list[CrossCell] = []
    for group, (players, table) in sorted(_rates(results).items(), key=lambda item: sorted(item[0])):
        for column, player in enumerate(players):
            values = table[:, column]
            if values.size >= 2:
                estimate = mean_ci(values)
            else:
                estimate = Estimate(float(values.mean()), math.nan, int(values.size))
            cells.append(CrossCell(player, tuple(p for p in players if p != player), estimate))
    totals: dict[str, Estimate] = {}
    for player in results.players:
        own = [c.estimate for c in cells if c.player == player]
        mean = math.fsum(e.mean for e in own) / len(own)
        half = math.sqrt(math.fsum(e.half_width**2 for e in own)) / len(own)
        totals[player] = Estimate(mean, half, sum(e.n for e in own))
    return Crosstable(tuple(cells), totals)


@dataclass(frozen=True)
class Bootstrap:
    """``p_beats[a][b]``: share of samples where a's total bankroll beats b's (ties ½);
    ``same``: per rule, the share of samples that reproduce the observed ranking;
    ``first``: per rule, each player's share of samples ranked (or tied) first."""

    samples: int
    seed: int
    p_beats: Mapping[str, Mapping[str, float]]
    same: Mapping[str, float]
    first: Mapping[str, Mapping[str, float]]


def _groups_of(ranking: list[tuple[str, float]]) -> tuple[tuple[str, ...], ...]:
    scores = dict(ranking)
    return tuple(reversed(_by_score(scores, scores)))


def bootstrap(results: Results, samples: int, seed: int = 0) -> Bootstrap:
    """Resample each group's matches with replacement ``samples`` times (numpy
    ``default_rng(seed)``) and recompute the total bankroll and both run-offs."""
    rates = _rates(results)
    cells = _cells_from(rates)
    observed = {
        "bankroll": _groups_of(bankroll(cells)),
        "bankroll_runoff": bankroll_runoff(cells).groups,
        "series_runoff": series_runoff(cells).groups,
    }
    players = results.players
    beats = {a: dict.fromkeys((b for b in players if b != a), 0.0) for a in players}
    same = dict.fromkeys(observed, 0.0)
    first = {rule: dict.fromkeys(players, 0.0) for rule in observed}
    rng = np.random.default_rng(seed)
    for _ in range(samples):
        drawn = {g: (order, table[rng.integers(0, len(table), len(table))]) for g, (order, table) in rates.items()}
        sample = _cells_from(drawn)
        ranked = bankroll(sample)
        totals = dict(ranked)
        for a, b in itertools.permutations(players, 2):
            if _close(totals[a], totals[b]):
                beats[a][b] += 0.5
            elif totals[a] > totals[b]:
                beats[a][b] += 1.0
        got = {
            "bankroll": _groups_of(ranked),
            "bankroll_runoff": bankroll_runoff(sample).groups,
            "series_runoff": series_runoff(sample).groups,
        }
        for rule, groups in got.items():
            same[rule] += groups == observed[rule]
            for p in groups[0]:
                first[rule][p] += 1
    scale = 1 / samples if samples else 0.0
    return Bootstrap(
        samples,
        seed,
        {a: {b: v * scale for b, v in row.items()} for a, row in beats.items()},
        {rule: v * scale for rule, v in same.items()},
        {rule: {p: v * scale for p, v in row.items()} for rule, row in first.items()},
    )


@dataclass(frozen=True)
class Ranking:
    """Everything ``arena rank`` reports (values in chips per hand)."""

    results: Results
    bankroll: list[tuple[str, float]]
    bankroll_runoff: Runoff
    series_runoff: Runoff
    crosstable: Crosstable
    bootstrap: Bootstrap | None


def rank(results: Results, *, samples: int = 0, seed: int = 0) -> Ranking:
    """Both rankings, both run-offs, the crosstable and (``samples`` > 0) the bootstrap.

    Raises:
        ScoringError: a run-off meets players with no match among them while others have.
    """
    cells = cells_of(results)
    return Ranking(
        results,
        bankroll(cells),
        bankroll_runoff(cells),
        series_runoff(cells),
        crosstable(results),
        bootstrap(results, samples, seed) if samples > 0 else None,
    )
