"""The sandboxed seat (:class:`arena.match.Sandboxed`) in the one match path:
a submitted agent plays inside its sandbox, hand for hand as the same
strategy in-process; one that prints without bound leaves bounded files and is
ended with its seating; one that cannot be confined is never run and is
blamed with the reason."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trio

from arena.match import KEEP_BYTES, Bot, InProcess, MatchPlan, Seat, SeatingRun, run_plan, run_seating
from arena.match.seats import Sandboxed
from dealer.server import MatchConfig
from poker.gamedef import load_game
from strategies.base import Spec
from tests.sandbox.harness import NEEDS_SANDBOX, make_agent

pytestmark = NEEDS_SANDBOX

HANDS = 20
KUHN = load_game("kuhn")

#: An ACPC client of Kuhn poker with the standard library: it checks or calls
#: whenever it is its turn (position 0 acts first; the betting goes on after
#: "", "c", "r" and "cr").
ALWAYS_CALL = """
dealer = socket.create_connection((HOST, PORT))
dealer.sendall(b"VERSION:2.0.0\\r\\n")
for raw in dealer.makefile("rb"):
    line = raw.decode().strip()
    if line.startswith("MATCHSTATE:"):
        _, position, _, betting, _ = line.split(":", 4)
        if betting in ("", "c", "r", "cr") and len(betting) % 2 == int(position):
            dealer.sendall((line + ":c\\r\\n").encode())
"""


def config(run_dir: Path, **extra: object) -> MatchConfig:
    run_dir.mkdir()
    options: dict[str, object] = {"t_response_ms": 10_000, "start_timeout_ms": 30_000, **extra}
    return MatchConfig(
        match_name="match", game=KUHN, game_path="kuhn", num_hands=HANDS, seed=3,
        names=("raiser", "caller"), log_dir=run_dir, quiet=True, **options,  # type: ignore[arg-type]
    )


def raiser() -> InProcess:
    return InProcess(Spec.parse("always-raise"), seed=1)


def states(run_dir: Path) -> list[str]:
    return [line for line in (run_dir / "match.log").read_text().splitlines() if line.startswith("STATE")]


async def test_a_sandboxed_agent_plays_as_the_same_strategy_in_process(world: Path, tmp_path: Path) -> None:
    agent = make_agent(world, "caller", ALWAYS_CALL)
    seats: tuple[Seat, Seat] = (raiser(), Sandboxed(agent))
    sandboxed = await run_seating(config(tmp_path / "sandboxed"), seats)
    local = await run_seating(config(tmp_path / "local"), (raiser(), InProcess(Spec.parse("always-call"), seed=2)))
    assert sandboxed.result is not None and local.result is not None
    assert sandboxed.result.aborted is None and sandboxed.result.hands_played == HANDS
    assert sandboxed.result.totals == local.result.totals and sandboxed.result.totals[0] != 0
    assert sandboxed.ends == () and sandboxed.culprits() == {}
    assert len(states(tmp_path / "sandboxed")) == HANDS and states(tmp_path / "sandboxed") == states(tmp_path / "local")


async def test_a_duplicate_plan_seats_a_submitted_agent_in_both_seatings(world: Path, tmp_path: Path) -> None:
    """Through the one match path (a plan, :func:`arena.match.run_plan`):
    each seating starts the agent in a sandbox of its own, and the hands come
    out as with our own always-call in its place."""
    agent = make_agent(world, "caller", ALWAYS_CALL)

    def plan(caller: Bot, run_dir: Path) -> MatchPlan:
        bots = (caller, Bot(Spec.parse("always-raise"), "raiser", 1))
        run_dir.mkdir()
        return MatchPlan(KUHN, "kuhn", HANDS, 4, bots, ((0, 1), (1, 0)), run_dir, in_process=True)

    sandboxed = await run_plan(plan(Bot.seated("caller", Sandboxed(agent)), tmp_path / "sandboxed"))
    ours = await run_plan(plan(Bot(Spec.parse("always-call"), "caller", 2), tmp_path / "ours"))
    assert [r.complete for r in sandboxed.results] == [True, True] and sandboxed.hands_played == 2 * HANDS
    assert [r.totals for r in sandboxed.results] == [r.totals for r in ours.results]
    assert all(np.array_equal(a.values, b.values) for a, b in zip(sandboxed.results, ours.results))


async def test_a_program_that_connects_first_does_not_take_the_sandboxed_seat(world: Path, tmp_path: Path) -> None:
    """The relay sends the seat's key before anything of the agent's: a local
    program that connects to the seat's port first, as the agent would (from
    127.0.0.1, a version line), is dropped, and the agent plays."""
    agent = make_agent(world, "caller", ALWAYS_CALL)
    runs: list[SeatingRun] = []

    async def host(task_status: trio.TaskStatus[tuple[int, ...]]) -> None:
        runs.append(await run_seating(config(tmp_path / "run"), (raiser(), Sandboxed(agent)), task_status=task_status))

    async with trio.open_nursery() as nursery:
        ports = await nursery.start(host)
        async with await trio.open_tcp_stream("127.0.0.1", ports[1]) as stranger:
            await stranger.send_all(b"VERSION:2.0.0\r\n")
            with trio.fail_after(10):
                assert await stranger.receive_some() == b""  # closed by the dealer
    assert runs[0].result is not None and runs[0].result.aborted is None and runs[0].result.hands_played == HANDS
    warnings = [line for line in (tmp_path / "run" / "match.err").read_text().splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and warnings[0].startswith("WARNING: dropped connection to seat 2 from 127.0.0.1:")


async def test_an_agent_that_crashes_mid_match_is_blamed(world: Path, tmp_path: Path) -> None:
    crasher = ALWAYS_CALL.replace(
        'if line.startswith("MATCHSTATE:"):', 'if line.split(":")[2:3] == ["4"]:  # hand 5 (numbered from 0)\n        sys.exit("crashed in hand 5")\n    if line.startswith("MATCHSTATE:"):'
    )
    agent = make_agent(world, "crasher", crasher)
    run = await run_seating(config(tmp_path / "run"), (raiser(), Sandboxed(agent)), after_abort_s=0.5)
    assert run.result is not None and run.result.hands_played == 4
    err = tmp_path / "run" / "match.player2.err"
    assert run.culprits() == {1: f"exited with status 1 before the match was over: crashed in hand 5 (see {err})"}


async def test_an_agent_printing_without_bound_keeps_bounded_files_and_is_ended(world: Path, tmp_path: Path) -> None:
    """It never connects, printing all the while: the dealer gives up on it
    after its start timeout, and its seating ends it; its .std file holds its
    first and last KEEP_BYTES and a line saying how much was dropped."""
    agent = make_agent(world, "printer", "line = 'x' * 1023 + '\\n'\nwhile True:\n    sys.stdout.write(line)\n")
    start = trio.current_time()
    run = await run_seating(config(tmp_path / "run", start_timeout_ms=1500), (raiser(), Sandboxed(agent)), after_abort_s=0.5)
    assert trio.current_time() - start < 30
    assert run.result is not None and run.result.aborted is not None
    assert 1 in run.culprits()
    kept = (tmp_path / "run" / "match.player2.std").read_bytes()
    head, dropped, tail = kept[:KEEP_BYTES], kept[KEEP_BYTES:-KEEP_BYTES], kept[-KEEP_BYTES:]
    assert head == tail == (b"x" * 1023 + b"\n") * (KEEP_BYTES // 1024)
    assert dropped.startswith(b"\n[arena: ") and dropped.endswith(f" bytes dropped here: only the first and the last {KEEP_BYTES} are kept]\n".encode())


async def test_an_agent_that_cannot_be_confined_is_not_run_and_is_blamed(world: Path, tmp_path: Path) -> None:
    agent = make_agent(world, "private", ALWAYS_CALL)
    agent.chmod(0o700)
    run = await run_seating(config(tmp_path / "run", start_timeout_ms=1000), (raiser(), Sandboxed(agent)), after_abort_s=0.5)
    assert run.culprits() == {
        1: f"could not be started: the agent runs as a uid of its own, and {agent} is not readable by every user"
    }
