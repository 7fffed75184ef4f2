"""Hands as PokerStars hand-history text, the text trackers import (Hold'em
Manager, PokerTracker, fpdb) and PokerKit's ``from_pokerstars`` parses.

One block per hand, blocks apart by blank lines, as the PokerStars client
writes them: the title (hand number, game, stakes, time), the table with the
button's seat, a ``Seat`` line per player with its chips, the blinds, every
player's hole cards (an ACPC log knows them all), each street's actions in
PokerStars' words (``raises 100 to 200`` names the raise and the street's
total; ``bets``, ``calls``, ``checks``, ``folds``, ``and is all-in``), the
board as it comes, the uncalled bet returned, the showdown with each hand's
name, what each winner collected, and the summary (pot, board, one line a
seat). Seats are numbered in PHH's order (:func:`analysis.holdem.seat_order`):
the button has the last seat. Stakes are the limit bets in limit games and the
blinds in no-limit ones; chips are play chips (no currency). Only Texas hold'em
has this format: Kuhn and Leduc poker are refused in one line.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import Final, SupportsInt

from analysis.hands import Hands
from analysis.holdem import HoldemError, big_blind_seat, holdem_problem, seat_order, steps
from poker.cards import card_to_text
from poker.hand_name import hand_name
from poker.protocol import format_value
from poker.state import ActionType

__all__ = ["write_pokerstars", "pokerstars_text"]

_STREETS: Final = ("FLOP", "TURN", "RIVER")
#: Where a fold happened, in the summary.
_FOLDED: Final = ("before Flop", "on the Flop", "on the Turn", "on the River")


def _chips(value: Fraction | int) -> str:
    """Play chips as PokerStars writes them; an ACPC split pot can leave a
    fraction (written as the ACPC log writes values: never in exponent form)."""
    return format_value(value)


def _cards(cards: Iterable[SupportsInt]) -> str:
    return "[" + " ".join(card_to_text(int(c)) for c in cards) + "]"


def pokerstars_text(hands: Hands, row: int, when: datetime.datetime) -> str:
    """Hand ``row`` of ``hands`` as one PokerStars block, dated ``when`` (UTC).

    Raises:
        HoldemError: two seats of the hand share a name (PokerStars text names players, not seats).
    """
    game = hands.game
    order = seat_order(game)
    players = game.num_players
    by_position = hands.names_at(row)
    name = {p: by_position[p] for p in order}
    if len(set(by_position)) < players:
        raise HoldemError(f"{hands.where(row)}: two seats share a name; PokerStars text tells players apart by name")
    seat = {p: k + 1 for k, p in enumerate(order)}
    button = order[-1]
    big_place = big_blind_seat([game.blind[p] for p in order])
    small, big = order[big_place - 1], order[big_place]  # heads-up the button posts the small blind
    kind = "Limit" if game.is_limit else "No Limit"
    stakes = f"{game.raise_size[0]}/{game.raise_size[2]}" if game.is_limit else f"{game.blind[small]}/{game.blind[big]}"
    lines = [
        f"PokerStars Hand #{int(hands.hand_id[row])}:  Hold'em {kind} ({stakes}) - {when:%Y/%m/%d %H:%M:%S} UTC",
        f"Table 'acpc-arena' {players}-max (Play Money) Seat #{seat[button]} is the button",
    ]
    lines += [f"Seat {seat[p]}: {name[p]} ({game.stack[p]} in chips)" for p in order]
    for position, label in ((small, "small"), (big, "big")):
        if game.blind[position]:
            lines.append(f"{name[position]}: posts {label} blind {game.blind[position]}")
    lines.append("*** HOLE CARDS ***")
    lines += [f"Dealt to {name[p]} {_cards(hands.hole[row][p])}" for p in order]
    walk, final, values = steps(hands, row)
    board: list[int] = []
    folded_in: dict[int, int] = {}
    for step in walk:
        if step.action is None:
            shown = f" {_cards(board)}" if board else ""
            board += step.board
            lines.append(f"*** {_STREETS[step.round - 1]} ***{shown} {_cards(step.board)}")
            continue
        who = order[step.seat]
        all_in = " and is all-in" if step.all_in else ""
        if step.action.type is ActionType.FOLD:
            lines.append(f"{name[who]}: folds")
            folded_in[who] = step.round
        elif step.action.type is ActionType.CALL:
            lines.append(f"{name[who]}: calls {step.called}{all_in}" if step.called else f"{name[who]}: checks")
        elif step.round and step.street == step.raised_by:
            lines.append(f"{name[who]}: bets {step.street}{all_in}")
        else:
            lines.append(f"{name[who]}: raises {step.raised_by} to {step.street}{all_in}")
    spent = sorted(final.spent, reverse=True)
    uncalled = spent[0] - spent[1]
    top = max(range(players), key=lambda p: final.spent[p])
    if uncalled:
        lines.append(f"Uncalled bet ({uncalled}) returned to {name[top]}")
    put_in = [final.spent[p] - (uncalled if p == top else 0) for p in range(players)]
    collected = {p: values[p] + put_in[p] for p in order if values[p] + put_in[p] > 0}
    showdown = final.is_showdown()
    described = {p: hand_name([*map(int, hands.hole[row][p]), *board]) for p in order if showdown and not final.folded[p]}
    if showdown:
        lines.append("*** SHOW DOWN ***")
        lines += [f"{name[p]}: shows {_cards(hands.hole[row][p])} ({described[p]})" for p in described]
    lines += [f"{name[p]} collected {_chips(won)} from pot" for p, won in collected.items()]
    lines += ["*** SUMMARY ***", f"Total pot {_chips(sum(put_in))} | Rake 0"]
    if board:
        lines.append(f"Board {_cards(board)}")
    for p in order:
        roles = "".join(
            f" ({role})" for role, at in (("button", button), ("small blind", small), ("big blind", big)) if p == at and (role == "button" or game.blind[p])
        )
        if p in folded_in:
            quiet = " (didn't bet)" if folded_in[p] == 0 and not final.spent[p] else ""
            outcome = f"folded {_FOLDED[folded_in[p]]}{quiet}"
        elif p in described:
            won = f"won ({_chips(collected[p])})" if p in collected else "lost"
            outcome = f"showed {_cards(hands.hole[row][p])} and {won} with {described[p]}"
        else:
            outcome = f"collected ({_chips(collected[p])})"
        lines.append(f"Seat {seat[p]}: {name[p]}{roles} {outcome}")
    return "\n".join(lines) + "\n"


def write_pokerstars(hands: Hands, when: datetime.datetime) -> Iterator[str]:
    """``hands`` as PokerStars text, a block at a time, all dated ``when``
    (an ACPC log has no clock; the caller passes the log's time).

    Raises:
        HoldemError: the game is not Texas hold'em, or a hand's seats share a name.
    """
    problem = holdem_problem(hands.game)
    if problem is not None:
        raise HoldemError(f"PokerStars text: {problem}")
    for row in range(len(hands)):
        yield pokerstars_text(hands, row, when) + "\n\n"
