"""``arena match``: totals checked exactly against results worked out from the dealt cards."""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest

from arena.match import agent_seed, main, seat_names
from poker.deal import Dealer
from poker.gamedef import Game, load_game
from poker.protocol import MatchState, parse_state_line
from poker.state import CALL, FOLD, Action, ActionType, State
from strategies.base import Options, Strategy, register, strategy_names

KUHN = load_game("kuhn")
RAISE = Action(ActionType.RAISE)


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


class IllegalFolder(Strategy):
    """Folds even when a check is free: the client refuses to send it."""

    def act(self, view: MatchState) -> Action:
        return FOLD


@pytest.fixture
def illegal_folder() -> Iterator[str]:
    name = "test-illegal-folder"
    if name not in strategy_names():

        @register(name, "folds when checking is free (tests only)")
        def _make(game: Game, options: Options, *, seed: int | None) -> Strategy:
            return IllegalFolder()

    yield name


def test_agent_failure_stops_the_match_with_a_message(
    tmp_path: Path, illegal_folder: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["kuhn", "--hands", "10", "--seed", "1", illegal_folder, "always-call", "--in-process"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "arena match: error: match: agent test-illegal-folder (seat 1) failed: strategy"
        " 'test-illegal-folder' chose f in 'MATCHSTATE:0:0::Ks|': fold is not legal when a check is free"
    )


def test_dealer_abort_exits_non_zero_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --t-per-hand 0 leaves a match budget of 0 ms: the first response is late.
    argv = ["kuhn", "--hands", "10", "--seed", "1", "always-call", "probe", "--t-per-hand", "0", "--in-process"]
    assert main([*argv, "--run-dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"arena match: error: match: the dealer aborted after 0 hands: ERROR: seat 1 ran out of time"
        f" (see {tmp_path / 'match.err'})"
    )
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["kuhn", "--hands", "5", "--seed", "1", "always-call"], "kuhn is a 2-player game, but 1 bots were given"),
        (["kuhn", "--hands", "5", "--seed", "1", "always-call", "nope"], "unknown strategy 'nope'"),
        (["kuhn", "--hands", "1", "--seed", "1", "always-call", "probe"], "--hands must be at least 2 (a confidence"),
        (["kuhn", "--hands", "5", "--seed", "-1", "always-call", "probe"], "--seed must be in 0..4294967295, got -1"),
        (["nogame", "--hands", "5", "--seed", "1", "always-call", "probe"], "'nogame' is neither a game file"),
    ],
)
def test_bad_arguments(argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([*argv, "--run-dir", str(tmp_path / "run")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_seat_names_and_seeds() -> None:
    assert seat_names(["always-call", "always-call", "random:size=pot"]) == ("always-call-1", "always-call-2", "random")
    assert seat_names(["probe", "always-raise:size=min", "always-raise:size=max"]) == (
        "probe",
        "always-raise-1",
        "always-raise-2",
    )
    assert agent_seed(1, 0) == agent_seed(1, 0)
    assert len({agent_seed(1, 0), agent_seed(1, 1), agent_seed(2, 0)}) == 3
