"""Decision latency of the equilibrium agent (issue 9: p99 <= 5 ms for
table-lookup bots, translation included).

Strategy files are solved first (into a temporary directory, a few seconds):
Leduc CFR+ (public-tree layout), Leduc PCS with ``hs:3:perfect`` buckets (bucket
layout) and no-limit Leduc CFR+ with raises of ½ pot, pot and all-in. Then the
agent plays hands in one process, without sockets, against the example player
(``random``; ``random:size=uniform`` in no-limit, so nearly every opposing raise
is off the tree and is translated), alternating positions; each call of
``Strategy.act`` with the view the agent would get is timed
(``time.perf_counter_ns``), after a warm-up of 200 decisions. A decision's cost
is the agent's whole answer: re-deriving the abstract betting from the real one
(no-limit), the table lookup, the draw and the mapping to a legal real size.

Run: ``.venv/bin/python benchmarks/agent_latency.py [--decisions N] [--seed S]``.
The last line is the figure: the worst p99 over the files against the 5 ms
target, ratio = 5 / ours (above 1, within the target).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from poker.gamedef import Game, load_game  # noqa: E402
from poker.protocol import MatchState  # noqa: E402
from poker.state import State  # noqa: E402
from strategies import Strategy, make_strategy  # noqa: E402
from arena.commands import solve as cli  # noqa: E402
from strategies.equilibrium import EquilibriumStrategy  # noqa: E402
from strategies.translation import translate, translation_draw  # noqa: E402

TARGET_MS = 5.0
WARM_UP = 200

#: name, game, solve arguments, opponent spec
CASES = (
    ("leduc cfr+", "leduc", ["--iterations", "1000"], "random"),
    ("leduc pcs hs:3", "leduc", ["--algorithm", "pcs", "--abstraction", "hs:3:perfect", "--iterations", "5000"],
     "random"),
    ("leduc.nolimit cfr+ ½,1,all-in", "leduc.nolimit", ["--bet-sizes", "0.5,1", "--iterations", "300"],
     "random:size=uniform"),
)


def measure(
    game: Game, ours: EquilibriumStrategy, opponent: Strategy, decisions: int, seed: int
) -> tuple[list[float], int]:
    """Milliseconds per decision of ``ours`` over ``decisions`` timed decisions,
    and how many of them were off the tree (the real betting not itself abstract)."""
    rng = np.random.default_rng(seed)
    deck = sorted(game.deck())
    times: list[float] = []
    off_tree = 0
    hand_id = 0
    while len(times) < decisions + WARM_UP:
        cards = [int(c) for c in rng.permutation(deck)]
        me = hand_id % 2
        holes = [tuple(cards[p * game.num_hole_cards : (p + 1) * game.num_hole_cards]) for p in range(2)]
        board_cards = tuple(cards[2 * game.num_hole_cards :])
        state = State(game)
        while not state.finished:
            player = state.current_player()
            hole = tuple(holes[p] if p == player else () for p in range(2))
            view = MatchState(player, hand_id, state, hole, board_cards[: game.total_board_cards(state.round)])
            if player == me:
                start = time.perf_counter_ns()
                action = ours.act(view)
                times.append((time.perf_counter_ns() - start) / 1e6)
                if ours.abstraction is not None and WARM_UP < len(times) <= WARM_UP + decisions:
                    draw = lambda b, h=hand_id: translation_draw(ours.seed, h, b)  # noqa: E731
                    (path,) = translate(state, ours.abstraction, player=player, draw=draw)
                    off_tree += path.abstract is None or path.abstract.betting_string() != state.betting_string()
            else:
                action = opponent.act(view)
            assert state.is_legal(action), (state, action)
            state = state.apply(action)
        hand_id += 1
    return times[WARM_UP : WARM_UP + decisions], off_tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", type=int, default=5000, help="timed decisions per file (default 5000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        paths: list[Path] = []
        for name, game_name, solve, _ in CASES:
            paths.append(Path(tmp) / f"{len(paths)}.strat")
            with contextlib.redirect_stdout(io.StringIO()):
                if cli.main([game_name, *solve, "-o", str(paths[-1]), "--quiet"]) != 0:
                    raise SystemExit(f"solving {name} failed")
        print(f"{'file':<30} {'decisions':>9} {'off-tree':>8} {'median ms':>10} {'p99 ms':>8} {'max ms':>8}")
        for (name, game_name, _, opponent_spec), path in zip(CASES, paths, strict=True):
            game = load_game(game_name)
            ours = make_strategy(f"equilibrium:file={path}", game, seed=args.seed)
            assert isinstance(ours, EquilibriumStrategy)
            opponent = make_strategy(opponent_spec, game, seed=args.seed + 1)
            times, off_tree = measure(game, ours, opponent, args.decisions, args.seed)
            p99 = float(np.percentile(times, 99))
            worst = max(worst, p99)
            print(
                f"{name:<30} {len(times):>9} {off_tree:>8} {statistics.median(times):>10.3f} {p99:>8.3f}"
                f" {max(times):>8.3f}"
            )
    print(f"equilibrium p99 decision latency: {worst:.3f} ms vs {TARGET_MS:g} ms target ratio {TARGET_MS / worst:.1f}")


if __name__ == "__main__":
    main()
