"""Data-biased response in heads-up limit hold'em, end to end from the command
line (issue 9 item 4; Johanson 2016 thesis ch6): observe an opponent in ACPC
logs, build a DBR counter-strategy in a card abstraction's abstract game, and
measure in duplicate matches that it exploits the opponent more than the
equilibrium bot of the same abstraction.

Steps (the commands are printed as they run):

1. ``arena match hulhe EQUILIBRIUM OPPONENT --hands N --duplicate`` writes the
   logs (the reference dealer's ``.log`` format, every hole card shown);
2. ``arena dbr LOGS --opponent OPPONENT --method dbr --p P --abstraction SPEC``
   counts the opponent per abstract information set and solves the restricted
   abstract game for each seat (it prints the exact abstract-game figures: the
   counter-strategy's exploitability there, its value against the model and a
   best response's); the equilibrium bot's value against the model there is
   computed too;
3. in this process, on the same fresh cards (another seed), the DBR bot and
   the equilibrium bot each play a duplicate match against the opponent (every
   deal in both seatings), and the DBR bot one against the equilibrium bot.
   Results per deal are the mean of its two seatings; the figures are means
   with 95% intervals (1.96 s / sqrt(n)) in mbb/g, and the paired difference
   DBR minus equilibrium against the opponent on the same deals.

The equilibrium is a bot of ``arena bots`` built on the same card abstraction
(default ``hulhe-ehs2-5``, ``ehs2:5:perfect``; build it first with ``arena bots
build hulhe-ehs2-5``). Run: ``.venv/bin/python benchmarks/dbr_hulhe.py
[--opponent always-call] [--log-hands 2000] [--hands 5000] [--p 0.9]
[--iterations 200] [--workdir DIR]``; no-limit: ``--game hunl --equilibrium
hunl-ehs2-3 --abstraction ehs2:3:perfect --bet-sizes 0.5,1``. The last line is the figure: DBR's
mbb/g against the opponent vs the equilibrium's, ratio DBR / equilibrium
(above 1: DBR exploits it more).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from poker.gamedef import load_game  # noqa: E402
from poker.stats import Estimate, mean_ci, unit_of  # noqa: E402
from strategies import make_strategy  # noqa: E402
from strategies.portfolio import play_hands  # noqa: E402


def run(command: list[str]) -> None:
    """Run an ``arena`` command, echoing it; stop on failure."""
    print("$ " + shlex.join(command), flush=True)
    subprocess.run([sys.executable, "-m", "arena", *command[1:]], check=True, cwd=ROOT)


def duplicate(game_name: str, ours: str, other: str, deals: int, seed: int) -> npt.NDArray[np.float64]:
    """Ours' chips per deal, the mean of the deal's two seatings with the same cards."""
    game = load_game(game_name)
    total = np.zeros(deals)
    for k, (first, second) in enumerate(((ours, other), (other, ours))):
        players = [make_strategy(spec, game, seed=seed * 31 + k * 7 + i) for i, spec in enumerate((first, second))]
        total += play_hands(game, players, deals, seed=seed)[:, 0 if first == ours else 1]
    result: npt.NDArray[np.float64] = total / 2
    return result


def abstract_figures(strategy: Path, equilibrium: str, logs: list[Path], opponent: str) -> tuple[float, float, float]:
    """Exact abstract-game values (mbb/g) against the opponent's model counted
    from ``logs``: the DBR file's, the equilibrium bot's and a best response's."""
    from analysis.hand_files import read_hands
    from analysis.hands import concat
    from strategies.bots import find_bot, solve_path
    from strategies.cfr.abstraction.card_abstraction import load_abstraction
    from strategies.cfr.solvers.abstract_solve import AbstractSolve
    from strategies.cfr.strategy_file import load_strategy
    from strategies.dbr_abstract import abstract_exploitation, count_abstract_model

    ours = load_strategy(strategy)
    anchor = load_strategy(solve_path(find_bot(equilibrium)))
    if anchor.card_abstraction != ours.card_abstraction or anchor.abstraction != ours.abstraction:
        raise SystemExit(f"{equilibrium} is not solved in the DBR file's abstraction")
    solve = AbstractSolve.build(load_abstraction(ours.card_abstraction, ours.game), betting=ours.abstraction)
    hands = concat([read_hands(path) for path in logs])
    fixed = count_abstract_model(solve, hands, opponent).strategy()
    g = solve.game
    per_chip = unit_of(ours.game).per_chip
    values = [abstract_exploitation(g, solve.from_file(f.arrays["strategy"]), fixed) for f in (ours, anchor)]
    return values[0] * per_chip, values[1] * per_chip, float(np.mean(g.best_response(fixed))) * per_chip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="hulhe", help="hulhe (default), or hunl with --bet-sizes")
    parser.add_argument("--bet-sizes", help="no-limit: the betting abstraction of the equilibrium bot (hunl-ehs2-3: 0.5,1)")
    parser.add_argument("--opponent", default="always-call", help="the bot to observe and exploit")
    parser.add_argument("--equilibrium", default="hulhe-ehs2-5", help="the equilibrium bot of the abstraction")
    parser.add_argument("--abstraction", default="ehs2:5:perfect", help="the card abstraction DBR is solved in")
    parser.add_argument("--log-hands", type=int, default=2000, help="observed hands per seating (default 2000)")
    parser.add_argument("--hands", type=int, default=5000, help="evaluation deals, each in both seatings (default 5000)")
    parser.add_argument("--p", type=float, default=0.9, help="DBR's P_max (default 0.9)")
    parser.add_argument("--iterations", type=int, default=200, help="CFR+ iterations per seat (default 200)")
    parser.add_argument("--seed", type=int, default=11, help="card seed of the logs (the evaluation uses seed + 1)")
    parser.add_argument(
        "--workdir", type=Path, help="where the logs and the strategy go (default a temporary one; reused if there)"
    )
    args = parser.parse_args(argv)
    game = args.game
    betting = [] if args.bet_sizes is None else ["--bet-sizes", args.bet_sizes]
    unit = unit_of(load_game(game))
    work = args.workdir or Path(tempfile.mkdtemp(prefix="dbr-hulhe-"))
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "log"
    strategy = work / "dbr.strategy"
    started = time.perf_counter()
    if not logs.exists():
        run(["arena", "match", game, args.equilibrium, args.opponent, "--hands", str(args.log_hands),
             "--seed", str(args.seed), "--duplicate", "--run-dir", str(logs)])  # fmt: skip
    if not strategy.exists():
        run(["arena", "dbr", *sorted(str(p) for p in logs.glob("match.*.log")), "--opponent", args.opponent,
             "--method", "dbr", "--p", str(args.p), "--abstraction", args.abstraction, "--float32",
             *betting, "--iterations", str(args.iterations), "--quiet", "-o", str(strategy)])  # fmt: skip
    built = time.perf_counter() - started
    exact = abstract_figures(strategy, args.equilibrium, sorted(logs.glob("match.*.log")), args.opponent)
    print(
        f"in the abstract game, exactly, against the model of {args.opponent}: DBR {exact[0]:+.1f},"
        f" {args.equilibrium} {exact[1]:+.1f}, a best response {exact[2]:+.1f} {unit.name}",
        flush=True,
    )
    dbr = f"equilibrium:file={strategy}"
    seed = args.seed + 1
    print(f"evaluation: {args.hands} duplicate deals each, card seed {seed}", flush=True)
    ours = duplicate(game, dbr, args.opponent, args.hands, seed)
    anchor = duplicate(game, args.equilibrium, args.opponent, args.hands, seed)
    head = duplicate(game, dbr, args.equilibrium, args.hands, seed)

    def show(label: str, est: Estimate) -> None:
        print(f"{label:<46} {est.mean:+9.1f} ± {est.half_width:6.1f} {unit.name}")

    estimates = [mean_ci(x).scaled(unit.per_chip) for x in (ours, anchor, ours - anchor, head)]
    show(f"DBR (P_max={args.p}) vs {args.opponent}", estimates[0])
    show(f"{args.equilibrium} vs {args.opponent}", estimates[1])
    show("difference on the same deals", estimates[2])
    show(f"DBR vs {args.equilibrium}", estimates[3])
    print(f"logs, model and solve {built:.0f} s; evaluation {time.perf_counter() - started - built:.0f} s; work dir {work}")
    ratio = estimates[0].mean / estimates[1].mean
    print(f"duplicate {unit.name} vs {args.opponent}: DBR {estimates[0].mean:+.1f} vs {args.equilibrium} {estimates[1].mean:+.1f} ratio {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
