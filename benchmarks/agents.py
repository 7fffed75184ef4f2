"""The named bots in duplicate matches against the chumps and each other, and
their decision latency (issue 9's acceptance for ``arena bots``).

Every bot of ``arena bots`` whose strategy file is here (the shipped ones, and
``hulhe-ehs2-5`` / ``hunl-ehs2-3`` once ``arena bots build NAME`` has run)
plays, in its game:

- two-player games: a duplicate match (both seatings of every deal) against
  each chump (always-call, always-raise, always-fold, probe, random; no-limit
  chumps raise the minimum, ``random`` a uniform size, so nearly every raise it
  makes is off the bot's tree and is translated) and against every other bot of
  its game;
- three-player games: a duplicate match (all six seatings of every deal, as in
  Abou Risk & Szafron 2010, 'Using Counterfactual Regret Minimization to Create Competitive
  Multiplayer Poker Agents') against each pair of that paper's chumps (always-call, always-raise,
  probe; a pair may be one chump twice).

Hands are played in this process without sockets by
:func:`strategies.portfolio.play_hands` (the dealer's cards for a seed, the
dealer's views, every action checked for legality), in rounds of ``--chunk``
deals over all matchups in turn until each has ``--hands`` deals or
``--minutes`` have passed, so the matchups get the same number of deals. The
bot's result is its mean over the seatings of a deal, one value a deal, with a
95% interval (1.96 s/sqrt(n)), in the game's unit (chips/hand for the ante games,
mbb/g for hold'em). ``*`` marks a result whose interval excludes 0.

Three-player matchups of 3p Kuhn and Leduc also get their exact expectation (no sampling): the
bot's value over the six seatings by a walk of the three-player tree with each
position's strategy (the bot's file, or the chump's fold/call/raise weights),
:meth:`strategies.cfr.solvers.multiplayer.MultiCFR.root_value`. The sampled
interval should hold it 95% of the time; whether the bot beats a chump pair is
then read off the exact figure.

Latency: every ``Strategy.act`` of a bot is timed after its first 200
decisions, in wall-clock time (``time.perf_counter_ns``: what a dealer waits)
and in the thread's CPU time (``time.thread_time_ns``: the work alone, which a
busy shared machine does not inflate by preempting the process); median and
p99 per bot in milliseconds.

Run: ``.venv/bin/python benchmarks/agents.py [--hands N] [--minutes M] [--seed S]
[--bots A,B]`` (``--bots``: only these bots' matchups).
The last line is the figure: the worst p99 latency in CPU time over the bots
against the 5 ms target for table-lookup bots, ratio = 5 / ours (above 1:
within target); CPU time because on a shared machine the wall-clock tail
measures the other processes (both are printed above it).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from poker.gamedef import Game, load_game  # noqa: E402
from poker.protocol import MatchState  # noqa: E402
from poker.state import Action  # noqa: E402
from poker.stats import Estimate, mean_ci, unit_of  # noqa: E402
from strategies import Strategy, make_strategy  # noqa: E402
from strategies.bots import LIBRARY, bot_path  # noqa: E402

TARGET_MS = 5.0
WARM_UP = 200
CHUMPS_2P = ("always-call", "always-raise", "always-fold", "probe", "random")
CHUMPS_3P = ("always-call", "always-raise", "probe")


class Timed(Strategy):
    """A strategy whose ``act`` calls are timed into ``times`` (nanoseconds)."""

    def __init__(self, inner: Strategy, times: list[tuple[int, int]]) -> None:
        self.inner = inner
        self.name = inner.name
        self.times = times

    def new_hand(self, view: MatchState) -> None:
        self.inner.new_hand(view)

    def observe(self, view: MatchState) -> None:
        self.inner.observe(view)

    def act(self, view: MatchState) -> Action:
        start, cpu = time.perf_counter_ns(), time.thread_time_ns()
        action = self.inner.act(view)
        self.times.append((time.perf_counter_ns() - start, time.thread_time_ns() - cpu))
        return action


@dataclass
class Matchup:
    """The bot (seat list index 0) against ``others`` in ``game``; ``values``: the
    bot's chips per deal, averaged over the seatings."""

    game_name: str
    bot: str
    others: tuple[str, ...]
    values: list[npt.NDArray[np.float64]] = field(default_factory=list)

    @property
    def deals(self) -> int:
        return sum(len(v) for v in self.values)

    @property
    def game(self) -> Game:
        return load_game(self.game_name)

    def estimate(self) -> Estimate:
        unit = unit_of(self.game)
        return mean_ci(np.concatenate(self.values)).scaled(unit.per_chip)


def available_bots() -> list[str]:
    return [name for name, bot in LIBRARY.items() if bot_path(bot).is_file()]


def matchups(bots: list[str]) -> list[Matchup]:
    """Each bot against each chump (2p) or chump pair (3p), and each other bot of its game."""
    found: list[Matchup] = []
    for name in bots:
        game = LIBRARY[name].game
        if load_game(game).num_players == 3:
            found += [Matchup(game, name, pair) for pair in itertools.combinations_with_replacement(CHUMPS_3P, 2)]
        else:
            found += [Matchup(game, name, (chump,)) for chump in CHUMPS_2P]
    for a, b in itertools.combinations(bots, 2):
        game = LIBRARY[a].game
        if game == LIBRARY[b].game and load_game(game).num_players == 2:
            found.append(Matchup(game, a, (b,)))
    return found


def exact_three_player(matchup: Matchup) -> float | None:
    """The bot's exact expected chips per deal over the six seatings (see the
    module docstring); None for a game whose three-player tree is too big to
    walk (3p hold'em: the sampled interval alone decides)."""
    from strategies.cfr.solvers.multiplayer import MultiCFR
    from strategies.cfr.strategy_file import load_strategy
    from strategies.cfr.tree.multi import build_multi_tree
    from strategies.cfr.tree.public import TreeError
    from strategies.simple import CardBlind

    game = matchup.game
    try:
        tree = build_multi_tree(game)
    except TreeError:
        return None
    solver = MultiCFR(tree)
    ours = load_strategy(bot_path(LIBRARY[matchup.bot])).strategy
    specs = (matchup.bot, *matchup.others)
    total = 0.0
    orders = list(itertools.permutations(range(3)))
    for order in orders:  # order[position] = the index in specs of who sits there
        sigma = ours.copy()
        for node in tree.decision_nodes:
            spec = specs[order[int(tree.player[node])]]
            if spec in LIBRARY:
                continue
            chump = make_strategy(spec, game)
            assert isinstance(chump, CardBlind)
            state = tree.states[node]
            weights = chump.distribution(state)
            d = int(tree.decision_index[node])
            sigma[d] = 0.0
            for a, action in enumerate(state.legal_actions()):
                sigma[d, a, :] = weights[int(action.type)]
        total += solver.root_value(sigma, order.index(0), best=False)
    return total / len(orders) * unit_of(game).per_chip


def play_chunk(matchup: Matchup, deals: int, seed: int, latency: dict[str, list[tuple[int, int]]]) -> None:
    """``deals`` deals of ``matchup`` in every seating (the bot and the others
    permuted; play_hands rotates positions too, so each deal is played from every
    seat); the bot's mean over the seatings per deal is appended."""
    from strategies.portfolio import play_hands

    game = matchup.game
    specs = (matchup.bot, *matchup.others)
    total = np.zeros(deals)
    orders = list(itertools.permutations(range(len(specs))))
    for k, order in enumerate(orders):
        players: list[Strategy] = []
        for slot in order:
            strategy = make_strategy(specs[slot], game, seed=seed * 31 + k * 7 + slot)
            if specs[slot] in LIBRARY:
                strategy = Timed(strategy, latency.setdefault(specs[slot], []))
            players.append(strategy)
        chips = play_hands(game, players, deals, seed=seed)
        total += chips[:, order.index(0)]
    matchup.values.append(total / len(orders))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20000, help="deals per matchup (default 20000)")
    parser.add_argument("--minutes", type=float, default=10.0, help="stop starting rounds after this (default 10)")
    parser.add_argument("--chunk", type=int, default=500, help="deals per matchup per round (default 500)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bots", help="only these bots, comma separated (default: every bot whose file is here)")
    args = parser.parse_args(argv)
    bots = available_bots()
    if args.bots:
        wanted = args.bots.split(",")
        unknown = [name for name in wanted if name not in bots]
        if unknown:
            parser.error(f"not a bot whose file is here: {', '.join(unknown)} (here: {', '.join(bots)})")
        bots = wanted
    games = matchups(bots)
    print(f"bots: {', '.join(bots)}")
    here = available_bots()
    missing = [n for n in LIBRARY if n not in here]
    print(f"not here (not built): {', '.join(missing) or 'none'}")
    latency: dict[str, list[tuple[int, int]]] = {}
    started = time.perf_counter()
    rounds = 0
    while min(m.deals for m in games) < args.hands and (time.perf_counter() - started) < args.minutes * 60:
        for index, matchup in enumerate(games):
            deals = min(args.chunk, args.hands - matchup.deals)
            if deals > 0:
                play_chunk(matchup, deals, args.seed + 1000 * rounds + index * 1_000_003, latency)
        rounds += 1
    elapsed = time.perf_counter() - started
    print(f"{rounds} rounds of up to {args.chunk} deals a matchup in {elapsed:.0f} s\n")
    print(
        f"{'game':<15} {'bot':<16} {'against':<28} {'deals':>6} {'seatings':>8}  result (bot, 95% interval)"
        "   exact (3p)"
    )
    losing: list[str] = []
    chump_wins: dict[str, list[bool]] = {}
    exactly: set[str] = set()  # bots judged by exact figures
    for m in games:
        est = m.estimate()
        unit = unit_of(m.game).name
        mark = "*" if est.low > 0 or est.high < 0 else " "
        seatings = len(list(itertools.permutations(range(1 + len(m.others)))))
        against = " + ".join(m.others)
        exact = exact_three_player(m) if len(m.others) == 2 else None
        print(
            f"{m.game_name:<15} {m.bot:<16} {against:<28} {m.deals:>6} {seatings:>8}  "
            f"{est.mean:+.4f} ± {est.half_width:.4f} {unit} {mark}"
            + ("" if exact is None else f"   {exact:+.4f}")
        )
        if est.high < 0 or (exact is not None and exact < 0):
            losing.append(f"{m.bot} vs {against}")
        if all(o not in LIBRARY for o in m.others):
            chump_wins.setdefault(m.bot, []).append(est.low > 0 if exact is None else exact > 0)
            if exact is not None:
                exactly.add(m.bot)
        others_bot = [o for o in m.others if o in LIBRARY]
        if others_bot and est.low > 0:
            losing.append(f"{others_bot[0]} vs {m.bot}")
    print()
    print(f"{'bot':<16} {'decisions':>9}  median ms  p99 ms  (CPU time: median ms  p99 ms)")
    worst = 0.0
    for name in bots:
        pairs = np.array(latency.get(name, [])[WARM_UP:], dtype=np.float64).reshape(-1, 2) / 1e6
        if len(pairs) == 0:
            continue
        wall, cpu = pairs[:, 0], pairs[:, 1]
        p99 = float(np.percentile(wall, 99))
        worst = max(worst, float(np.percentile(cpu, 99)))
        print(
            f"{name:<16} {len(wall):>9}  {float(np.median(wall)):9.4f}  {p99:6.3f}"
            f"  {float(np.median(cpu)):20.4f}  {float(np.percentile(cpu, 99)):6.3f}"
        )
    print()
    print(f"bots that lose to someone (significantly, or exactly in 3p): {', '.join(losing) or 'none'}")
    for name, wins in chump_wins.items():
        verdict = "beats every chump" if all(wins) else f"beats {sum(wins)} of {len(wins)} chump matchups"
        how = "exactly" if name in exactly else "significantly"
        print(f"{name}: {verdict} ({how})")
    print(f"worst p99 decision latency, CPU time (ms): {worst:.3f} vs {TARGET_MS:.3f} ratio {TARGET_MS / worst:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
