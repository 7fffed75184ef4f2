"""AIVAT with the re-solving agent's own recorded values (analysis/recorded_values.py).

No-limit Leduc, the same code path as HUNL's ``hunl-modicum`` (the agent records
while it plays through the hooks the agent client calls; the estimator reads the
file): the agent is deterministic given the public history, so its exact value
against always-call is a sum over every deal, and the AIVAT mean over seeded
hands contains it. A record whose policy gives the action taken probability 0,
or that belongs to another hand, is refused.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import msgpack
import numpy as np
import pytest

import strategies  # noqa: F401  (registers the built-in strategies)
from analysis.aivat import AivatError, EquityValues
from analysis.hands import NO_SEED, Hands
from analysis.recorded_values import play_through_hooks as play, read_values, recorded_aivat
from poker.deal import Dealer
from poker.gamedef import Game, load_game
from poker.protocol import view_of
from poker.hand_rank import hand_values
from poker.state import CALL, State
from poker.stats import mean_ci
from strategies.base import Strategy, make_strategy
from strategies.resolve.agent import ResolvingStrategy

LEDUC_NL = load_game("leduc.nolimit.2p")


def exact_against_caller(agent: ResolvingStrategy, game: Game) -> float:
    """The agent's chips per hand against always-call, over both positions: its
    policy at every public state it reaches (its re-solves), every deal."""

    def walk(state: State, position: int, hole: tuple[tuple[int, ...], ...], board: tuple[int, ...], hand: int) -> Fraction:
        if state.finished:
            shown = board if state.is_showdown() else board[: game.total_board_cards(state.round)]
            return Fraction(hand_values(state, hole, shown)[position])
        if state.current_player() != position:
            return walk(state.apply(CALL), position, hole, board, hand)
        resolved = agent.resolution(state, board[: game.total_board_cards(state.round)])
        assert resolved is not None
        row = resolved.root_policy()[hand]
        total = Fraction(0)
        for action, p in zip(resolved.tree.actions(0), row / row.sum(), strict=True):
            if p > 0:
                played = action if state.is_legal(action) else CALL
                total += Fraction(float(p)) * walk(state.apply(played), position, hole, board, hand)
        return total

    deck = sorted(game.deck())
    value = Fraction(0)
    count = 0
    for ours, theirs, flop in itertools.permutations(deck, 3):
        for position in (0, 1):
            hole = ((ours,), (theirs,)) if position == 0 else ((theirs,), (ours,))
            hand = agent._hand_row[(ours,)]
            value += walk(State(game), position, hole, (flop,), hand)
            count += 1
    return float(value / count)


@pytest.fixture(scope="module")
def leduc_match(tmp_path_factory: pytest.TempPathFactory) -> tuple[Hands, Path, ResolvingStrategy]:
    path = tmp_path_factory.mktemp("recorded") / "bot.values.msgpack"
    agent = make_strategy(f"resolve:iterations=100,record={path}", LEDUC_NL, seed=3)
    assert isinstance(agent, ResolvingStrategy)
    hands = play(LEDUC_NL, [agent, make_strategy("always-call", LEDUC_NL, seed=1)], 400, seed=5, names=("bot", "caller"))
    agent.close()
    return hands, path, agent


def test_one_record_per_hand_with_its_points(leduc_match: tuple[Hands, Path, ResolvingStrategy]) -> None:
    hands, path, _ = leduc_match
    records = read_values(path, LEDUC_NL)
    assert sorted(records) == list(range(400))
    first = records[0]  # position 0 acts first: root, its decision, ..., the round's deal with all 6 cards
    assert first.position == 0 and first.points[0].kind == "root" and first.points[1].kind == "decision"
    chances = [p for r in records.values() for p in r.points if p.kind == "chance"]
    assert chances and all(p.values.shape == (2, 6) and len(p.outcomes[0]) == 1 for p in chances)


def test_leduc_estimate_contains_the_exact_value(leduc_match: tuple[Hands, Path, ResolvingStrategy]) -> None:
    hands, path, agent = leduc_match
    exact = exact_against_caller(agent, LEDUC_NL)
    terms = recorded_aivat(hands, "bot", read_values(path, LEDUC_NL))
    raw, estimate = mean_ci(terms.raw), mean_ci(terms.estimate)
    assert abs(raw.mean - exact) <= raw.half_width
    assert abs(estimate.mean - exact) <= estimate.half_width
    assert estimate.half_width < raw.half_width
    assert np.array_equal(terms.raw, hands.values[np.arange(400), [0 if h % 2 == 0 else 1 for h in range(400)]])
    # The deals by showdown equity instead (what a match's score uses): unbiased too.
    mixed = mean_ci(recorded_aivat(hands, "bot", read_values(path, LEDUC_NL), deals=EquityValues(LEDUC_NL)).estimate)
    assert abs(mixed.mean - exact) <= mixed.half_width


def _rewritten(path: Path, out: Path, change: object) -> None:
    records = list(msgpack.Unpacker(path.open("rb"), raw=False))
    for record in records:
        change(record)  # type: ignore[operator]
    out.write_bytes(b"".join(msgpack.packb(r, use_bin_type=True) for r in records))


def test_a_zero_probability_for_the_action_taken_is_refused(
    leduc_match: tuple[Hands, Path, ResolvingStrategy], tmp_path: Path
) -> None:
    hands, path, _ = leduc_match

    def zero_first_decision(record: dict[str, object]) -> None:
        points = record["points"]
        assert isinstance(points, list)
        decision = points[1]
        policy = np.frombuffer(zlib.decompress(decision["policy"]), dtype="<f4").reshape(6, -1).copy()
        policy[:, :] = 0.0
        policy[:, -1] = 1.0  # every holding all-in: the first hand's action (a call or a pot raise) had probability 0
        decision["policy"] = zlib.compress(policy.tobytes())

    wrong = tmp_path / "wrong.msgpack"
    _rewritten(path, wrong, zero_first_decision)
    first = hands.betting[0]
    assert not first.startswith("r1200")
    with pytest.raises(AivatError, match="probability 0"):
        recorded_aivat(hands, "bot", read_values(wrong, LEDUC_NL))


def test_a_record_of_another_hand_is_refused(leduc_match: tuple[Hands, Path, ResolvingStrategy]) -> None:
    hands, path, _ = leduc_match
    records = read_values(path, LEDUC_NL)
    swapped = dict(records)
    swapped[0], swapped[1] = records[1], records[0]
    with pytest.raises(AivatError, match="position"):
        recorded_aivat(hands, "bot", swapped)
    with pytest.raises(AivatError, match="no recorded values for hand 7"):
        recorded_aivat(hands, "bot", {h: r for h, r in records.items() if h != 7})


def test_records_that_disagree_are_refused(leduc_match: tuple[Hands, Path, ResolvingStrategy], tmp_path: Path) -> None:
    """Every hand reaches the root: a record whose root values differ from the
    others' is another instance of the bot, not the one that played."""
    hands, path, _ = leduc_match

    def other_root(record: dict[str, object]) -> None:
        points = record["points"]
        assert isinstance(points, list)
        if record["hand"] == 2:
            points[0]["values"] = zlib.compress(np.ones(6, dtype="<f2").tobytes())

    other = tmp_path / "other.msgpack"
    _rewritten(path, other, other_root)
    with pytest.raises(AivatError, match="hand 2: its record disagrees with an earlier hand's"):
        recorded_aivat(hands, "bot", read_values(other, LEDUC_NL))


def test_not_a_file_of_recorded_values(tmp_path: Path) -> None:
    other = tmp_path / "other.msgpack"
    other.write_bytes(msgpack.packb({"format": "something else"}))
    with pytest.raises(AivatError, match="not a resolve-values/1 record"):
        read_values(other, LEDUC_NL)
    with pytest.raises(AivatError, match="No such file"):
        read_values(tmp_path / "missing.msgpack", LEDUC_NL)


def test_hunl_modicum_aivat_minus_raw_is_consistent_with_zero(tmp_path: Path) -> None:
    """The shipped HUNL bot's recorded values over a few hands against
    always-call: every hand scored, the turn's and river's deals recorded (not
    the flop's), and AIVAT minus raw (same hands) within its 95% interval of 0
    (the large check is benchmarks/variance_hunl.py)."""
    hunl = load_game("hunl")
    path = tmp_path / "hunl-modicum.values.msgpack"
    bot = make_strategy(f"hunl-modicum:record={path}", hunl, seed=3)
    hands = play(hunl, [bot, make_strategy("always-call", hunl, seed=1)], 12, seed=5)
    bot.close()
    records = read_values(path, hunl)
    chances = {p.betting.count("/") for r in records.values() for p in r.points if p.kind == "chance"}
    assert chances and chances <= {2, 3}  # the turn's and the river's deals, never the flop's
    for deals in (None, EquityValues(hunl)):
        terms = recorded_aivat(hands, "bot", records, deals=deals)
        difference = mean_ci(terms.estimate - terms.raw)
        assert abs(difference.mean) <= difference.half_width
