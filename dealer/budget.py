"""Per-seat time budgets (docs/protocol.md, The dealer's rules; ``dealer.c``
``checkErrorTimes``), and the longest a whole match can legitimately take.

Only the acting seat is charged: every line read from it (comments excepted)
adds ``recv - send`` microseconds, where ``send`` is when the dealer finished
writing the state to it. A seat that sends several lines for one state is
therefore charged several times: the reference's quirk, kept. A response
fails when it alone exceeds ``t_response``, when the seat's total in this hand
exceeds ``t_hand``, or when its total in the match exceeds ``t_per_hand`` times
the number of hands. A clock that went backwards charges nothing.

Where we differ: the reference waits up to ``t_response`` for *each* line and
skips comment lines without looking at the clock, so a seat that sends ``#``
once a second is never timed out and stalls the match for ever. Here the
clock of a response runs from ``send`` whatever lines arrive:
:meth:`TimeBudgets.allowance_us` is when the answer must have been read, and
the dealer stops waiting then (the reference's messages: "could not get
action" when ``t_response`` is what ran out, "ran out of time" when a hand
or match budget did, which the reference would only say once a late line came).

:func:`match_deadline_s` adds the budgets up into a wall-clock cap for the
whole match, for those who run matches they cannot watch (tournaments, a
hosted table): a match still running past it is stuck on something no
budget charges, such as a seat that reads its states slowly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

__all__ = ["TimeBudgets", "TimeLimits", "match_deadline_s", "DEALER_S_PER_HAND", "DEALER_S_FIXED"]

#: Allowed per hand for the dealer's own work (dealing, writing states and logs,
#: scoring): about 0.7 ms alone on a 2-core VM; 0.1 s leaves room for a loaded
#: machine and for many matches sharing one process.
DEALER_S_PER_HAND: Final = 0.1
#: Allowed once per match for opening files and closing connections.
DEALER_S_FIXED: Final = 10.0


@dataclass(frozen=True)
class TimeLimits:
    """The reference's four time options, in milliseconds (docs/protocol.md,
    The dealer's rules; the defaults are its code's). ``start_timeout_ms < 0`` waits for ever."""

    response_ms: int = 600000
    hand_ms: int = 600000
    per_hand_ms: int = 7000
    start_timeout_ms: int = -1


def match_deadline_s(limits: TimeLimits, *, num_hands: int, num_seats: int) -> float:
    """The most seconds a match can take, from the dealer's start to its last
    hand, while every seat keeps within ``limits``; ``math.inf`` when the
    start wait is unbounded (``start_timeout_ms < 0``).

    Every moment of a match is the wait for the seats to connect (at most the
    start timeout), a wait for an acting seat's answer (charged to that seat:
    at most ``min(t_per_hand, t_hand)`` per hand each over the match), or the
    dealer's own work (:data:`DEALER_S_PER_HAND`, :data:`DEALER_S_FIXED`).
    What none of these charges (a seat that reads its states slowly, which
    holds the dealer up to ``t_response`` per state) cannot happen in a
    legitimate match, so past this point a match may be stopped."""
    if limits.start_timeout_ms < 0:
        return math.inf
    seat_ms = num_hands * min(limits.per_hand_ms, limits.hand_ms)
    return (limits.start_timeout_ms + num_seats * seat_ms) / 1000 + num_hands * DEALER_S_PER_HAND + DEALER_S_FIXED


class TimeBudgets:
    """Microsecond accounting of one match."""

    __slots__ = ("response_us", "hand_us", "match_us", "used_hand_us", "used_match_us")

    def __init__(self, num_seats: int, *, response_us: int, hand_us: int, match_us: int) -> None:
        self.response_us = response_us
        self.hand_us = hand_us
        self.match_us = match_us
        self.used_hand_us = [0] * num_seats
        self.used_match_us = [0] * num_seats

    def new_hand(self) -> None:
        """Reset the per-hand totals (``checkErrorNewHand``)."""
        self.used_hand_us = [0] * len(self.used_hand_us)

    def allowance_us(self, seat: int) -> int:
        """How long after ``send`` a line from ``seat`` may still be read: the
        response limit, or less if the seat's hand or match budget has less
        left. A line read later fails :meth:`charge`."""
        return min(self.response_us, self.hand_us - self.used_hand_us[seat], self.match_us - self.used_match_us[seat])

    def charge(self, seat: int, send_us: int, recv_us: int) -> bool:
        """Charge one response; False if a budget is now exceeded."""
        if recv_us < send_us:
            return True
        spent = recv_us - send_us
        self.used_hand_us[seat] += spent
        self.used_match_us[seat] += spent
        return spent <= self.response_us and self.used_hand_us[seat] <= self.hand_us and self.used_match_us[seat] <= self.match_us
