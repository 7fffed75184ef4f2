"""PHH written and read: :mod:`analysis.phh` against PokerKit's own reader on the same file.

The hands: ``--hands`` (default 5,000) heads-up no-limit hold'em hands
(``holdem.nolimit.2p.reverse_blinds``) played with :mod:`poker.state` from the
reference deal (seed 1): each action fold 0.1 (never a free check), call 0.5,
raise 0.4 to a size drawn uniformly between the minimum and all-in; printed as a
``.log`` and read with :func:`analysis.logs.read_log`.

Written: :func:`analysis.phh.write_phh` of every hand to one ``.phhs`` file
(hands/s; PokerKit writes PHH only from its own objects, so there is no anchor
for this line). Read, the figure: :func:`analysis.phh.read_phh` (TOML parsed,
every hand replayed with the rules, values and ``finishing_stacks`` checked)
against PokerKit's ``HandHistory.loads_all`` with each hand replayed to its end
state (PokerKit's payoffs: the same work; its load alone, which replays nothing,
is printed too). Best of ``--reps``.

Run: ``.venv/bin/python benchmarks/export.py`` (needs ``pokerkit``, a test
dependency). Last line: ``read PHH: <ours> hands/s vs <PokerKit> hands/s ratio <ours/PokerKit>``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pokerkit import HandHistory  # noqa: E402

from analysis.logs import read_log  # noqa: E402
from analysis.phh import read_phh, write_phh  # noqa: E402
from dealer.log import format_header  # noqa: E402
from poker.deal import Dealer  # noqa: E402
from poker.gamedef import Game, load_game  # noqa: E402
from poker.hand_rank import hand_values  # noqa: E402
from poker.protocol import format_state_line  # noqa: E402
from poker.state import CALL, FOLD, Action, State  # noqa: E402

GAME_NAME = "holdem.nolimit.2p.reverse_blinds"
NAMES = ("alpha", "beta")


def write_log(path: Path, game: Game, hands: int, seed: int) -> None:
    """``hands`` random hands as a ``.log``."""
    dealer, rng = Dealer(game, seed=seed), random.Random(seed)
    with open(path, "w") as file:
        file.write(format_header("bench", f"{GAME_NAME}.game", hands, seed, t_response_ms=600000, t_hand_ms=600000, t_per_hand_ms=7000))
        for hand in range(hands):
            deal, state = dealer.next_hand(), State(game)
            while not state.finished:
                draw, bounds = rng.random(), state.raise_bounds()
                if draw < 0.1 and state.can_fold() and state.amount_to_call():
                    action = FOLD
                elif draw < 0.6 or bounds is None:
                    action = CALL
                else:
                    action = Action.raise_to(rng.randint(*bounds))
                state = state.apply(action)
            names = [NAMES[(p + hand) % 2] for p in range(2)]
            values = hand_values(state, deal.hole, deal.board)
            file.write(format_state_line(state, deal, hand_id=hand, values=values, names=names) + "\n")


def best(reps: int, work: Callable[[], int]) -> float:
    """The fastest of ``reps`` runs of ``work`` in seconds."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=5_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    game = load_game(GAME_NAME)
    with tempfile.TemporaryDirectory() as scratch:
        log, phh = Path(scratch) / "bench.log", Path(scratch) / "bench.phhs"
        write_log(log, game, args.hands, seed=1)
        hands = read_log(log, game)
        text = ""

        def write() -> int:
            nonlocal text
            text = "".join(write_phh(hands))
            return len(text)

        written = best(args.reps, write)
        phh.write_text(text)
        print(f"wrote {args.hands} hands of {GAME_NAME} as PHH ({len(text) / 1e6:.1f} MB): {args.hands / written:,.0f} hands/s")
        ours = best(args.reps, lambda: len(read_phh(phh)))
        print(f"analysis.phh.read_phh (parse, replay, check): {args.hands / ours:,.0f} hands/s")
        loaded = best(args.reps, lambda: len(list(HandHistory.loads_all(phh.read_text()))))
        print(f"PokerKit HandHistory.loads_all (parse only): {args.hands / loaded:,.0f} hands/s")

        def pokerkit_replay() -> int:
            return sum(1 for history in HandHistory.loads_all(phh.read_text()) for _ in history)

        theirs = best(args.reps, pokerkit_replay)
        print(f"read PHH: {args.hands / ours:,.0f} hands/s vs {args.hands / theirs:,.0f} hands/s ratio {theirs / ours:.2f}")


if __name__ == "__main__":
    main()
