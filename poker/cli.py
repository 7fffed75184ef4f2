"""``arena games [NAME]``: list the shipped games, or print one in canonical form."""

from __future__ import annotations

import argparse
import sys

from poker.gamedef import GameDefError, format_game, game_names, load_game


def _summary(name: str) -> str:
    game = load_game(name)
    stacks = "" if max(game.stack) >= 2**31 - 1 else f", stacks {'/'.join(map(str, sorted(set(game.stack))))}"
    return (
        f"{game.num_players}p {game.betting.value}, {game.num_rounds} round(s), "
        f"blinds {'/'.join(map(str, game.blind))}{stacks}, deck {game.num_ranks}x{game.num_suits}"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="arena games", description=__doc__)
    parser.add_argument("game", nargs="?", help="a short name or a .game file to print canonically")
    args = parser.parse_args(argv)
    if args.game is not None:
        try:
            sys.stdout.write(format_game(load_game(args.game)))
        except GameDefError as error:
            print(f"arena games: {error}", file=sys.stderr)
            return 1
        return 0
    names = game_names()
    aliases: dict[str, list[str]] = {}
    for name, stem in names.items():
        if name != stem:
            aliases.setdefault(stem, []).append(name)
    for stem in sorted(set(names.values())):
        also = f"  (also: {', '.join(aliases[stem])})" if stem in aliases else ""
        print(f"{stem:<34} {_summary(stem)}{also}")
    return 0
