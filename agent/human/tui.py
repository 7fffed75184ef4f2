"""The terminal table: the same :class:`~agent.human.seat.HumanSeat` as the web
page, shown as lines of text with plain prompts (so it works in any terminal,
over ssh, and from a script: the tests drive it through stdin).

It prints what changed since it last looked at :meth:`HumanSeat.snapshot`: a
header for each new hand with the person's cards, every action as it happens
("always-call calls 550", street amounts as at a table), each street's new
board cards under its name, the showdown (each hand named) and result; when
the seat has an open decision it prints the pot, the time to answer and the
clock's deadline, then the choices (the legal ones only, with the no-limit
range of this street's chips) and reads one line, ended by Enter: ``f``,
``c``/``k``, ``r`` or ``r N`` (:func:`parse_action`), ``q`` to leave. A refused
line is answered with the reason and asked again; as the clock runs down it
says so at :data:`REMINDERS_S`. Every line fits :data:`WIDTH` columns (longer
ones wrap), so an 80-column terminal shows the table unbroken.
"""

from __future__ import annotations

import itertools
import re
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import trio

from agent.human.seat import LEFT, HumanSeat, MessageError, parse_action

__all__ = ["WIDTH", "REMINDERS_S", "run_tui", "format_cards", "format_clock", "fit", "in_colour", "read_stdin_line", "Quit"]

SUITS: Final = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
#: The widest line printed: the classic terminal's.
WIDTH: Final = 80
#: Seconds left at which a waiting prompt says how much time is left.
REMINDERS_S: Final = (60, 10)
_RED_CARD: Final = re.compile("([2-9TJQKA][♦♥])")


class Quit(Exception):
    """The person left the table (``q``, or the end of the input)."""


def format_cards(cards: list[str], hidden: int = 0) -> str:
    """``["Kh", "2s"]`` -> ``"K♥ 2♠"``; ``hidden`` face-down cards show as ``??``."""
    shown = [card[0] + SUITS[card[1]] for card in cards] or ["??"] * hidden
    return " ".join(shown) or "-"


def format_clock(ms: int) -> str:
    """``599_400`` -> ``"10:00"``: minutes and seconds, rounded up as a clock shows them."""
    seconds = -(-ms // 1000)
    return f"{seconds // 60}:{seconds % 60:02d}"


def fit(line: str) -> list[str]:
    """``line`` as lines of at most :data:`WIDTH` columns, continuations
    indented under its text."""
    if len(line) <= WIDTH:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(line, WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def _fitted(write: Callable[[str], None]) -> Callable[[str], None]:
    """``write`` with every line through :func:`fit`."""

    def fitted(line: str) -> None:
        for part in fit(line):
            write(part)

    return fitted


def in_colour(line: str) -> str:
    """``line`` with hearts and diamonds in red (ANSI), for a terminal."""
    return _RED_CARD.sub("\033[31m\\1\033[0m", line)


async def read_stdin_line() -> str:
    """One line from standard input without blocking the event loop ('' at end of input)."""
    return await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)


@dataclass
class _Printed:
    hand: int | None = None
    intro: bool = False
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
    write = _fitted(write)
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
    stack = table["game"]["stack"]
    if stack is not None and not printed.intro:
        printed.intro = True
        write(f"-- every hand starts with {stack} chips a seat (the ACPC rule: stacks reset)")
    if hand["id"] != printed.hand:
        printed.hand, printed.actions, printed.board, printed.finished = hand["id"], 0, 0, False
        you = next(p for p in hand["players"] if p["you"])
        others = ", ".join(p["name"] for p in hand["players"] if not p["you"])
        write(f"-- hand {hand['number']} of {table['hands']}: you hold {format_cards(you['cards'])} against {others}")
    actions = [(r, a) for r, street in enumerate(hand["streets"]) for a in street["actions"]]
    for round_, action in actions[printed.actions :]:
        _print_board(table, hand, round_, printed, write)
        write(f"   {action['text']}")
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
    """The board of each street through ``round_`` not printed yet, under the
    street's name (an all-in deals the rest at once: each street still shows)."""
    for street, through in enumerate(itertools.accumulate(table["game"]["board_cards"][: round_ + 1])):
        shown = min(len(hand["board"]), through)
        if shown > printed.board:
            write(f"   {table['game']['round_names'][street]}: {format_cards(hand['board'][:shown])}")
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
        verb = "raise to" if raise_["verb"] == "raise" else "bet"
        if table["game"]["limit"]:
            choices.append(f"r {verb} {raise_['min'] - raise_['base']}")
        else:  # this street's chips, as the actions above count them
            low, high, base = raise_["min"] - raise_["base"], raise_["max"] - raise_["base"], raise_["base"]
            pot = dict(raise_["presets"])["pot"] - base
            choices.append(f"r N {verb} N ({low}..{high}; pot {pot})")
    clock = table["clock_ms"]
    ends = None if clock is None else trio.current_time() + clock / 1000  # in trio's time, for the reminders
    when = ""
    if clock is not None:
        deadline = time.strftime("%H:%M:%S", time.localtime(time.time() + clock / 1000))
        when = f", {format_clock(clock)} to answer (until {deadline})"
    write(f"   pot {hand['pot']}{when}; type your move and press Enter:")
    write(f"   {' | '.join(choices)} | q quit")
    state = seat.decision_state
    while state is not None:
        line = await _read_unless_over(seat, read_line, ends, write)
        if line is None:
            return  # the match ended while we waited (the dealer's clock ran out, say)
        if not line or line.strip().lower() in ("q", "quit"):
            raise Quit(LEFT if line else "the input ended")
        try:
            action = parse_action(line, state)
            seat.act(legal["decision"], action.type, action.size or None)  # a size only for a no-limit raise
            return
        except MessageError as error:
            write(f"   ! {error}")


async def _read_unless_over(
    seat: HumanSeat, read_line: Callable[[], Awaitable[str]], ends: float | None, write: Callable[[str], None]
) -> str | None:
    """The next line, or None if the match ends first; meanwhile, the time left
    at each of :data:`REMINDERS_S` still ahead of the clock, which runs out at
    ``ends`` (trio's time; None: no clock)."""
    line: str | None = None

    async def remind() -> None:
        if ends is None:
            return
        for left in REMINDERS_S:
            wait = ends - left - trio.current_time()
            if wait > 0:
                await trio.sleep(wait)
                write(f"   ! {left} s left to answer")

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
        nursery.start_soon(remind)
    return line


def _print_end(table: dict[str, Any], write: Callable[[str], None]) -> None:
    result = table["result"]
    why = f" ({table['message']})" if table["message"] else ""
    if result["ci95"] is not None:
        interval = f", {result['mean']:+.3f} ± {result['ci95']:.3f} {result['unit']} (95%)"
    else:
        interval = f" ({result['interval_note']})" if result["hands"] else ""
    write(f"-- match over after {_hands(result['hands'])}{why}: you {result['total']:+g} chips{interval}")


def _hands(count: int) -> str:
    return f"{count} hand" if count == 1 else f"{count} hands"
