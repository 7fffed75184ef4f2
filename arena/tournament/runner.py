"""``arena tournament CONFIG.toml [--workers K] [--dask ADDRESS] [--resume] [--bootstrap N]``: every pairing, in duplicate.

A tournament (the ACPC's scoring, docs/protocol.md) plays every heads-up pair of the configured
bots (every triple three-handed) for ``series`` duplicate series. A *match* is
one pairing in one series: the same cards played in every seating (both
heads-up, all six three-handed), each seating with fresh agents, through our
dealer on loopback (the seat runner, :func:`arena.match.run_seating`):
:func:`play_match` builds an :class:`arena.match.MatchPlan`
and runs :func:`arena.match.run_plan`, or, when a bot is an external command
(an ACPC ``startme.sh``), plays the seatings with
:mod:`arena.tournament.external`, where a bot that fails forfeits its seating
and the tournament goes on. Series *k* deals with seed ``seed + k`` for every
pairing (common seeds across pairings). The configuration file is
:mod:`arena.tournament.config`'s.

Matches run on a local process pool (``--workers``, default the config's
``workers``) or, with ``--dask tcp://HOST:8786``, on a Dask distributed cluster
(the same :func:`play_match` submitted to a ``dask.distributed.Client``).

Results go to ``tournament.db`` (SQLite) in the output directory: one row per
match, with its players, per-player values (chips over all its seatings), hand
count, per-seating seat values, log paths and forfeits, written in one
transaction once its logs are complete. Each attempt at a match claims a
directory of its own (``matches/<match>``, then ``<match>.2``, …), so an agent
left running by a killed runner never writes into the attempt that counts.
``--resume`` plays the matches the database lacks: killing the runner at any
moment (SIGKILL included) loses no finished match and reruns none, and the
rerun matches deal the same cards to agents with the same seeds, so the results
equal an uninterrupted run.

At the end it writes ``results.csv`` (``match,player,value,hands``: one row per
player per match, in schedule order, so identical runs write identical files, as
are the forfeits listed)
and prints what ``arena rank OUTPUT`` prints (both rankings,
the series run-off, the crosstable and a bootstrap over matches: the database
is read by :class:`analysis.scoring.TournamentDbSource` and ranked by
:func:`analysis.ranking.ranking_document`), and writes that as a
self-contained HTML report, ``report.html`` (:mod:`analysis.report`).
"""

from __future__ import annotations

import concurrent.futures
import csv
import json
import multiprocessing
import os
import signal
import sqlite3
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Final

from tqdm import tqdm

from analysis.ranking import format_report, ranking_document
from analysis.tables import plural, table_lines
from analysis.report import Section, write_rank_report
from analysis.scoring import TOURNAMENT_DB, MatchResult, Results, ResultsError, ScoringError, bankroll, cells_of, load_results
from arena.tournament.config import Config, ConfigError, Entrant, load_config, parse_config
from arena.tournament.play import MatchInterrupted, MatchJob, MatchRecord, play_match, schedule
from arena.match import sigterm_as_interrupt
from dealer.lock import MatchInUseError, MatchLock

__all__ = [
    "ConfigError",
    "Config",
    "Entrant",
    "MatchJob",
    "MatchRecord",
    "load_config",
    "parse_config",
    "schedule",
    "play_match",
    "run_tournament",
    "report",
    "TournamentError",
]

DATABASE: Final = TOURNAMENT_DB
RESULTS_CSV: Final = "results.csv"
REPORT_HTML: Final = "report.html"
DEFAULT_BOOTSTRAP: Final = 1000
_LOCK: Final = "tournament.lock"
_WATCH_S: Final = 0.5
_FORKSERVER_PRELOAD: Final = "arena.forkserver_preload"


class TournamentError(Exception):
    """The tournament cannot run as asked: its output directory cannot be made,
    holds another one (or is in use) or files that are not a tournament's, or
    the Dask scheduler cannot be reached."""


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
    forfeits TEXT NOT NULL DEFAULT '[]',  -- JSON list: a line per seat that forfeited a seating
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
    columns = {row[1] for row in connection.execute("PRAGMA table_info(matches)")}
    if "forfeits" not in columns:  # a database from before external commands: none forfeited
        connection.execute("ALTER TABLE matches ADD COLUMN forfeits TEXT NOT NULL DEFAULT '[]'")
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
            'INSERT INTO matches (match, series, seed, players, "values", hands, seatings, seat_values, logs, warnings, forfeits)'
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                json.dumps(list(record.forfeits)),
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


def _forfeits(connection: sqlite3.Connection, schedule: Sequence[str] = ()) -> list[str]:
    """Every forfeit line, the matches in ``schedule`` order (of their keys;
    any other in the order they finished, after them): identical runs print
    and report identical lines."""
    rank = {key: index for index, key in enumerate(schedule)}
    rows = connection.execute("SELECT match, forfeits FROM matches ORDER BY rowid").fetchall()
    rows.sort(key=lambda row: rank.get(row[0], len(rank)))
    return [line for _, text in rows for line in json.loads(text)]


def _write_csv(path: Path, stored: dict[str, list[tuple[str, float, int]]]) -> None:
    """Values exactly (``repr`` of the float where it is not whole: split pots
    and forfeits leave fractions), so the CSV ranks as the database does."""
    scratch = path.with_name(f".{path.name}.tmp")
    with open(scratch, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(["match", "player", "value", "hands"])
        for match, rows in stored.items():
            for player, value, hands in rows:
                writer.writerow([match, player, str(int(value)) if value.is_integer() else repr(value), hands])
    scratch.replace(path)


def _results(stored: dict[str, list[tuple[str, float, int]]], source: str) -> Results:
    return Results(tuple(MatchResult(m, {p: v for p, v, _ in rows}, rows[0][2]) for m, rows in stored.items()), source)


def _leader(stored: dict[str, list[tuple[str, float, int]]]) -> str:
    """The total bankroll's leader so far (:func:`analysis.scoring.bankroll`)."""
    ranked = bankroll(cells_of(_results(stored, "")))
    return ranked[0][0] if ranked else "-"


# -- running ------------------------------------------------------------------------


def _pool_context() -> multiprocessing.context.BaseContext:
    """forkserver: workers start clean (no threads or trio state of ours),
    born with SIGINT blocked (:mod:`arena.forkserver_preload`; a preload takes
    effect when the server starts, the first pool of the process)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([_FORKSERVER_PRELOAD])
    return context


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
        TournamentError: an output folder that cannot be made or is not a tournament's, a database of
            another tournament, or a new run over an old one.
    """
    _make_output(config.output)
    try:
        lock = MatchLock(config.output / _LOCK)
    except MatchInUseError as error:
        raise TournamentError(f"{config.output} is in use by another arena tournament (process {error.holder or '?'})") from None
    try:
        connection = _connect(config.output / DATABASE)
        try:
            return _run(connection, config, workers or config.workers, dask, resume, progress)
        finally:
            connection.close()
    finally:
        lock.release()


def _make_output(output: Path) -> None:
    """Make the output folder, or take an existing one that is empty or a
    tournament's (it has the database, or the lock of a run killed before it
    made one): the runner writes its files and ``matches/`` there, which must
    never land among someone's own files (``output = "/etc"``).

    Raises:
        TournamentError: it cannot be made, or it holds files that are not a tournament's.
    """
    try:
        output.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise TournamentError(f"output {output}: is a file, not a folder") from None
    except OSError as error:
        raise TournamentError(f"output {output}: cannot make the folder: {error.strerror or error}") from None
    if not (output / DATABASE).exists() and not (output / _LOCK).exists() and any(output.iterdir()):
        raise TournamentError(
            f"output {output}: holds files that are not a tournament's (no {DATABASE}): choose a new or empty folder"
        )


def _check_identity(connection: sqlite3.Connection, config: Config, resume: bool) -> None:
    identity = json.dumps(config.identity(), sort_keys=True)
    row = connection.execute("SELECT value FROM tournament WHERE key = 'config'").fetchone()
    if row is None:
        with _transaction(connection):
            connection.execute("INSERT INTO tournament (key, value) VALUES ('config', ?)", (identity,))
        return
    if not resume:
        raise TournamentError(f"{config.output} holds a tournament: --resume to finish it, or choose another output")
    before = json.loads(row[0])
    now = json.loads(identity)
    for key in now:
        if before.get(key) != now[key]:
            raise TournamentError(f"--resume: {config.output} was played with another {key} than the config now gives")


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
        bar.set_postfix_str(f"leader {_leader(stored)}")

        def finished(job: MatchJob, record: MatchRecord | None, error: BaseException | None) -> None:
            if record is not None:
                _store(connection, job, record)
                stored[job.key] = list(zip(record.players, record.values, [record.hands] * len(record.players)))
            else:
                failures.append(f"{job.key}: {error}")
            bar.update(1)
            bar.set_postfix_str(f"leader {_leader(stored)}")

        if pending:
            if dask is not None:
                _run_dask(dask, pending, finished)
            else:
                _run_local(workers, pending, finished)
    # in schedule order, not the order the matches finished in: identical runs give identical files
    written = _stored(connection)
    scheduled = {job.key: written[job.key] for job in jobs if job.key in written}
    _write_csv(config.output / RESULTS_CSV, scheduled)
    return scheduled, failures


def _start_worker(runner: int) -> None:
    """A pool worker's set-up. Between matches SIGINT only notes the interrupt
    (:func:`_note_interrupt`; :func:`_play` hands it to the match), so an
    interrupt that reaches an idle worker does not raise inside
    multiprocessing; the worker was born with SIGINT blocked
    (:mod:`arena.forkserver_preload`), and one that came while it started is
    noted as it is unblocked here. The runner watch (:func:`_watch_runner`)
    starts before, so its thread keeps SIGINT blocked. And keep quiet about
    the coroutine an interrupt can orphan: the SIGINT that stops a worker's
    match may land between trio's making a socket call's coroutine and
    awaiting it, and the unawaited coroutine's RuntimeWarning then reached the
    user's terminal after the resume hint (seen once in four runs of the
    SIGTERM test)."""
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
    _watch_runner(runner)
    signal.signal(signal.SIGINT, _note_interrupt)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


_interrupted = False  # in a pool worker: an interrupt reached it, and it plays no more matches


def _note_interrupt(signum: int, frame: object) -> None:
    """A pool worker's SIGINT handler between matches."""
    global _interrupted
    _interrupted = True


def _play(job: MatchJob) -> MatchRecord:
    """:func:`play_match` in a pool worker, with Python's own SIGINT handler
    (KeyboardInterrupt, which trio turns into stopping the match) for the
    match alone. A worker that an interrupt has reached (during a match, or
    noted between) plays no further match: those already queued to the pool
    (it holds a few ahead, too late to cancel) would otherwise be played in
    full while the runner waits for its workers to exit; each is refused at
    once, and ``--resume`` plays it."""
    global _interrupted
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        if _interrupted:  # checked after the swap: an interrupt now raises instead
            raise MatchInterrupted(f"{job.key}: not played, the run was interrupted")
        return play_match(job)
    except BaseException as error:
        # KeyboardInterrupt, alone or in trio's group (a BaseExceptionGroup, not an Exception)
        if isinstance(error, MatchInterrupted) or not isinstance(error, Exception):
            _interrupted = True
        raise
    finally:
        signal.signal(signal.SIGINT, _note_interrupt)


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
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )
    try:
        with sigterm_as_interrupt(_interrupt_workers(pool)):
            futures = {pool.submit(_play, job): job for job in jobs}
            for future in concurrent.futures.as_completed(futures):
                error = future.exception()
                finished(futures[future], None if error else future.result(), error)
    except BaseException:  # Ctrl-C or SIGTERM: what is not stored is played again by --resume
        # waiting is quick, each worker stops its match and refuses the rest (_play); and
        # not waiting raced Python's exit hook, which joins the pool anyway: it could wake a
        # pool that was closing ("OSError: Bad file descriptor" after the resume hint)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()


def _interrupt_workers(pool: concurrent.futures.ProcessPoolExecutor) -> Callable[[], None]:
    """What a SIGTERM to the runner (kill, timeout, a batch scheduler) passes
    on: the SIGINT a terminal's Ctrl-C would have sent each worker (it stops its
    match, and the agents and commands that match started), so that SIGTERM
    stops the run as Ctrl-C does. Without it the runner died with status 143
    and its workers played on, unwatched, until they saw it gone."""

    def interrupt() -> None:
        for process in tuple((pool._processes or {}).values()):
            if process.pid is not None:
                try:
                    os.kill(process.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass

    return interrupt


def _run_dask(address: str, jobs: Sequence[MatchJob], finished: Any) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError:  # pragma: no cover - dask is a dependency
        raise TournamentError("--dask needs dask[distributed] installed") from None
    try:
        client = Client(address, timeout=30)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as error:
        raise TournamentError(f"--dask {address}: cannot reach the scheduler: {error}") from None
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


# -- the report -----------------------------------------------------------------------


def _bots_table(config: Config, stored: dict[str, list[tuple[str, float, int]]]) -> list[list[str]]:
    played = {bot.name: 0 for bot in config.bots}
    for rows in stored.values():
        for player, _, _ in rows:
            played[player] += 1
    return [["bot", "matches", "strategy or command"]] + [[b.name, str(played[b.name]), b.label] for b in config.bots]


def report(config: Config, stored: dict[str, list[tuple[str, float, int]]], samples: int) -> None:
    """Print the bots, the forfeits, and what ``arena rank OUTPUT`` prints
    (read from the database by the same code), and write ``report.html``."""
    with closing(sqlite3.connect(config.output / DATABASE)) as connection:
        forfeits = _forfeits(connection, [job.key for job in schedule(config)])
    bots = _bots_table(config, stored)
    print("\n".join(table_lines(bots, left=(0, 2))))
    if forfeits:
        print(f"forfeited seatings ({len(forfeits)}):")
        print("\n".join(f"  {line}" for line in forfeits))
    print()
    try:
        doc = ranking_document(load_results(config.output), config.game, config.game_arg, samples, config.seed)
    except (ResultsError, ScoringError) as error:
        print(f"no ranking yet: {error}")
        return
    print(format_report(doc))
    path = config.output / REPORT_HTML
    # The report is a page others read (the hosted arena serves it to every user): it names no
    # folder of this machine and no command line, which the console above prints for whoever ran it.
    game = Path(config.game_arg).name  # a game file by its name alone
    about = f"{game}: {plural(config.hands, 'hand')} a seating, {config.series} series from seed {config.seed}"
    hidden = {True: "a submitted agent (sandboxed)", False: "an external agent (a command)"}
    shown = [[name, played, label if bot.spec is not None else hidden[bot.sandboxed is not None]]
             for (name, played, label), bot in zip(bots[1:], config.bots)]
    sections: list[Section] = [("Bots", about, ["bot", "matches", "strategy"], shown)]
    if forfeits:
        sections.append(("Forfeits", "each forfeited hand costs the seat its blind", ["seating forfeited"], [[line] for line in forfeits]))
    title = f"Tournament: {game}, {len(stored)} duplicate matches"
    write_rank_report(path, doc, title, sections)
    print(f"\nreport: {path}")
