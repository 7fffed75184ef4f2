"""Matches with external-command bots (ACPC submissions, ``startme.sh HOST PORT``): their forfeits.

A submitted agent in the sandbox (:class:`arena.match.seats.Sandboxed`) is
played and judged as a command is: its seat ends alike, and it forfeits alike.

A match in which one bot is an external command plays its seatings one by one
(:func:`arena.match.play_seating`), each with fresh agents: the
command as a :class:`~arena.match.Command` (run from its program's directory,
its output kept bounded, its whole process group killed with its seating: a
``startme.sh`` that started a child leaves none behind, as the ACPC's
validation demanded), our bots beside it in-process or, with ``agents =
"process"``, as ``python -m agent`` commands. After an aborted seating the
agents get a second to exit (:data:`ABORT_GRACE_S`, the plan's
``after_abort_s``): nothing that happens then changes who is to blame.

A seat whose agent fails *forfeits* that seating, and the tournament goes on:
the dealer aborts the match when a peer is dead (docs/protocol.md, The dealer's rules:
"could not get action from seat N", no SCORE line; "timed out waiting for seat N to
connect" when it never connects), keeping every finished hand in the ``.log``. An agent
fails when the dealer names its seat in such an abort, or when its process ends (or,
in-process, its strategy breaks the protocol) before the seating is over
(:meth:`arena.match.SeatingRun.culprits`). The finished
hands count as played; each unfinished hand costs every failed seat its blind (its
position's ``blind``, as if it folded at once), shared equally by the seats that did not
fail. The remaining seatings are still played with fresh agents, so one crash costs one
seating. A seating that ends without any seat to blame (the dealer could not start, say)
is a failure of ours: :class:`arena.match.MatchError`, and ``--resume`` plays it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import trio

from analysis.tables import plural
from arena.match import MatchError, MatchPlan, SeatingRun, last_line, play_seating
from dealer.log import LogError, read_log
from poker.gamedef import Game

__all__ = ["SeatingOutcome", "play_seatings", "forfeit_charges", "ABORT_GRACE_S"]

#: Seconds the agents of an aborted seating get to exit.
ABORT_GRACE_S: Final = 1.0


@dataclass(frozen=True)
class SeatingOutcome:
    """One seating as it ended: per-seat totals of its finished hands (from the
    ``.log``), how many hands finished, whether the log is complete, and the
    failed seats with the reason for each (empty when it was played out)."""

    match_name: str
    totals: tuple[float, ...]
    hands_played: int
    complete: bool
    failed: dict[int, str]


def _read(path: Path, game: Game, names: tuple[str, ...], hands: int) -> tuple[tuple[float, ...], int, bool]:
    """Per-seat totals of the hands the ``.log`` holds, their count, and
    whether it is complete (every hand and the SCORE line)."""
    if not path.exists():
        return (0.0,) * len(names), 0, False
    try:
        contents = read_log(path, game)
    except LogError as error:
        raise MatchError(str(error)) from None
    totals = [0.0] * len(names)
    seat_of = {name: seat for seat, name in enumerate(names)}
    for line in contents.hands:
        for name, value in zip(line.names, line.values):
            totals[seat_of[name]] += value
    complete = contents.score is not None and len(contents.hands) == hands
    if complete and contents.score is not None:
        totals = list(contents.score[0])
    return tuple(totals), len(contents.hands), complete


async def _play_all(plan: MatchPlan) -> list[SeatingRun]:
    return [await play_seating(plan, index) for index in range(len(plan.seatings))]


def play_seatings(plan: MatchPlan) -> list[SeatingOutcome]:
    """Play each seating of ``plan`` in turn, its files in the plan's run directory.

    Raises:
        MatchError: a seating ended unfinished with no seat to blame.
    """
    outcomes = []
    for index, run in enumerate(trio.run(_play_all, plan)):
        name = plan.match_name(index)
        names = tuple(plan.bots[b].name for b in plan.seatings[index])
        totals, played, complete = _read(plan.run_dir / f"{name}.log", plan.game, names, plan.hands)
        failed = {} if complete else run.culprits()
        if not complete and not failed:
            err = plan.run_dir / f"{name}.err"
            said = f": {last}" if (last := last_line(err)) else ""
            raise MatchError(
                f"{name}: the dealer stopped after {plural(played, 'hand')} with no seat to blame{said} (see {err})"
            )
        outcomes.append(SeatingOutcome(name, totals, played, complete, failed))
    return outcomes


def forfeit_charges(game: Game, failed: set[int], first: int, hands: int) -> tuple[float, ...]:
    """Per seat, the chips the unfinished hands ``first..hands-1`` move: each
    failed seat pays its blind in each (seat s has position (s - h) mod N in
    hand h; docs/protocol.md, Positions and seats), shared equally by the seats that did not fail
    (nothing moves when every seat failed)."""
    n = game.num_players
    charges = [0.0] * n
    others = [s for s in range(n) if s not in failed]
    if not others or not failed:
        return tuple(charges)
    for seat in failed:
        # the blind of each position, counted over the unfinished hands at once
        for position in range(n):
            count = _hands_at(position, seat, n, first, hands)
            paid = game.blind[position] * count
            charges[seat] -= paid
            for other in others:
                charges[other] += paid / len(others)
    return tuple(charges)


def _hands_at(position: int, seat: int, n: int, first: int, hands: int) -> int:
    """How many hands h in ``first..hands-1`` have ``(seat - h) mod n == position``."""
    residue = (seat - position) % n  # h ≡ residue (mod n)
    start = first + (residue - first) % n
    return 0 if start >= hands else (hands - 1 - start) // n + 1
