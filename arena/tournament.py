"""``arena tournament CONFIG.toml [--workers K] [--dask ADDRESS] [--resume]``: every pairing, in duplicate.

A tournament (issue 12; SPEC.md §4) plays every heads-up pair of the configured
bots (every triple three-handed) for ``series`` duplicate series. A *match* is
one pairing in one series: the same cards played in every seating (both
heads-up, all six three-handed), each seating with fresh agents, through our
dealer on loopback: :func:`play_match` builds an :class:`arena.match.MatchPlan`
and runs :func:`arena.match.run_plan`. Series *k* deals with seed ``seed + k``
for every pairing (common seeds across pairings, §4.1).

Matches run on a local process pool (``--workers``, default the config's
``workers``) or, with ``--dask tcp://HOST:8786``, on a Dask distributed cluster
(the same :func:`play_match` submitted to a ``dask.distributed.Client``).

Results go to ``tournament.db`` (SQLite) in the output directory: one row per
match, with its players, per-player values (chips over all its seatings), hand
count, per-seating seat values and log paths, written in one transaction once
its logs are complete. Each attempt at a match claims a directory of its own
(``matches/<match>``, then ``<match>.2``, …), so an agent left running by a
killed runner never writes into the attempt that counts. ``--resume`` plays the
matches the database lacks: killing the runner at any moment (SIGKILL included)
loses no finished match and reruns none, and the rerun matches deal the same
cards to agents with the same seeds, so the results equal an uninterrupted run.

At the end it writes ``results.csv`` (``match,player,value,hands``: one row per
player per match, for ``arena rank``) and prints each bot's total bankroll:
its mean result per hand in the game's unit with a 95% interval over its
matches.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import itertools
import json
import multiprocessing
import os
import re
import sqlite3
import sys
import threading
import time
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn

import trio
from tqdm import tqdm

from analysis.clitools import UsageParser, table_lines
from analysis.stats import Estimate, format_chips, mean_ci, unit_of
from arena.match import (
    DEFAULT_T_HAND_MS,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    DEFAULT_T_PER_HAND_MS,
    DEFAULT_T_RESPONSE_MS,
    NO_START_TIMEOUT,
    Bot,
    MatchError,
    MatchPlan,
    agent_seed,
    run_plan,
    summarize,
)
from dealer.lock import MatchInUseError, MatchLock
from poker.gamedef import Game, GameDefError, format_game, load_game, parse_game
from strategies.base import StrategyError, make_strategy

__all__ = [
    "ConfigError",
    "Config",
    "MatchJob",
    "MatchRecord",
    "BotTotal",
    "load_config",
    "parse_config",
    "schedule",
    "play_match",
    "run_tournament",
    "bankroll",
    "format_bankroll",
    "main",
]

DATABASE: Final = "tournament.db"
RESULTS_CSV: Final = "results.csv"
_LOCK: Final = "tournament.lock"
_WATCH_S: Final = 0.5
_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
_TOP_KEYS: Final = ("game", "hands", "series", "seed", "bots", "limits", "workers", "agents", "output")
_LIMIT_KEYS: Final = {
    "t_response_ms": DEFAULT_T_RESPONSE_MS,
    "t_hand_ms": DEFAULT_T_HAND_MS,
    "t_per_hand_ms": DEFAULT_T_PER_HAND_MS,
    "start_timeout_ms": NO_START_TIMEOUT,
}


class ConfigError(ValueError):
    """A bad configuration file; the one-line message names the key."""


class UsageError(Exception):
    """Bad options, or an output directory that does not fit them."""


@dataclass(frozen=True)
class Config:
    """A checked tournament configuration. ``bots`` maps name -> strategy spec."""

    game: Game
    game_arg: str
    game_file: str | None
    bots: tuple[tuple[str, str], ...]
    hands: int
    series: int
    seed: int
    limits: tuple[int, int, int, int]  # t_response, t_hand, t_per_hand, start_timeout (ms)
    workers: int
    in_process: bool
    output: Path

    def identity(self) -> dict[str, Any]:
        """What fixes the results (not where or how fast they are played): a
        resumed tournament must agree on all of it."""
        return {
            "game": format_game(self.game),
            "bots": [list(bot) for bot in self.bots],
            "hands": self.hands,
            "series": self.series,
            "seed": self.seed,
            "limits": dict(zip(_LIMIT_KEYS, self.limits)),
        }


def _fail(key: str, message: str) -> NoReturn:
    raise ConfigError(f"{key}: {message}")


def _int(
    document: dict[str, Any], key: str, default: int | None, low: int, high: int | None = None, prefix: str = ""
) -> int:
    value = document.get(key, default)
    key = prefix + key
    if value is None:
        _fail(key, "missing (a whole number)")
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(key, f"must be a whole number, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"in {low}..{high}" if high is not None else f"at least {low}"
        _fail(key, f"must be {bound}, got {value}")
    return value


def parse_config(document: dict[str, Any], base: Path, source: str = "config") -> Config:
    """Check a parsed TOML document; relative paths (game file, output) are
    taken from ``base``, the config file's directory.

    Raises:
        ConfigError: the first problem, naming its key.
    """
    unknown = sorted(set(document) - set(_TOP_KEYS))
    if unknown:
        _fail(unknown[0], f"unknown key (known: {', '.join(_TOP_KEYS)})")
    game_arg = document.get("game")
    if not isinstance(game_arg, str) or not game_arg:
        _fail("game", "missing or not a string (a short game name such as \"leduc\", or a .game file)")
    game_path = base / game_arg
    game_file = str(game_path.resolve()) if game_path.is_file() else None
    try:
        game = load_game(game_file or game_arg)
    except GameDefError as error:
        _fail("game", str(error).splitlines()[0])
    if game.num_players not in (2, 3):
        _fail("game", f"{game_arg} is a {game.num_players}-player game; tournaments are heads-up or 3-player")
    hands = _int(document, "hands", None, 2, 2**32 - 1)
    series = _int(document, "series", 1, 1)
    seed = _int(document, "seed", None, 0, 2**32 - 1)
    if seed + series - 1 >= 2**32:
        _fail("seed", f"seed + series - 1 must stay below 4294967296 (series k deals with seed + k), got {seed + series - 1}")
    bots = document.get("bots")
    if not isinstance(bots, dict) or not bots:
        _fail("bots", "missing: a table of name = \"strategy spec\" (e.g. cfr = \"leduc-cfr\")")
    checked: list[tuple[str, str]] = []
    for name, spec in bots.items():
        key = f"bots.{name}"
        if not _NAME.fullmatch(name):
            _fail(key, "a bot name is 1-64 letters, digits or _ . + -")
        if isinstance(spec, dict):
            if "command" in spec:
                _fail(key, "external commands (command = ...) are not supported yet; give a strategy spec")
            _fail(key, "must be a strategy spec string such as \"tilt:preset=orange\"")
        if not isinstance(spec, str) or not spec:
            _fail(key, f"must be a strategy spec string, got {spec!r}")
        try:
            make_strategy(spec, game, seed=0)  # fails now, not in a seat (and builds tilts once)
        except (StrategyError, GameDefError, OSError) as error:
            _fail(key, str(error).splitlines()[0] if str(error) else type(error).__name__)
        checked.append((name, spec))
    if len(checked) < game.num_players:
        _fail("bots", f"{game_arg} is a {game.num_players}-player game: at least {game.num_players} bots are needed")
    limits_doc = document.get("limits", {})
    if not isinstance(limits_doc, dict):
        _fail("limits", "must be a table")
    unknown = sorted(set(limits_doc) - set(_LIMIT_KEYS))
    if unknown:
        _fail(f"limits.{unknown[0]}", f"unknown key (known: {', '.join(_LIMIT_KEYS)})")
    limits = []
    for key, default in _LIMIT_KEYS.items():
        value = _int(limits_doc, key, default, -1 if key == "start_timeout_ms" else 1, prefix="limits.")
        if value == 0 or (value < 0 and value != NO_START_TIMEOUT):
            _fail(f"limits.{key}", f"must be a positive number of milliseconds or -1, got {value}")
        limits.append(value)
    workers = _int(document, "workers", os.cpu_count() or 1, 1)
    agents = document.get("agents", "in-process")
    if agents not in ("in-process", "process"):
        _fail("agents", f"must be \"in-process\" or \"process\", got {agents!r}")
    output = document.get("output", Path(source).stem)
    if not isinstance(output, str) or not output:
        _fail("output", "must be a directory path")
    return Config(
        game=game,
        game_arg=game_arg,
        game_file=game_file,
        bots=tuple(checked),
        hands=hands,
        series=series,
        seed=seed,
        limits=(limits[0], limits[1], limits[2], limits[3]),
        workers=workers,
        in_process=agents == "in-process",
        output=base / output,
    )


def load_config(path: Path) -> Config:
    """Read and check a TOML configuration file.

    Raises:
        ConfigError: unreadable, not TOML, or a bad key (the message names it).
    """
    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not TOML: {error}") from None
    try:
        return parse_config(document, path.resolve().parent, str(path))
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


# -- the schedule -------------------------------------------------------------------


@dataclass(frozen=True)
class MatchJob:
    """One match: a pairing (or triple) in one series, in every seating. Plain
    data, so that it pickles to a pool or a Dask worker."""

    key: str  # "s<series>:<name>:<name>[:<name>]"
    series: int
    game_text: str
    game_arg: str
    game_file: str | None
    players: tuple[str, ...]
    specs: tuple[str, ...]
    seed: int
    hands: int
    limits: tuple[int, int, int, int]
    in_process: bool
    matches_dir: str  # absolute: the attempt directories go under it


@dataclass(frozen=True)
class MatchRecord:
    """A finished match. ``values[i]``: ``players[i]``'s chips over all
    seatings; ``hands``: hands each player played (hands x seatings);
    ``seat_values[s]``: seating s's totals in seat order (its players in
    ``seatings[s]``, indices into ``players``)."""

    key: str
    players: tuple[str, ...]
    values: tuple[float, ...]
    hands: int
    seatings: tuple[tuple[int, ...], ...]
    seat_values: tuple[tuple[float, ...], ...]
    logs: tuple[str, ...]
    warnings: int


def schedule(config: Config) -> list[MatchJob]:
    """Every pairing (triple) in every series, series first: series k deals with ``seed + k``."""
    groups = list(itertools.combinations(range(len(config.bots)), config.game.num_players))
    game_text = format_game(config.game)
    matches_dir = str((config.output / "matches").resolve())
    jobs = []
    for series in range(config.series):
        for group in groups:
            players = tuple(config.bots[i][0] for i in group)
            jobs.append(
                MatchJob(
                    key=f"s{series}:{':'.join(players)}",
                    series=series,
                    game_text=game_text,
                    game_arg=config.game_arg,
                    game_file=config.game_file,
                    players=players,
                    specs=tuple(config.bots[i][1] for i in group),
                    seed=config.seed + series,
                    hands=config.hands,
                    limits=config.limits,
                    in_process=config.in_process,
                    matches_dir=matches_dir,
                )
            )
    return jobs


def _claim_dir(matches_dir: Path, key: str) -> Path:
    """A directory no other attempt at this match uses (``mkdir`` is atomic)."""
    stem = key.replace(":", "_")
    matches_dir.mkdir(parents=True, exist_ok=True)
    for attempt in itertools.count(1):
        path = matches_dir / (stem if attempt == 1 else f"{stem}.{attempt}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise AssertionError("unreachable")  # pragma: no cover


def play_match(job: MatchJob) -> MatchRecord:
    """Play one match in a directory of its own with fresh agents; runs
    anywhere (a pool process, a Dask worker thread).

    Raises:
        MatchError: the dealer aborted or an agent failed.
    """
    game = parse_game(job.game_text, source=job.game_arg)
    bots = tuple(Bot(spec, name, agent_seed(job.seed, i)) for i, (spec, name) in enumerate(zip(job.specs, job.players)))
    plan = MatchPlan(
        game=game,
        game_arg=job.game_arg,
        hands=job.hands,
        seed=job.seed,
        bots=bots,
        seatings=tuple(itertools.permutations(range(len(bots)))),
        run_dir=_claim_dir(Path(job.matches_dir), job.key),
        in_process=job.in_process,
        t_response_ms=job.limits[0],
        t_hand_ms=job.limits[1],
        t_per_hand_ms=job.limits[2],
        start_timeout_ms=job.limits[3],
        game_file=job.game_file,
    )
    outcome = trio.run(run_plan, plan)
    results = outcome.results
    if outcome.interrupted or not all(r.complete for r in results):
        raise MatchError(f"{job.key}: interrupted (see {plan.run_dir})")
    rows = summarize(plan, results)
    return MatchRecord(
        key=job.key,
        players=job.players,
        values=tuple(row.total_chips for row in rows),
        hands=job.hands * len(plan.seatings),
        seatings=tuple(r.seating for r in results),
        seat_values=tuple(tuple(r.totals) for r in results),
        logs=tuple(str(plan.run_dir / f"{r.match_name}.log") for r in results),
        warnings=sum(r.warnings for r in results),
    )


# -- the database -------------------------------------------------------------------

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS tournament (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match TEXT PRIMARY KEY,
    series INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    players TEXT NOT NULL,      -- JSON list of names
    "values" TEXT NOT NULL,     -- JSON list: each player's chips over all seatings
    hands INTEGER NOT NULL,     -- hands each player played (hands x seatings)
    seatings TEXT NOT NULL,     -- JSON: per seating, the player index in each seat
    seat_values TEXT NOT NULL,  -- JSON: per seating, the totals in seat order
    logs TEXT NOT NULL,         -- JSON list of the seatings' .log paths
    warnings INTEGER NOT NULL,
    finished TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS results (
    match TEXT NOT NULL REFERENCES matches(match),
    player TEXT NOT NULL,
    value REAL NOT NULL,
    hands INTEGER NOT NULL,
    PRIMARY KEY (match, player)
);
"""


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)  # transactions by hand
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.executescript(_SCHEMA)
    return connection


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _store(connection: sqlite3.Connection, job: MatchJob, record: MatchRecord) -> None:
    with _transaction(connection):
        connection.execute(
            'INSERT INTO matches (match, series, seed, players, "values", hands, seatings, seat_values, logs, warnings)'
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.key,
                job.series,
                job.seed,
                json.dumps(list(record.players)),
                json.dumps(list(record.values)),
                record.hands,
                json.dumps([list(s) for s in record.seatings]),
                json.dumps([list(v) for v in record.seat_values]),
                json.dumps(list(record.logs)),
                record.warnings,
            ),
        )
        connection.executemany(
            "INSERT INTO results (match, player, value, hands) VALUES (?, ?, ?, ?)",
            [(record.key, player, value, record.hands) for player, value in zip(record.players, record.values)],
        )


def _stored(connection: sqlite3.Connection) -> dict[str, list[tuple[str, float, int]]]:
    """match -> [(player, value, hands)], in the order the matches finished."""
    rows: dict[str, list[tuple[str, float, int]]] = {}
    query = "SELECT r.match, r.player, r.value, r.hands FROM results r JOIN matches m USING (match) ORDER BY m.rowid, r.rowid"
    for match, player, value, hands in connection.execute(query):
        rows.setdefault(match, []).append((player, float(value), int(hands)))
    return rows


def _write_csv(path: Path, stored: dict[str, list[tuple[str, float, int]]]) -> None:
    scratch = path.with_name(f".{path.name}.tmp")
    with open(scratch, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(["match", "player", "value", "hands"])
        for match, rows in stored.items():
            for player, value, hands in rows:
                writer.writerow([match, player, format_chips(value), hands])
    scratch.replace(path)


# -- the bankroll table --------------------------------------------------------------


@dataclass(frozen=True)
class BotTotal:
    """A bot's total bankroll: chips over all its matches, and the mean per hand
    (chips) with its 95% interval over its matches (NaN width with one match)."""

    name: str
    spec: str
    matches: int
    chips: float
    estimate: Estimate


def bankroll(bots: Sequence[tuple[str, str]], stored: dict[str, list[tuple[str, float, int]]]) -> list[BotTotal]:
    """Each bot's total bankroll, best first."""
    per_match: dict[str, list[float]] = {name: [] for name, _ in bots}
    chips: dict[str, float] = {name: 0.0 for name, _ in bots}
    for rows in stored.values():
        for player, value, hands in rows:
            if player in per_match:
                per_match[player].append(value / hands)
                chips[player] += value
    totals = []
    for name, spec in bots:
        means = per_match[name]
        if len(means) >= 2:
            estimate = mean_ci(means)
        else:
            estimate = Estimate(means[0] if means else float("nan"), float("nan"), len(means))
        totals.append(BotTotal(name, spec, len(means), chips[name], estimate))
    return sorted(totals, key=lambda t: (-t.estimate.mean if t.matches else float("inf"), t.name))


def format_bankroll(config: Config, totals: Sequence[BotTotal]) -> str:
    unit = unit_of(config.game)
    header = ("rank", "bot", "strategy", "matches", "total chips", unit.name, "95% CI")
    cells = [header]
    for rank, total in enumerate(totals, 1):
        estimate = total.estimate.scaled(unit.per_chip)
        cells.append(
            (
                str(rank),
                total.name,
                total.spec,
                str(total.matches),
                format_chips(total.chips),
                f"{estimate.mean:.3f}",
                f"±{estimate.half_width:.3f}",
            )
        )
    return "\n".join(table_lines(cells, left=(1, 2)))


def _leader(bots: Sequence[tuple[str, str]], stored: dict[str, list[tuple[str, float, int]]]) -> str:
    totals = [t for t in bankroll(bots, stored) if t.matches]
    return totals[0].name if totals else "-"


# -- running ------------------------------------------------------------------------


def _pool_context() -> multiprocessing.context.BaseContext:
    """forkserver: workers start clean (no threads or trio state of ours)."""
    return multiprocessing.get_context("forkserver")


def run_tournament(
    config: Config,
    *,
    workers: int | None = None,
    dask: str | None = None,
    resume: bool = False,
    progress: bool | None = None,
) -> tuple[dict[str, list[tuple[str, float, int]]], list[str]]:
    """Play the matches the database lacks; returns the stored results (match
    -> rows) and the failures (one line each).

    Raises:
        UsageError: a database of another tournament, or a new run over an old one.
    """
    config.output.mkdir(parents=True, exist_ok=True)
    try:
        lock = MatchLock(config.output / _LOCK)
    except MatchInUseError as error:
        raise UsageError(f"{config.output} is in use by another arena tournament (process {error.holder or '?'})") from None
    try:
        connection = _connect(config.output / DATABASE)
        try:
            return _run(connection, config, workers or config.workers, dask, resume, progress)
        finally:
            connection.close()
    finally:
        lock.release()


def _check_identity(connection: sqlite3.Connection, config: Config, resume: bool) -> None:
    identity = json.dumps(config.identity(), sort_keys=True)
    row = connection.execute("SELECT value FROM tournament WHERE key = 'config'").fetchone()
    if row is None:
        with _transaction(connection):
            connection.execute("INSERT INTO tournament (key, value) VALUES ('config', ?)", (identity,))
        return
    if not resume:
        raise UsageError(f"{config.output} holds a tournament: --resume to finish it, or choose another output")
    before = json.loads(row[0])
    now = json.loads(identity)
    for key in now:
        if before.get(key) != now[key]:
            raise UsageError(f"--resume: {config.output} was played with another {key} than the config now gives")


def _run(
    connection: sqlite3.Connection,
    config: Config,
    workers: int,
    dask: str | None,
    resume: bool,
    progress: bool | None,
) -> tuple[dict[str, list[tuple[str, float, int]]], list[str]]:
    _check_identity(connection, config, resume)
    jobs = schedule(config)
    stored = _stored(connection)
    pending = [job for job in jobs if job.key not in stored]
    failures: list[str] = []
    with tqdm(
        total=len(jobs),
        initial=len(jobs) - len(pending),
        unit="match",
        file=sys.stderr,
        disable=None if progress is None else not progress,
        dynamic_ncols=True,
    ) as bar:
        bar.set_postfix_str(f"leader {_leader(config.bots, stored)}")

        def finished(job: MatchJob, record: MatchRecord | None, error: BaseException | None) -> None:
            if record is not None:
                _store(connection, job, record)
                stored[job.key] = list(zip(record.players, record.values, [record.hands] * len(record.players)))
            else:
                failures.append(f"{job.key}: {error}")
            bar.update(1)
            bar.set_postfix_str(f"leader {_leader(config.bots, stored)}")

        if pending:
            if dask is not None:
                _run_dask(dask, pending, finished)
            else:
                _run_local(workers, pending, finished)
    _write_csv(config.output / RESULTS_CSV, _stored(connection))
    return _stored(connection), failures


def _watch_runner(runner: int) -> None:
    """In a pool worker: exit at once when the runner is gone (SIGKILL leaves
    workers blocked on their queue, or playing a match nobody will store)."""

    def watch() -> None:
        while True:
            time.sleep(_WATCH_S)
            try:
                os.kill(runner, 0)
            except ProcessLookupError:
                os._exit(1)

    threading.Thread(target=watch, name="watch-runner", daemon=True).start()


def _run_local(workers: int, jobs: Sequence[MatchJob], finished: Any) -> None:
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=min(workers, len(jobs)),
        mp_context=_pool_context(),
        initializer=_watch_runner,
        initargs=(os.getpid(),),
    )
    try:
        futures = {pool.submit(play_match, job): job for job in jobs}
        for future in concurrent.futures.as_completed(futures):
            error = future.exception()
            finished(futures[future], None if error else future.result(), error)
    except BaseException:  # Ctrl-C: what is not stored is played again by --resume
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _run_dask(address: str, jobs: Sequence[MatchJob], finished: Any) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:  # pragma: no cover - dask is a dependency
        raise UsageError("--dask needs dask[distributed] installed") from None
    try:
        client = Client(address, timeout=30)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as error:
        raise UsageError(f"--dask {address}: cannot reach the scheduler: {error}") from None
    with client:
        futures = {client.submit(play_match, job, key=f"arena-match-{job.key}", pure=False): job for job in jobs}
        for future in as_completed(list(futures)):  # type: ignore[no-untyped-call]
            job = futures[future]
            try:
                record = future.result()
            except Exception as error:  # the match's own failure, raised on the worker
                finished(job, None, error)
            else:
                finished(job, record, None)


# -- the command line -----------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="arena tournament",
        description="Every pairing (triple) of the configured bots in duplicate series; results in SQLite and CSV.",
        epilog="exit status: 0 done, 1 some matches failed (--resume retries them), 2 usage or config, 130 interrupted",
    )
    parser.add_argument("config", metavar="CONFIG", type=Path, help="tournament configuration (TOML)")
    parser.add_argument("--workers", type=int, metavar="K", help="local worker processes (default: the config's)")
    parser.add_argument("--dask", metavar="ADDRESS", help="run the matches on a Dask scheduler, e.g. tcp://HOST:8786")
    parser.add_argument("--resume", action="store_true", help="finish the tournament the output directory holds")
    return parser


def _error(message: str) -> None:
    print(f"arena tournament: error: {message}", file=sys.stderr)


def main(argv: list[str]) -> int:
    try:
        parser = _parser()
        args = parser.parse_args(argv)
        if args.workers is not None and args.workers < 1:
            parser.error(f"argument --workers: must be at least 1, got {args.workers}")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    try:
        config = load_config(args.config)
    except ConfigError as error:
        _error(str(error))
        return EXIT_USAGE
    try:
        stored, failures = run_tournament(config, workers=args.workers, dask=args.dask, resume=args.resume)
    except UsageError as error:
        _error(str(error))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"arena tournament: interrupted; finish with: arena tournament {args.config} --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (OSError, sqlite3.Error) as error:
        _error(f"{config.output}: {error}")
        return EXIT_FAILED
    total = len(schedule(config))
    print(
        f"{config.game_arg}: {len(stored)} of {total} duplicate matches, {config.hands} hands a seating,"
        f" {config.series} series from seed {config.seed}, output {config.output}"
    )
    print(format_bankroll(config, bankroll(config.bots, stored)))
    for line in failures:
        _error(line)
    if failures:
        print(f"arena tournament: {len(failures)} matches failed; retry them with --resume", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
