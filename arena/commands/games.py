"""``arena games [NAME]``: list the shipped games, or print one in canonical form."""

from __future__ import annotations

import sys

from arena.commands._kit import EXIT_OK, EXIT_USAGE, UsageParser, fail, parse
from poker.gamedef import GameDefError, format_game, friendly_name, game_names, load_game

PROG = "arena games"


def _summary(name: str) -> str:
    game = load_game(name)
    stacks = "" if max(game.stack) >= 2**31 - 1 else f", stacks {'/'.join(map(str, sorted(set(game.stack))))}"
    return (
        f"{game.num_players}p {game.betting.value}, {game.num_rounds} round(s), "
        f"blinds {'/'.join(map(str, game.blind))}{stacks}, deck {game.num_ranks}x{game.num_suits}"
    )


def main(argv: list[str]) -> int:
    parser = UsageParser(PROG, __doc__ or "")
    parser.add_argument("game", nargs="?", help="a short name or a .game file to print canonically")
    args = parse(parser, argv)
    if isinstance(args, int):
        return args
    if args.game is not None:
        try:
            sys.stdout.write(format_game(load_game(args.game)))
        except GameDefError as error:
            return fail(PROG, error, EXIT_USAGE)
        return EXIT_OK
    names = game_names()
    aliases: dict[str, list[str]] = {}
    for name, stem in names.items():
        if name != stem:
            aliases.setdefault(stem, []).append(name)
    for stem in sorted(set(names.values())):
        also = f"  (also: {', '.join(aliases[stem])})" if stem in aliases else ""
        print(f"{stem:<34} {friendly_name(stem)}: {_summary(stem)}{also}")
    return EXIT_OK
