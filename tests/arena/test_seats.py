"""The seat runner (:func:`arena.match.run_seating`): a remote seat is announced
and taken by an ACPC agent that another process starts, only from the peer it is
given and only within the start timeout; the dealer names a seat nobody took. A
person's seat is made for its seating and told why the dealer aborted; an
in-process seat may decide in a worker thread. (In-process and command seats
are played by every ``arena match`` and tournament test.)"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from agent.client import play, play_stream
from arena.match import InProcess, Person, Remote, Seat, SeatingRun, aborted_text, run_seating
from arena.match.seats import our_address
from dealer.server import MatchConfig
from poker.gamedef import load_game
from poker.protocol import key_line
from strategies.base import Spec, make_strategy

HANDS = 30
SEED = 2
KUHN = load_game("kuhn")


def config(run_dir: Path, **extra: object) -> MatchConfig:
    run_dir.mkdir()
    options: dict[str, object] = {"t_response_ms": 10_000, "start_timeout_ms": 60_000, **extra}
    return MatchConfig(
        match_name="match", game=KUHN, game_path="kuhn", num_hands=HANDS, seed=SEED,
        names=("raiser", "caller"), log_dir=run_dir, quiet=True, **options,  # type: ignore[arg-type]
    )


def raiser() -> InProcess:
    return InProcess(Spec.parse("always-raise"), seed=1)


async def seat_remote(config: MatchConfig, seats: tuple[Seat, ...], fill: object) -> SeatingRun:
    """Run the seating; once its ports are announced, ``fill(port)`` takes seat 2."""
    runs: list[SeatingRun] = []

    async def host(task_status: trio.TaskStatus[tuple[int, ...]]) -> None:
        runs.append(await run_seating(config, seats, task_status=task_status))

    async with trio.open_nursery() as nursery:
        ports = await nursery.start(host)
        await fill(ports[1])  # type: ignore[operator]
    return runs[0]


def test_a_remote_seat_is_taken_by_an_agent_of_another_process(tmp_path: Path) -> None:
    """`arena agent` started elsewhere on the announced port plays the seat: the same
    hands and chips as the same strategy in-process."""

    async def agent(port: int) -> None:
        argv = [sys.executable, "-m", "arena", "agent", "kuhn", "127.0.0.1", str(port), "--strategy", "always-call"]
        await trio.run_process(argv, capture_stdout=True, capture_stderr=True)

    remote = trio.run(seat_remote, config(tmp_path / "remote"), (raiser(), Remote()), agent)
    local = trio.run(run_seating, config(tmp_path / "local"), (raiser(), InProcess(Spec.parse("always-call"), seed=2)))
    assert remote.result is not None and local.result is not None
    assert remote.result.aborted is None and remote.result.hands_played == HANDS
    assert remote.result.totals == local.result.totals and remote.result.totals[0] != 0
    assert remote.ends == local.ends == () and remote.culprits() == {}
    states = [[line for line in (tmp_path / d / "match.log").read_text().splitlines() if line.startswith("STATE")] for d in ("remote", "local")]
    assert len(states[0]) == HANDS and states[0] == states[1]


def test_a_remote_seat_with_a_peer_drops_connections_from_elsewhere(tmp_path: Path) -> None:
    """Seat 2 is for 127.0.0.2 only: an agent from 127.0.0.1 is dropped at once (its
    version line unread), one from 127.0.0.2 plays."""

    async def two_agents(port: int) -> None:
        async with await trio.open_tcp_stream("127.0.0.1", port) as stranger:
            await stranger.send_all(b"VERSION:2.0.0\r\n")
            with trio.fail_after(10):
                assert await stranger.receive_some() == b""  # closed by the dealer
        stream = await trio.open_tcp_stream("127.0.0.1", port, local_address="127.0.0.2")
        async with stream:
            await play_stream(stream, KUHN, make_strategy(Spec.parse("always-call"), KUHN, seed=2))

    run = trio.run(seat_remote, config(tmp_path / "run"), (raiser(), Remote(peer="127.0.0.2")), two_agents)
    assert run.result is not None and run.result.aborted is None and run.result.hands_played == HANDS
    warnings = [line for line in (tmp_path / "run" / "match.err").read_text().splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1
    assert warnings[0].startswith("WARNING: dropped connection to seat 2 from 127.0.0.1:")
    assert warnings[0].endswith(": only 127.0.0.2 may take this seat")


def test_a_remote_seat_nobody_takes_within_the_start_timeout_is_the_culprit(tmp_path: Path) -> None:
    async def nobody(port: int) -> None:
        pass

    run = trio.run(seat_remote, config(tmp_path / "run", start_timeout_ms=300), (raiser(), Remote()), nobody)
    assert run.result is not None and run.result.hands_played == 0
    assert run.result.aborted == "ERROR: timed out waiting for seat 2 to connect"
    assert run.culprits() == {1: "the dealer: ERROR: timed out waiting for seat 2 to connect"}


def test_our_agents_reach_a_dealer_on_every_interface_through_loopback_only() -> None:
    """With the dealer on every interface (a hosted table) our own seats are
    connected through loopback and accept nobody else; on a named host, that host."""
    assert our_address("0.0.0.0") == ("127.0.0.1", ipaddress.ip_address("127.0.0.1"))
    assert our_address("::") == ("::1", ipaddress.ip_address("::1"))
    assert our_address("127.0.0.1") == ("127.0.0.1", ipaddress.ip_address("127.0.0.1"))
    assert our_address("localhost") == ("localhost", None)


def test_a_remote_peer_must_be_an_address() -> None:
    with pytest.raises(ValueError, match="^'example.org' does not appear to be an IPv4 or IPv6 address$"):
        Remote(peer="example.org")


def test_a_seating_needs_one_seat_per_player(tmp_path: Path) -> None:
    """Refused in one line before the dealer listens: no file is written."""
    with pytest.raises(ValueError, match="^1 seats for a 2-player game$"):
        trio.run(run_seating, config(tmp_path / "run"), (raiser(),))
    assert list((tmp_path / "run").iterdir()) == []


class _Person:
    """A person's seat (:class:`arena.match.PersonSeat`, what
    :class:`agent.human.seat.HumanSeat` does with a person's clicks): it calls
    every bet, or only says its version and waits."""

    def __init__(self, calls: bool) -> None:
        self.calls = calls
        self.told: list[str | None] = []

    async def run(self, host: str, port: int, key: str | None = None) -> None:
        if self.calls:
            await play(host, port, KUHN, make_strategy(Spec.parse("always-call"), KUHN, seed=2), key=key)
            return
        try:
            async with await trio.open_tcp_stream(host, port) as stream:
                await stream.send_all((key_line(key) if key is not None else b"") + b"VERSION:2.0.0\r\n")
                while await stream.receive_some():
                    pass
        except (trio.BrokenResourceError, OSError):
            pass  # the dealer closed with our answer owed: a person's seat never raises for it

    def end(self, message: str | None) -> None:
        self.told.append(message)


def test_a_person_seat_is_made_for_its_seating_and_played_here(tmp_path: Path) -> None:
    """``sit`` gets the seating's names in seat order and the person's seat; the
    person plays as the same strategy in-process would, and is told nothing
    when the match ends normally."""
    person = _Person(calls=True)
    sat: list[tuple[tuple[str, ...], int]] = []

    def sit(names: tuple[str, ...], index: int) -> _Person:
        sat.append((names, index))
        return person

    run = trio.run(run_seating, config(tmp_path / "person"), (raiser(), Person(sit)))
    local = trio.run(run_seating, config(tmp_path / "local"), (raiser(), InProcess(Spec.parse("always-call"), seed=2)))
    assert sat == [(("raiser", "caller"), 1)] and person.told == []
    assert run.result is not None and local.result is not None and run.result.aborted is None
    assert run.result.totals == local.result.totals and run.culprits() == {}


def test_a_local_program_that_connects_first_does_not_take_a_persons_seat(tmp_path: Path) -> None:
    """The runner gives a person's seat a key (its port is no secret to a local
    user): a stranger's version line, sent before the person's seat connects, is dropped."""
    person = _Person(calls=True)
    tried = trio.Event()

    class _Late:
        async def run(self, host: str, port: int, key: str | None = None) -> None:
            await tried.wait()
            await person.run(host, port, key)

        def end(self, message: str | None) -> None:
            person.end(message)

    async def stranger(port: int) -> None:
        async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
            await stream.send_all(b"VERSION:2.0.0\r\n")
            with trio.fail_after(30):
                while await stream.receive_some():
                    pass  # dropped: the connection ends without a state
        tried.set()

    async def stranger_first() -> SeatingRun:
        async with trio.open_nursery() as nursery:
            runs: list[SeatingRun] = []

            async def host(task_status: trio.TaskStatus[tuple[int, ...]]) -> None:
                runs.append(await run_seating(config(tmp_path / "run"), (raiser(), Person(lambda names, index: _Late())),
                                              task_status=task_status))

            ports = await nursery.start(host)
            nursery.start_soon(stranger, ports[1])
        return runs[0]

    run = trio.run(stranger_first)
    assert run.result is not None and run.result.aborted is None and run.result.hands_played == HANDS
    err = (tmp_path / "run" / "match.err").read_text()
    assert [line.split(": ")[-1] for line in err.splitlines() if line.startswith("WARNING: dropped")] == [
        "no seat key (this seat needs its #KEY line before the version line)"
    ]


def test_a_person_seat_is_told_why_the_dealer_aborted(tmp_path: Path) -> None:
    """A connection that ends says nothing of why: the seat hears the dealer's reason."""
    person = _Person(calls=False)
    run = trio.run(run_seating, config(tmp_path / "run", t_response_ms=200), (raiser(), Person(lambda names, index: person)))
    assert run.result is not None and run.result.aborted is not None and run.result.hands_played == 0
    assert person.told == [aborted_text(run.result)]
    assert aborted_text(run.result).startswith("the dealer aborted after 0 hands: ERROR: ")


def test_an_in_process_seat_may_decide_in_a_worker_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``threaded``: each decision goes to a worker thread (a bot that thinks for
    seconds leaves the event loop free), and the match is the same."""
    acts: list[str] = []
    run_sync = trio.to_thread.run_sync

    async def counted(function: Any, *args: Any, **kwargs: Any) -> Any:
        acts.append(getattr(function, "__name__", "?"))
        return await run_sync(function, *args, **kwargs)

    monkeypatch.setattr(trio.to_thread, "run_sync", counted)
    seats = (InProcess(Spec.parse("always-raise"), 1, threaded=True), InProcess(Spec.parse("always-call"), 2, threaded=True))
    threaded = trio.run(run_seating, config(tmp_path / "threaded"), seats)
    monkeypatch.undo()
    local = trio.run(run_seating, config(tmp_path / "local"), (raiser(), InProcess(Spec.parse("always-call"), seed=2)))
    assert threaded.result is not None and local.result is not None and threaded.result.totals == local.result.totals
    assert acts.count("act") >= HANDS  # every decision of both seats, at least one a hand
    assert (tmp_path / "threaded" / "match.log").read_text() == (tmp_path / "local" / "match.log").read_text()
