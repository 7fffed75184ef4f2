"""Continuation leaves, safe and unsafe: exact exploitability on Leduc and
no-limit Leduc of re-solving agents that share one blueprint.

The blueprint is an abstract-game solve with no card abstraction (``arena solve
GAME --algorithm abstract --abstraction none``; pot raises and all-in in
no-limit Leduc). Every agent re-solves at each of its decisions with CFR+
(``--iterations``, default 1000) and is measured by the engine's exact best
response, which asks its policy at every public state (both seats):

* ``resolve:evaluator=continuations,preflop=continuations`` — DeepStack's safe
  continual re-solving (the gadget, the opponent's values carried) whose
  first-street leaves are Modicum's: the opponent picks among the blueprint
  and its fold-, call- and raise-biased versions (``continuations=4``), or the
  blueprint alone (``continuations=1``);
* ``resolve:evaluator=equity`` — the same re-solving with showdown-equity leaves;
* ``modicum`` — Modicum's *unsafe* re-solving on the same blueprint and leaves
  (ranges read off the blueprint), pre-flop from the blueprint (Modicum's own
  choice) or re-solved with equity leaves (our default).

Lines: the blueprint's own exploitability, one line per agent (chips a hand, the
walk's seconds), and last ``NL Leduc exploitability, safe continual re-solving
with continuation leaves vs Modicum (unsafe, same blueprint): X vs Y chips/hand
ratio Y/X`` (r > 1: the safe one is less exploitable). The anchor is Modicum's
method, run here on the same blueprint, not a published figure (Brown, Sandholm
& Amos report head-to-head results only). About 3 minutes on 2 cores.

Usage: ``.venv/bin/python benchmarks/continuations_leduc.py [--iterations 1000]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

from poker.gamedef import load_game  # noqa: E402
from strategies.base import make_strategy  # noqa: E402
from strategies.resolve.measure import exploitability_on_tree  # noqa: E402

#: (game, ``arena solve`` options of its blueprint).
BLUEPRINTS = (
    ("leduc", ("--iterations", "2000")),
    ("leduc.nolimit", ("--bet-sizes", "1", "--iterations", "500")),
)


def agents(path: Path, iterations: int) -> list[tuple[str, str]]:
    """(label, spec) of every agent measured on the blueprint at ``path``."""
    picks = f"resolve:evaluator=continuations,blueprint={path},preflop=continuations,iterations={iterations}"
    modicum = f"modicum:blueprint={path},sizes=1,iterations={iterations}"
    return [
        ("safe, 4 continuations", picks),
        ("safe, the blueprint's continuation only", f"{picks},continuations=1"),
        ("safe, equity leaves", f"resolve:evaluator=equity,iterations={iterations}"),
        ("Modicum (unsafe), pre-flop from the blueprint", f"{modicum},preflop=blueprint"),
        ("Modicum (unsafe), pre-flop re-solved", f"{modicum},preflop=resolve"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=1000)
    args = parser.parse_args()
    figures: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, options in BLUEPRINTS:
            game = load_game(name)
            path = Path(tmp) / f"{name}.strategy"
            subprocess.run(
                [sys.executable, "-m", "arena.cli", "solve", name, "--algorithm", "abstract", "--abstraction", "none",
                 *options, "-o", str(path), "--quiet"],
                check=True, capture_output=True,
            )  # fmt: skip
            blueprint = exploitability_on_tree(game, make_strategy(f"equilibrium:file={path}", game, seed=1))
            print(f"{name}: blueprint (arena solve {name} --algorithm abstract --abstraction none {' '.join(options)}): {blueprint.chips:.5f} chips/hand")
            for label, spec in agents(path, args.iterations):
                started = time.perf_counter()
                measured = exploitability_on_tree(game, make_strategy(spec, game, seed=1))
                figures[name, label] = measured.chips
                print(f"{name}: {label}: {measured.chips:.5f} chips/hand ({time.perf_counter() - started:.0f} s)", flush=True)
    ours = figures["leduc.nolimit", "safe, 4 continuations"]
    anchor = figures["leduc.nolimit", "Modicum (unsafe), pre-flop from the blueprint"]
    print(
        f"NL Leduc exploitability, safe continual re-solving with continuation leaves vs Modicum (unsafe, same"
        f" blueprint): {ours:.4f} vs {anchor:.4f} chips/hand ratio {anchor / ours:.1f}"
    )


if __name__ == "__main__":
    main()
