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
``arena analyze DIR`` reads it. In Texas hold'em the finished hands are also
written as PHH, ``match.phhs`` (:mod:`analysis.phh`; PokerKit reads it), and
the closing lines name it. Once the match is over the web table stays up
until no page has been open for ``--linger`` seconds (default 10).

Exit statuses: 0 the match was played; 1 the dealer aborted (a time limit,
say), a bot failed, or the web address could not be bound (nothing is written
then); 2 usage; 130 the person left (``q``, end of input, Ctrl-C/SIGTERM): the
log keeps every finished hand.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import trio

from agent.human.web import bind_table
from poker.stats import format_chips, interval_shown, unit_of
from analysis.hand_files import read_hands
from analysis.hands import HandsError
from analysis.match_score import ScoreError, score_match
from analysis.tables import plural, table_lines
from arena.commands._kit import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PORT,
    SEED,
    UsageError,
    UsageParser,
    fail,
    number,
    parse,
    whole,
)
from arena.match import PERSON_LIMITS, aborted_text, agent_seed, seat_names
from arena.play import (
    DEFAULT_HANDS,
    DEFAULT_LINGER_S,
    HOST,
    MATCH_NAME,
    PlayPlan,
    Session,
    play_session,
    write_phh_file,
)
from poker.gamedef import GameDefError, load_game
from strategies.base import Spec, StrategyError, make_strategy

__all__ = ["main"]

PROG = "arena play"


_positive = whole(1, 2**31 - 1)


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        PROG,
        "Play against bots at a web table (or --tui, in the terminal).",
        epilog=(
            "BOT is a strategy spec or named bot, as for `arena match` (always-call, leduc-cfr, ...);\n"
            "give one --opponent per other seat.\n\n"
            "exit status: 0 played, 1 the dealer aborted or a bot failed, 2 usage, 130 left early"
        ),
    )
    parser.add_argument("game", metavar="GAME", help="game file or short game name (leduc, leduc.nolimit, ...)")
    parser.add_argument("--opponent", action="append", metavar="BOT", required=True, help="a bot; once per other seat")
    parser.add_argument("--hands", type=whole(1, 2**32 - 1), default=DEFAULT_HANDS, metavar="N", help=f"hands (default {DEFAULT_HANDS})")
    parser.add_argument("--seed", type=SEED, metavar="S", help="card seed (default: from the clock)")
    parser.add_argument("--port", type=PORT, default=0, metavar="P", help="web table port on 127.0.0.1 (default: any free)")
    parser.add_argument("--tui", action="store_true", help="play in this terminal instead of a browser")
    parser.add_argument("--name", default="you", metavar="NAME", help="your name in the logs (default: you)")
    parser.add_argument("--seat", type=_positive, default=1, metavar="K", help="your seat, 1..players (default 1)")
    parser.add_argument("--run-dir", type=Path, metavar="DIR", help="default: runs/<time>-play-<game>-<seed>/")
    parser.add_argument(
        "--t-response", type=_positive, default=PERSON_LIMITS.response_ms, metavar="MS",
        help=f"per action (default {PERSON_LIMITS.response_ms})",
    )
    parser.add_argument(
        "--t-hand", type=_positive, default=PERSON_LIMITS.hand_ms, metavar="MS",
        help=f"per seat and hand (default {PERSON_LIMITS.hand_ms})",
    )
    parser.add_argument(
        "--t-per-hand", type=_positive, default=PERSON_LIMITS.per_hand_ms, metavar="MS",
        help=f"average per hand (default {PERSON_LIMITS.per_hand_ms})",
    )
    parser.add_argument(
        "--linger", type=number(0, 86400, "a number of seconds"), default=DEFAULT_LINGER_S, metavar="S",
        help="after the match, exit once no page has been open for S seconds (default 10)",
    )
    return parser


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
    specs = [Spec.parse(text) for text in args.opponent]
    bot_names = list(seat_names(specs))
    bot_names = [f"{name}-bot" if name == args.name else name for name in bot_names]
    names = tuple(bot_names[:human] + [args.name] + bot_names[human:])
    bot_seats = [s for s in range(n) if s != human]
    opponents = tuple((seat, spec, agent_seed(seed, i)) for i, (seat, spec) in enumerate(zip(bot_seats, specs)))
    for _, spec, bot_seed in opponents:
        make_strategy(spec, game, seed=bot_seed).close()  # fail now, not in a seat
    stem = Path(args.game).name.removesuffix(".game")
    run_dir = args.run_dir or Path("runs") / f"{time.strftime('%Y%m%d-%H%M%S')}-play-{stem}-{seed}"
    limits = dataclasses.replace(PERSON_LIMITS, response_ms=args.t_response, hand_ms=args.t_hand, per_hand_ms=args.t_per_hand)
    return PlayPlan(game, args.game, args.hands, seed, names, human, opponents, run_dir, limits)


def main(argv: list[str]) -> int:
    args = parse(_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        plan = _plan(args)
    except (GameDefError, StrategyError, UsageError) as error:
        return fail(PROG, error, EXIT_USAGE)
    if (plan.run_dir / f"{MATCH_NAME}.log").exists():
        return fail(PROG, f"{plan.run_dir} already holds a match; choose another --run-dir", EXIT_USAGE)
    try:
        fd = None if args.tui else bind_table(HOST, args.port)  # a busy port fails before anything is written
    except OSError as error:
        return fail(PROG, error, EXIT_FAILED)
    try:
        plan.run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        if fd is not None:
            os.close(fd)
        return fail(PROG, f"cannot create the run directory: {error}", EXIT_FAILED)
    try:
        session = trio.run(play_session, plan, args.tui, fd, args.linger)
    except KeyboardInterrupt:  # a second Ctrl-C
        return fail(PROG, "interrupted", EXIT_INTERRUPTED)
    except OSError as error:
        return fail(PROG, error, EXIT_FAILED)
    return _report(plan, session)


def _report(plan: PlayPlan, session: Session) -> int:
    """The closing lines: each player's chips and mean with its interval (the
    match's score, :func:`analysis.match_score.score_match`), where the logs are."""
    log = plan.run_dir / f"{MATCH_NAME}.log"
    unit = unit_of(plan.game)
    try:
        table = read_hands(log, plan.game) if log.exists() else None
        score = score_match([table], plan.names, game=plan.game, hands=plan.hands, estimators=())
    except (HandsError, ScoreError) as error:
        return fail(PROG, error, EXIT_FAILED)
    print(f"{PROG}: {score.hands} of {plural(plan.hands, 'hand')} played; logs in {plan.run_dir} (arena analyze {plan.run_dir})")
    try:
        phh = write_phh_file(plan)
    except (HandsError, OSError) as error:
        print(f"{PROG}: error: no hand history (PHH) written: {error}", file=sys.stderr)
    else:
        if phh is not None:
            print(f"{PROG}: hand history (PHH) in {phh}")
    if score.hands:
        rows = [("player", "total chips", unit.name, "95% CI")]
        for player in score.players:
            estimate = player.raw.estimate.scaled(unit.per_chip) if player.raw.values.size >= 2 else None
            mean = "-" if estimate is None else f"{estimate.mean:.3f}"
            # the interval by the rule the table above followed (poker.stats.interval_shown)
            ci = f"±{estimate.half_width:.3f}" if estimate is not None and interval_shown(estimate.n) else "-"
            rows.append((player.name, format_chips(player.chips), mean, ci))
        print("\n".join(table_lines(rows)))
    for failure in session.failures:
        print(f"{PROG}: error: {failure}", file=sys.stderr)
    if session.left is not None:
        print(f"{PROG}: {session.left}; the log keeps the finished hands", file=sys.stderr)
        return EXIT_INTERRUPTED
    result = session.result
    if result is not None and result.aborted:
        print(f"{PROG}: error: {aborted_text(result)} (see {plan.run_dir / (MATCH_NAME + '.err')})", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_FAILED if session.failures else EXIT_OK
