"""``arena play GAME --opponent BOT [--opponent BOT]``: a person at a table against bots.

Starts, in this one process (trio): our dealer (:func:`dealer.server.serve_match`),
one agent task per ``--opponent`` (any strategy spec or named bot, built as
``arena match`` builds them), the person's seat (:class:`agent.human.seat.HumanSeat`,
an ACPC client like any agent) and either the web table on 127.0.0.1
(:mod:`agent.human.web`; the URL, with its access token, is printed) or, with
``--tui``, the terminal table (:mod:`agent.human.tui`).

The seat belongs to this process, not to the page: a reload or a dropped
connection only costs the page a reconnect, and the match goes on within the
dealer's limits (``--t-response``, ``--t-hand``, ``--t-per-hand``; the page
shows what is left as a clock). The default limits suit a person: ten minutes
an action, thirty a hand, ten a hand on average over the match.

The run directory (``runs/<time>-play-<game>-<seed>/`` unless ``--run-dir``)
gets what a match leaves: ``match.log`` (ACPC), ``match.hands.msgpack`` (hand
records), ``match.events.jsonl`` and the dealer's ``match.err``/``match.out``;
``arena analyze DIR`` reads it. Once the match is over the web table stays up
until no page has been open for ``--linger`` seconds (default 10).

Exit statuses: 0 the match was played; 1 the dealer aborted (a time limit,
say), a bot failed, or the web address could not be bound; 2 usage; 130 the
person left (``q``, end of input, Ctrl-C/SIGTERM): the log keeps every
finished hand.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import trio

from agent.client import AgentError, play
from agent.human.seat import HumanSeat, Limits
from agent.human.tui import Quit, in_colour, read_stdin_line, run_tui
from agent.human.web import Pages, bind_table, new_token, serve_table
from analysis.clitools import EXIT_USAGE, UsageParser, table_lines
from arena.match import agent_seed, seat_names
from dealer.log import LogError, read_log
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.gamedef import Game, GameDefError, load_game
from poker.protocol import MatchState
from poker.state import Action
from poker.stats import format_chips, mean_ci, unit_of
from strategies.base import Strategy, StrategyError, make_strategy

__all__ = ["main", "PlayPlan", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_LEFT"]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_LEFT: Final = 130
HOST: Final = "127.0.0.1"
DEFAULT_HANDS: Final = 100
DEFAULT_T_RESPONSE_MS: Final = 600_000
DEFAULT_T_HAND_MS: Final = 1_800_000
DEFAULT_T_PER_HAND_MS: Final = 600_000
DEFAULT_LINGER_S: Final = 10.0
_FINISH_S: Final = 5.0
MATCH_NAME: Final = "match"


@dataclass(frozen=True)
class PlayPlan:
    game: Game
    game_arg: str
    hands: int
    seed: int
    names: tuple[str, ...]  # seat order
    human: int  # the person's seat
    opponents: tuple[tuple[int, str, Strategy], ...]  # (seat, spec, strategy)
    run_dir: Path
    limits: Limits
    t_hand_ms: int
    t_per_hand_ms: int


@dataclass
class _Session:
    """What happened, for the exit status and the closing lines."""

    result: MatchResult | None = None
    failures: list[str] = field(default_factory=list)
    left: str | None = None  # why the person left early
    dealer_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    dealer_done: trio.Event = field(default_factory=trio.Event)


def _whole(low: int, high: int, note: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number in ``low..high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in {low}..{high}{note}, got {value}")
        return value

    return parse


_positive = _whole(1, 2**31 - 1)
_port = _whole(0, 65535, " (0: any free port)")
_seed = _whole(0, 2**32 - 1)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < 86400:
        raise argparse.ArgumentTypeError(f"must be in 0..86400 seconds, got {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="arena play",
        description="Play against bots at a web table (or --tui, in the terminal).",
        epilog=(
            "BOT is a strategy spec or named bot, as for `arena match` (always-call, leduc-cfr, ...);\n"
            "give one --opponent per other seat.\n\n"
            "exit status: 0 played, 1 the dealer aborted or a bot failed, 2 usage, 130 left early"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("game", metavar="GAME", help="game file or short game name (leduc, leduc.nolimit, ...)")
    parser.add_argument("--opponent", action="append", metavar="BOT", required=True, help="a bot; once per other seat")
    parser.add_argument("--hands", type=_whole(1, 2**32 - 1), default=DEFAULT_HANDS, metavar="N", help=f"hands (default {DEFAULT_HANDS})")
    parser.add_argument("--seed", type=_seed, metavar="S", help="card seed (default: from the clock)")
    parser.add_argument("--port", type=_port, default=0, metavar="P", help="web table port on 127.0.0.1 (default: any free)")
    parser.add_argument("--tui", action="store_true", help="play in this terminal instead of a browser")
    parser.add_argument("--name", default="you", metavar="NAME", help="your name in the logs (default: you)")
    parser.add_argument("--seat", type=_positive, default=1, metavar="K", help="your seat, 1..players (default 1)")
    parser.add_argument("--run-dir", type=Path, metavar="DIR", help="default: runs/<time>-play-<game>-<seed>/")
    parser.add_argument("--t-response", type=_positive, default=DEFAULT_T_RESPONSE_MS, metavar="MS", help="per action (default 600000)")
    parser.add_argument("--t-hand", type=_positive, default=DEFAULT_T_HAND_MS, metavar="MS", help="per seat and hand (default 1800000)")
    parser.add_argument("--t-per-hand", type=_positive, default=DEFAULT_T_PER_HAND_MS, metavar="MS", help="average per hand (default 600000)")
    parser.add_argument(
        "--linger", type=_seconds, default=DEFAULT_LINGER_S, metavar="S",
        help="after the match, exit once no page has been open for S seconds (default 10)",
    )
    return parser


class UsageError(Exception):
    pass


def _plan(args: argparse.Namespace) -> PlayPlan:
    game = load_game(args.game)
    n = game.num_players
    if len(args.opponent) != n - 1:
        raise UsageError(f"{args.game} is a {n}-player game: give {n - 1} --opponent, not {len(args.opponent)}")
    if not 1 <= args.seat <= n:
        raise UsageError(f"--seat must be in 1..{n}, got {args.seat}")
    if not args.name or any(c in args.name for c in " \t|:\r\n") or not args.name.isprintable():
        raise UsageError(f"--name {args.name!r}: a name has no spaces, '|' or ':'")
    seed = args.seed if args.seed is not None else int(time.time()) % 2**32
    human = args.seat - 1
    bot_names = list(seat_names(args.opponent))
    bot_names = [f"{name}-bot" if name == args.name else name for name in bot_names]
    names = tuple(bot_names[:human] + [args.name] + bot_names[human:])
    bot_seats = [s for s in range(n) if s != human]
    opponents = tuple(
        (seat, spec, make_strategy(spec, game, seed=agent_seed(seed, i)))
        for i, (seat, spec) in enumerate(zip(bot_seats, args.opponent))
    )
    stem = Path(args.game).name.removesuffix(".game")
    run_dir = args.run_dir or Path("runs") / f"{time.strftime('%Y%m%d-%H%M%S')}-play-{stem}-{seed}"
    limits = Limits(args.t_response, args.t_hand, args.t_per_hand * args.hands)
    return PlayPlan(game, args.game, args.hands, seed, names, human, opponents, run_dir, limits, args.t_hand, args.t_per_hand)


def main(argv: list[str]) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    try:
        plan = _plan(args)
    except (GameDefError, StrategyError, UsageError) as error:
        print(f"arena play: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        plan.run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"arena play: error: cannot create the run directory: {error}", file=sys.stderr)
        return EXIT_FAILED
    if (plan.run_dir / f"{MATCH_NAME}.log").exists():
        print(f"arena play: error: {plan.run_dir} already holds a match; choose another --run-dir", file=sys.stderr)
        return EXIT_USAGE
    try:
        session = trio.run(_play, plan, args.tui, args.port, args.linger)
    except KeyboardInterrupt:  # a second Ctrl-C
        print("arena play: interrupted", file=sys.stderr)
        return EXIT_LEFT
    except OSError as error:
        print(f"arena play: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    return _report(plan, session)


async def _play(plan: PlayPlan, tui: bool, port: int, linger: float) -> _Session:
    session = _Session()
    title = f"{plan.game_arg}, seed {plan.seed}"
    seat = HumanSeat(plan.game, plan.names, plan.human, hands=plan.hands, limits=plan.limits, title=title)
    shutdown = trio.Event()
    pages = Pages()
    fd = None if tui else bind_table(HOST, port)  # a busy port fails before the dealer writes anything
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_signals, session, seat, shutdown)
        if fd is not None:
            url: str = await nursery.start(serve_table, seat, fd, new_token(), pages, shutdown)
            print(f"arena play: your table is at {url}", flush=True)
        config = MatchConfig(
            match_name=MATCH_NAME,
            game=plan.game,
            game_path=plan.game_arg,
            num_hands=plan.hands,
            seed=plan.seed,
            names=plan.names,
            t_response_ms=plan.limits.response_ms,
            t_hand_ms=plan.t_hand_ms,
            t_per_hand_ms=plan.t_per_hand_ms,
            log_dir=plan.run_dir,
            quiet=True,
        )
        try:
            ports: tuple[int, ...] = await nursery.start(_dealer, config, plan.run_dir, session, seat)
        except RuntimeError:
            shutdown.set()
            return session
        for seat_index, spec, strategy in plan.opponents:
            nursery.start_soon(_bot, plan, seat_index, strategy, ports[seat_index], session)
        nursery.start_soon(seat.run, HOST, ports[plan.human])
        if tui:
            await _terminal(seat, session)
            shutdown.set()
        else:
            await seat.over.wait()
            await _linger(pages, linger, shutdown)
        with trio.move_on_after(_FINISH_S):  # the dealer closes the bots' connections as it ends
            await session.dealer_done.wait()
        nursery.cancel_scope.cancel()  # the signal watcher, and any bot still stuck
    return session


async def _dealer(
    config: MatchConfig,
    run_dir: Path,
    session: _Session,
    seat: HumanSeat,
    *,
    task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED,
) -> None:
    try:
        with open(run_dir / f"{MATCH_NAME}.out", "w") as out, open(run_dir / f"{MATCH_NAME}.err", "w") as err:
            with session.dealer_scope:
                session.result = await serve_match(config, stdout=out, stderr=err, task_status=task_status)
    finally:
        session.dealer_done.set()
    result = session.result
    if result is not None and result.aborted:
        seat.end(_aborted(result))
    elif session.left:
        seat.end(session.left)


async def _bot(plan: PlayPlan, seat: int, strategy: Strategy, port: int, session: _Session) -> None:
    """One bot's connection. Its decisions run in a worker thread, so a bot that
    thinks for a while (a re-solving one) does not stall the web table."""

    async def decide(view: MatchState) -> Action:
        return await trio.to_thread.run_sync(strategy.act, view)

    try:
        await play(HOST, port, plan.game, strategy, decide=decide)
    except (AgentError, OSError) as error:
        if session.left is None and (session.result is None or not session.result.aborted):
            session.failures.append(f"bot {plan.names[seat]} (seat {seat + 1}) failed: {error}")


async def _terminal(seat: HumanSeat, session: _Session) -> None:
    colour = sys.stdout.isatty()

    def write(line: str) -> None:
        print(in_colour(line) if colour else line, flush=True)

    try:
        await run_tui(seat, read_stdin_line, write)
    except Quit as why:
        _leave(session, seat, str(why))


def _leave(session: _Session, seat: HumanSeat, why: str) -> None:
    if session.left is None:
        session.left = why
    session.dealer_scope.cancel()
    seat.end(why)


async def _linger(pages: Pages, linger: float, shutdown: trio.Event) -> None:
    """Serve the final table until no page has been open for ``linger`` seconds."""
    while not shutdown.is_set():
        if pages.count == 0:
            with trio.move_on_after(linger):
                await pages.changed.wait()
                continue
            break
        await pages.changed.wait()
    shutdown.set()


async def _watch_signals(session: _Session, seat: HumanSeat, shutdown: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            if not session.dealer_done.is_set():  # after the match, Ctrl-C just closes the table
                _leave(session, seat, "interrupted")
            shutdown.set()


def _report(plan: PlayPlan, session: _Session) -> int:
    """The closing lines: each player's chips and mean with its interval, where the logs are."""
    log = plan.run_dir / f"{MATCH_NAME}.log"
    unit = unit_of(plan.game)
    try:
        hands = read_log(log, plan.game).hands if log.exists() else ()
    except LogError as error:
        print(f"arena play: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(f"arena play: {len(hands)} of {plan.hands} hands played; logs in {plan.run_dir} (arena analyze {plan.run_dir})")
    if hands:
        rows = [("player", "total chips", unit.name, "95% CI")]
        for name in plan.names:
            values = [line.values[line.names.index(name)] for line in hands]
            estimate = mean_ci(values).scaled(unit.per_chip) if len(values) >= 2 else None
            mean = "-" if estimate is None else f"{estimate.mean:.3f}"
            ci = "-" if estimate is None else f"±{estimate.half_width:.3f}"
            rows.append((name, format_chips(sum(values)), mean, ci))
        print("\n".join(table_lines(rows)))
    for failure in session.failures:
        print(f"arena play: error: {failure}", file=sys.stderr)
    if session.left is not None:
        print(f"arena play: {session.left}; the log keeps the finished hands", file=sys.stderr)
        return EXIT_LEFT
    result = session.result
    if result is not None and result.aborted:
        print(f"arena play: error: {_aborted(result)} (see {plan.run_dir / (MATCH_NAME + '.err')})", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_FAILED if session.failures else EXIT_OK


def _aborted(result: MatchResult) -> str:
    reason = "; ".join(line for line in (result.aborted or "").splitlines() if line)
    return f"the dealer aborted after {result.hands_played} hands: {reason}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
