"""Per-seat time budgets (SPEC.md §2.8; ``dealer.c`` ``checkErrorTimes``).

Only the acting seat is charged: every line read from it (comments excepted)
adds ``recv - send`` microseconds, where ``send`` is when the dealer finished
writing the state to it. A seat that sends several lines for one state is
therefore charged several times: the reference's quirk, kept. A response
fails when it alone exceeds ``t_response``, when the seat's total in this hand
exceeds ``t_hand``, or when its total in the match exceeds ``t_per_hand`` times
the number of hands. A clock that went backwards charges nothing.
"""

from __future__ import annotations

__all__ = ["TimeBudgets"]


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

    def charge(self, seat: int, send_us: int, recv_us: int) -> bool:
        """Charge one response; False if a budget is now exceeded."""
        if recv_us < send_us:
            return True
        spent = recv_us - send_us
        self.used_hand_us[seat] += spent
        self.used_match_us[seat] += spent
        return spent <= self.response_us and self.used_hand_us[seat] <= self.hand_us and self.used_match_us[seat] <= self.match_us
