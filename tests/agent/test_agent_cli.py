"""``arena agent`` as a command: one line on stderr and the documented exit
status for each way a match ends (agent/cli.py), against a tiny dealer on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from agent.cli import EXIT_AGENT_ERROR, EXIT_CONNECTION, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, REFUSED_HINT
from agent.client import refused_line

# `arena` itself (arena/cli.py), run from this checkout rather than the installed script.
ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena.cli"]
VERSION = b"VERSION:2.0.0\r\n"
NOT_OUR_TURN = b"MATCHSTATE:1:0::|Ks\r\n"  # Kuhn: position 0 acts first
OUR_TURN = b"MATCHSTATE:0:0::Ks|\r\n"


async def _dealer(
    lines: bytes,
    ending: str,
    sent: trio.Event | None = None,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept one agent, wait for its version line, send ``lines`` (then set
    ``sent``: the agent is in its match), then end the connection: ``"reset"``
    (RST, SO_LINGER 0), ``"close"`` (FIN) or ``"wait"``."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    stream = await listeners[0].accept()
    await listeners[0].aclose()
    received = b""
    while not received.endswith(b"\n"):
        data = await stream.receive_some()
        assert data, "the agent closed before its version line"
        received += data
    assert received == VERSION
    await stream.send_all(lines)
    if sent is not None:
        sent.set()
    await trio.sleep(0.2)
    if ending == "reset":
        stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    elif ending == "wait":
        await trio.sleep_forever()
    await stream.aclose()


async def _agent(port: int, *extra: str, python: tuple[str, ...] = tuple(ARENA)) -> trio.Process:
    command = [*python, "agent", "kuhn", "127.0.0.1", str(port), "--strategy", "always-call", *extra]
    return await trio.lowlevel.open_process(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, preexec_fn=_foreground_sigint
    )


def _foreground_sigint() -> None:
    """The agent as a terminal's foreground job gets it: SIGINT's default. A
    suite started as a background job (``make test &``) has SIGINT ignored, an
    inherited disposition under which Python installs no KeyboardInterrupt handler
    and Ctrl-C cannot reach the agent at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def _finish(process: trio.Process) -> tuple[int, str]:
    assert process.stderr is not None
    err = b""
    with trio.fail_after(120):  # only guards against a hang: CI runs on 2 loaded cores
        while data := await process.stderr.receive_some():
            err += data
        status = await process.wait()
    return status, err.decode()


def _assert_one_line(err: str, text: str) -> None:
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("arena agent: "), err
    assert text in err


@pytest.mark.parametrize("lines", [NOT_OUR_TURN, OUR_TURN], ids=["waiting", "asked-to-act"])
async def test_connection_reset_mid_match_is_one_line_and_status_3(lines: bytes) -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(_dealer, lines, "reset")
        status, err = await _finish(await _agent(port))
    assert status == EXIT_CONNECTION
    _assert_one_line(err, "the connection to the dealer was lost")


async def test_connection_refused_is_one_line_and_status_3() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nobody listens there
    status, err = await _finish(await _agent(port))
    assert status == EXIT_CONNECTION
    _assert_one_line(err, f"cannot connect to 127.0.0.1:{port}")
    assert err.endswith(f"; {REFUSED_HINT}\n")  # no match's port (over, or its agent seated): where to look


async def test_a_seat_that_turns_the_agent_away_is_its_reason_and_status_3() -> None:
    """A hosted match's port of a seating not open yet answers a #REFUSED: line
    naming the port to use and closes: the agent's one line is that reason."""
    reason = "port 9001 is seating 2's of match m, not open yet: seating 1 plays first, on port 9000: connect there"
    async with trio.open_nursery() as nursery:
        port = await nursery.start(_dealer, refused_line(reason), "close")
        status, err = await _finish(await _agent(port))
    assert status == EXIT_CONNECTION
    assert err == f"arena agent: error: 127.0.0.1:{port} turned the connection away: {reason}\n"


async def test_sigint_is_one_line_and_status_130() -> None:
    """Ctrl-C in the match: once the agent has sent its version line and been
    sent a state (waited for, not slept for: a loaded machine can take seconds to
    start Python)."""
    sent = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(_dealer, NOT_OUR_TURN, "wait", sent)
        process = await _agent(port)
        with trio.fail_after(120):
            await sent.wait()
        process.send_signal(signal.SIGINT)
        status, err = await _finish(process)
        nursery.cancel_scope.cancel()
    assert status == EXIT_INTERRUPTED
    _assert_one_line(err, "interrupted")


# Sends this process a SIGINT the first time the audit event EVENT (with first
# argument ARG, ``*`` for any) happens, then runs the command named by ENTRY:
# `arena` (arena/cli.py) or `python -m agent` (agent/__main__.py). An exact
# moment, where a sleep before the signal would land anywhere on a loaded machine.
_SIGINT_AT = """
import os, runpy, signal, sys
event, arg, entry = sys.argv[1:4]
del sys.argv[1:4]
fired = []
def hook(name, args):
    if name == event and not fired and (arg == "*" or args[0] == arg):
        fired.append(name)
        os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(hook)
if entry == "agent":
    del sys.argv[1]  # python -m agent takes no command name
runpy.run_module(entry, run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(
    ("event", "arg", "entry"),
    [
        ("import", "trio", "arena.cli"),  # the first import of agent/cli.py's: mid-import
        ("import", "trio", "agent"),
        ("import", "strategies.base", "arena.cli"),
        ("socket.connect", "*", "arena.cli"),  # inside trio.run, opening the connection
    ],
    ids=["importing-arena", "importing-python-m-agent", "importing-strategies", "connecting"],
)
async def test_sigint_while_starting_is_one_line_and_status_130(event: str, arg: str, entry: str) -> None:
    """A person can press Ctrl-C before the match has started: while the modules
    import and while the agent connects, it is the same line and status."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(_dealer, NOT_OUR_TURN, "wait")
        process = await _agent(port, python=(sys.executable, "-c", _SIGINT_AT, event, arg, entry))
        status, err = await _finish(process)
        nursery.cancel_scope.cancel()
    assert status == EXIT_INTERRUPTED, err
    _assert_one_line(err, "interrupted")


async def test_dealer_closing_is_the_normal_end() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(_dealer, NOT_OUR_TURN + b"MATCHSTATE:1:0:cc:Qs|Ks\r\n", "close")
        status, err = await _finish(await _agent(port))
    # Ks against Qs at showdown, both checked: +1, and the match's one-line summary
    assert (status, err) == (EXIT_OK, "arena agent: the match is over: 1 hand, +1 chips, +1.000 chips/hand\n")


@pytest.mark.parametrize(
    ("args", "text"),
    [(["nosuchgame"], "neither a game file nor a known game name"), (["kuhn", "--strategy", "nope"], "unknown strategy")],
)
async def test_usage_errors_are_status_2(args: list[str], text: str) -> None:
    game, *rest = args
    done = await trio.run_process([*ARENA, "agent", game, "127.0.0.1", "1", *rest], capture_stderr=True, check=False, cwd=ROOT)
    assert done.returncode == EXIT_USAGE
    _assert_one_line(done.stderr.decode(), text)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["kuhn", "127.0.0.1"], "the following arguments are required: PORT"),
        (["kuhn", "127.0.0.1", "x"], "argument PORT: invalid int value: 'x'"),
        (["kuhn", "127.0.0.1", "99999"], "argument PORT: must be in 1..65535, got 99999"),
        (["kuhn", "127.0.0.1", "-5"], "argument PORT: must be in 1..65535, got -5"),
        (["kuhn", "127.0.0.1", "1", "--seed", "-1"], "argument --seed: must be in 0..4294967295, got -1"),
        (["kuhn", "127.0.0.1", "1", "--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["kuhn", "127.0.0.1", "1", "--key", "a b"],
         "argument --key (or $ARENA_SEAT_KEY): a seat key is 1 to 256 printable ASCII characters without spaces, not 'a b'"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As every arena command's (issue 20): not argparse's usage block and error
    line; a negative seed was a traceback, port 99999 a connection error."""
    from arena.cli import main

    assert main(["agent", *args]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"arena agent: error: {message} (see --help)\n")


async def test_bad_dealer_line_is_status_1() -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(_dealer, b"HELLO\r\n", "wait")
        status, err = await _finish(await _agent(port))
        nursery.cancel_scope.cancel()
    assert status == EXIT_AGENT_ERROR
    _assert_one_line(err, "not a MATCHSTATE message: 'HELLO'")


@pytest.mark.parametrize(("extra", "env", "sent"), [
    ((), {}, VERSION),
    (("--key", "k3y"), {}, b"#KEY:k3y\r\n" + VERSION),
    ((), {"ARENA_SEAT_KEY": "fr0m-env"}, b"#KEY:fr0m-env\r\n" + VERSION),
    (("--key", "k3y"), {"ARENA_SEAT_KEY": "fr0m-env"}, b"#KEY:k3y\r\n" + VERSION),  # the option wins
], ids=["none", "option", "environment", "both"])
async def test_a_seat_key_goes_before_the_version_line(extra: tuple[str, ...], env: dict[str, str], sent: bytes) -> None:
    """The hosted arena's seats take a ``#KEY:`` line first (docs/protocol.md, Seat keys)."""
    received = b""

    async def dealer(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        nonlocal received
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        task_status.started(listeners[0].socket.getsockname()[1])
        async with await listeners[0].accept() as stream:
            while not received.endswith(VERSION) and (data := await stream.receive_some()):
                received += data
        await listeners[0].aclose()

    async with trio.open_nursery() as nursery:
        port = await nursery.start(dealer)
        environment = {key: value for key, value in os.environ.items() if key != "ARENA_SEAT_KEY"} | env
        command = [*ARENA, "agent", "kuhn", "127.0.0.1", str(port), *extra]
        done = await trio.run_process(command, capture_stderr=True, check=False, cwd=ROOT, env=environment)
    assert (done.returncode, received) == (EXIT_OK, sent)
