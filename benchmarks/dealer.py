"""Dealer throughput against the reference C dealer, measured in the same run.

Anchor: the ACPC reference ``dealer`` (``--reference-dealer PATH``), built from
its sources outside this project. Both dealers play the same match the same
way: heads-up limit hold'em (``holdem.limit.2p.reverse_blinds``), 3000 hands,
default options (the ``.log`` on, the TO/FROM echo on, sent to ``/dev/null``;
ours also writes its hand records and events, as it does by default), each
against two copies of the same C player (``--reference-player``, by default the
reference's ``example_player`` next to the dealer: 6% fold, 47% call, 47%
raise, seeded from the clock). Runs of ours and theirs are interleaved, so a
busy machine slows both alike; each figure is the median over ``--runs``.

A run is timed from starting the dealer's process to its exit (what a user
waits for: our start-up is part of it); the start-up alone (until the ports
line) is also shown. The last line is the headline::

    dealer hands/s: <ours> vs <reference> ratio <ours/reference>

``--parallel N`` also measures aggregate throughput: N matches at once, each
its own dealer process (ours, then the reference's), against one reference
match alone. Without ``--reference-dealer`` the script measures ours only (it
still needs a C player) and says that it has no anchor.

Usage::

    python benchmarks/dealer.py --reference-dealer /tmp/acpc_server/dealer [--runs 5] [--parallel 2]

Measured (issue 8; 2-core VM shared with other work, reference built with its
own ``make``; ``--runs 9 --parallel 2``): the ratio swings with the machine's
state, because the C dealer is latency-bound and ours CPU-bound. When other
work keeps a core busy, the C dealer and its players share the other core and
run at ~3800 hands/s: ours ~1700, ratio 0.44. When both cores are free, every
wake-up crosses cores and the C dealer drops to ~2100: ratio 0.61-0.72. Our
start-up (interpreter and imports, 0.27-0.33 s, a third of it numba's import
through ``poker.evaluate``) is ~17% of a 3000-hand match. Two of our matches
at once make 2800-3460 hands/s in total (0.82-1.66x one C match, depending on
the same state of the machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAME_NAME = "holdem.limit.2p.reverse_blinds"
OUR_GAME = ROOT / "poker" / "games" / f"{GAME_NAME}.game"


@dataclass(frozen=True)
class Run:
    hands: int
    wall_s: float  # dealer start to dealer exit
    startup_s: float  # dealer start to its ports line

    @property
    def rate(self) -> float:
        return self.hands / self.wall_s

    @property
    def play_rate(self) -> float:
        return self.hands / (self.wall_s - self.startup_s)


DealerCommand = Callable[[str, int, int], list[str]]  # (match name, hands, seed) -> argv


def _play(dealer: Sequence[str], player: str, game: Path, directory: Path, hands: int) -> Run:
    """One match: start the dealer, then one player per port once it prints
    them; returns when the dealer has exited."""
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with subprocess.Popen(
        dealer, cwd=directory, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        assert process.stdout is not None
        ports = process.stdout.readline().split()
        startup = time.perf_counter() - start
        players = [
            subprocess.Popen([player, str(game), "127.0.0.1", port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for port in ports
        ]
        score = process.stdout.read()
        status = process.wait()
    wall = time.perf_counter() - start
    for each in players:
        each.wait()
    if status != 0 or "SCORE:" not in score:
        raise SystemExit(f"{dealer[0]} failed (exit status {status}): {' '.join(dealer)}")
    return Run(hands, wall, startup)


def _ours(name: str, hands: int, seed: int, game: Path) -> list[str]:
    return [sys.executable, "-m", "dealer", name, str(game), str(hands), str(seed), "A", "B"]


def _theirs(dealer: Path, name: str, hands: int, seed: int, game: Path) -> list[str]:
    return [str(dealer), name, str(game), str(hands), str(seed), "A", "B"]


def _matches(command: DealerCommand, player: str, game: Path, hands: int, seed: int, count: int) -> Run:
    """``count`` matches at once, each in its own dealer process; the total
    hands over the wall time of the slowest."""
    with tempfile.TemporaryDirectory() as directory, ThreadPoolExecutor(count) as pool:
        start = time.perf_counter()
        runs = list(
            pool.map(lambda i: _play(command(f"m{i}", hands, seed + i), player, game, Path(directory), hands), range(count))
        )
        return Run(hands * count, time.perf_counter() - start, max(run.startup_s for run in runs))


def _median(runs: Sequence[Run]) -> Run:
    return Run(
        runs[0].hands,
        statistics.median(run.wall_s for run in runs),
        statistics.median(run.startup_s for run in runs),
    )


def _line(label: str, run: Run) -> str:
    return (
        f"{label:<44} {run.rate:7.0f} hands/s  ({run.wall_s:.2f} s, start-up {run.startup_s:.2f} s;"
        f" after start-up {run.play_rate:.0f} hands/s)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=3000, help="hands per match (default 3000)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs of each dealer (default 5)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reference-dealer", type=Path, help="the reference C dealer (the anchor)")
    parser.add_argument(
        "--reference-player", type=Path, help="the C player for both dealers (default: example_player beside the dealer)"
    )
    parser.add_argument("--parallel", type=int, default=0, help="also run N matches at once per dealer (aggregate)")
    args = parser.parse_args(argv)

    reference: Path | None = args.reference_dealer
    player: Path | None = args.reference_player
    if player is None and reference is not None:
        player = reference.resolve().parent / "example_player"
    if player is None:
        raise SystemExit(
            "dealer hands/s: not measured (no anchor and no C player: give --reference-dealer PATH, whose"
            " example_player is used, or --reference-player PATH; build the reference server from"
            " github.com/dmorrill10/project_acpc_server with `make`, outside this project)"
        )
    if not os.access(player, os.X_OK):
        raise SystemExit(f"not an executable C player: {player}")
    game = OUR_GAME
    ours: DealerCommand = lambda name, hands, seed: _ours(name, hands, seed, game)  # noqa: E731
    commands: dict[str, DealerCommand] = {"ours": ours}
    if reference is not None:
        commands["reference"] = lambda name, hands, seed: _theirs(reference, name, hands, seed, game)

    print(f"{GAME_NAME}, {args.hands} hands, players: {player}, {args.runs} interleaved runs, median shown")
    runs: dict[str, list[Run]] = {label: [] for label in commands}
    for index in range(args.runs):
        labels = list(commands) if index % 2 == 0 else list(reversed(commands))
        for label in labels:
            runs[label].append(_matches(commands[label], str(player), game, args.hands, args.seed + index, 1))
    results = {label: _median(each) for label, each in runs.items()}
    for label, run in results.items():
        print(_line(f"{label}: one match", run))
    if args.parallel:
        count = args.parallel
        for label in commands:
            aggregate = _median([_matches(commands[label], str(player), game, args.hands, args.seed, count) for _ in range(args.runs)])
            print(_line(f"{label}: {count} matches at once (total)", aggregate))
    if reference is None:
        print(f"dealer hands/s: {results['ours'].rate:.0f} (no anchor: give --reference-dealer to compare)")
        return
    pairs = sorted(a.rate / b.rate for a, b in zip(runs["ours"], runs["reference"]))
    print(f"ratio of each interleaved pair: {pairs[0]:.2f} .. {pairs[-1]:.2f}, median {statistics.median(pairs):.2f}")
    ratio = results["ours"].rate / results["reference"].rate
    print(f"dealer hands/s: {results['ours'].rate:.0f} vs {results['reference'].rate:.0f} ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
