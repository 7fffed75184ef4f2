"""ACPC game definitions: read the lenient ``.game`` syntax, write the canonical form.

The reader follows the reference ``readGame`` (docs/protocol.md, Game files): lines whose first
byte is ``#`` and empty lines are skipped; keywords match case-insensitively as a
prefix at column 0 (so ``limitations`` counts as ``limit``); before each number any
run of whitespace and ``=`` is skipped; numbers are read until one fails; later
lines overwrite earlier ones; ``end gamedef`` stops reading; unknown lines are
ignored. Defaults and validation are the reference's, including its quirk that a
missing ``stack`` line counts as four stacks read, so 5+ player games need one.

Where the reference silently accepts nonsense we are stricter, and say so in the
error: a keyword line that carries no number, negative values, and bad values
are reported with the file, the line number and the rule broken.

Positions, not seats, index ``stack``, ``blind`` and hole cards; rounds index
``raise_size``, ``first_player`` (stored 0-based; 1-based in files),
``max_raises`` and ``num_board_cards``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from poker.cards import NUM_RANKS, NUM_SUITS
from poker.excerpt import quote
from poker.names import did_you_mean

__all__ = [
    "Betting",
    "Game",
    "GameDefError",
    "parse_game",
    "format_game",
    "load_game",
    "game_names",
    "short_name",
    "friendly_name",
    "max_loss",
    "MAX_PLAYERS",
    "MAX_ROUNDS",
    "MAX_HOLE_CARDS",
    "MAX_BOARD_CARDS",
    "MAX_NUM_ACTIONS",
    "UNLIMITED_STACK",
    "UNLIMITED_RAISES",
]

MAX_PLAYERS = 10
MAX_ROUNDS = 4
MAX_HOLE_CARDS = 3
MAX_BOARD_CARDS = 7
MAX_NUM_ACTIONS = 64
UNLIMITED_STACK = 2**31 - 1
UNLIMITED_RAISES = 255


class GameDefError(ValueError):
    """A game definition that cannot be read; the message names source, line and rule."""


class Betting(enum.Enum):
    """Betting structure: fixed raise increments, or raise-to any legal size."""

    LIMIT = "limit"
    NOLIMIT = "nolimit"


@dataclass(frozen=True)
class Game:
    """One ACPC game. Per-position tuples have ``num_players`` entries; per-round
    tuples have ``num_rounds`` entries. ``first_player`` is 0-based."""

    betting: Betting
    num_players: int
    num_rounds: int
    stack: tuple[int, ...]
    blind: tuple[int, ...]
    raise_size: tuple[int, ...]
    first_player: tuple[int, ...]
    max_raises: tuple[int, ...]
    num_suits: int
    num_ranks: int
    num_hole_cards: int
    num_board_cards: tuple[int, ...]

    @property
    def is_limit(self) -> bool:
        return self.betting is Betting.LIMIT

    @property
    def big_blind(self) -> int:
        """The largest blind, the unit of mbb/g and of the no-limit minimum bet."""
        return max(self.blind)

    def board_start(self, round_: int) -> int:
        """Index into the board of the first card revealed in ``round_`` (``bcStart``)."""
        return sum(self.num_board_cards[:round_])

    def total_board_cards(self, round_: int) -> int:
        """Board cards visible once ``round_`` has been reached (``sumBoardCards``)."""
        return sum(self.num_board_cards[: round_ + 1])

    def deck(self) -> tuple[int, ...]:
        """The deck in the reference's build order: highest suits and ranks only,
        suit-major (for each suit, for each rank: rank * 4 + suit)."""
        return tuple(
            rank * NUM_SUITS + suit
            for suit in range(NUM_SUITS - self.num_suits, NUM_SUITS)
            for rank in range(NUM_RANKS - self.num_ranks, NUM_RANKS)
        )


_INT = re.compile(r"[\s=]*([+-]?\d+)")

# Checked in this order, as the reference does, because matching is by prefix.
_KEYWORDS = (
    "stack",
    "blind",
    "raisesize",
    "limit",
    "nolimit",
    "numplayers",
    "numrounds",
    "firstplayer",
    "maxraises",
    "numsuits",
    "numranks",
    "numholecards",
    "numboardcards",
)
_ARITY = {
    "stack": MAX_PLAYERS,
    "blind": MAX_PLAYERS,
    "raisesize": MAX_ROUNDS,
    "firstplayer": MAX_ROUNDS,
    "maxraises": MAX_ROUNDS,
    "numboardcards": MAX_ROUNDS,
    "numplayers": 1,
    "numrounds": 1,
    "numsuits": 1,
    "numranks": 1,
    "numholecards": 1,
}


def _read_ints(rest: str, limit: int) -> list[int]:
    values: list[int] = []
    pos = 0
    while len(values) < limit:
        match = _INT.match(rest, pos)
        if match is None:
            break
        values.append(int(match.group(1)))
        pos = match.end()
    return values


def _overlay(defaults: list[int], read: list[int]) -> list[int]:
    return read + defaults[len(read) :]


def parse_game(text: str, *, source: str = "<string>") -> Game:
    """Parse game-definition text; ``source`` names the file in error messages."""
    values: dict[str, list[int]] = {}
    where: dict[str, int] = {}
    betting = Betting.LIMIT
    for lineno, raw in enumerate(text.split("\n"), start=1):
        if raw.startswith("#") or raw == "":
            continue
        lower = raw.lower()
        if lower.startswith("end gamedef"):
            break
        if lower.startswith("gamedef"):
            continue
        keyword = next((k for k in _KEYWORDS if lower.startswith(k)), None)
        if keyword is None:
            continue
        where[keyword] = lineno
        if keyword in ("limit", "nolimit"):
            betting = Betting.LIMIT if keyword == "limit" else Betting.NOLIMIT
            continue
        numbers = _read_ints(raw[len(keyword) :], _ARITY[keyword])
        if not numbers:
            raise GameDefError(f"{source}:{lineno}: {quote(raw.strip())} gives no number for {keyword}")
        negative = [v for v in numbers if v < 0]
        if negative:
            raise GameDefError(f"{source}:{lineno}: {keyword} value {negative[0]} is negative")
        values[keyword] = numbers
    return _build(values, where, betting, source)


def _build(values: dict[str, list[int]], where: dict[str, int], betting: Betting, source: str) -> Game:
    def fail(keyword: str, problem: str) -> GameDefError:
        line = where.get(keyword)
        location = f"{source}:{line}" if line is not None else source
        return GameDefError(f"{location}: {problem}")

    def scalar(keyword: str, name: str, low: int, high: int) -> int:
        if keyword not in values:
            raise fail(keyword, f"{name} is missing")
        value = values[keyword][0]
        if not low <= value <= high:
            raise fail(keyword, f"{name} = {value} is outside {low}..{high}")
        return value

    num_players = scalar("numplayers", "numPlayers", 2, MAX_PLAYERS)
    num_rounds = scalar("numrounds", "numRounds", 1, MAX_ROUNDS)
    num_suits = scalar("numsuits", "numSuits", 1, NUM_SUITS)
    num_ranks = scalar("numranks", "numRanks", 1, NUM_RANKS)
    num_hole_cards = scalar("numholecards", "numHoleCards", 1, MAX_HOLE_CARDS)

    # The reference pre-fills four stacks and counts them as read.
    stack = values.get("stack", [UNLIMITED_STACK] * 4)
    if len(stack) < num_players:
        raise fail("stack", f"only read {len(stack)} stack sizes, need {num_players}")
    blind = values.get("blind", [])
    if len(blind) < num_players:
        raise fail("blind", f"only read {len(blind)} blinds, need {num_players}")
    for position in range(num_players):
        if stack[position] < 1:
            raise fail("stack", f"stack of position {position} is {stack[position]}, must be at least 1")
        if blind[position] > stack[position]:
            raise fail("blind", f"blind {blind[position]} of position {position} exceeds its stack {stack[position]}")
    raise_size = values.get("raisesize", [])
    if betting is Betting.LIMIT:
        if len(raise_size) < num_rounds:
            raise fail("raisesize", f"only read {len(raise_size)} raise sizes, need {num_rounds}")
    # Values read overwrite the defaults from the first round on, as in the reference.
    first_player = _overlay([1] * MAX_ROUNDS, values.get("firstplayer", []))
    for round_ in range(num_rounds):
        if not 1 <= first_player[round_] <= num_players:
            raise fail("firstplayer", f"firstPlayer {first_player[round_]} of round {round_} is outside 1..{num_players}")
    max_raises = _overlay([UNLIMITED_RAISES] * MAX_ROUNDS, values.get("maxraises", []))
    if any(v > UNLIMITED_RAISES for v in max_raises[:num_rounds]):
        raise fail("maxraises", f"maxRaises {max(max_raises)} exceeds {UNLIMITED_RAISES}")
    board = values.get("numboardcards", [])
    if len(board) < num_rounds:
        raise fail("numboardcards", f"only read {len(board)} board card counts, need {num_rounds}")
    board = board[:num_rounds]
    if sum(board) > MAX_BOARD_CARDS:
        raise fail("numboardcards", f"{sum(board)} board cards exceed the maximum of {MAX_BOARD_CARDS}")
    dealt = num_hole_cards * num_players + sum(board)
    if dealt > num_suits * num_ranks:
        raise fail(
            "numboardcards",
            f"{dealt} cards are dealt but the deck has only {num_suits * num_ranks}",
        )
    return Game(
        betting=betting,
        num_players=num_players,
        num_rounds=num_rounds,
        stack=tuple(stack[:num_players]),
        blind=tuple(blind[:num_players]),
        raise_size=tuple(raise_size[:num_rounds]) if betting is Betting.LIMIT else (0,) * num_rounds,
        first_player=tuple(v - 1 for v in first_player[:num_rounds]),
        max_raises=tuple(max_raises[:num_rounds]),
        num_suits=num_suits,
        num_ranks=num_ranks,
        num_hole_cards=num_hole_cards,
        num_board_cards=tuple(board),
    )


def format_game(game: Game) -> str:
    """The canonical text of the reference's ``printGame``, LF line ends."""

    def ints(values: tuple[int, ...]) -> str:
        return " ".join(str(v) for v in values)

    lines = ["GAMEDEF", game.betting.value]
    lines.append(f"numPlayers = {game.num_players}")
    lines.append(f"numRounds = {game.num_rounds}")
    if any(s < UNLIMITED_STACK for s in game.stack):
        lines.append(f"stack = {ints(game.stack)}")
    lines.append(f"blind = {ints(game.blind)}")
    if game.is_limit:
        lines.append(f"raiseSize = {ints(game.raise_size)}")
    if any(f != 0 for f in game.first_player):
        lines.append(f"firstPlayer = {ints(tuple(f + 1 for f in game.first_player))}")
    if any(m != UNLIMITED_RAISES for m in game.max_raises):
        lines.append(f"maxRaises = {ints(game.max_raises)}")
    lines.append(f"numSuits = {game.num_suits}")
    lines.append(f"numRanks = {game.num_ranks}")
    lines.append(f"numHoleCards = {game.num_hole_cards}")
    lines.append(f"numBoardCards = {ints(game.num_board_cards)}")
    lines.append("END GAMEDEF")
    return "\n".join(lines) + "\n"


# Short names for the shipped games, besides each file's own stem.
_ALIASES = {
    "kuhn": "kuhn.limit.2p",
    "kuhn3p": "kuhn.limit.3p",
    "leduc": "leduc.limit.2p",
    "leduc.nolimit": "leduc.nolimit.2p",
    "holdem.limit": "holdem.limit.2p.reverse_blinds",
    "holdem.limit.2p.reverse": "holdem.limit.2p.reverse_blinds",
    "holdem.nolimit": "holdem.nolimit.2p.reverse_blinds",
    "holdem.nolimit.2p": "holdem.nolimit.2p.reverse_blinds",
    "hulhe": "holdem.limit.2p.reverse_blinds",
    "hunl": "holdem.nolimit.2p.reverse_blinds",
}


#: Each shipped game as players call it, by file stem: the one name pages, ``arena games``
#: and the API's bot list show beside the short name (a newcomer knows "heads-up limit
#: hold'em", not ``holdem.limit.2p.reverse_blinds``).
_FRIENDLY = {
    "kuhn.limit.2p": "Kuhn poker",
    "kuhn.limit.3p": "Three-player Kuhn poker",
    "leduc.limit.2p": "Leduc hold'em",
    "leduc.limit.3p": "Three-player Leduc hold'em",
    "leduc.nolimit.2p": "No-limit Leduc hold'em",
    "holdem.limit.2p": "Heads-up limit hold'em, 3 raises on the flop",
    "holdem.limit.2p.reverse_blinds": "Heads-up limit hold'em",
    "holdem.limit.3p": "Three-player limit hold'em",
    "holdem.nolimit.2p.reverse_blinds": "Heads-up no-limit hold'em",
    "holdem.nolimit.3p": "Three-player no-limit hold'em",
    "holdem.nolimit.6p": "Six-player no-limit hold'em",
}


def short_name(name: str) -> str:
    """The shortest name :func:`load_game` takes for the shipped game ``name``
    names (``hulhe`` for ``holdem.limit.2p.reverse_blinds``): one name per game
    where a list shows games. A name that is no shipped game comes back as it is."""
    names = game_names()
    stem = names.get(name)
    if stem is None:
        return name
    return min((alias for alias, of in names.items() if of == stem), key=lambda alias: (len(alias), alias))


def friendly_name(name: str) -> str:
    """The shipped game ``name`` as players call it ("Heads-up limit hold'em"
    for ``hulhe``); a name that is no shipped game comes back as it is."""
    return _FRIENDLY.get(game_names().get(name, name), name)


def max_loss(game: Game) -> float:
    """The most chips a player can lose in one hand of ``game``: its largest
    stack in no-limit games; in limit games the largest blind and every raise
    of every round (Kuhn 2, Leduc 13, the shipped limit hold'em 23 big blinds), within
    the stack. What a hand left unplayed costs the player who left (the hosted
    arena's abort rule: no quitting rule can then raise an expected result)."""
    if not game.is_limit:
        return float(max(game.stack))
    most = game.big_blind + sum(r * size for r, size in zip(game.max_raises, game.raise_size))
    return float(min(max(game.stack), most))


def _shipped() -> dict[str, str]:
    files = resources.files("poker") / "games"
    return {
        entry.name.removesuffix(".game"): entry.read_text(encoding="ascii")
        for entry in files.iterdir()
        if entry.name.endswith(".game")
    }


def game_names() -> dict[str, str]:
    """Every short name accepted by :func:`load_game`, mapped to its file stem."""
    stems = sorted(_shipped())
    names = {stem: stem for stem in stems}
    names.update({alias: stem for alias, stem in _ALIASES.items() if stem in names})
    return dict(sorted(names.items()))


def shipped_name(game: Game) -> str | None:
    """The file stem of the shipped game equal to ``game`` (None: not a shipped game)."""
    for stem, text in sorted(_shipped().items()):
        if parse_game(text, source=f"{stem}.game") == game:
            return stem
    return None


def load_game(name_or_path: str | Path) -> Game:
    """A game by short name (``leduc``, ``holdem.limit.2p``) or by file path."""
    key = str(name_or_path)
    shipped = _shipped()
    stem = _ALIASES.get(key, key.removesuffix(".game"))
    path = Path(name_or_path)
    try:
        is_file, is_dir = path.is_file(), path.is_dir()
    except OSError as error:  # a name longer than the system allows, say (read from a damaged log header)
        raise GameDefError(f"{quote(key)}: {error.strerror or error}") from None
    if stem in shipped and not is_file:
        return parse_game(shipped[stem], source=f"{stem}.game")
    if is_dir:
        raise GameDefError(f"{key}: is a directory, not a game file")
    if not is_file:
        if "/" in key or key.endswith(".game"):  # meant as a path: say what is wrong with it
            raise GameDefError(f"{key}: no such file")
        raise GameDefError(
            f"{key!r} is neither a game file nor a known game name;"
            f" {did_you_mean(key, game_names())}names: {', '.join(game_names())}"
        )
    try:
        text = path.read_bytes().decode("ascii")
    except UnicodeDecodeError as error:
        raise GameDefError(f"{path}: byte {error.start} is not ASCII") from None
    return parse_game(text, source=str(path))
