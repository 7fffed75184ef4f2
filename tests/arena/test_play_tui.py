"""``arena play --tui``: the terminal table driven by scripted input, the real
command as a process; what it prints and what the dealer logged are checked
exactly (leduc.nolimit, seed 5: hand 1 you hold As against Ks, board Qs; hand 2
Kh against Qs, board Ah). Usage errors are one line with status 2."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from analysis.logs import read_log
from analysis.phh import read_phh
from arena.commands.analyze import main as analyze
from arena.commands.play import main
from tests.arena.play_process import PlayProcess
from tests.holdem_matches import assert_same_hands


def run_tui(tmp_path: Path, script: str | None, *args: str) -> tuple[int, str, str, PlayProcess]:
    play = PlayProcess(tmp_path, *args, "--tui", stdin=subprocess.PIPE)
    if script is None:  # keep the input open: nobody answers
        status = play.process.wait(timeout=30)
        assert play.process.stdout is not None and play.process.stderr is not None
        return status, play.process.stdout.read(), play.process.stderr.read(), play
    out, err = play.process.communicate(script, timeout=30)
    return play.process.returncode, out, err, play


def test_a_scripted_no_limit_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = "x\nr 5000\nf\nr550\nc\nr1100\n"  # amounts beyond the ante of 100, as Leduc's rules count them
    status, out, err, play = run_tui(tmp_path, script, "leduc.nolimit", "--opponent", "always-call", "--hands", "2", "--seed", "5")
    assert status == 0, err
    # the clock counts from the dealer's 10 minutes; its deadline is the wall clock's
    assert re.search(r"^   pot 200, (10:00|9:5\d) to answer \(until \d\d:\d\d:\d\d\); type your move and press Enter:$", out, re.M)
    lines = [re.sub(r", \d+:\d\d to answer \(until \d\d:\d\d:\d\d\);", ", CLOCK;", line) for line in out.splitlines()]
    assert lines[:26] == [
        "-- every hand starts with 1200 chips a seat (the ACPC rule: stacks reset)",
        "-- hand 1 of 2: you hold A♠ against always-call",
        "   pot 200, CLOCK; type your move and press Enter:",
        "   c check | r N bet N (100..1100; pot 200) | q quit",
        "   ! not an action: 'x'; type f, c, or r (r N raises to N in no-limit)",
        "   ! 5000 chips is outside the legal range (100..1100)",
        "   ! fold is not legal when a check is free",
        "   you bet 550",
        "   always-call calls 550",
        "   flop: Q♠",
        "   pot 1300, CLOCK; type your move and press Enter:",
        "   c check | r N bet N (100..550; pot 550) | q quit",  # the flop's chips: 650 in before it
        "   you check",
        "   always-call checks",
        "   always-call shows K♠ (king-queen high)",
        "   you won 650 with ace-queen high (total +650 over 1 hand)",
        "-- hand 2 of 2: you hold K♥ against always-call",
        "   always-call checks",
        "   pot 200, CLOCK; type your move and press Enter:",
        "   c check | r N bet N (100..1100; pot 200) | q quit",
        "   you bet 1100 (all-in)",
        "   always-call calls 1100 (all-in)",
        "   flop: A♥",
        "   always-call shows Q♠ (ace-queen high)",
        "   you won 1200 with ace-king high (total +1850 over 2 hands)",  # two hands are too few for an interval
        "-- match over after 2 hands: you +1850 chips (no 95% interval under 30 hands)",
    ]
    assert lines[26] == f"arena play: 2 of 2 hands played; logs in {play.run_dir} (arena analyze {play.run_dir})"
    assert re.fullmatch(r"you +1850 +925\.000 +-", lines[28])  # no interval under 30 hands, as the table said
    assert play.states() == [
        "STATE:0:r650c/cc:As|Ks/Qs:650|-650:you|always-call",
        "STATE:1:cr1200c/:Qs|Kh/Ah:-1200|1200:always-call|you",
    ]
    assert not (play.run_dir / "match.phhs").exists()  # PHH holds Texas hold'em only
    for source in (play.run_dir, play.run_dir / "match.hands.msgpack"):  # the log, then the hand records
        assert analyze([str(source)]) == 0
        table = capsys.readouterr().out.splitlines()
        assert table[0] == "leduc.nolimit.2p: 2 hands in 1 log, chips/hand"
        assert re.fullmatch(r"you +2 +925\.000 +388\.909 +±539\.000", table[2]), table


def test_a_no_limit_hold_em_table_fits_80_columns(tmp_path: Path) -> None:
    """HUNL's prompt, with its 20,000-chip stacks, once wrapped at 100 columns:
    every line now fits 80, and the streets have their names (an all-in on the
    flop still shows the turn, then the river). You are the small blind."""
    script = "r 300\nr 19700\n"
    status, out, err, play = run_tui(
        tmp_path, script, "holdem.nolimit", "--opponent", "always-call", "--hands", "1", "--seed", "5", "--seat", "2"
    )
    assert status == 0, err
    lines = out.splitlines()
    assert max(map(len, lines[: lines.index(next(l for l in lines if l.startswith("arena play:")))])) <= 80, out
    assert lines[0] == "-- every hand starts with 20000 chips a seat (the ACPC rule: stacks reset)"
    assert lines[3] == "   f fold | c call 50 | r N raise to N (200..20000; pot 300) | q quit"
    assert "   c check | r N bet N (100..19700; pot 600) | q quit" in lines  # the flop's chips
    assert lines[lines.index("   you bet 19700 (all-in)") :][:5] == [
        "   you bet 19700 (all-in)",
        "   always-call calls 19700 (all-in)",
        "   turn: A♥ 4♠ 6♥ T♠",
        "   river: A♥ 4♠ 6♥ T♠ A♣",
        "   always-call shows 3♥ 7♦ (pair of aces)",
    ]
    assert play.states()[0].startswith("STATE:0:r300c/cr20000c//:")


def test_the_clock_is_recalled_before_it_runs_out(tmp_path: Path) -> None:
    """With 12 s an action, a prompt left unanswered says "10 s left" once 2 s
    have gone, then the dealer's clock ends the match."""
    status, out, err, play = run_tui(
        tmp_path, None, "leduc", "--opponent", "always-call", "--hands", "1", "--seed", "11", "--t-response", "12000"
    )
    assert status == 1
    assert "   c check | r bet 2 | q quit\n   ! 10 s left to answer\n" in out, out


def test_a_hold_em_run_leaves_its_hands_as_phh(tmp_path: Path) -> None:
    """Hold'em (PHH has it, Kuhn and Leduc it has not): ``match.phhs`` beside the
    log, named in the closing lines, the log's hands with the seats' names."""
    status, out, err, play = run_tui(tmp_path, "c\n" * 8, "holdem.limit", "--opponent", "always-call", "--hands", "2", "--seed", "5")
    assert status == 0, err
    phh = play.run_dir / "match.phhs"
    lines = out.splitlines()
    assert lines[-5:-3] == [
        f"arena play: 2 of 2 hands played; logs in {play.run_dir} (arena analyze {play.run_dir})",
        f"arena play: hand history (PHH) in {phh}",
    ]
    assert play.states() == [
        "STATE:0:cc/cc/cc/cc:3h7d|6dQc/Ah4s6h/Ts/Ac:-10|10:you|always-call",
        "STATE:1:cc/cc/cc/cc:Kd6s|2c7d/8hAd5d/9h/Ts:10|-10:always-call|you",
    ]
    log = read_log(play.run_dir / "match.log")
    assert_same_hands(log, read_phh(phh))
    assert "players = ['you', 'always-call']" in phh.read_text()


def test_the_input_ending_leaves_the_table(tmp_path: Path) -> None:
    status, out, err, play = run_tui(tmp_path, "c\nc\n", "leduc", "--opponent", "always-call", "--hands", "3", "--seed", "11")
    assert status == 130
    assert err.strip().splitlines()[-1] == "arena play: the input ended; the log keeps the finished hands"
    assert play.states() == ["STATE:0:cc/cc:Qs|Ks/Qh:1|-1:you|always-call"]


def test_q_leaves_the_table(tmp_path: Path) -> None:
    status, _, err, play = run_tui(tmp_path, "q\nc\n", "leduc", "--opponent", "always-call", "--hands", "3", "--seed", "11")
    assert status == 130
    assert err.strip().splitlines()[-1] == "arena play: you left the table; the log keeps the finished hands"
    assert play.states() == []


def test_the_dealers_clock_ends_the_match(tmp_path: Path) -> None:
    status, out, err, play = run_tui(
        tmp_path, None, "leduc", "--opponent", "always-call", "--hands", "3", "--seed", "11", "--t-response", "200"
    )
    assert status == 1
    # the table says why the match ended (in lines of 80 columns: the reason wraps)
    assert "could not get action from seat 1" in " ".join(out.split())
    assert max(len(line) for line in out.splitlines() if not line.startswith("arena play:")) <= 80
    assert err.strip().splitlines()[-1].startswith(
        "arena play: error: the dealer aborted after 0 hands: ERROR: could not get action from seat 1"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["leduc", "--opponent", "always-call", "--opponent", "always-call"], "leduc is a 2-player game: give 1 --opponent, not 2"),
        (["leduc", "--opponent", "nobody"], "unknown strategy 'nobody'"),
        (["nogame", "--opponent", "always-call"], "nogame"),
        (["leduc", "--opponent", "always-call", "--seat", "3"], "--seat must be in 1..2, got 3"),
        (["leduc", "--opponent", "always-call", "--name", "a b"], "--name 'a b': a name has no spaces, '|' or ':'"),
        (["leduc", "--opponent", "always-call", "--port", "70000"], "must be in 0..65535"),
        (["leduc"], "the following arguments are required: --opponent"),
    ],
)
def test_usage_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([*argv, "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("arena play: error: ") and message in err, err
