"""The terminal table: the same :class:`~agent.human.seat.HumanSeat` as the web
page, shown as lines of text with plain prompts (so it works in any terminal,
over ssh, and from a script: the tests drive it through stdin).

It prints what changed since it last looked at :meth:`HumanSeat.snapshot`: a
header for each new hand with the person's cards, every action as it happens,
new board cards, the showdown (each hand named) and result; when the seat has an open decision it
prints the choices (the legal ones only, with the no-limit raise range) and
reads one line: ``f``, ``c``/``k``, ``r`` or ``r N`` (:func:`parse_action`),
``q`` to leave. A refused line is answered with the reason and asked again.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import trio

from agent.human.seat import HumanSeat, MessageError, parse_action

__all__ = ["run_tui", "format_cards", "in_colour", "read_stdin_line", "Quit"]

SUITS: Final = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
_RED_CARD: Final = re.compile("([2-9TJQKA][♦♥])")


class Quit(Exception):
    """The person left the table (``q``, or the end of the input)."""


def format_cards(cards: list[str], hidden: int = 0) -> str:
    """``["Kh", "2s"]`` -> ``"K♥ 2♠"``; ``hidden`` face-down cards show as ``??``."""
    shown = [card[0] + SUITS[card[1]] for card in cards] or ["??"] * hidden
    return " ".join(shown) or "-"


def in_colour(line: str) -> str:
    """``line`` with hearts and diamonds in red (ANSI), for a terminal."""
    return _RED_CARD.sub("\033[31m\\1\033[0m", line)


async def read_stdin_line() -> str:
    """One line from standard input without blocking the event loop ('' at end of input)."""
    return await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)


@dataclass
class _Printed:
    hand: int | None = None
    actions: int = 0
    board: int = 0
    finished: bool = False
    decision: int | None = None


async def run_tui(
    seat: HumanSeat, read_line: Callable[[], Awaitable[str]], write: Callable[[str], None]
) -> None:
    """Show ``seat`` through ``write`` and answer its decisions from ``read_line``
    until the match is over.

    Raises:
        Quit: the person typed ``q`` or the input ended.
    """
    printed = _Printed()
    while True:
        version = seat.version
        table = seat.snapshot()
        _print_changes(table, printed, write)
        if table["over"]:
            _print_end(table, write)
            return
        if table["waiting_next"]:
            seat.next_hand()  # the text stays on the screen: nothing to acknowledge
            continue
        legal = table["legal"]
        if legal is not None and legal["decision"] != printed.decision:
            printed.decision = legal["decision"]
            await _ask(seat, table, read_line, write)
            continue
        await seat.wait_change(version)


def _print_changes(table: dict[str, Any], printed: _Printed, write: Callable[[str], None]) -> None:
    hand = table["hand"]
    if hand is None:
        return
    if hand["id"] != printed.hand:
        printed.hand, printed.actions, printed.board, printed.finished = hand["id"], 0, 0, False
        you = next(p for p in hand["players"] if p["you"])
        others = ", ".join(p["name"] for p in hand["players"] if not p["you"])
        write(f"-- hand {hand['number']} of {table['hands']}: you hold {format_cards(you['cards'])} against {others}")
    actions = [(r, a) for r, round_ in enumerate(hand["betting"]) for a in round_]
    for round_, action in actions[printed.actions :]:
        _print_board(table, hand, round_, printed, write)
        write(f"   {action['name']}: {action['text']}")
    printed.actions = len(actions)
    _print_board(table, hand, hand["round"], printed, write)
    if hand["finished"] and not printed.finished:
        printed.finished = True
        for player in hand["players"]:
            if player["cards"] and not player["you"]:
                best = f" ({player['best']})" if player["best"] else ""
                write(f"   {player['name']} shows {format_cards(player['cards'])}{best}")
        you = next(p for p in hand["players"] if p["you"])
        value = you["value"]
        outcome = f"won {value:g}" if value > 0 else f"lost {-value:g}" if value < 0 else "broke even"
        if you["best"]:
            outcome += f" with {you['best']}"
        result = table["result"]
        interval = "" if result["ci95"] is None else f"; {result['mean']:+.3f} ± {result['ci95']:.3f} {result['unit']}"
        write(f"   you {outcome} (total {result['total']:+g} over {_hands(result['hands'])}{interval})")


def _print_board(
    table: dict[str, Any], hand: dict[str, Any], round_: int, printed: _Printed, write: Callable[[str], None]
) -> None:
    """The board as it stood when ``round_`` began, if not printed yet."""
    shown = min(len(hand["board"]), sum(table["game"]["board_cards"][: round_ + 1]))
    if shown > printed.board:
        write(f"   board: {format_cards(hand['board'][:shown])}")
        printed.board = shown


async def _ask(
    seat: HumanSeat, table: dict[str, Any], read_line: Callable[[], Awaitable[str]], write: Callable[[str], None]
) -> None:
    legal, hand = table["legal"], table["hand"]
    choices = []
    if legal["fold"]:
        choices.append("f fold")
    choices.append(f"c call {legal['call']}" if legal["call"] else "c check")
    raise_ = legal["raise"]
    if raise_ is not None:
        if table["game"]["limit"]:
            choices.append(f"r raise to {raise_['min']}")
        else:
            choices.append(f"r N raise to N ({raise_['min']}..{raise_['max']}; pot {raise_['pot']})")
    clock = table["clock_ms"]
    left = "" if clock is None else f", {clock / 1000:.1f} s left" if clock < 10_000 else f", {clock // 1000} s left"
    write(f"   pot {hand['pot']}{left}. Your move: {' | '.join(choices)} | q quit")
    state = seat.decision_state
    while state is not None:
        line = await _read_unless_over(seat, read_line)
        if line is None:
            return  # the match ended while we waited (the dealer's clock ran out, say)
        if not line or line.strip().lower() in ("q", "quit"):
            raise Quit("you left the table" if line else "the input ended")
        try:
            action = parse_action(line, state)
            seat.act(legal["decision"], action.type, action.size or None)  # a size only for a no-limit raise
            return
        except MessageError as error:
            write(f"   ! {error}")


async def _read_unless_over(seat: HumanSeat, read_line: Callable[[], Awaitable[str]]) -> str | None:
    """The next line, or None if the match ends first."""
    line: str | None = None

    async def read() -> None:
        nonlocal line
        line = await read_line()
        nursery.cancel_scope.cancel()

    async def over() -> None:
        await seat.over.wait()
        nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read)
        nursery.start_soon(over)
    return line


def _print_end(table: dict[str, Any], write: Callable[[str], None]) -> None:
    result = table["result"]
    why = f" ({table['message']})" if table["message"] else ""
    if result["ci95"] is not None:
        interval = f", {result['mean']:+.3f} ± {result['ci95']:.3f} {result['unit']} (95%)"
    else:
        interval = f" (a 95% interval needs {_hands(result['interval_hands'])})" if result["hands"] else ""
    write(f"-- match over after {_hands(result['hands'])}{why}: you {result['total']:+g} chips{interval}")


def _hands(count: int) -> str:
    return f"{count} hand" if count == 1 else f"{count} hands"
