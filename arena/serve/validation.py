"""What a match request may ask for, checked before anything is taken for it:
a shipped heads-up game, a hosted bot that plays it, a number of hands and a
seed in range. ``POST /api/matches`` sends a JSON object
(:func:`match_request`: no unknown field, each of its type); a web table
sends typed values (:func:`table_request`). Either way the answer is a
:class:`MatchRequest`, which :meth:`arena.serve.hosting.Host.create_match`
takes, or a :class:`~arena.serve.httpkit.RequestError` (400) in one line.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Final

from poker.gamedef import Game, GameDefError, friendly_name, load_game
from strategies.bots import LIBRARY, bot_path

from arena.serve.httpkit import RequestError

__all__ = ["MatchRequest", "match_request", "table_request", "hosted_bots", "CHUMPS", "ABOUT", "SEED_LIMIT"]

#: The simple bots every game hosts.
CHUMPS: Final = ("always-call", "always-raise", "always-fold", "random", "probe")
#: Each hosted bot in a line a newcomer reads: how it plays and how strong it
#: measured (docs/bots.md has the methods and the commands; ``description``
#: keeps the research words). mbb/g: thousandths of a big blind a hand.
ABOUT: Final = {
    "kuhn-cfr": "Plays Kuhn poker as well as it can be played: a perfect opponent would win under 0.00001 chips a hand from it.",
    "leduc-cfr": "Plays Leduc hold'em as well as it can be played: a perfect opponent would win under 0.00001 chips a hand from it.",
    "leduc-nl-pot": "Bets only the pot or all-in, and is near unbeatable at that game (0.001 chips a hand); other bet sizes can trouble it.",
    "leduc-nl-3sizes": "Bets half the pot, the pot, twice the pot or all-in; near unbeatable within those sizes (0.001 chips a hand).",
    "hulhe-ehs2-5": "A solid limit hold'em bot: beats always-call by 554 ± 21 mbb/g; a best response wins 103 ± 69 mbb/g or more from it.",
    "hulhe-ir50": "The strongest limit hold'em bot here: beats always-call by 525 ± 21 mbb/g and hulhe-ehs2-5 by 16 ± 12;"
    " a best response wins 158 ± 68 mbb/g or more from it.",
    "hunl-ehs2-3": "A rough no-limit bot (bets of half the pot, the pot, all-in): beats always-call by 2265 ± 308 mbb/g,"
    " but a best response wins 1570 ± 338 mbb/g or more from it.",
    "hunl-modicum": "The strongest no-limit bot here: it thinks afresh at every decision, as DeepStack does;"
    " a best response wins 377 ± 218 mbb/g or more from it.",
    "always-call": "Calls or checks every time, whatever its cards: bet your good hands.",
    "always-raise": "Raises whenever it may, whatever its cards: call it down with fair hands.",
    "always-fold": "Folds to any bet, checks otherwise: every bet wins the pot.",
    "random": "Acts at random: folds to a bet 6% of the time, else calls or raises, half and half.",
    "probe": "Never folds: calls or raises half the time each, whatever its cards.",
}
#: Seeds are 32-bit, as the dealer's.
SEED_LIMIT: Final = 2**32
_FIELDS: Final = ("game", "opponent", "hands", "seed", "duplicate")


@dataclass(frozen=True)
class MatchRequest:
    """A checked request: the game (its name as asked and its definition), the
    hosted bot, the hands per seating, the card seed (drawn from
    :mod:`secrets` unless ``chosen`` by the user, who could then know every
    card: the match is practice, unranked) and whether the match is played in
    duplicate (both seatings, the seats swapped)."""

    game_name: str
    game: Game
    opponent: str
    hands: int
    seed: int
    duplicate: bool = False
    chosen: bool = False


def hosted_bots() -> list[dict[str, Any]]:
    """The heads-up named bots whose files are present (each for its game),
    and the chumps (for every game): ``GET /api/bots`` and the lobby's list,
    each with its game's friendly name and its line in :data:`ABOUT`."""
    bots: list[dict[str, Any]] = [
        {"name": bot.name, "game": bot.game, "game_name": friendly_name(bot.game), "about": ABOUT[bot.name],
         "description": bot.description}
        for bot in LIBRARY.values()
        if bot_path(bot).is_file() and load_game(bot.game).num_players == 2
    ]
    bots += [{"name": name, "game": None, "game_name": "any game", "about": ABOUT[name],
              "description": "a simple bot, for any game"} for name in CHUMPS]
    return bots


def _game(name: str) -> Game:
    """A shipped heads-up game by its name (never a path: the service reads no file it is pointed at)."""
    if "/" in name or "\\" in name or name.startswith("."):
        raise RequestError(400, f"unknown game {name[:60]!r}: name a shipped game (arena games)")
    try:
        game = load_game(name)
    except GameDefError:
        raise RequestError(400, f"unknown game {name[:60]!r}: name a shipped game (arena games)") from None
    if game.num_players != 2:
        raise RequestError(400, f"{name} is a {game.num_players}-player game; hosted matches are heads-up")
    return game


def _opponent(name: str, game_name: str, game: Game) -> None:
    if name in CHUMPS:
        return
    bot = LIBRARY.get(name)
    if bot is None or not bot_path(bot).is_file():
        hosted = ", ".join(b["name"] for b in hosted_bots())
        raise RequestError(400, f"no hosted bot {name[:60]!r}; hosted bots: {hosted}")
    if load_game(bot.game) != game:
        raise RequestError(400, f"bot {name} plays {bot.game}, not {game_name}")


def _whole(key: str, value: object, low: int, high: int) -> int:
    if value is None:
        raise RequestError(400, f"missing {key!r}")
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RequestError(400, f"{key!r} must be a whole number in {low}..{high}, got {str(value)[:40]}")
    return value


def table_request(game_name: str, opponent: str, hands: int, seed: int | None, max_hands: int) -> MatchRequest:
    """A web table's match: ``seed`` None draws one.

    Raises:
        RequestError: 400, what is wrong with it.
    """
    game = _game(game_name)
    _opponent(opponent, game_name, game)
    hands = _whole("hands", hands, 2, max_hands)
    chosen = seed is not None
    seed = _whole("seed", secrets.randbelow(SEED_LIMIT) if seed is None else seed, 0, SEED_LIMIT - 1)
    return MatchRequest(game_name, game, opponent, hands, seed, chosen=chosen)


def match_request(document: dict[str, Any], max_hands: int) -> MatchRequest:
    """``POST /api/matches``'s body as a request: ``{"game", "opponent",
    "hands", "seed"?, "duplicate"?}`` and nothing else.

    Raises:
        RequestError: 400, the first thing wrong with it.
    """
    unknown = sorted(set(document) - set(_FIELDS))
    if unknown:
        raise RequestError(400, f"unknown field {unknown[0][:40]!r}; fields: {', '.join(_FIELDS)}")
    game_name, opponent = document.get("game"), document.get("opponent")
    if not isinstance(game_name, str) or not isinstance(opponent, str):
        raise RequestError(400, "'game' and 'opponent' must be strings (GET /api/bots lists the hosted bots)")
    game = _game(game_name)
    _opponent(opponent, game_name, game)
    hands = _whole("hands", document.get("hands"), 2, max_hands)
    seed = _whole("seed", document.get("seed", secrets.randbelow(SEED_LIMIT)), 0, SEED_LIMIT - 1)
    duplicate = document.get("duplicate", False)
    if not isinstance(duplicate, bool):
        raise RequestError(400, "'duplicate' must be true or false")
    return MatchRequest(game_name, game, opponent, hands, seed, duplicate, chosen="seed" in document)
