"""``arena match``: totals checked exactly against results worked out from the dealt cards."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import trio

import arena.match.seats as arena_match_module
from agent.client import play
from arena.commands.match import main
from arena.match import Bot, agent_seed, seat_names
from poker.deal import Dealer
from poker.gamedef import Game, load_game
from poker.protocol import MatchState, parse_state_line
from poker.state import CALL, FOLD, Action, ActionType, State
from poker.stats import format_chips
from strategies.base import Options, Spec, Strategy, register, strategy_names

KUHN = load_game("kuhn")
RAISE = Action(ActionType.RAISE)
ROOT = Path(__file__).resolve().parents[2]


def arena_match(*args: str) -> list[str]:
    """The real command line, run as a process from the repository root."""
    return [sys.executable, "-m", "arena", "match", *args]


def expected_values(game: Game, seed: int, hands: int, rules: tuple[str, ...]) -> list[tuple[Fraction, ...]]:
    """Per hand, each seat's chips when seat s plays ``rules[s]`` ("call" or
    "raise"), seats rotating as the dealer rotates them: position p sits in
    seat (p + h) mod n. Kuhn hands are ranked by their one card, and Kuhn's
    cards are all one suit, so the card id orders them."""
    n = game.num_players
    dealer = Dealer(game, seed=seed)
    result = []
    for hand in range(hands):
        deal = dealer.next_hand()
        state = State(game)
        while not state.finished:
            rule = rules[(state.current_player() + hand) % n]
            state = state.apply(RAISE if rule == "raise" and state.can_raise() else CALL)
        values = state.values([deal.hole[p][0] for p in range(n)])
        result.append(tuple(values[(s - hand) % n] for s in range(n)))
    return result


def log_values(path: Path, game: Game) -> dict[int, dict[str, float]]:
    """hand id -> {seat name: chips} from a dealer log."""
    lines = [parse_state_line(line, game) for line in path.read_text().splitlines() if line.startswith("STATE:")]
    return {s.hand_id: dict(zip(s.names, s.values)) for s in lines}


def results(run_dir: Path) -> dict[str, object]:
    document: dict[str, object] = json.loads((run_dir / "results.json").read_text())
    return document


@pytest.mark.parametrize("mode", [["--in-process"], []], ids=["in-process", "processes"])
def test_call_vs_raise_totals_match_the_cards(
    tmp_path: Path, mode: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["kuhn", "--hands", "200", "--seed", "1", "always-call", "always-raise", "--run-dir", str(tmp_path), *mode]
    assert main(argv) == 0
    expected = expected_values(KUHN, 1, 200, ("call", "raise"))
    per_hand = log_values(tmp_path / "match.log", KUHN)
    assert [(Fraction(v["always-call"]), Fraction(v["always-raise"])) for _, v in sorted(per_hand.items())] == expected
    totals = tuple(float(sum(column)) for column in zip(*expected))
    score = (tmp_path / "match.log").read_text().splitlines()[-1]
    assert score == f"SCORE:{totals[0]:g}|{totals[1]:g}:always-call|always-raise"
    agents = results(tmp_path)["agents"]
    assert isinstance(agents, list)
    assert [a["total_chips"] for a in agents] == list(totals)
    assert [a["mean"] for a in agents] == [t / 200 for t in totals]
    table = capsys.readouterr().out.splitlines()
    assert table[0] == f"kuhn: 200 hands, seed 1, run dir {tmp_path}"
    assert table[1].split() == ["agent", "strategy", "total", "chips", "chips/hand", "95%", "CI"]
    assert table[2].split()[:4] == ["always-call", "always-call", f"{totals[0]:.0f}", f"{totals[0] / 200:.3f}"]


def test_duplicate_always_call_pairs_cancel_hand_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kuhn", "--hands", "200", "--seed", "5", "always-call", "always-call", "--duplicate"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 0
    first = log_values(tmp_path / "match.1.log", KUHN)
    second = log_values(tmp_path / "match.2.log", KUHN)
    assert sorted(first) == sorted(second) == list(range(200))
    # Seats reversed: each agent holds, hand for hand, the cards and position its
    # opponent held, and both check it down, so the pair sums to exactly 0.
    for hand in range(200):
        assert first[hand]["always-call-1"] + second[hand]["always-call-1"] == 0
        assert first[hand]["always-call-1"] != 0
    agents = results(tmp_path)["agents"]
    assert isinstance(agents, list)
    assert [(a["name"], a["mean"], a["ci95"], a["total_chips"]) for a in agents] == [
        ("always-call-1", 0.0, 0.0, 0.0),
        ("always-call-2", 0.0, 0.0, 0.0),
    ]
    assert "duplicate over 2 seatings" in capsys.readouterr().out


def test_duplicate_three_players_plays_all_six_seatings(tmp_path: Path) -> None:
    kuhn3 = load_game("kuhn3p")
    argv = ["kuhn3p", "--hands", "30", "--seed", "7", "always-call", "always-call", "always-raise", "--duplicate"]
    assert main([*argv, "--in-process", "--run-dir", str(tmp_path)]) == 0
    matches = results(tmp_path)["matches"]
    assert isinstance(matches, list)
    seatings = {tuple(m["names"]) for m in matches}
    assert len(seatings) == 6
    assert seatings == {
        (a, b, c)
        for a in ("always-call-1", "always-call-2", "always-raise")
        for b in ("always-call-1", "always-call-2", "always-raise")
        for c in ("always-call-1", "always-call-2", "always-raise")
        if len({a, b, c}) == 3
    }
    # Each seating's totals are the independent totals for its seat rules.
    for index, match in enumerate(matches, start=1):
        rules = tuple("raise" if name == "always-raise" else "call" for name in match["names"])
        expected = expected_values(kuhn3, 7, 30, rules)
        assert match["totals"] == [float(sum(column)) for column in zip(*expected)], index


def registered(name: str, help_: str, kind: type[Strategy]) -> str:
    """Register the test strategy ``kind`` as ``name`` (once per process)."""
    if name not in strategy_names():

        @register(name, f"{help_} (tests only)")
        def _make(game: Game, options: Options, *, seed: int | None) -> Strategy:
            return kind()

    return name


class IllegalFolder(Strategy):
    """Folds even when a check is free: the client refuses to send it."""

    def act(self, view: MatchState) -> Action:
        return FOLD


@pytest.fixture
def illegal_folder() -> str:
    return registered("test-illegal-folder", "folds when checking is free", IllegalFolder)


def test_agent_failure_stops_the_match_with_a_message(
    tmp_path: Path, illegal_folder: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["kuhn", "--hands", "10", "--seed", "1", illegal_folder, "always-call", "--in-process"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    # The agent's own fault comes first; the dealer's abort (it lost the seat) follows.
    assert err.strip().splitlines()[-1].startswith(
        "arena match: error: match: agent test-illegal-folder (seat 1) failed: strategy"
        " 'test-illegal-folder' chose f in 'MATCHSTATE:0:0::Ks|': fold is not legal when a check is free"
    )


class Sleeper(Strategy):
    """Calls, after half a second: longer than a 200 ms response limit."""

    def act(self, view: MatchState) -> Action:
        time.sleep(0.5)
        return CALL


@pytest.fixture
def sleeper() -> str:
    return registered("test-sleeper", "calls after 0.5 s", Sleeper)


def test_dealer_abort_exits_non_zero_with_the_reason(
    tmp_path: Path, sleeper: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["kuhn", "--hands", "10", "--seed", "1", sleeper, "probe", "--t-response", "200", "--in-process"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"arena match: error: match: the dealer aborted after 0 hands: ERROR: seat 1 ran out of time"
        f" (see {tmp_path / 'match.err'})"
    ]
    assert not (tmp_path / "results.json").exists()


def test_a_one_millisecond_response_limit_reports_the_dealer_not_the_agents(tmp_path: Path) -> None:
    """Agent processes do not answer within 1 ms: the dealer drops them before
    their version line or times out a response; they then lose their connection
    (status 3) or see it end (status 0). The line says what the dealer said
    first, and the match ends instead of waiting for a seat that will never come."""
    argv = ["kuhn", "--hands", "3000", "--seed", "1", "always-call", "always-raise", "--t-response", "1"]
    done = subprocess.run(
        arena_match(*argv, "--run-dir", str(tmp_path)), cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    if done.returncode == 0:
        pytest.skip("every one of 3000 hands' responses came within 1 ms on this machine")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    err = tmp_path / "match.err"
    assert lines[0].startswith(
        (
            "arena match: error: match: the dealer aborted after ",
            "arena match: error: match: the dealer was stopped: agent ",
        )
    ), lines[0]
    assert f"(see {err})" in lines[0]
    reasons = ("ran out of time", "could not get action from seat", "no version line within 0.001 s")
    assert any(reason in lines[0] for reason in reasons), lines[0]
    assert "Error" not in lines[0]  # no exception class names (trio.BrokenResourceError)


def test_agents_that_cannot_connect_after_the_dealer_gave_up_come_after_the_dealer(tmp_path: Path) -> None:
    """Agent processes take longer than 1 ms to start: the dealer stops waiting
    for them, and they then find no dealer (status 3)."""
    argv = ["kuhn", "--hands", "20", "--seed", "1", "always-call", "always-raise", "--start-timeout", "1"]
    done = subprocess.run(
        arena_match(*argv, "--run-dir", str(tmp_path)), cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        "arena match: error: match: the dealer aborted after 0 hands: ERROR: timed out waiting for seat 1 to connect"
        f" (see {tmp_path / 'match.err'}); then agent "
    ), lines[0]
    assert "exited with status 3: arena agent: error: cannot connect to 127.0.0.1:" in lines[0]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--t-response", "-5", "argument --t-response: must be a positive number of milliseconds, got -5"),
        ("--t-hand", "0", "argument --t-hand: must be a positive number of milliseconds, got 0"),
        ("--t-per-hand", "1.5", "argument --t-per-hand: not a whole number: '1.5'"),
        ("--start-timeout", "-5", "argument --start-timeout: must be a positive number of milliseconds or -1 (no limit), got -5"),
        ("--hands", "1", "argument --hands: must be at least 2 (a confidence interval needs two hands), got 1"),
        ("--seed", "4294967296", "argument --seed: must be in 0..4294967295, got 4294967296"),
    ],
)
def test_bad_options_are_one_line_usage_errors(tmp_path: Path, option: str, value: str, message: str) -> None:
    base = {"--hands": "20", "--seed": "1"}
    base[option] = value
    argv = ["kuhn", "always-call", "probe", *(x for pair in base.items() for x in pair), "--run-dir", str(tmp_path / "r")]
    done = subprocess.run(arena_match(*argv), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"arena match: error: {message} (see --help)"]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["kuhn", "--hands", "5", "--seed", "1", "always-call"], "kuhn is a 2-player game: give 2 bots, not 1"),
        (["kuhn", "--hands", "5", "--seed", "1"], "missing BOT (both are needed unless --resume RUN_DIR)"),
        (["kuhn", "--hands", "5", "--seed", "1", "always-call", "lduc-cfr"], "unknown strategy 'lduc-cfr'; did you mean leduc-cfr?"),
        (["kuhn", "--hands", "5", "--seed", "1", "always-call", "nope"], "unknown strategy 'nope'"),
        (["kuhn", "--hands", "1", "--seed", "1", "always-call", "probe"], "--hands: must be at least 2 (a confidence"),
        (["kuhn", "--hands", "5", "--seed", "-1", "always-call", "probe"], "--seed: must be in 0..4294967295, got -1"),
        (["nogame", "--hands", "5", "--seed", "1", "always-call", "probe"], "'nogame' is neither a game file"),
    ],
)
def test_bad_arguments(argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([*argv, "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "run").exists()


def test_hands_and_seed_have_defaults_and_the_seed_is_printed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 20 §3.4: the usage shows --hands and --seed optional, so they are: 1000
    hands, a seed from the clock, printed so the run can be repeated."""
    run = tmp_path / "run"
    assert main(["kuhn", "--in-process", "always-call", "always-call", "--run-dir", str(run)]) == 0
    plan = json.loads((run / "plan.json").read_text())
    assert plan["hands"] == 1000
    assert f"arena match: seed {plan['seed']} (--seed {plan['seed']} deals the same cards)" in capsys.readouterr().err


def specs(*texts: str) -> list[Spec]:
    return [Spec.parse(text) for text in texts]


def test_seat_names_and_seeds() -> None:
    assert seat_names(specs("always-call", "always-call", "random:size=pot")) == ("always-call-1", "always-call-2", "random")
    assert seat_names(specs("probe", "always-raise:size=min", "always-raise:size=max")) == (
        "probe",
        "always-raise-1",
        "always-raise-2",
    )
    assert agent_seed(1, 0) == agent_seed(1, 0)
    assert len({agent_seed(1, 0), agent_seed(1, 1), agent_seed(2, 0)}) == 3


# -- stopping on SIGINT/SIGTERM, --resume, --run-dir over a run (issue 14) --------------------


def state_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("STATE:")]


def without_names(lines: list[str]) -> list[str]:
    """STATE lines less their last field (the names), to compare runs whose bots differ only in name."""
    return [line.rsplit(":", 1)[0] for line in lines]


def wait_for_hands(log: Path, hands: int, process: subprocess.Popen[str], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not (log.exists() and len(state_lines(log)) >= hands):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{log} did not reach {hands} hands"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("signum", "mode"),
    [(signal.SIGINT, []), (signal.SIGTERM, ["--in-process"])],
    ids=["sigint-processes", "sigterm-in-process"],
)
def test_signal_writes_partial_results_and_resume_finishes_with_the_same_cards(
    tmp_path: Path, signum: int, mode: list[str]
) -> None:
    run = tmp_path / "run"
    hands = 3000
    argv = ["kuhn", "--hands", str(hands), "--seed", "11", "always-call", "always-raise", "--run-dir", str(run), *mode]
    # A session of its own, signalled as a whole, as a terminal's Ctrl-C signals
    # the foreground process group.
    process = subprocess.Popen(
        arena_match(*argv), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    wait_for_hands(run / "match.log", 50, process)
    os.killpg(process.pid, signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    played = len(state_lines(run / "match.log"))
    assert 50 <= played < hands
    assert err.splitlines() == [
        f"arena match: interrupted after {played} of {hands} hands; finish with: arena match --resume {run}"
    ]
    document = json.loads((run / "results.json").read_text())
    assert document["partial"] is True
    assert document["hands_played"] == [played]
    assert [a["hands"] for a in document["agents"]] == [played, played]
    expected = expected_values(KUHN, 11, hands, ("call", "raise"))
    assert [a["total_chips"] for a in document["agents"]] == [float(sum(c)) for c in zip(*expected[:played])]
    table = out.splitlines()
    assert table[0] == f"kuhn: partial: {played} of {hands} hands, seed 11, run dir {run}"
    assert len(table) == 4
    # The agents were stopped cleanly (the dealer closed their connections; the
    # signal did not reach them): nothing on their stderr. No lock is left.
    for err_file in run.glob("match.player*.err"):
        assert err_file.read_text() == ""
    assert not (run / "match.lock").exists() and not (run / "run.lock").exists()

    resumed = subprocess.run(arena_match("--resume", str(run), *mode), cwd=ROOT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    per_hand = log_values(run / "match.log", KUHN)
    assert sorted(per_hand) == list(range(hands))
    assert [(Fraction(v["always-call"]), Fraction(v["always-raise"])) for _, v in sorted(per_hand.items())] == expected
    document = json.loads((run / "results.json").read_text())
    assert document["partial"] is False
    assert document["hands_played"] == [hands]
    assert resumed.stdout.splitlines()[0] == f"kuhn: {hands} hands, seed 11, run dir {run}"


# -- an interruption in the middle of a hand, in the second seating -------------------

_SIGNAL_AT = {"after": 0, "decisions": 0, "fired": 0}


class SignalRaiser(Strategy):
    """Raises whenever it can (as ``always-raise``); once, at its first decision of
    round 2 after ``_SIGNAL_AT["after"]`` decisions in this process, it sends this
    process SIGINT."""

    def act(self, view: MatchState) -> Action:
        _SIGNAL_AT["decisions"] += 1
        state = view.state
        late = _SIGNAL_AT["decisions"] > _SIGNAL_AT["after"]
        if not _SIGNAL_AT["fired"] and late and state.round == 1 and not state.actions[1]:
            _SIGNAL_AT["fired"] = 1
            os.kill(os.getpid(), signal.SIGINT)
        return RAISE if state.can_raise() else CALL


@pytest.fixture
def signal_raiser() -> str:
    _SIGNAL_AT.update(after=0, decisions=0, fired=0)
    return registered("test-signal-raiser", "always-raise that interrupts its own process once", SignalRaiser)


def test_interrupt_in_a_hand_of_the_second_seating_resumes_from_the_transaction_log(
    tmp_path: Path, signal_raiser: str, capsys: pytest.CaptureFixture[str]
) -> None:
    hands = 60
    run, reference = tmp_path / "run", tmp_path / "reference"
    # Leduc, both raising: round 2 goes raise, raise, call, so a hand the signal
    # lands in is unfinished when the dealer stops. Seating 1 takes at most 3
    # decisions a hand of each agent: the signal comes in seating 2.
    _SIGNAL_AT["after"] = 3 * hands + 40
    argv = ["leduc", "--hands", str(hands), "--seed", "3", signal_raiser, "always-raise", "--duplicate", "--in-process"]
    assert main([*argv, "--run-dir", str(run)]) == 130
    assert _SIGNAL_AT["fired"]
    err = capsys.readouterr().err.strip().splitlines()
    first = state_lines(run / "match.1.log")
    second = state_lines(run / "match.2.log")
    assert len(first) == hands
    assert 0 < len(second) < hands
    assert err == [
        f"arena match: interrupted after {hands + len(second)} of {2 * hands} hands;"
        f" finish with: arena match --resume {run}"
    ]
    document = json.loads((run / "results.json").read_text())
    assert (document["partial"], document["hands_played"]) == (True, [hands, len(second)])
    # The transaction log holds actions of the hand the signal stopped.
    last_transaction = (run / "match.2.tlog").read_text().splitlines()[-1]
    assert int(last_transaction.split()[1]) == len(second)
    seating_one = (run / "match.1.log").read_bytes()

    assert main(["--resume", str(run), "--in-process"]) == 0
    assert (run / "match.1.log").read_bytes() == seating_one  # complete: read, not replayed
    reference_argv = ["leduc", "--hands", str(hands), "--seed", "3", "always-raise", "always-raise", "--duplicate"]
    assert main([*reference_argv, "--in-process", "--run-dir", str(reference)]) == 0
    for name in ("match.1.log", "match.2.log"):
        assert without_names(state_lines(run / name)) == without_names(state_lines(reference / name)), name
    resumed = json.loads((run / "results.json").read_text())
    assert (resumed["partial"], resumed["hands_played"]) == (False, [hands, hands])
    expected = json.loads((reference / "results.json").read_text())
    assert [m["totals"] for m in resumed["matches"]] == [m["totals"] for m in expected["matches"]]


# -- --resume against the plan ----------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("finished") / "run"
    argv = ["kuhn", "--hands", "20", "--seed", "2", "always-call", "always-raise", "--in-process"]
    assert main([*argv, "--run-dir", str(run)]) == 0
    return run


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["leduc"], "was played with game kuhn, not leduc"),
        (["kuhn", "always-call", "probe"], "was played with bots always-call always-raise, not always-call probe"),
        (["--hands", "30"], "was played with --hands 20, not 30"),
        (["--seed", "3"], "was played with --seed 2, not 3"),
        (["--duplicate"], "was played with --duplicate false, not true"),
        (["--t-response", "5000"], "was played with --t-response 600000, not 5000"),
        (["--force"], "--force does not go with --resume (a resume never replaces a run)"),
    ],
)
def test_resume_refuses_a_different_plan(
    finished_run: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (finished_run / "results.json").read_bytes()
    assert main(["--resume", str(finished_run), *extra]) == 2
    err = capsys.readouterr().err
    where = "" if message.startswith("--") else f"--resume {finished_run} "
    assert err.splitlines() == [f"arena match: error: {where}{message}"]
    assert (finished_run / "results.json").read_bytes() == before


def test_resume_accepts_the_plan_repeated_and_another_name_for_the_game(
    finished_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (finished_run / "results.json").read_bytes()
    argv = ["kuhn.limit.2p", "always-call", "always-raise", "--hands", "20", "--seed", "2", "--t-hand", "600000"]
    assert main(["--resume", str(finished_run), *argv, "--in-process"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"arena match: {finished_run} is complete; nothing left to play"]
    assert out.splitlines()[0] == f"kuhn: 20 hands, seed 2, run dir {finished_run}"
    assert (finished_run / "results.json").read_bytes() == before


def test_resume_refuses_a_run_directory_in_use(finished_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from dealer.lock import MatchLock;"
         f" lock = MatchLock(__import__('pathlib').Path({str(finished_run / 'run.lock')!r}));"
         " print('held', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert main(["--resume", str(finished_run)]) == 2
    finally:
        holder.kill()
        holder.wait()
    assert capsys.readouterr().err.splitlines() == [
        f"arena match: error: {finished_run} is in use by another arena match (process {holder.pid})"
    ]


def test_resume_without_a_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--resume", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"arena match: error: --resume {tmp_path}: no plan.json there: not a run of arena match, or one that never started"
    ]


# -- --run-dir over an existing run -------------------------------------------------------


def test_run_dir_with_a_finished_run_is_refused_without_force(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = ["kuhn", "--hands", "20", "--seed", "2", "always-call", "always-raise", "--duplicate", "--in-process"]
    assert subprocess.run(arena_match(*first, "--run-dir", str(run)), cwd=ROOT, capture_output=True).returncode == 0
    results = (run / "results.json").read_bytes()
    second = ["kuhn", "--hands", "30", "--seed", "4", "always-call", "probe", "--in-process", "--run-dir", str(run)]
    refused = subprocess.run(arena_match(*second), cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"arena match: error: --run-dir {run} holds a finished run (plan.json, ...): "
        "use --force to replace it, or another directory"
    ]
    assert (run / "results.json").read_bytes() == results
    forced = subprocess.run(arena_match(*second, "--force"), cwd=ROOT, capture_output=True, text=True)
    assert forced.returncode == 0, forced.stderr
    assert json.loads((run / "results.json").read_text())["hands"] == 30
    assert json.loads((run / "plan.json").read_text())["bots"] == ["always-call", "probe"]
    # The old run's files are gone, not mixed with the new one's.
    assert not list(run.glob("match.1.*")) and not list(run.glob("match.2.*"))
    assert len(state_lines(run / "match.log")) == 30


def test_run_dir_with_an_unfinished_run_points_to_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "plan.json").write_text("{}")
    argv = ["kuhn", "--hands", "20", "--seed", "2", "always-call", "probe", "--in-process", "--run-dir", str(run)]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"arena match: error: --run-dir {run} holds a run (plan.json, ...): "
        f"use --force to replace it, --resume {run} to finish it, or another directory"
    ]
    assert (run / "plan.json").read_text() == "{}"


def test_run_dir_that_is_empty_or_holds_other_files_is_used(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    argv = ["kuhn", "--hands", "20", "--seed", "2", "always-call", "probe", "--in-process", "--run-dir", str(tmp_path)]
    assert main(argv) == 0
    assert (tmp_path / "notes.txt").read_text() == "mine"


# -- the results table (issue 14, fault 13) -------------------------------------------------


def column_spans(row: str) -> list[tuple[int, int]]:
    """Where each of the five cells of ``row`` starts and ends; cells hold no spaces."""
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", row)]
    assert len(spans) == 5, row
    return spans


def test_six_players_table_has_aligned_columns_and_chips_in_hundredths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Seed 4 leaves split pots: fractional chip totals.
    bots = ["always-call", "always-call", "random:size=pot", "random", "always-raise:size=pot", "probe"]
    argv = ["holdem.nolimit.6p", "--hands", "200", "--seed", "4", *bots, "--in-process", "--run-dir", str(tmp_path)]
    assert main(argv) == 0
    table = capsys.readouterr().out.splitlines()
    header, rows = table[1], table[2:8]
    assert table[8].startswith("best unbiased estimate beside the money")  # all-in adjusted, below the table
    assert [line.split()[:3] for line in table[10:]] == [[b.name, "all-in", "adjusted"] for b in plan_bots(bots)]
    assert header.split() == ["agent", "strategy", "total", "chips", "mbb/g", "95%", "CI"]
    # agent and strategy left-aligned under their titles; the numbers right-aligned under theirs.
    starts = [header.index("agent"), header.index("strategy")]
    ends = [header.index("total chips") + len("total chips"), header.index("mbb/g") + 5, len(header)]
    for row in rows:
        spans = column_spans(row)
        assert [start for start, _ in spans[:2]] == starts, row
        assert [end for _, end in spans[2:]] == ends, row
    agents = results(tmp_path)["agents"]
    assert isinstance(agents, list)
    chips = [row.split()[2] for row in rows]
    assert any("." in cell for cell in chips), chips  # the seed's split pots
    for cell, agent in zip(chips, agents):
        assert re.fullmatch(r"-?\d+(\.\d\d)?", cell), cell
        assert float(cell) == pytest.approx(agent["total_chips"], abs=0.005)
        if "." not in cell:
            assert float(cell) == agent["total_chips"]
    for row in rows:
        assert re.fullmatch(r"-?\d+\.\d{3}", row.split()[3]) and re.fullmatch(r"±\d+\.\d{3}", row.split()[4]), row


@pytest.mark.parametrize(
    ("chips", "text"),
    [(557848.166667, "557848.17"), (-20.5, "-20.50"), (12.0, "12"), (-0.0, "0"), (-0.001, "0.00"), (1e6, "1000000")],
)
def test_format_chips(chips: float, text: str) -> None:
    assert format_chips(chips) == text


def test_an_agent_that_leaves_before_the_match_is_over_stops_the_dealer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dealer drops a connection that closes without a version line and waits
    for another; the agent is gone (status 0), so the match used to wait for ever."""
    calls: list[int] = []

    async def play_or_leave(host: str, port: int, game: Game, strategy: Strategy, *, key: str | None = None) -> None:
        calls.append(port)
        if len(calls) == 1:
            await play(host, port, game, strategy, key=key)  # the seat's key, which the runner gives its agents
        else:
            await (await trio.open_tcp_stream(host, port)).aclose()

    def give_up(signum: int, frame: object) -> None:
        raise TimeoutError("arena match is still waiting for the dealer")

    monkeypatch.setattr(arena_match_module, "play", play_or_leave)
    # Short, to keep the test quick, but long enough for the dealer to have reported
    # the drop before it is stopped on a loaded machine (2 busy cores in CI).
    monkeypatch.setattr(arena_match_module, "AGENT_GONE_S", 1.0)
    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(30)
    try:
        argv = ["kuhn", "--hands", "20", "--seed", "1", "always-call", "probe", "--in-process"]
        assert main([*argv, "--run-dir", str(tmp_path)]) == 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    line = capsys.readouterr().err.strip()
    assert line.startswith("arena match: error: match: the dealer was stopped: agent "), line
    assert "ended the connection before the match was over; the dealer's last message: WARNING: dropped" in line
    assert line.endswith(f"closed without a version line (see {tmp_path / 'match.err'})"), line


def plan_bots(texts: list[str]) -> list[Bot]:
    parsed = specs(*texts)
    return [Bot(spec, name, 0) for spec, name in zip(parsed, seat_names(parsed))]


def test_best_estimate_of_kuhn_call_against_raise_is_exactly_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both show down for 2 chips every hand, so each seat's value is exactly 0.
    AIVAT with always-raise's own value function is exact hand by hand here (the
    value function is always-raise against itself, which ends every hand as
    always-call does), so its interval is 0 wide; always-call gets its negative."""
    argv = ["kuhn", "--hands", "200", "--seed", "1", "always-call", "always-raise", "--in-process", "--run-dir", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[4] == "best unbiased estimate beside the money (lower variance):"
    assert [line.split() for line in out[6:]] == [
        ["always-call", "-aivat", "of", "always-raise", "0.000", "±0.000"],
        ["always-raise", "aivat", "0.000", "±0.000"],
    ]
    best = results(tmp_path)["best_estimates"]
    assert best == [
        {"name": "always-call", "estimator": "-aivat of always-raise", "mean": 0.0, "ci95": 0.0, "hands": 200},
        {"name": "always-raise", "estimator": "aivat", "mean": 0.0, "ci95": 0.0, "hands": 200},
    ]


def test_best_estimate_of_leduc_duplicate_is_aivat_with_a_narrower_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["leduc", "--hands", "400", "--seed", "21", "leduc-cfr", "always-raise", "--duplicate", "--in-process"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "(lower variance; each hand averaged over its seatings):" in out
    document = results(tmp_path)
    agents, best = document["agents"], document["best_estimates"]
    assert isinstance(agents, list) and isinstance(best, list)
    assert [b["estimator"] for b in best] == ["aivat", "-aivat of leduc-cfr"]
    assert best[0]["mean"] == pytest.approx(-best[1]["mean"]) and best[0]["hands"] == 400
    assert best[0]["ci95"] < agents[0]["ci95"] / 3
    # The same value as the money (its wide interval holds AIVAT's mean); the
    # exact value is checked on many hands in tests/analysis/test_aivat.py.
    assert abs(best[0]["mean"] - agents[0]["mean"]) < agents[0]["ci95"]


def test_best_estimate_of_no_limit_is_the_all_in_adjusted_duplicate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from analysis.allin import adjusted_hands
    from analysis.hands import concat
    from analysis.logs import read_log

    argv = ["leduc.nolimit", "--hands", "200", "--seed", "2", "random:size=max", "always-call", "--duplicate"]
    assert main([*argv, "--in-process", "--run-dir", str(tmp_path)]) == 0
    best = results(tmp_path)["best_estimates"]
    assert isinstance(best, list) and [b["estimator"] for b in best] == ["all-in adjusted"] * 2
    game = load_game("leduc.nolimit")
    adjusted, allin = adjusted_hands(concat([read_log(tmp_path / f"match.{k}.log", game) for k in (1, 2)]))
    assert allin.adjusted.any()
    mine = adjusted.name_values("random")
    assert best[0]["mean"] == pytest.approx(float(mine.mean()), abs=1e-9)  # each hand in both seatings
    assert best[0]["mean"] == pytest.approx(-best[1]["mean"], abs=1e-9)


def test_every_hand_of_a_portfolio_says_which_component_played_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.commands.analyze import main as analyze
    from analysis.hand_files import read_hands

    argv = ["kuhn", "--hands", "60", "--seed", "3", "portfolio", "always-raise", "--duplicate", "--in-process"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 0
    labels = {"kuhn-cfr", "tilt:preset=orange", "tilt:preset=peach"}
    for k in (1, 2):
        side = tmp_path / f"match.{k}.portfolio.components.csv"
        lines = [line.split(",", 1) for line in side.read_text().splitlines()]
        assert [int(hand) for hand, _ in lines] == list(range(60))
        assert {label for _, label in lines} <= labels
        for path in (tmp_path / f"match.{k}.log", tmp_path / f"match.{k}.hands.msgpack"):
            hands = read_hands(path)
            assert hands.components["portfolio"] == tuple(label for _, label in lines)
    capsys.readouterr()
    assert analyze([str(tmp_path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["components"]
    assert {row["component"] for row in rows} <= labels
    assert sum(row["hands"] for row in rows) == 120
    # Each hand estimated with the component that played it: AIVAT of the portfolio itself.
    assert analyze([str(tmp_path), "--format", "json", "--strategy", "portfolio", "--player", "portfolio"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["estimated"]["aivat_values"].startswith("TreeValues: the component that played each hand")
    estimated = {row["name"]: row for row in document["estimators"]}
    assert estimated["aivat"]["hands"] == estimated["raw"]["hands"] == 120
    assert estimated["aivat"]["std"] < estimated["raw"]["std"]
    best = results(tmp_path)["best_estimates"]
    assert isinstance(best, list) and "portfolio" in {b["name"] for b in best}
    # --force removes the side files with the rest of the run.
    assert main([*argv[:5], "always-call", "always-raise", "--in-process", "--run-dir", str(tmp_path), "--force"]) == 0
    assert not list(tmp_path.glob("*.components.csv"))


def test_a_re_solving_bot_records_its_values_beside_each_seating_log(tmp_path: Path) -> None:
    """``arena match`` seats a ``resolve`` bot with ``record=`` beside each
    seating's log: one record per hand, which AIVAT with its own values reads
    (analysis/recorded_values.py); ``--force`` removes them with the run."""
    from analysis.hand_files import read_hands
    from analysis.match_score import score_match
    from analysis.recorded_values import RECORDED_VALUES, read_values, recorded_aivat

    argv = ["leduc.nolimit", "--hands", "20", "--seed", "3", "resolve:iterations=20", "always-call", "--duplicate", "--in-process"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 0
    game = load_game("leduc.nolimit")
    for k in (1, 2):
        hands = read_hands(tmp_path / f"match.{k}.log")
        records = read_values(tmp_path / f"match.{k}.resolve.values.msgpack", game)
        assert sorted(records) == list(range(20))
        terms = recorded_aivat(hands, "resolve", records)
        assert np.array_equal(terms.raw, hands.name_values("resolve"))
    # A match is scored by AIVAT with those values (analysis/known_values.py's entry), as its table is.
    tables = [read_hands(tmp_path / f"match.{k}.log", game) for k in (1, 2)]
    score = score_match(tables, ["resolve", "always-call"], game=game, hands=20, policies={"resolve": "resolve:iterations=20"})
    players = {p["name"]: p for p in score.to_json()["players"]}
    assert players["resolve"]["aivat"]["value_function"] == RECORDED_VALUES
    assert players["always-call"]["aivat"]["estimator"] == "-aivat of resolve"
    assert main([*argv[:5], "always-call", "always-raise", "--in-process", "--run-dir", str(tmp_path), "--force"]) == 0
    assert not list(tmp_path.glob("*.values.msgpack"))
