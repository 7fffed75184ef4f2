"""The ``arena tournament`` configuration file (TOML): checked once, before any match.

Each bot is a strategy spec (``cfr = "leduc-cfr"``, as ``arena match`` takes
them), an external command (``mine = { command = "mine/startme.sh" }``, an
ACPC submission: it is run with ``HOST PORT`` appended, from its own directory,
and must connect to our dealer and play), or a submitted agent run confined
(``theirs = { sandboxed = "agents/theirs" }``: the folder with its
``startme.sh``, run in :class:`arena.sandbox.Sandbox` as the hosted arena's
events seat them; refused where the sandbox cannot be set up).
``duplicate = false`` plays one seating per match (series k the k-th
seating of the pairing, in turn) instead of every seating on the same cards. A bad key fails with one line that
names it (:class:`ConfigError`), so nothing is played on a config that would
fail half-way.
"""

from __future__ import annotations

import math
import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NoReturn

from arena.match import AGENT_LIMITS
from arena.sandbox import unavailable
from poker.excerpt import quote
from poker.gamedef import Game, GameDefError, format_game, load_game
from strategies.base import Spec, StrategyError, make_strategy

__all__ = [
    "ConfigError",
    "Entrant",
    "Config",
    "parse_config",
    "load_config",
    "DEFAULT_START_TIMEOUT_MS",
    "MAX_BOTS",
    "MAX_SERIES",
    "MAX_HANDS",
    "MAX_MATCHES",
]

_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")
_TOP_KEYS: Final = ("game", "hands", "series", "seed", "duplicate", "bots", "limits", "workers", "agents", "output")
#: The ACPC gave a submission 10 minutes to start (its competition rules); without a
#: bound, a command that neither connects nor exits would stall its match for
#: ever, so tournaments bound the wait where ``arena match`` does not.
DEFAULT_START_TIMEOUT_MS: Final = 600000
#: What a config may ask for: the schedule is built (and every match listed)
#: before the first is played, so an unbounded ``series`` or bot table would
#: take the machine's memory before anything is printed. No competition comes
#: near these (the ACPC's largest: about 20 bots, 3000-hand matches).
MAX_BOTS: Final = 200
MAX_SERIES: Final = 10000
MAX_HANDS: Final = 10_000_000
MAX_MATCHES: Final = 100_000
_LIMIT_KEYS: Final = {
    "t_response_ms": AGENT_LIMITS.response_ms,
    "t_hand_ms": AGENT_LIMITS.hand_ms,
    "t_per_hand_ms": AGENT_LIMITS.per_hand_ms,
    "start_timeout_ms": DEFAULT_START_TIMEOUT_MS,
}


class ConfigError(ValueError):
    """A bad configuration file; the one-line message names the key."""


@dataclass(frozen=True)
class Entrant:
    """One bot of the tournament: a strategy spec, an external command
    (``command``: the program, absolute, and its arguments; ``HOST PORT`` are
    appended when it is started), or a submitted agent (``sandboxed``: its
    folder, absolute, whose ``startme.sh`` runs in the sandbox)."""

    name: str
    spec: Spec | None = None  # parsed once, from the config to the seat
    command: tuple[str, ...] = ()
    sandboxed: str | None = None

    @property
    def label(self) -> str:
        """What the bot is, for tables: its spec, its command line, or its folder in the sandbox."""
        if self.sandboxed is not None:
            return f"sandboxed {self.sandboxed}"
        return shlex.join(self.command) if self.spec is None else str(self.spec)

    def identity(self) -> list[Any]:
        if self.sandboxed is not None:
            return [self.name, {"sandboxed": self.sandboxed}]
        return [self.name, {"command": list(self.command)}] if self.spec is None else [self.name, str(self.spec)]


@dataclass(frozen=True)
class Config:
    """A checked tournament configuration."""

    game: Game
    game_arg: str
    game_file: str | None
    bots: tuple[Entrant, ...]
    hands: int
    series: int
    seed: int
    limits: tuple[int, int, int, int]  # t_response, t_hand, t_per_hand, start_timeout (ms)
    workers: int
    in_process: bool
    output: Path
    duplicate: bool = True

    def identity(self) -> dict[str, Any]:
        """What fixes the results (not where or how fast they are played): a
        resumed tournament must agree on all of it."""
        return {
            "game": format_game(self.game),
            "bots": [bot.identity() for bot in self.bots],
            "hands": self.hands,
            "series": self.series,
            "seed": self.seed,
            "limits": dict(zip(_LIMIT_KEYS, self.limits)),
            # only when off: a tournament played before the key existed resumes as it was
            **({} if self.duplicate else {"duplicate": False}),
        }


def _fail(key: str, message: str) -> NoReturn:
    raise ConfigError(f"{key}: {message}")


def _int(
    document: dict[str, Any], key: str, default: int | None, low: int, high: int | None = None, prefix: str = ""
) -> int:
    value = document.get(key, default)
    key = prefix + key
    if value is None:
        _fail(key, "missing (a whole number)")
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(key, f"must be a whole number, got {quote(value)}")
    if value < low or (high is not None and value > high):
        bound = f"in {low}..{high}" if high is not None else f"at least {low}"
        _fail(key, f"must be {bound}, got {value}")
    return value


def _command(key: str, table: dict[str, Any], base: Path) -> tuple[str, ...]:
    """``{ command = "path/startme.sh [ARGS]" }`` (or a list of words): the
    program, taken from ``base`` when relative, must be an executable file."""
    unknown = sorted(set(table) - {"command"})
    if unknown:
        _fail(f"{key}.{unknown[0]}", "unknown key (a bot table has only command = \"path/startme.sh\")")
    given = table.get("command")
    if isinstance(given, str):
        try:
            words = shlex.split(given)
        except ValueError as error:
            _fail(f"{key}.command", f"cannot be split into words: {error}")
    elif isinstance(given, list) and all(isinstance(word, str) for word in given):
        words = list(given)
    else:
        _fail(f"{key}.command", f"must be a command line (a string or a list of strings), got {quote(given)}")
    if not words or not words[0]:
        _fail(f"{key}.command", "is empty")
    program = base / words[0]
    if not program.is_file():
        _fail(f"{key}.command", f"{program}: no such file (a command is a program, e.g. startme.sh, run with HOST PORT)")
    if not os.access(program, os.X_OK):
        _fail(f"{key}.command", f"{program} is not executable (chmod +x)")
    return (str(program.resolve()), *words[1:])


def _sandboxed(key: str, table: dict[str, Any], base: Path) -> str:
    """``{ sandboxed = "path/folder" }``: the folder, taken from ``base`` when
    relative, must hold an executable ``startme.sh``, and the sandbox must be
    available (a submitted agent never runs unconfined)."""
    unknown = sorted(set(table) - {"sandboxed"})
    if unknown:
        _fail(f"{key}.{unknown[0]}", "unknown key (a submitted agent's table has only sandboxed = \"path/folder\")")
    given = table["sandboxed"]
    if not isinstance(given, str) or not given:
        _fail(f"{key}.sandboxed", f"must be the path of the agent's folder, got {quote(given)}")
    startme = base / given / "startme.sh"
    if not startme.is_file() or not os.access(startme, os.X_OK):
        _fail(f"{key}.sandboxed", f"{base / given}: no executable startme.sh in it")
    if why := unavailable():
        _fail(f"{key}.sandboxed", f"submitted agents cannot run here: {why}")
    return str((base / given).resolve())


def _entrant(name: str, spec: Any, game: Game, base: Path) -> Entrant:
    key = f"bots.{name}"
    if not _NAME.fullmatch(name):
        _fail(key, "a bot name is 1-64 letters, digits or _ . + -")
    if isinstance(spec, dict):
        if "sandboxed" in spec:
            return Entrant(name, sandboxed=_sandboxed(key, spec, base))
        return Entrant(name, command=_command(key, spec, base))
    if not isinstance(spec, str) or not spec:
        _fail(key, f"must be a strategy spec string or {{ command = \"path/startme.sh\" }}, got {quote(spec)}")
    try:
        parsed = Spec.parse(spec)
        make_strategy(parsed, game, seed=0)  # fails now, not in a seat (and builds tilts once)
    except (StrategyError, GameDefError, OSError) as error:
        _fail(key, str(error).splitlines()[0] if str(error) else type(error).__name__)
    return Entrant(name, spec=parsed)


def parse_config(document: dict[str, Any], base: Path, source: str = "config") -> Config:
    """Check a parsed TOML document; relative paths (game file, commands,
    output) are taken from ``base``, the config file's directory.

    Raises:
        ConfigError: the first problem, naming its key.
    """
    unknown = sorted(set(document) - set(_TOP_KEYS))
    if unknown:
        _fail(unknown[0], f"unknown key (known: {', '.join(_TOP_KEYS)})")
    game_arg = document.get("game")
    if not isinstance(game_arg, str) or not game_arg:
        _fail("game", "missing or not a string (a short game name such as \"leduc\", or a .game file)")
    game_path = base / game_arg
    game_file = str(game_path.resolve()) if game_path.is_file() else None
    try:
        game = load_game(game_file or game_arg)
    except GameDefError as error:
        _fail("game", str(error).splitlines()[0])
    if game.num_players not in (2, 3):
        _fail("game", f"{game_arg} is a {game.num_players}-player game; tournaments are heads-up or 3-player")
    hands = _int(document, "hands", None, 2, MAX_HANDS)
    series = _int(document, "series", 1, 1, MAX_SERIES)
    seed = _int(document, "seed", None, 0, 2**32 - 1)
    if seed + series - 1 >= 2**32:
        _fail("seed", f"seed + series - 1 must stay below 4294967296 (series k deals with seed + k), got {seed + series - 1}")
    duplicate = document.get("duplicate", True)
    if not isinstance(duplicate, bool):
        _fail("duplicate", f"must be true or false, got {quote(duplicate)}")
    bots = document.get("bots")
    if not isinstance(bots, dict) or not bots:
        _fail("bots", "missing: a table of name = \"strategy spec\" (e.g. cfr = \"leduc-cfr\") or name = { command = \"startme.sh\" }")
    if len(bots) < game.num_players:
        _fail("bots", f"{game_arg} is a {game.num_players}-player game: at least {game.num_players} bots are needed")
    if len(bots) > MAX_BOTS:
        _fail("bots", f"at most {MAX_BOTS} bots, got {len(bots)}")
    groups = math.comb(len(bots), game.num_players)
    if groups * series > MAX_MATCHES:
        _fail(
            "series",
            f"{series} series of {groups} {'pairings' if game.num_players == 2 else 'triples'} is {groups * series} matches;"
            f" a tournament plays at most {MAX_MATCHES}",
        )
    checked = tuple(_entrant(name, spec, game, base) for name, spec in bots.items())
    limits_doc = document.get("limits", {})
    if not isinstance(limits_doc, dict):
        _fail("limits", "must be a table")
    unknown = sorted(set(limits_doc) - set(_LIMIT_KEYS))
    if unknown:
        _fail(f"limits.{unknown[0]}", f"unknown key (known: {', '.join(_LIMIT_KEYS)})")
    limits = []
    for key, default in _LIMIT_KEYS.items():
        value = _int(limits_doc, key, default, -1 if key == "start_timeout_ms" else 1, prefix="limits.")
        if value == 0 or value < -1:
            _fail(f"limits.{key}", f"must be a positive number of milliseconds or -1, got {value}")
        limits.append(value)
    workers = _int(document, "workers", os.cpu_count() or 1, 1)
    agents = document.get("agents", "in-process")
    if agents not in ("in-process", "process"):
        _fail("agents", f"must be \"in-process\" or \"process\", got {quote(agents)}")
    output = document.get("output", Path(source).stem)
    if not isinstance(output, str) or not output:
        _fail("output", "must be a directory path")
    return Config(
        game=game,
        game_arg=game_arg,
        game_file=game_file,
        bots=checked,
        hands=hands,
        series=series,
        seed=seed,
        limits=(limits[0], limits[1], limits[2], limits[3]),
        workers=workers,
        in_process=agents == "in-process",
        output=base / output,
        duplicate=duplicate,
    )


def load_config(path: Path) -> Config:
    """Read and check a TOML configuration file.

    Raises:
        ConfigError: unreadable, not TOML (or not UTF-8), or a bad key (the message names it).
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None
    try:  # decoded here, not by tomllib, which lets a UnicodeDecodeError out
        text = data.decode()
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(f"{path}: not TOML: line {line} is not UTF-8 text") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not TOML: {error}") from None
    try:
        return parse_config(document, path.resolve().parent, str(path))
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
