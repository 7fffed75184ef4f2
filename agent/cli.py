"""``arena agent GAME HOST PORT --strategy NAME[:options] [--seed S]``.

Mirrors the reference ``example_player <gamefile> <host> <port>``: GAME is a game
file or a short name (``arena games`` lists them); the strategy is chosen by name
(``random``, the default, plays like the example player). Exits 0 when the dealer
ends the match, 1 with a one-line message on any error.
"""

from __future__ import annotations

import argparse
import sys

import trio

from agent.client import AgentError, play
from poker.gamedef import GameDefError, load_game
from strategies.base import StrategyError, make_strategy, strategy_names


def _parser() -> argparse.ArgumentParser:
    names = "\n".join(f"  {name:<13} {help_}" for name, help_ in strategy_names().items())
    parser = argparse.ArgumentParser(
        prog="arena agent",
        description="Connect to an ACPC dealer (protocol 2.0.0) and play one seat with a strategy.",
        epilog=f"strategies (NAME[:option=value,...]):\n{names}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("game", metavar="GAME", help="game file or short game name (kuhn, leduc, hulhe, hunl, ...)")
    parser.add_argument("host", metavar="HOST", help="dealer host")
    parser.add_argument("port", metavar="PORT", type=int, help="this seat's port")
    parser.add_argument("--strategy", default="random", metavar="NAME[:OPTIONS]", help="default: random")
    parser.add_argument("--seed", type=int, default=None, help="seed for randomised strategies (default: unseeded)")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        game = load_game(args.game)
        strategy = make_strategy(args.strategy, game, seed=args.seed)
        trio.run(play, args.host, args.port, game, strategy)
    except (GameDefError, StrategyError, AgentError) as error:
        print(f"arena agent: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"arena agent: error: cannot connect to {args.host}:{args.port}: {error}", file=sys.stderr)
        return 1
    return 0
