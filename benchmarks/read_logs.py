"""Reading a million-hand ``.log``: :func:`analysis.logs.read_log` against the per-line parse.

The log: heads-up limit hold'em (``holdem.limit.2p.reverse_blinds``), the
dealer's header, 1,000,000 STATE lines and a SCORE line. ``--distinct`` hands
(default 20,000) are played with :mod:`poker.state` from the reference deal
(seed 1): each action is drawn fold 0.06 / call 0.47 / raise 0.47 (the
reference ``example_player``; a free check is never folded), showdown values
come from :func:`poker.hand_rank.hand_values`, and the lines are printed by
:func:`poker.protocol.format_state_line` with the seat names rotating. Those
lines are then repeated, hand ids renumbered 0..999,999, to a million.

Ours: :func:`analysis.logs.read_log` (str methods and numpy per block of
lines, every line checked, no rule replay), best of ``--reps`` reads of the
whole file. The anchor is how ``arena match`` reads a log today
(``arena/match.py::_read_seating`` through :func:`dealer.log.read_log`):
:func:`poker.protocol.parse_state_line` on every line (betting replayed through
:class:`poker.state.State`, with its prefix cache) and each value stored by
seat name into a ``[hands, players]`` array. It is too slow for a million lines
within a benchmark, so it is timed on the first ``--anchor-lines`` lines
(default 50,000, all of them distinct hands when ``--distinct`` allows) and
extrapolated linearly to the whole file; the last line says so.

Run: ``.venv/bin/python benchmarks/read_logs.py``. The last line is the figure:
``read 1M-hand log: <ours> s vs <anchor> s ratio <anchor/ours>``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.logs import read_log  # noqa: E402
from dealer.log import format_header  # noqa: E402
from poker.deal import Dealer  # noqa: E402
from poker.hand_rank import hand_values  # noqa: E402
from poker.gamedef import Game, load_game  # noqa: E402
from poker.protocol import format_state_line, parse_state_line  # noqa: E402
from poker.state import CALL, FOLD, Action, ActionType, State  # noqa: E402

GAME_NAME = "holdem.limit.2p.reverse_blinds"
NAMES = ("alpha", "beta")
RAISE = Action(ActionType.RAISE)


def play(game: Game, hands: int, seed: int) -> list[tuple[str, str]]:
    """``hands`` random hands: each STATE line's text after the hand id, and the name in position 0."""
    dealer, rng = Dealer(game, seed=seed), random.Random(seed)
    lines = []
    for hand in range(hands):
        deal, state = dealer.next_hand(), State(game)
        while not state.finished:
            draw = rng.random()
            if draw < 0.06 and state.can_fold():
                action = FOLD
            elif draw < 0.53 or not state.can_raise():
                action = CALL
            else:
                action = RAISE
            state = state.apply(action)
        values = hand_values(state, deal.hole, deal.board)
        names = [NAMES[(p + hand) % 2] for p in range(2)]
        line = format_state_line(state, deal, hand_id=hand, values=values, names=names)
        lines.append((line.split(":", 2)[2], names[0]))
    return lines


def write_log(path: Path, game: Game, total: int, distinct: int) -> None:
    played = play(game, distinct, seed=1)
    with open(path, "w") as file:
        file.write(format_header("bench", f"{GAME_NAME}.game", total, 1, t_response_ms=600000, t_hand_ms=600000, t_per_hand_ms=7000))
        for hand in range(total):
            rest, first = played[hand % distinct]
            # the seat names must rotate with the hand id: swap them when the parity differs
            if first != NAMES[hand % 2]:
                head, names = rest.rsplit(":", 1)
                rest = f"{head}:{'|'.join(reversed(names.split('|')))}"
            file.write(f"STATE:{hand}:{rest}\n")


def anchor(path: Path, game: Game, lines: int) -> tuple[float, int]:
    """The per-line parse of ``lines`` STATE lines: seconds and lines read."""
    start = time.perf_counter()
    values = np.full((lines, 2), np.nan)
    column = {name: b for b, name in enumerate(NAMES)}
    read = 0
    with open(path) as file:
        for text in file:
            if not text.startswith("STATE:"):
                continue
            state_line = parse_state_line(text.rstrip("\n"), game)
            for name, value in zip(state_line.names, state_line.values):
                values[state_line.hand_id, column[name]] = value
            read += 1
            if read == lines:
                break
    return time.perf_counter() - start, read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=20_000)
    parser.add_argument("--anchor-lines", type=int, default=50_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    game = load_game(GAME_NAME)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "bench.log"
        start = time.perf_counter()
        write_log(path, game, args.hands, args.distinct)
        size = path.stat().st_size
        print(f"wrote {args.hands} hands ({args.distinct} distinct, {size / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s")
        ours = []
        for _ in range(args.reps):
            start = time.perf_counter()
            hands = read_log(path, game)
            ours.append(time.perf_counter() - start)
            assert len(hands) == args.hands and not hands.skipped
        best = min(ours)
        print(f"analysis.logs.read_log: {', '.join(f'{t:.2f}' for t in ours)} s (best {best:.2f} s, {best / args.hands * 1e6:.2f} us/hand)")
        lines = min(args.anchor_lines, args.hands)
        seconds, read = anchor(path, game, lines)
        per_line = seconds / read
        print(f"anchor parse_state_line: {seconds:.2f} s for {read} lines ({per_line * 1e6:.1f} us/line)")
        extrapolated = per_line * args.hands
        note = f" (anchor extrapolated from {read} lines)" if read < args.hands else ""
        print(f"read 1M-hand log: {best:.2f} s vs {extrapolated:.1f} s ratio {extrapolated / best:.1f}{note}")


if __name__ == "__main__":
    main()
