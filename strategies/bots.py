"""A library of named bots: equilibrium strategies seated by name (``leduc-cfr``).

Each :class:`Bot` is a strategy file and the ``arena solve`` command that makes
it, recorded here with the file's measured quality (exploitability, chips per
hand; shown in the game's unit, :func:`poker.stats.unit_of`). Every bot is
registered as a strategy name (:func:`strategies.base.register`), so it is
seated wherever a strategy spec is accepted (``arena match leduc leduc-cfr
random``); its factory loads the file through the equilibrium agent
(:class:`strategies.equilibrium.EquilibriumStrategy`, translation included for
no-limit games), or, for ``hunl-modicum``, through continual re-solving with
depth-limited leaves, the file its blueprint (:mod:`strategies.resolve.agent`,
``resolve:evaluator=continuations``).

Small bots ship in the package (``strategies/data/NAME.strategy``, each written
by its recorded command, byte for byte: the solves are deterministic). Hold'em
bots play a **compact playing file** (``NAME.compact``,
:mod:`strategies.cfr.compact`: the average strategy alone, quantized, with the
card abstraction inside): ``hulhe-ir50`` and ``hunl-modicum`` ship their compact
files in the package, seated from a fresh checkout with an empty cache; the others' is written by
``arena bots build NAME`` beside the full solve. Large solves are run on the user's machine by ``arena bots build NAME``
(:mod:`arena.commands.bots`), which runs the recorded command into
``$ACPC_ARENA_CACHE/bots/`` (default ``~/.cache/acpc-arena/bots/``): first into
``NAME.partial.strategy`` (the solve's checkpoints land there, and an
interrupted build resumes from it), renamed to ``NAME.strategy`` when the solve
has finished (a build stopped between the two renames the finished file:
:func:`finished_partial`); a compact bot's build then writes ``NAME.compact``
from it (into the cache: a shipped compact file stays as it is, and the build
says whether it plays the same). Seating a bot whose file is missing fails at
once with one line naming the command that builds it.

Three-player bots (3p Kuhn and Leduc) are solved by three-player CFR+
(:mod:`strategies.cfr.solvers.multiplayer`) into ``three-player`` strategy
files; their quality is Abou Risk & Szafron's (2010) seven-step epsilon (the mean over positions
of a best response's gain against the other two, exact) with each position's
gain. The three-player hold'em bot is external-sampling MCCFR
(:mod:`strategies.cfr.solvers.sampled_multiplayer`) on an E[HS^2] abstraction
(IR16's 16 imperfect-recall buckets, 8 on the river) with PR2's river cap cut
to 3 bets; its quality is measured in 3-player duplicate against the chumps
(``benchmarks/agents.py``), as Abou Risk & Szafron did (no best response exists here).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from poker.gamedef import Game, GameDefError, load_game
from poker.stats import unit_of
from poker.names import did_you_mean
from strategies.base import Factory, Options, Strategy, StrategyError, register
from strategies.cfr.abstraction.cache_files import default_cache_dir
from strategies.equilibrium import EquilibriumStrategy, load_table

__all__ = [
    "Bot",
    "DATA_DIR",
    "LIBRARY",
    "BotError",
    "bot_path",
    "build_command",
    "built_compact_path",
    "find_bot",
    "finished_partial",
    "load_bot",
    "partial_path",
    "solve_argv",
    "solve_command",
    "solve_path",
]

#: Where the shipped strategy files live (package data).
DATA_DIR: Final = Path(__file__).resolve().parent / "data"
#: The cache subdirectory of built bots.
CACHE_SUBDIR: Final = "bots"


class BotError(StrategyError):
    """A bot that cannot be seated or built: unknown, another game, not built."""


@dataclass(frozen=True)
class Bot:
    """One named bot. ``options`` are the ``arena solve`` options between the game
    and ``--iterations`` (the recorded command is :func:`solve_command`);
    ``quality`` is the exploitability of its file in chips per hand (None: not
    measured; three-player bots: the seven-step epsilon, with each position's
    best-response gain in ``gains``). ``compact``: the bot plays a compact
    playing file (quantized to ``levels``), shipped when ``shipped``, else
    written by its build beside the full solve. ``agent``: what plays the file:
    ``"equilibrium"`` (:class:`strategies.equilibrium.EquilibriumStrategy`,
    the file's strategy itself) or ``"resolve"``
    (:class:`strategies.resolve.agent.ResolvingStrategy` with continuation
    leaves: the file is their blueprint, the strategy's other defaults)."""

    name: str
    game: str
    description: str
    options: tuple[str, ...] = ()
    iterations: int = 0
    shipped: bool = False
    quality: float | None = None
    gains: tuple[float, ...] | None = None
    note: str = ""
    compact: bool = False
    levels: int = 255
    agent: str = "equilibrium"

    @property
    def ships_solve(self) -> bool:
        """Whether the package holds the full solve (a shipped bot played from its
        strategy file); a compact bot's solve is only ever built into the cache."""
        return self.shipped and not self.compact


_THREE_PLAYER_HOLDEM = (
    "built locally on one core: 15 min end to end on a shared, loaded 2-core machine (592 s of CPU, about"
    " 0.06 ms an iteration, so about 10 min on a quiet core; 8.1 GB at the peak while a checkpoint is written;"
    " a 507 MB file); the agent calls where the real betting goes past the cut river cap (PR2's rule);"
    " quality: 3-player duplicate against the chump pairs, 16,500 deals each in six seatings"
    " (benchmarks/agents.py), mbb/g: +775 +- 26 always-call twice, -27 +- 70 always-call + always-raise,"
    " +663 +- 51 always-call + probe, +195 +- 92 always-raise twice, +24 +- 82 always-raise + probe,"
    " +167 +- 67 probe twice: it loses to no pair but does not beat every one significantly (Abou Risk &"
    " Szafron's PR2 does)"
)
_SEVEN_STEP = (
    "quality is the seven-step epsilon of Abou Risk & Szafron (2010): the mean over positions of a best"
    " response's gain against the other two (exact tree walks)"
)


def _three_player(name: str, game: str, iterations: int, quality: float, gains: tuple[float, ...]) -> Bot:
    """A shipped three-player bot: CFR+ on the three-player public tree."""
    return Bot(
        name,
        game,
        f"3-player CFR+ on the public tree (the CFR of Abou Risk & Szafron 2010 with CFR+'s regret floor and"
        f" linear average), {iterations} iterations",
        iterations=iterations,
        shipped=True,
        quality=quality,
        gains=gains,
        note=_SEVEN_STEP,
    )


def _no_limit_leduc(name: str, sizes: str, tree: str, quality: float) -> Bot:
    """A shipped no-limit Leduc bot: CFR+ on the betting tree of ``--bet-sizes sizes``."""
    return Bot(
        name,
        "leduc.nolimit",
        f"CFR+ on {tree}, 10000 iterations",
        options=("--bet-sizes", sizes),
        iterations=10000,
        shipped=True,
        quality=quality,
        note="exploitability within its betting abstraction (the tree solved)",
    )


#: Every named bot, in listing order. ``quality`` of a shipped bot is the figure
#: stored in its file by the recorded solve (the tests check that ``arena
#: exploitability`` prints it).
LIBRARY: Final[dict[str, Bot]] = {
    bot.name: bot
    for bot in (
        Bot(
            "kuhn-cfr",
            "kuhn",
            "CFR+ on the public tree, 10000 iterations",
            iterations=10000,
            shipped=True,
            quality=9.632756981441809e-06,
        ),
        Bot(
            "leduc-cfr",
            "leduc",
            "CFR+ on the public tree with suit isomorphism, 10000 iterations",
            options=("--suit-isomorphism",),
            iterations=10000,
            shipped=True,
            quality=8.19221523649244e-06,
        ),
        _no_limit_leduc(
            "leduc-nl-pot", "1", "DeepStack-Leduc's betting tree (fold, call, pot, all-in)", 0.0009467860416454421
        ),
        _no_limit_leduc("leduc-nl-3sizes", "0.5,1,2", "raises of 1/2, 1 and 2 pots and all-in", 0.0008653911361666822),
        Bot(
            "hulhe-ehs2-5",
            "hulhe",
            "CFR+ on the 5-bucket perfect-recall E[HS^2] abstract game (625 bucket sequences), 2000 iterations",
            options=("--algorithm", "abstract", "--abstraction", "ehs2:5:perfect", "--float32", "--every", "50"),
            iterations=2000,
            compact=True,
            note="built locally: 45 min end to end on a shared 2-core machine (card abstraction and joint bucket"
            " tables about 20 min once, then 2000 iterations at about 0.7 s; a 261 MB file); quality after the"
            " build is the abstract game's exploitability, 0.604 mbb/g there (the real game's cannot be computed"
            " exactly here)",
        ),
        Bot(
            "hulhe-ir50",
            "hulhe",
            "PCS (public chance sampling, vanilla CFR) on the 169 lossless pre-flop classes and 50"
            " imperfect-recall E[HS^2] buckets on each later round, 10000 iterations",
            options=(
                "--algorithm",
                "pcs",
                "--abstraction",
                "ehs2:lossless,50,50,50:imperfect",
                "--every",
                "500",
            ),
            iterations=10000,
            shipped=True,
            compact=True,
            note="ships as strategies/data/hulhe-ir50.compact, 4.1 MB (255 levels, the card abstraction inside:"
            " seated with an empty cache), which plays every probability within 0.0026 of the solve's"
            " (in duplicate against the solve -0.3 +- 14.2 mbb/g over 30,000 deals, benchmarks/hulhe_bots.py); `arena bots build` reruns the solve into the cache (59 min on a shared, loaded 2-core"
            " machine, 0.35 s an iteration; about 40 min on one quiet core at 0.23 s, the card abstraction about 10 s;"
            " PCS runs one board at a time on one core; a 23 MB file) and writes its compact file beside; no exploitability can be computed for an imperfect-recall HULHE abstraction"
            " here: its quality is its duplicate result against hulhe-ehs2-5, +16.1 +- 12.4 mbb/g over 60,000"
            " deals (benchmarks/hulhe_bots.py)",
        ),
        Bot(
            "hunl-ehs2-3",
            "hunl",
            "CFR+ on the 3-bucket perfect-recall E[HS^2] abstract game, raises of 1/2 and 1 pot and all-in"
            " (307,250 betting nodes), 1000 iterations",
            options=(
                "--algorithm",
                "abstract",
                "--abstraction",
                "ehs2:3:perfect",
                "--bet-sizes",
                "0.5,1",
                "--float32",
                "--every",
                "50",
            ),
            iterations=1000,
            compact=True,
            note="built locally: 36 min end to end on a shared 2-core machine (card abstraction and joint bucket"
            " tables about 10 min once, then 1000 iterations at about 1.5 s; a 961 MB file); quality after the"
            " build is the abstract game's exploitability, 43.4 mbb/g there after 1000 iterations (still falling); its playing file is 17.1 MB",
        ),
        Bot(
            "hunl-modicum",
            "hunl",
            "depth-limited solving with Modicum's continuation strategies (Brown, Sandholm & Amos 2018) inside"
            " DeepStack's safe continual re-solving: every decision re-solves the rest of the street (discounted CFR,"
            " 100 iterations; the river 400 of CFR+; pot raises and all-in) from the real state with the gadget and the opponent's carried"
            " values, the opponent picking among 4 continuation strategies of the blueprint at the street's end"
            " (pre-flop: leaves valued by showdown equity); blueprint: CFR+ on the perfect-recall E[HS^2] abstract"
            " game of 3 buckets a street and 5 on the flop, pot raises and all-in, 1000 iterations",
            options=("--algorithm", "abstract", "--abstraction", "ehs2:3,5,3,3:perfect", "--bet-sizes", "1", "--every", "250"),
            iterations=1000,
            shipped=True,
            compact=True,
            agent="resolve",
            note="ships as strategies/data/hunl-modicum.compact, 2.9 MB (the blueprint's average strategy at 255"
            " levels, every probability within 0.0030 of the solve's, with the card abstraction inside) and its"
            " joint bucket tables (292 KB): seated with an empty cache; the bot is `resolve` with its HUNL defaults"
            " (`resolve:iterations=N,...` changes them; `modicum` plays the same blueprint Modicum's own, unsafe,"
            " way); quality is the blueprint's abstract-game exploitability; its strength in the real game:"
            " benchmarks/hunl_lbr.py (README's bot table)",
        ),
        _three_player(
            "kuhn3p-cfr",
            "kuhn3p",
            10000,
            3.8139406800973226e-05,
            (1.2580119650960897e-05, 9.800862130166649e-06, 9.203723862179214e-05),
        ),
        _three_player(
            "leduc3p-cfr",
            "leduc.limit.3p",
            3000,
            0.0028013915957294856,
            (0.002315268766423878, 0.002706425624292341, 0.003382480396472237),
        ),
        Bot(
            "holdem3p-ehs2",
            "holdem.limit.3p",
            "external-sampling 3-player MCCFR on E[HS^2] buckets (16 a round, 8 on the river, imperfect recall"
            " as IR16) with the river cap cut to 3 bets (as PR2), 10,000,000 iterations",
            options=(
                "--algorithm",
                "es-mccfr",
                "--abstraction",
                "ehs2:16,16,16,8:imperfect",
                "--max-raises",
                "3,4,4,3",
                "--every",
                "5000000",
            ),
            iterations=10_000_000,
            note=_THREE_PLAYER_HOLDEM,
        ),
    )
}


def find_bot(name: str) -> Bot:
    """The bot called ``name``.

    Raises:
        BotError: no such bot (the message lists the known ones).
    """
    bot = LIBRARY.get(name)
    if bot is None:
        raise BotError(f"unknown bot {name!r}; {did_you_mean(name, LIBRARY)}known bots: {', '.join(LIBRARY)}")
    return bot


def solve_path(bot: Bot) -> Path:
    """The full solve's strategy file: the package's for a shipped bot played from
    its strategy file, else ``$ACPC_ARENA_CACHE/bots/NAME.strategy``."""
    if bot.ships_solve:
        return DATA_DIR / f"{bot.name}.strategy"
    return default_cache_dir() / CACHE_SUBDIR / f"{bot.name}.strategy"


def built_compact_path(bot: Bot) -> Path:
    """Where a build writes a compact bot's playing file (the cache)."""
    return default_cache_dir() / CACHE_SUBDIR / f"{bot.name}.compact"


def bot_path(bot: Bot) -> Path:
    """The file the bot plays: a shipped one in the package (``.compact`` or
    ``.strategy``); else its compact file in the cache, or, for a compact bot
    built before compact files existed, its full solve while there is no compact
    file beside it."""
    if bot.shipped:
        return DATA_DIR / f"{bot.name}.{'compact' if bot.compact else 'strategy'}"
    if not bot.compact:
        return solve_path(bot)
    compact = built_compact_path(bot)
    return solve_path(bot) if not compact.is_file() and solve_path(bot).is_file() else compact


def partial_path(bot: Bot) -> Path:
    """Where ``arena bots build`` solves (and checkpoints) before the file is complete."""
    return default_cache_dir() / CACHE_SUBDIR / f"{bot.name}.partial.strategy"


def solve_argv(bot: Bot, output: Path | str) -> list[str]:
    """The ``arena solve`` arguments that write ``bot``'s file to ``output``."""
    return [bot.game, *bot.options, "--iterations", str(bot.iterations), "-o", str(output)]


def solve_command(bot: Bot) -> str:
    """The recorded command line (``-o`` the shipped file's name, or the cache
    path a build writes)."""
    output = solve_path(bot).name if bot.ships_solve else solve_path(bot)
    return shlex.join(["arena", "solve", *solve_argv(bot, output)])


def build_command(bot: Bot) -> str:
    """The command that builds ``bot`` on this machine."""
    return f"arena bots build {bot.name}"


def _game(bot: Bot) -> Game:
    try:
        return load_game(bot.game)
    except GameDefError as error:  # a library entry naming no shipped game: a bug here
        raise BotError(f"bot {bot.name!r}: {error}") from None


def load_bot(bot: Bot, game: Game, *, seed: int | None = None, record: str | None = None) -> Strategy:
    """``bot`` seated in ``game``: its file played by its agent (the equilibrium
    agent, or continual re-solving with the file as its leaves' blueprint;
    ``record`` is then its ``record=PATH``, :mod:`strategies.resolve.recording`).

    Raises:
        BotError: another game, or not built (naming the command that builds it).
    """
    if _game(bot) != game:
        raise BotError(f"bot {bot.name!r} plays {bot.game}, not this game")
    path = bot_path(bot)
    if not path.is_file():
        what = "interrupted" if partial_path(bot).is_file() else "not built"
        raise BotError(
            f"bot {bot.name!r} is {what}: {path} is missing; build it with `{build_command(bot)}`"
            f" (runs `{solve_command(bot)}`)"
        )
    from strategies.cfr.strategy_file import StrategyFileError

    if bot.agent == "resolve":
        from strategies.resolve.agent import resolve_from_blueprint

        return resolve_from_blueprint(game, path, seed=seed, record=record)
    try:
        table = load_table(path)
    except (StrategyFileError, OSError) as error:
        raise BotError(f"bot {bot.name!r}: {error}; rebuild it with `{build_command(bot)}`") from None
    return EquilibriumStrategy(game, table, seed=seed)


def stored_quality(bot: Bot) -> tuple[float | None, str]:
    """The bot's exploitability in chips per hand and what kind of figure it is:
    the recorded one for shipped bots (``"exact"``; ``"seven-step epsilon"``
    for three-player bots), else the figure the built
    file stores (``"exact"``, or ``"abstract game"`` for an abstract solve of a
    game too big for an exact best response); ``(None, "")`` when not built."""
    if bot.quality is not None:
        return bot.quality, "exact" if bot.gains is None else "seven-step epsilon"
    header = _header(bot_path(bot))
    if header is None:
        return None, ""
    from strategies.cfr.solvers.abstract_solve import ABSTRACT_EXPLOITABILITY

    exact = header.get("exploitability")
    if isinstance(exact, float | int):
        return float(exact), "exact"
    settings = header.get("settings")
    abstract = settings.get(ABSTRACT_EXPLOITABILITY) if isinstance(settings, dict) else None
    if isinstance(abstract, float | int):
        return float(abstract), "abstract game"
    return None, ""


def finished_partial(bot: Bot) -> bool:
    """Whether ``bot``'s partial file is its finished solve, left there by a build
    stopped (Ctrl-C, SIGTERM, a crash) after the solve and before the rename: all
    its iterations and no regrets. Every checkpoint holds regrets, so ``--resume``
    cannot continue such a file (a finished ``es-mccfr`` file keeps the average
    strategy alone); it is the built file, to be renamed. Other finished files
    keep their regrets and are resumed with no iteration left, to the same bytes."""
    header = _header(partial_path(bot))
    if header is None:
        return False
    arrays, iterations = header.get("arrays"), header.get("iterations")
    return isinstance(arrays, list) and "regret" not in arrays and iterations == bot.iterations


def _header(path: Path) -> dict[str, Any] | None:
    """The header of the strategy file at ``path`` (read alone: the arrays can be
    gigabytes); None when there is none to read."""
    if not path.is_file():
        return None
    from strategies.cfr.file_io import FileFormatError, HeaderFile

    try:
        with HeaderFile(path, FileFormatError, "strategy file") as file:
            header: Any = file.header
    except (FileFormatError, OSError):
        return None
    return header if isinstance(header, dict) else None


def describe(bot: Bot) -> dict[str, Any]:
    """The bot as ``arena bots --format json`` lists it: ``name``, ``game``,
    ``file``, ``built``, ``command`` (the recorded ``arena solve``), ``quality``
    (exploitability in ``unit``, None when not measured), ``quality_kind``,
    ``shipped``, ``compact`` (it plays a compact playing file), ``build`` (the
    command that builds it here; for a shipped compact bot, rebuilds it), ``description``,
    ``note``, ``gains`` (three-player bots: each position's
    best-response gain in ``unit``, else None)."""
    quality, kind = stored_quality(bot)
    unit = unit_of(_game(bot))
    path = bot_path(bot)
    return {
        "name": bot.name,
        "game": bot.game,
        "file": str(path),
        "built": path.is_file(),
        "command": solve_command(bot),
        "quality": None if quality is None else quality * unit.per_chip,
        "unit": unit.name,
        "quality_kind": kind or None,
        "shipped": bot.shipped,
        "compact": bot.compact,
        "build": None if bot.ships_solve else build_command(bot),
        "description": bot.description,
        "note": bot.note,
        "gains": None if bot.gains is None else [g * unit.per_chip for g in bot.gains],
    }


def records_values(name: str) -> bool:
    """Whether the strategy registered as ``name`` takes ``record=PATH`` (its
    policies and values as it plays, :mod:`strategies.resolve.recording`):
    ``resolve`` and the named bots it plays (``hunl-modicum``)."""
    bot = LIBRARY.get(name)
    return name == "resolve" or (bot is not None and bot.agent == "resolve")


def _factory(bot: Bot) -> Factory:
    def make(game: Game, options: Options, *, seed: int | None) -> Strategy:
        # A re-solving bot records its own values for AIVAT on request (``hunl-modicum:record=PATH``).
        record = options.text("record", None, meta="PATH") if bot.agent == "resolve" else None
        return load_bot(bot, game, seed=seed, record=record)

    return make


for _bot in LIBRARY.values():
    _state = "shipped" if _bot.shipped else f"built by `{build_command(_bot)}`"
    _help = f"named bot ({_bot.game}, {_state}): {_bot.description}; `arena bots` lists them"
    register(_bot.name, _help)(_factory(_bot))
