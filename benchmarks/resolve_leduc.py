"""Continual re-solving on Leduc and no-limit Leduc: exact exploitability, measured
as DeepStack-Leduc (DSL) does, against its published figures (github.com/lifrordi/DeepStack-Leduc).

The agent (``resolve``, :mod:`strategies.resolve.agent`) re-solves at every
decision with CFR+ (1000 iterations) and the gadget on a lookahead that runs to
the end of the hand (the *exact* evaluator) or, on the first street, stops at
its end and asks an evaluator (the learned value net, or the equity heuristic). Its policy is
asked at every public state of the best responder's tree, which re-solves along
every public history, both seats; the engine's exact best response walks that
tree. Lines:

1. the measurement check: the uniform policy on DSL's tree (fold offered even
   when a check is free) in DSL's unit (every pair of hands weighted 1/36) vs
   the tutorial's "a bit over 175", and on our tree in true chips;
2. limit Leduc: the agent vs its own root solve (the CFR+ blueprint);
3. no-limit Leduc against the fold/call/pot/all-in responder and against one
   with 1/2 and 2 pots as well (also against the agent re-solving with those
   sizes itself), true chips and DSL units, vs the CFR+ blueprint (1000
   iterations on that tree) and DSL's published 1.37;
4. median seconds per action (one re-solve, lookahead build included);
5. Burch §5.4.1: an abstract limit-Leduc strategy (``arena solve leduc
   --algorithm abstract --abstraction ehs2:2:perfect``) with its 30 subgames
   re-solved safely and unsafely;
6. the exact evaluator's figure in DSL units beside DSL's 1.37 (not like for like);
7. the depth-limited variants: the ``equity`` heuristic and the shipped value net
   (``strategies/data/leduc-nl-values.npz``, ``arena train-values``) at the end of
   the first street, each against both responders, with the first street's
   median re-solve time;
8. last: the like-for-like figure (the value net) ``… ratio <1.37 / ours>``.

Usage: ``.venv/bin/python benchmarks/resolve_leduc.py [--iterations 1000]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/dealer.py would shadow dealer/

from poker.gamedef import load_game  # noqa: E402
from strategies.base import make_strategy  # noqa: E402
from strategies.cfr.best_response.exact import exploitability, strategy_from_policy  # noqa: E402
from strategies.cfr.solvers.solver import Solver, uniform_strategy  # noqa: E402
from strategies.cfr.tree.public import Tree, build_tree  # noqa: E402
from strategies.resolve.agent import ResolvingStrategy  # noqa: E402
from strategies.resolve.measure import dsl_factor, dsl_uniform_exploitability, exploitability_on_tree  # noqa: E402
from strategies.resolve.subgames import resolve_subgames  # noqa: E402

#: DSL tutorial: the uniform policy, "a bit over 175" chips (DSL units).
DSL_UNIFORM = 175.0
#: DSL's continual re-solving with its value net at the end of the first street, DSL units.
DSL_RESOLVING = 1.37
#: Burch thesis §5.4.1 (Fig 5.9): abstract strategy 0.382; safe 0.23-0.29 after 2000 iterations; unsafe 0.39.
BURCH = "0.382 -> safe 0.23-0.29, unsafe 0.39"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=1000)
    args = parser.parse_args()
    nl = load_game("leduc.nolimit")
    limit = load_game("leduc")

    uniform = dsl_uniform_exploitability(nl)
    tree = build_tree(nl)
    ours_uniform = exploitability(tree, uniform_strategy(tree))
    print(
        f"uniform policy, NL Leduc: {uniform.dsl:.2f} DSL units on DSL's tree vs DSL tutorial 'a bit over"
        f" {DSL_UNIFORM:g}'; {ours_uniform:.2f} true chips on our fold-less tree"
    )

    agent = ResolvingStrategy(limit, iterations=args.iterations, seed=1)
    measured = exploitability_on_tree(limit, agent)
    root = agent.root_solve()
    assert isinstance(root.tree, Tree)  # the exact evaluator's lookahead is the engine's tree
    print(
        f"limit Leduc, continual re-solving (exact): {measured.chips:.6f} chips/hand (BR values"
        f" {measured.values[0]:.5f}, {measured.values[1]:.5f}) vs its root CFR+ solve"
        f" {exploitability(root.tree, root.strategy):.6f}"
    )

    agent = ResolvingStrategy(nl, iterations=args.iterations, seed=1)
    started = time.perf_counter()
    fcpa = exploitability_on_tree(nl, agent)
    walk = time.perf_counter() - started
    wide = exploitability_on_tree(nl, agent, (0.5, 1.0, 2.0))
    blueprint = Solver(tree)
    blueprint.run(args.iterations)
    blue = blueprint.exploitability()
    print(
        f"NL Leduc, continual re-solving (exact), responder fold/call/pot/all-in: {fcpa.chips:.4f} true chips"
        f" = {fcpa.dsl:.4f} DSL units (x{dsl_factor(nl):.4f}); CFR+ blueprint, {args.iterations} iterations on"
        f" that tree: {blue:.4f} true chips; walk {walk:.1f} s"
    )
    print(
        f"NL Leduc, continual re-solving (exact), responder with 1/2, 1, 2 pots and all-in: {wide.chips:.4f} true"
        f" chips = {wide.dsl:.4f} DSL units"
    )
    sized = ResolvingStrategy(nl, sizes=((0.5, 1.0, 2.0),), iterations=args.iterations, seed=1)
    sized_wide = exploitability_on_tree(nl, sized, (0.5, 1.0, 2.0))
    print(
        f"NL Leduc, continual re-solving (exact) with 1/2, 1, 2 pots itself (sizes=0.5+1+2), same responder:"
        f" {sized_wide.chips:.4f} true chips = {sized_wide.dsl:.4f} DSL units"
    )
    seconds = agent.solve_seconds[1:]  # the root solve is made once per agent
    print(
        f"seconds per action (one re-solve with lookahead build, {len(seconds)} re-solves): median"
        f" {statistics.median(seconds):.4f}, max {max(seconds):.4f} (target median <= 0.5)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "abstract.strategy"
        subprocess.run(
            [sys.executable, "-m", "arena.cli", "solve", "leduc", "--algorithm", "abstract", "--abstraction",
             "ehs2:2:perfect", "--iterations", "1000", "-o", str(path)],
            check=True, capture_output=True,
        )
        full = build_tree(limit)
        original = strategy_from_policy(full, make_strategy(f"equilibrium:file={path}", limit, seed=1))
        safe = exploitability(full, resolve_subgames(full, original, safe=True, iterations=2000))
        unsafe = exploitability(full, resolve_subgames(full, original, safe=False, iterations=2000))
    print(
        f"Burch 5.4.1, limit Leduc, abstract ehs2:2 strategy {exploitability(full, original):.3f} -> safe"
        f" re-solving {safe:.3f}, unsafe {unsafe:.3f} chips/hand (2000 iterations per subgame) vs Burch {BURCH}"
    )
    print(
        f"NL Leduc continual re-solving, EXACT evaluator (lookahead to the end of the hand), exploitability vs"
        f" fold/call/pot/all-in responder in DSL units: {fcpa.dsl:.4f} (not like for like: DSL's"
        f" {DSL_RESOLVING} has a value net at the first street's end)"
    )

    figures = {}
    for kind in ("equity", "net"):
        spec = f"resolve:evaluator={kind},iterations={args.iterations}"
        limited = make_strategy(spec, nl, seed=1)
        assert isinstance(limited, ResolvingStrategy)
        started = time.perf_counter()
        narrow = exploitability_on_tree(nl, limited)
        walk = time.perf_counter() - started
        first_street = [r.seconds for r in limited._cache.values() if r is not None and r.tree.states[0].round == 0]
        broad = exploitability_on_tree(nl, limited, (0.5, 1.0, 2.0))
        figures[kind] = narrow
        print(
            f"NL Leduc, continual re-solving, {kind} evaluator at the first street's end ({spec}): responder"
            f" fold/call/pot/all-in {narrow.chips:.4f} true chips = {narrow.dsl:.4f} DSL units; responder with 1/2, 1,"
            f" 2 pots and all-in {broad.chips:.4f} true chips = {broad.dsl:.4f} DSL units; first-street re-solve median"
            f" {statistics.median(first_street):.3f} s; walk {walk:.1f} s"
        )
    net = figures["net"]
    print(
        f"NL Leduc continual re-solving, learned value net at the first street's end (like for like), exploitability"
        f" vs fold/call/pot/all-in responder in DSL units: {net.dsl:.4f} vs DeepStack-Leduc {DSL_RESOLVING} ratio"
        f" {DSL_RESOLVING / net.dsl:.3f}"
    )


if __name__ == "__main__":
    main()
