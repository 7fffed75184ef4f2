"""The person's seat without a browser: message checks, typed actions, and a
whole in-process match (dealer + always-call bot + the seat) driven through
:meth:`HumanSeat.act`, checked against the dealer's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import json

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.client import play
from agent.human.seat import (
    GRAPH_POINTS,
    LEFT,
    MAX_MESSAGE_BYTES,
    Act,
    HumanSeat,
    Leave,
    Limits,
    MessageError,
    Next,
    parse_action,
    parse_message,
)
from agent.human.tui import format_cards, in_colour
from poker.stats import MIN_INTERVAL_VALUES, mean_ci
from dealer.server import MatchConfig, serve_match
from poker.gamedef import load_game
from poker.state import Action, ActionType, State
from strategies.base import make_strategy

LEDUC = load_game("leduc")
LEDUC_NL = load_game("leduc.nolimit")
LIMITS = Limits(response_ms=60_000, hand_ms=60_000, match_ms=600_000)


def test_messages_that_are_accepted() -> None:
    assert parse_message('{"type": "next"}') == Next()
    assert parse_message('{"type": "leave"}') == Leave()
    assert parse_message('{"type":"act","decision":3,"action":"call"}') == Act(3, ActionType.CALL, None)
    assert parse_message('{"type":"act","decision":3,"action":"call","size":999}') == Act(3, ActionType.CALL, 999)
    assert parse_message(b'{"type":"act","decision":0,"action":"raise","size":650}') == Act(0, ActionType.RAISE, 650)
    assert parse_message('{"type":"act","decision":1,"action":"check"}') == Act(1, ActionType.CALL, None)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("", "message is not JSON"),
        ("{", "message is not JSON"),
        (b"\xff\xfe", "message is not JSON"),
        ("[" * 600 + "]" * 600, "message longer than 1024 bytes"),
        ("[" * 500 + "]" * 500, "message is not a JSON object"),
        ("null", "message is not a JSON object"),
        ('{"type": "quit"}', "message type must be 'act', 'next' or 'leave'"),
        ('{"type": "leave", "now": true}', "a leave message has no other fields"),
        ('{"type": "next", "hand": 1}', "a next message has no other fields"),
        ('{"type": "act", "action": "call"}', "an act message has the fields type, decision, action and, for a raise, size"),
        ('{"type": "act", "decision": 1, "action": "call", "x": 1}', "an act message has the fields type, decision, action and, for a raise, size"),
        ('{"type": "act", "decision": -1, "action": "call"}', "decision must be a whole number"),
        ('{"type": "act", "decision": 1.5, "action": "call"}', "decision must be a whole number"),
        ('{"type": "act", "decision": true, "action": "call"}', "decision must be a whole number"),
        ('{"type": "act", "decision": 1, "action": "allin"}', "action must be one of fold, call, check, raise"),
        ('{"type": "act", "decision": 1, "action": ["call"]}', "action must be one of fold, call, check, raise"),
        ('{"type": "act", "decision": 1, "action": "raise", "size": 1e400}', "size must be a whole number of chips below 2147483648"),
        ('{"type": "act", "decision": 1, "action": "raise", "size": 99999999999}', "size must be a whole number of chips below 2147483648"),
        ('{"type": "act", "decision": 1, "action": "raise", "size": "9"}', "size must be a whole number of chips below 2147483648"),
    ],
)
def test_messages_that_are_refused(raw: str | bytes, why: str) -> None:
    with pytest.raises(MessageError) as refused:
        parse_message(raw)
    assert str(refused.value) == why


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["type", "decision", "action", "size", "x"]), inner, max_size=5),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64) | _JSON.map(json.dumps) | st.fixed_dictionaries(
    {"type": st.sampled_from(["act", "next"]), "decision": _JSON, "action": _JSON}).map(json.dumps))
def test_any_message_is_read_or_refused_in_one_line(raw: bytes | str) -> None:
    """Whatever a page sends, the answer is a message or a MessageError (never another exception)."""
    try:
        parsed = parse_message(raw)
    except MessageError as error:
        assert "\n" not in str(error)
    else:
        assert isinstance(parsed, (Act, Next))


def test_a_message_at_the_limit_is_read() -> None:
    message = '{"type": "next"}'
    assert parse_message(message + " " * (MAX_MESSAGE_BYTES - len(message))) == Next()


def test_typed_actions() -> None:
    limit, no_limit = State(LEDUC), State(LEDUC_NL)
    assert parse_action("f", limit) == Action(ActionType.FOLD)
    assert parse_action(" Check ", limit) == Action(ActionType.CALL)
    assert parse_action("k", limit) == Action(ActionType.CALL)
    assert parse_action("r", limit) == Action(ActionType.RAISE)
    assert parse_action("r 550", no_limit) == Action.raise_to(650)  # a bet of 550 over the ante of 100
    assert parse_action("r550", no_limit) == Action.raise_to(650)
    assert parse_action("raise 1100", no_limit) == Action.raise_to(1200)
    for text, why in [
        ("x", "not an action: 'x'; type f, c, or r (r N raises to N in no-limit)"),
        ("c 5", "c takes no amount here"),
        ("r 5", "r takes no amount here"),
    ]:
        with pytest.raises(MessageError, match=None) as refused:
            parse_action(text, limit)
        assert str(refused.value) == why
    with pytest.raises(MessageError) as refused:
        parse_action("r", no_limit)
    assert str(refused.value) == "say how much: r N raises to N chips this street (100..1100)"  # beyond the ante
    # on the flop after r650 c, N counts this street's chips: the dealer gets the hand total
    flop = no_limit.apply(Action.raise_to(650)).apply(Action(ActionType.CALL))
    assert parse_action("r 100", flop) == Action.raise_to(750)
    assert parse_action("r550", flop) == Action.raise_to(1200)
    for text, why in [("r 99", "99 chips is outside the legal range (100..550)"),
                      ("r", "say how much: r N raises to N chips this street (100..550)")]:
        with pytest.raises(MessageError) as refused:
            parse_action(text, flop)
        assert str(refused.value) == why


async def _match(
    tmp_path: Path, game_name: str, seed: int, person: object, hands: int = 2, bots: tuple[str, ...] = ("always-call",)
) -> tuple[HumanSeat, list[str]]:
    """A match of the seat (seat 1, named you) against ``bots`` (seats 2...,
    named bot, or by strategy in three-player games), the person being ``person(seat)``."""
    game = load_game(game_name)
    names = ("you", *(bots if len(bots) > 1 else ("bot",)))
    config = MatchConfig(
        match_name="m", game=game, game_path=game_name, num_hands=hands, seed=seed,
        names=names, log_dir=tmp_path, quiet=True,
    )
    seat = HumanSeat(game, config.names, 0, hands=hands, limits=LIMITS, title="test")
    with open(tmp_path / "m.out", "w") as out, open(tmp_path / "m.err", "w") as err:
        async with trio.open_nursery() as nursery:
            ports = await nursery.start(lambda task_status: serve_match(config, stdout=out, stderr=err, task_status=task_status))
            for port, spec in zip(ports[1:], bots):
                nursery.start_soon(play, "127.0.0.1", port, game, make_strategy(spec, game))
            nursery.start_soon(seat.run, "127.0.0.1", ports[0])
            nursery.start_soon(person, seat)  # type: ignore[arg-type]
    states = [line for line in (tmp_path / "m.log").read_text().splitlines() if line.startswith("STATE:")]
    return seat, states


async def _next_decision(seat: HumanSeat) -> int:
    while seat.decision is None:
        await seat.wait_change(seat.version)
    return seat.decision


async def test_a_no_limit_match_through_the_seat(tmp_path: Path) -> None:
    seen: list[dict[str, object]] = []

    async def person(seat: HumanSeat) -> None:
        decision = await _next_decision(seat)
        table = seat.snapshot()
        seen.append(table)
        legal = table["legal"]
        assert legal == {
            "decision": decision,
            "fold": False,
            "call": 0,
            # antes are the pot's: the first wager is a bet, counted beyond the ante (no 2.5x of nothing)
            "raise": {"min": 200, "max": 1200, "base": 100, "verb": "bet", "step": 1, "presets": [
                ["min", 200], ["½ pot", 200], ["⅔ pot", 233], ["pot", 300], ["all-in", 1200]]},
        }
        assert 0 < table["clock_ms"] <= 60_000
        # both seats' clocks: yours runs, the bot's is its whole allowance
        you, bot = table["hand"]["players"]
        assert 0 < you["clock_ms"] <= 60_000 and bot["clock_ms"] == 60_000
        assert table["game"]["round_names"] == ["pre-flop", "flop"] and table["game"]["big_blind"] is None
        assert table["game"]["stack"] == 1200
        with pytest.raises(MessageError) as refused:
            seat.next_hand()  # nothing finished yet
        assert str(refused.value) == "there is no finished hand to move on from"
        for kind, size, why in [
            (ActionType.FOLD, None, "fold is not legal when a check is free"),
            (ActionType.RAISE, 100, "raise to 100 chips is outside the legal range 200..1200 in round 1"),
            (ActionType.RAISE, 0, "a no-limit raise needs a size (chips to raise to)"),
            (ActionType.RAISE, None, "a no-limit raise needs a size (chips to raise to)"),
            (ActionType.CALL, 999, "size is only for a no-limit raise, not to call"),  # refused, not ignored
            (ActionType.FOLD, 0, "size is only for a no-limit raise, not to fold"),
        ]:
            with pytest.raises(MessageError) as refused:
                seat.act(decision, kind, size)
            assert str(refused.value) == why
        with pytest.raises(MessageError, match="that decision is over"):
            seat.act(decision + 1, ActionType.CALL)
        assert seat.act(decision, ActionType.RAISE, 650) == Action.raise_to(650)
        with pytest.raises(MessageError, match="it is not your turn"):
            seat.act(decision, ActionType.CALL)
        decision = await _next_decision(seat)
        flop = seat.snapshot()["legal"]["raise"]  # the flop: the street's chips start at 650
        assert (flop["min"], flop["base"], flop["verb"]) == (750, 650, "bet")
        assert flop["presets"] == [["min", 750], ["½ pot", 1200], ["⅔ pot", 1200], ["pot", 1200], ["all-in", 1200]]
        seat.act(decision, ActionType.CALL)  # round 2: check; the bot checks: showdown
        while seat.decision in (None, decision):  # hand 2: the bot checks first, then it is your turn...
            await seat.wait_change(seat.version)
        finished = seat.snapshot()
        seen.append(finished)
        # ...but the finished hand stays on the table, with no actions, until you move on; the
        # next hand's clock, which the dealer runs from now, is shown with it
        assert finished["waiting_next"] and finished["legal"] is None and 0 < finished["clock_ms"] <= LIMITS.response_ms
        seat.next_hand()
        assert seat.snapshot()["legal"] is not None and seat.snapshot()["clock_ms"] is not None
        with pytest.raises(MessageError, match="there is no finished hand to move on from"):
            seat.next_hand()  # twice: the second has nothing to move on from
        seat.act(seat.decision or 0, ActionType.RAISE, 1200)

    seat, states = await _match(tmp_path, "leduc.nolimit", 5, person)
    assert states == [
        "STATE:0:r650c/cc:As|Ks/Qs:650|-650:you|bot",
        "STATE:1:cr1200c/:Qs|Kh/Ah:-1200|1200:bot|you",
    ]
    showdown = seen[1]["hand"]
    assert showdown["finished"] and showdown["showdown"] and showdown["board"] == ["Qs"]  # type: ignore[index]
    assert [(p["name"], p["cards"], p["value"], p["best"], p["button"]) for p in showdown["players"]] == [  # type: ignore[index]
        ("you", ["As"], 650.0, "ace-queen high", False),
        ("bot", ["Ks"], -650.0, "king-queen high", True),  # Leduc: the second to act has the button
    ]
    assert showdown["streets"] == [  # type: ignore[index]
        {"name": "pre-flop", "front": [550, 550], "start": [0, 0], "start_pot": 200, "actions": [
            {"player": 0, "name": "you", "action": "bet", "verb": "bet", "amount": 550, "all_in": False, "text": "you bet 550",
             "front": [550, 0], "pot": 750},
            {"player": 1, "name": "bot", "action": "call", "verb": "calls", "amount": 550, "all_in": False, "text": "bot calls 550",
             "front": [550, 550], "pot": 1300}]},
        {"name": "flop", "front": [0, 0], "start": [0, 0], "start_pot": 1300, "actions": [
            {"player": 0, "name": "you", "action": "check", "verb": "check", "amount": 0, "all_in": False, "text": "you check",
             "front": [0, 0], "pot": 1300},
            {"player": 1, "name": "bot", "action": "check", "verb": "checks", "amount": 0, "all_in": False, "text": "bot checks",
             "front": [0, 0], "pot": 1300}]},
    ]
    assert all(p["clock_ms"] is None for p in showdown["players"])  # type: ignore[index]  # a finished hand: no clocks
    final = seat.snapshot()
    assert final["over"] and final["legal"] is None and final["clock_ms"] is None
    assert final["result"] == {  # two hands are too few for an interval
        "hands": 2, "total": 1850.0, "unit": "chips/hand", "mean": None, "ci95": None,
        "interval_note": "no 95% interval under 30 hands"
    }
    assert final["graph"] == [(1, 650.0), (2, 1850.0)]  # the running total after each hand
    with pytest.raises(MessageError) as refused:
        seat.next_hand()
    assert str(refused.value) == "the match is over: there is no next hand"
    assert [h["value"] for h in final["history"]] == [1200.0, 650.0]  # newest first
    assert final["history"][1] == {
        "hand": 1, "cards": ["As"], "board": ["Qs"], "betting": "r650c/cc", "folded": False,
        "shown": [{"name": "bot", "cards": ["Ks"]}], "value": 650.0,
        "streets": [{"name": name, "actions": [{k: a[k] for k in ("name", "action", "verb", "amount", "all_in", "text")}
                                               for a in street["actions"]]}
                    for name, street in zip(("pre-flop", "flop"), showdown["streets"])],  # type: ignore[index]
    }


async def test_three_players_the_person_folds_and_sees_the_showdown(tmp_path: Path) -> None:
    """leduc.limit.3p, seed 2: you hold Jh, always-raise Ah, always-call Qs, board
    Js. You check, face a raise and a call, and fold; the bots play on to a
    showdown, whose cards your final view shows."""

    async def person(seat: HumanSeat) -> None:
        seat.act(await _next_decision(seat), ActionType.CALL)
        decision = await _next_decision(seat)
        assert seat.snapshot()["legal"] == {"decision": decision, "fold": True, "call": 2, "raise": {
            "min": 5, "max": 5, "base": 1, "verb": "raise", "presets": [], "step": 1}}  # limit: one size, no presets
        with pytest.raises(MessageError) as refused:
            seat.act(decision, ActionType.RAISE, 5)
        assert str(refused.value) == "size is only for a no-limit raise, not in a limit game"
        seat.act(decision, ActionType.FOLD)

    seat, states = await _match(tmp_path, "leduc.limit.3p", 2, person, hands=1, bots=("always-raise", "always-call"))
    assert states == ["STATE:0:crcf/rc:Jh|Ah|Qs/Js:-1|8|-7:you|always-raise|always-call"]
    hand = seat.snapshot()["hand"]
    assert [(p["name"], p["cards"], p["folded"], p["value"], p["best"], p["button"]) for p in hand["players"]] == [
        ("you", ["Jh"], True, -1.0, None, False),  # folded: no hand to name
        ("always-raise", ["Ah"], False, 8.0, "ace-jack high", False),
        ("always-call", ["Qs"], False, -7.0, "queen-jack high", True),
    ]
    assert [a["text"] for a in hand["streets"][0]["actions"]] == [
        "you check", "always-raise bets 2", "always-call calls 2", "you fold"  # the ante of 1 is the pot's
    ]
    assert hand["showdown"] and [a["text"] for a in hand["streets"][1]["actions"]] == [
        "always-raise bets 4",  # the flop's chips: 3 before it, 7 in all
        "always-call calls 4",
    ]
    assert hand["streets"][1]["front"] == [0, 4, 4]  # you folded on the pre-flop
    assert seat.snapshot()["history"][0]["folded"] is True


async def test_the_interval_waits_for_enough_hands(tmp_path: Path) -> None:
    """Always calling against always-call in leduc, seed 3: the running result
    has no interval before MIN_INTERVAL_VALUES hands (two equal results once read
    "-1 ± 0"), then the mean and its 95% interval of the hands' values."""
    results: list[dict[str, Any]] = []

    async def person(seat: HumanSeat) -> None:
        while not seat.over.is_set():
            if seat.snapshot()["waiting_next"]:
                results.append(seat.result())
                seat.next_hand()
            elif seat.decision is not None:
                seat.act(seat.decision, ActionType.CALL)
            else:
                await seat.wait_change(seat.version)

    seat, states = await _match(tmp_path, "leduc", 3, person, hands=MIN_INTERVAL_VALUES)
    fields = [line.split(":") for line in states]  # STATE:id:betting:cards:values:names, in that hand's positions
    values = [float(f[4].split("|")[f[5].split("|").index("you")]) for f in fields]
    assert [r["hands"] for r in results][: MIN_INTERVAL_VALUES - 1] == list(range(1, MIN_INTERVAL_VALUES))
    early = [(r["ci95"], r["mean"], r["interval_note"]) for r in results if r["hands"] < MIN_INTERVAL_VALUES]
    assert set(early) == {(None, None, "a 95% interval after 30 hands")}  # a 30-hand match will get there
    final, estimate = seat.result(), mean_ci(values)
    assert final["hands"] == MIN_INTERVAL_VALUES and len(set(values)) > 1 and final["interval_note"] is None
    assert final["mean"] == pytest.approx(estimate.mean) and final["ci95"] == pytest.approx(estimate.half_width)


def test_a_long_session_graph_is_sampled_evenly() -> None:
    """Past GRAPH_POINTS hands the graph keeps GRAPH_POINTS points, evenly
    spaced, the first and the last hand among them, each its running total."""
    seat = HumanSeat(LEDUC, ("you", "bot"), 0, hands=1000, limits=LIMITS, title="test")
    seat._values = [1.0, -2.0] * 500  # what observe() appends, hand by hand
    graph = seat.graph()
    assert len(graph) == GRAPH_POINTS and graph[0] == (1, 1.0) and graph[-1] == (1000, -500.0)
    assert all(total == (hand % 2) - (hand // 2) for hand, total in graph)
    assert {b[0] - a[0] for a, b in zip(graph, graph[1:])} <= {5, 6}


def test_red_suits_in_a_terminal() -> None:
    assert format_cards(["Kh", "2s", "Td"]) == "K♥ 2♠ T♦"
    assert format_cards([], hidden=2) == "?? ??"
    assert in_colour("you hold K♥ 2♠ T♦") == "you hold \033[31mK♥\033[0m 2♠ \033[31mT♦\033[0m"


async def test_leaving_closes_the_connection_and_the_dealer_names_the_seat(tmp_path: Path) -> None:
    """"Leave the table": the seat's decision closes and its connection with
    it, so the dealer aborts at once naming seat 1 (the abort rule's culprit),
    and the table says why; leaving twice is refused."""
    seen: list[dict[str, Any]] = []

    async def person(seat: HumanSeat) -> None:
        await _next_decision(seat)
        with trio.fail_after(2):  # at once, not at the dealer's clock
            seat.leave()
            seen.append(seat.snapshot())
            await seat.over.wait()
        with pytest.raises(MessageError) as refused:
            seat.leave()
        assert str(refused.value) == "the match is over already"

    with trio.fail_after(10):
        seat, states = await _match(tmp_path, "leduc", 3, person, hands=5)
    table = seen[0]
    assert (table["over"], table["left"], table["message"], table["legal"], table["clock_ms"]) == (True, True, LEFT, None, None)
    assert states == [] and seat.message == LEFT
    assert "ERROR: could not get action from seat 1" in (tmp_path / "m.err").read_text()


async def test_an_abort_closes_the_open_decision(tmp_path: Path) -> None:
    """The dealer aborted (what arena.match tells a person's seat): the open
    decision closes at once, with the reason on the table, rather than
    staying "your turn" until the dealer's clock."""

    async def person(seat: HumanSeat) -> None:
        await _next_decision(seat)
        seat.end("the dealer aborted after 0 hands: ERROR: seat 1 ran out of time")

    with trio.fail_after(10):
        seat, _ = await _match(tmp_path, "leduc", 3, person, hands=5)
    table = seat.snapshot()
    assert (table["over"], table["legal"], table["clock_ms"], table["left"]) == (True, None, None, False)
    assert table["message"] == "the dealer aborted after 0 hands: ERROR: seat 1 ran out of time"

