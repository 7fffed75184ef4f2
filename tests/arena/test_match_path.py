"""One match, one way: nothing outside ``arena/match/`` builds a dealer's
:class:`~dealer.server.MatchConfig`, and a :class:`~arena.match.MatchPlan`
says everything its callers need (the hosted arena's fixed ports and seating
names, a remote agent's seat, no ``.tlog``, a cap on a seating nobody
watches), played seating by seating through :func:`arena.match.play_seating`."""

from __future__ import annotations

import ast
import socket
import sys
from pathlib import Path

import pytest
import trio

from arena.match import Bot, MatchError, MatchPlan, Remote, SeatingRun, play_seating, seating_config
from dealer.budget import TimeLimits, match_deadline_s
from poker.gamedef import load_game
from strategies.base import Spec

ROOT = Path(__file__).resolve().parents[2]
KUHN = load_game("kuhn")
HANDS = 12


def _builds_match_config(path: Path) -> list[int]:
    """The lines of ``path`` that call ``MatchConfig(...)`` (by any import name)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "MatchConfig" or getattr(node.func, "attr", None) == "MatchConfig")
    ]


def test_only_arena_match_turns_a_match_into_dealer_runs() -> None:
    found = {
        path.relative_to(ROOT).as_posix(): lines
        for path in sorted((ROOT / "arena").rglob("*.py"))
        if "match" not in path.relative_to(ROOT / "arena").parts[:1] and (lines := _builds_match_config(path))
    }
    assert found == {}, f"build a MatchPlan and play it through arena.match instead: {found}"
    assert _builds_match_config(ROOT / "arena" / "match" / "run.py")  # the one place (so the check sees calls)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _plan(run_dir: Path, port: int) -> MatchPlan:
    """The hosted arena's shape: the remote agent in seat k of seating k on a fixed port."""
    return MatchPlan(
        game=KUHN,
        game_arg="kuhn",
        hands=HANDS,
        seed=5,
        bots=(Bot.seated("you", Remote("127.0.0.1")), Bot(Spec.parse("always-raise"), "bot", 3)),
        seatings=((0, 1),),
        run_dir=run_dir,
        in_process=True,
        limits=TimeLimits(10_000, 60_000, 7_000, 60_000),
        ports=((port, 0),),
        match_names=("seating0",),
        tlog=False,
        match_deadline=True,
    )


def test_a_seating_config_says_what_the_plan_asks(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 4321)
    config = seating_config(plan, 0)
    assert (config.match_name, config.names, config.ports, config.host) == ("seating0", ("you", "bot"), (4321, 0), "127.0.0.1")
    assert not config.write_tlog and not config.append and config.log_dir == tmp_path
    assert config.match_limit_s == match_deadline_s(plan.limits, num_hands=HANDS, num_seats=2) < float("inf")
    assert config.limits == plan.limits


def test_a_remote_agent_takes_its_fixed_port_through_the_plan(tmp_path: Path) -> None:
    """``arena agent`` of another process plays the remote seat on the port the
    plan fixed; the seating's files carry the plan's name, without a ``.tlog``."""
    port = _free_port()
    plan = _plan(tmp_path, port)
    runs: list[SeatingRun] = []

    async def host(task_status: trio.TaskStatus[tuple[int, ...]]) -> None:
        runs.append(await play_seating(plan, 0, task_status=task_status))

    async def match() -> tuple[int, ...]:
        async with trio.open_nursery() as nursery:
            ports: tuple[int, ...] = await nursery.start(host)
            argv = [sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", str(ports[0]), "--strategy", "always-call"]
            await trio.run_process(argv, capture_stdout=True, capture_stderr=True)
        return ports

    ports = trio.run(match)
    assert ports[0] == port
    (run,) = runs
    assert run.result is not None and run.result.aborted is None and run.result.hands_played == HANDS
    assert (tmp_path / "seating0.log").is_file() and not (tmp_path / "seating0.tlog").exists()


def test_a_player_that_is_not_ours_needs_a_seat(tmp_path: Path) -> None:
    """Without a seat a player is started as one of our agents, which needs a spec."""
    plan = MatchPlan(KUHN, "kuhn", HANDS, 1, (Bot(None, "who"), Bot(Spec.parse("always-call"), "caller", 2)), ((0, 1),), tmp_path)
    with pytest.raises(MatchError, match="^bot who is not one of our strategies: it has no spec to start an agent with$"):
        trio.run(play_seating, plan, 0)


@pytest.mark.parametrize("status, verb", [(0, "ended"), (3, "lost")])
def test_a_dealer_stopped_while_it_played_is_named_first_however_its_agents_saw_the_end(
    tmp_path: Path, status: int, verb: str
) -> None:
    """A dealer that drops an agent and is then stopped (no result) is the
    cause, whether the agent saw its connection end (0) or reset under it with
    its line unread (3: a race on a loaded machine, which made the 1 ms response
    test of test_match.py fail once under xdist)."""
    from arena.match.run import _failure
    from arena.match.seats import SeatEnd

    err = tmp_path / "match.err"
    err.write_text("WARNING: dropped seat 2: no version line within 0.001 s\n")
    end = SeatEnd(1, status, "the connection to the dealer was lost", True, tmp_path / "match.player2.err")
    line = _failure("match", ("a", "b"), SeatingRun(None, (end,), False), err)
    assert line == (
        f"match: the dealer was stopped: agent b (seat 2) {verb} the connection before the match was over;"
        f" the dealer's last message: WARNING: dropped seat 2: no version line within 0.001 s (see {err})"
    )


def test_a_bot_that_asks_for_a_process_gets_one_in_an_in_process_plan(tmp_path: Path) -> None:
    """The hosted arena's plan is in-process, but a re-solving bot plays as a
    process of its own (its CPU would stall the service's loop), seated by the
    plan as ours: with ``record=`` beside each seating's log."""
    from arena.match.run import _seat
    from arena.match.seats import Command, InProcess

    bots = (Bot(Spec.parse("always-call"), "caller", 1), Bot(Spec.parse("resolve:iterations=5"), "resolver", 2, process=True))
    plan = MatchPlan(load_game("leduc.nolimit"), "leduc.nolimit", HANDS, 1, bots, ((0, 1),), tmp_path, in_process=True)
    assert isinstance(_seat(plan, "seating0", 0, 0), InProcess)
    seat = _seat(plan, "seating0", 1, 0)
    assert isinstance(seat, Command)
    strategy = seat.after[seat.after.index("--strategy") + 1]
    assert strategy == f"resolve:iterations=5,record={(tmp_path / 'seating0.resolver.values.msgpack').resolve()}"
