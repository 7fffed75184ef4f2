"""Strategy files: a msgpack header followed by msgpack-packed numpy arrays.

A file is two msgpack objects in a row:

1. the header, a map: ``format`` (``"acpc-arena-strategy"``), ``version``
   (:data:`FORMAT_VERSION`), ``game`` (the game definition text of
   :func:`poker.gamedef.format_game`), ``betting_abstraction`` (``None`` for a
   limit game, else ``{"pot_fractions": [...], "all_in": bool}``),
   ``card_abstraction`` (``"none"``: every private hand is its own bucket),
   ``suit_isomorphism`` (the tree keeps one board per suit-isomorphism class of
   the first board round; see :func:`strategies.cfr.tree.public.build_tree`),
   ``algorithm`` and ``settings`` (alternating, linear_average, delay),
   ``iterations``, ``exploitability`` (chips per hand, or ``None`` if not
   measured), ``tree_digest`` (SHA-256 of the tree's decision-node keys and hands,
   so a file is never read onto a different tree) and ``arrays`` (the names that
   follow);
2. a map from array name to ``{"dtype", "shape", "data"}`` (raw little-endian
   bytes, C order). ``strategy`` (the normalised average strategy,
   ``float64[D, A, H]``) is always there; ``regret`` and ``cumulative`` are there
   when the file is also a checkpoint that :mod:`arena.commands.solve` can resume.

``layout`` (absent in older files: ``"public-tree"``) says how the arrays are
indexed. ``"public-tree"``: ``[D, A, H]`` on the tree of :func:`build_tree`.
``"buckets"`` (public chance sampling, :mod:`strategies.cfr.solvers.pcs`): ``[A, R]``
bucket tables on the betting-only tree (:func:`build_betting_tree`), columns
per decision and bucket of the ``card_abstraction`` spec (rebuilt with
:func:`strategies.cfr.abstraction.card_abstraction.load_abstraction`); ``tree_digest`` then
covers the betting tree's keys; :func:`strategies.cfr.solvers.pcs.bucket_strategy`
plays such a table (and expands it onto the full public tree, small games only).
``"three-player"`` (three-player limit games, :mod:`strategies.cfr.solvers.multiplayer`):
``[D, A, H]`` on the tree of :func:`~strategies.cfr.tree.multi.build_multi_tree`
(every legal action, every board; no isomorphism), ``tree_digest`` over its
decision keys and hands as for ``public-tree``; ``exploitability`` is Abou Risk &
Szafron's (2010) seven-step epsilon (the mean over positions of what a best response to the
other two gains; in two-player zero-sum games that is the exploitability) and
``best_response_gains`` lists each position's gain. Two-player files never
hold that key and read as before: the version stays 1, and a reader without
the three-player layout refuses such a file by its ``layout``.
``"three-player-buckets"`` (sampled three-player CFR over card buckets,
:mod:`strategies.cfr.solvers.sampled_multiplayer`; 3p limit hold'em):
``[rows, 3]`` tables (``strategy`` float32 average strategy; checkpoints add
``regret`` float32 and ``cumulative`` float64), one row per (decision, bucket)
of the betting tree under the raise caps ``settings["betting_cut"]`` (``"3,4,4,3"``)
and the ``card_abstraction`` spec, rows numbered as
:class:`~strategies.cfr.solvers.sampled_multiplayer.BucketTable` says;
``tree_digest`` is the betting graph's
(:attr:`~strategies.cfr.tree.betting_graph.BettingGraph.digest`);
``exploitability`` and ``best_response_gains`` are the seven-step epsilon where
the game's full tree can be walked (3p Kuhn, Leduc), else absent/None. Checks:
the cut parsed against the game's caps, the graph built within
:data:`~strategies.cfr.tree.betting_graph.MAX_SIGNATURES` situations,
the row count from the spec's bucket counts (no abstraction is built) and each
array's shape before it is made.

Writing goes to a temporary file in the same directory that then replaces the
target, so an interrupted save never leaves half a file (:mod:`strategies.cfr.file_io`).

Reading treats the file as untrusted and checks it in order, cheapest first,
so a hostile file costs well under a second and a few megabytes: the header
alone (msgpack limits of :data:`~strategies.cfr.file_io.HEADER_LIMITS`);
every header key, its type and range (:data:`HEADER_FIELDS`: the game text at
most :data:`MAX_GAME_TEXT` characters, at most :data:`MAX_POT_FRACTIONS` pot
fractions, each positive, finite and at most :data:`MAX_POT_FRACTION`, whole
iteration counts...); the game text parsed (two players, or three in a limit
game with the ``three-player`` layout); the size of the tree the header asks
for, counted without building it (:func:`strategies.cfr.tree.budget.tree_size`:
at most :data:`MAX_BETTING_NODES` betting nodes, and for ``public-tree`` and
``three-player`` files :data:`MAX_PUBLIC_NODES` public nodes, found out within
:data:`MAX_TREE_WORK` steps and stopped once it has more betting decisions
than the file's size can hold arrays for, so a small file with a hostile header
costs a short walk; for ``three-player`` files also the payoff tables
a solve or best response would build, terminals x H^3 at most
:data:`MAX_THREE_PLAYER_PAYOFF`); the tree built and its digest compared; only
then the arrays, under limits derived from the file's size, each claimed
dtype and shape checked against the tree (``public-tree``: ``[D, A, H]``;
``buckets``: ``[A, columns]``, ``A`` the betting tree's, all alike;
``three-player``: ``[D, A, H]`` of its tree) before any
array is made. Every failure is a :class:`StrategyFileError` whose message is
one line naming the file and what is wrong (``OSError`` when it cannot be read).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game, GameDefError, format_game, parse_game
from strategies.cfr.file_io import Field, FileFormatError, HeaderFile, check_fields, show, write_file
from strategies.cfr.tree.betting import BettingTree, build_betting_tree
from strategies.cfr.tree.betting_graph import BettingGraph, build_betting_graph, parse_cut, table_rows
from strategies.cfr.tree.budget import TooManyDecisions, TreeBudgetError, TreeSize, tree_size
from strategies.cfr.tree.multi import MultiTree, build_multi_tree
from strategies.cfr.tree.public import BettingAbstraction, Tree, TreeError, build_tree

if TYPE_CHECKING:
    from strategies.cfr.abstraction.card_abstraction import CardAbstraction

__all__ = [
    "BUCKETS",
    "FORMAT",
    "FORMAT_VERSION",
    "HEADER_FIELDS",
    "HeaderTree",
    "MAX_BETTING_NODES",
    "MAX_GAME_TEXT",
    "MAX_POT_FRACTION",
    "MAX_POT_FRACTIONS",
    "MAX_PUBLIC_NODES",
    "MAX_TREE_WORK",
    "PUBLIC_TREE",
    "THREE_PLAYER",
    "THREE_PLAYER_BUCKETS",
    "StrategyFile",
    "StrategyFileError",
    "checked_header",
    "header_tree",
    "layout_tree",
    "load_strategy",
    "save_strategy",
    "solve_record",
    "strategy_header",
    "tree_digest",
]

FORMAT = "acpc-arena-strategy"
FORMAT_VERSION = 1
PUBLIC_TREE = "public-tree"
BUCKETS = "buckets"
THREE_PLAYER = "three-player"
THREE_PLAYER_BUCKETS = "three-player-buckets"
#: The settings key of a ``three-player-buckets`` file's raise caps per round.
BETTING_CUT = "betting_cut"

#: Characters of the header's game text (:func:`format_game` writes ~300).
MAX_GAME_TEXT = 4096
#: Pot fractions of a betting abstraction (``--bet-sizes``; 3-6 is usual).
MAX_POT_FRACTIONS = 16
#: The largest pot fraction (bigger raises are all-in in any shipped game).
MAX_POT_FRACTION = 1e6
#: Nodes of the betting tree (HUNL with pot fractions 0.5,1,2 and all-in: 622,114;
#: HULHE: 16,584; building it takes ~15 us a node).
MAX_BETTING_NODES = 1_000_000
#: Nodes of the public tree of a ``public-tree`` file (no-limit Leduc with 16 pot
#: fractions: 362,091); :func:`build_tree` also bounds nodes x hands.
MAX_PUBLIC_NODES = 2_000_000
#: Terminals x private hands^3 of a three-player tree (its dense payoff tables hold
#: three times that many float64s; 3p Leduc: at most 8,676 x 512 = 4,442,112).
MAX_THREE_PLAYER_PAYOFF = 8_000_000
#: Steps (betting situations and their actions) spent sizing the trees before
#: giving up (HUNL with 0.5,1,2: 21,824; no-limit Leduc with 16 pot fractions:
#: 47,643); all of them take 0.6-0.9 s of CPU on a 2-core CI machine, which only a
#: file big enough to hold such a tree's arrays can ask for (``_decision_bound``).
MAX_TREE_WORK = 100_000
#: Keys of ``settings``, and characters of each of its strings (a PCS sampler state is ~300).
MAX_SETTINGS = 32
MAX_SETTING_TEXT = 4096
#: Card abstraction spec characters (the most buckets one round may have is
#: :data:`strategies.cfr.abstraction.abstraction_file.MAX_BUCKETS`).
MAX_SPEC_TEXT = 64

_NAME = re.compile(r"[a-z0-9][a-z0-9+_.-]{0,31}")


class StrategyFileError(FileFormatError):
    """A file that is not a strategy file of a version we read, or does not fit its tree."""


@dataclass(frozen=True)
class StrategyFile:
    """Everything a strategy file holds. ``arrays`` maps names to arrays
    (``strategy`` always; ``regret`` and ``cumulative`` in checkpoints)."""

    game: Game
    abstraction: BettingAbstraction | None
    algorithm: str
    iterations: int
    exploitability: float | None
    arrays: dict[str, npt.NDArray[Any]]
    settings: dict[str, Any] = field(default_factory=dict)
    card_abstraction: str = "none"
    isomorphism: bool = False
    layout: str = PUBLIC_TREE
    #: Each position's best-response gain against the others (three-player files).
    gains: tuple[float, ...] | None = None
    #: A compact playing file's quantization (:mod:`strategies.cfr.compact`):
    #: ``arrays["strategy"]`` is then ``uint8``, each information set's entries
    #: summing to ``levels`` (or all 0), played as ``q / levels``; 0: float arrays.
    levels: int = 0
    #: The card abstraction a compact file carries (its bucket tables), so play
    #: builds nothing; None: rebuilt from ``card_abstraction`` when played.
    cards: CardAbstraction | None = None

    @property
    def strategy(self) -> npt.NDArray[np.float64]:
        """The average strategy ``[D, A, H]`` of a public-tree file, on :meth:`build_tree`
        (a three-player file: on :meth:`build_multi_tree`; a compact file's
        ``q / levels``).

        Raises:
            StrategyFileError: a bucket table (play it with
                :func:`strategies.cfr.solvers.pcs.bucket_strategy`).
        """
        if self.layout == BUCKETS:
            raise StrategyFileError(f"a {self.layout!r} strategy file is a bucket table, not a public-tree strategy")
        table: npt.NDArray[np.float64] = self.arrays["strategy"]
        return table / self.levels if self.levels else table

    def build_tree(self) -> Tree:
        """The public tree the arrays belong to (built again from the header); for
        a bucket table, the full public tree its strategy is played on.

        Raises:
            StrategyFileError: a three-player file (see :meth:`build_multi_tree`).
        """
        if self.layout == THREE_PLAYER:
            raise StrategyFileError("a three-player strategy file: this reads two-player strategies only")
        return build_tree(self.game, self.abstraction, isomorphism=self.isomorphism)

    def build_multi_tree(self) -> MultiTree:
        """The three-player tree the arrays of a ``three-player`` file belong to."""
        if self.layout != THREE_PLAYER:
            raise StrategyFileError(f"a {self.layout!r} strategy file is two-player")
        return build_multi_tree(self.game)

    def build_betting_graph(self) -> BettingGraph:
        """The betting graph the tables of a ``three-player-buckets`` file are on."""
        if self.layout != THREE_PLAYER_BUCKETS:
            raise StrategyFileError(f"a {self.layout!r} strategy file has no three-player bucket tables")
        return build_betting_graph(self.game, parse_cut(str(self.settings[BETTING_CUT]), self.game))


def tree_digest(tree: Tree | BettingTree | MultiTree | BettingGraph) -> str:
    """SHA-256 over the decision-node keys (in row order) and the private hands
    (a betting tree: its decision keys alone; a betting graph: its own digest)."""
    if isinstance(tree, BettingGraph):
        return tree.digest
    digest = hashlib.sha256()
    if isinstance(tree, BettingTree):
        for node in tree.decision_nodes:
            digest.update(tree.key(int(node)).encode("ascii") + b"\n")
        return digest.hexdigest()
    for node in tree.decision_nodes:
        digest.update(tree.key(int(node)).encode("ascii"))
        digest.update(b"\n")
    digest.update(np.ascontiguousarray(tree.hands, dtype="<i8").tobytes())
    return digest.hexdigest()


def save_strategy(
    path: str | Path, strategy_file: StrategyFile, tree: Tree | BettingTree | MultiTree | BettingGraph
) -> None:
    """Write ``strategy_file`` (whose arrays are on ``tree``: a :class:`Tree`, the
    :class:`BettingTree` of a bucket table, the :class:`MultiTree` of a
    three-player file or the :class:`BettingGraph` of three-player bucket
    tables) to ``path`` atomically."""
    kinds = {PUBLIC_TREE: Tree, BUCKETS: BettingTree, THREE_PLAYER: MultiTree, THREE_PLAYER_BUCKETS: BettingGraph}
    if not isinstance(tree, kinds[strategy_file.layout]):
        raise StrategyFileError(f"a {strategy_file.layout!r} strategy file goes with another kind of tree")
    has_gains, layout = strategy_file.gains is not None, strategy_file.layout
    if (has_gains and layout not in (THREE_PLAYER, THREE_PLAYER_BUCKETS)) or (not has_gains and layout == THREE_PLAYER):
        raise StrategyFileError("best-response gains go with three-player files, and only there")
    if isinstance(tree, BettingGraph):
        rows = table_rows(tree, strategy_file.card_abstraction)
        for name, array in strategy_file.arrays.items():
            if array.shape != (rows, 3):
                raise StrategyFileError(f"array {name!r} has shape {array.shape}; the tables need {(rows, 3)}")
    elif isinstance(tree, Tree | MultiTree):
        expected = (tree.num_decisions, tree.max_actions, len(tree.hands))
        for name, array in strategy_file.arrays.items():
            if array.shape != expected:
                raise StrategyFileError(f"array {name!r} has shape {array.shape}; the tree needs {expected}")
    elif len({array.shape for array in strategy_file.arrays.values()}) > 1:
        raise StrategyFileError("the arrays of a bucket table must all have one shape")
    if "strategy" not in strategy_file.arrays:
        raise StrategyFileError("a strategy file needs a 'strategy' array")
    write_file(Path(path), strategy_header(strategy_file, tree), strategy_file.arrays)


def strategy_header(
    strategy_file: StrategyFile, tree: Tree | BettingTree | MultiTree | BettingGraph
) -> dict[str, Any]:
    """The header :func:`save_strategy` writes for ``strategy_file`` on ``tree``
    (without ``arrays``, which :func:`write_file` adds); compact playing files
    start from it."""
    abstraction = strategy_file.abstraction
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "game": format_game(strategy_file.game),
        "betting_abstraction": None
        if abstraction is None
        else {"pot_fractions": list(abstraction.pot_fractions), "all_in": abstraction.all_in},
        "card_abstraction": strategy_file.card_abstraction,
        "suit_isomorphism": strategy_file.isomorphism,
        "algorithm": strategy_file.algorithm,
        "settings": strategy_file.settings,
        "iterations": strategy_file.iterations,
        "exploitability": strategy_file.exploitability,
        "exploitability_unit": "chips/hand",
        "tree_digest": tree_digest(tree),
        "layout": strategy_file.layout,
    }
    if strategy_file.gains is not None:
        header["best_response_gains"] = list(strategy_file.gains)
    return header


# -- the header schema ------------------------------------------------------------


def _finite(value: float) -> str | None:
    return None if math.isfinite(value) else f"is {value!r}, not a finite number"


def _count(value: int) -> str | None:
    return None if 0 <= value < 1 << 63 else f"is {show(value)}, not a count (0 to 2^63-1)"


def _text(limit: int) -> Any:
    return lambda value: None if len(value) <= limit else f"has {len(value)} characters, over the limit of {limit}"


def _one_of(*allowed: Any) -> Any:
    return lambda value: None if value in allowed else f"is {show(value)}, not one of {', '.join(map(repr, allowed))}"


def _fractions(value: list[Any]) -> str | None:
    if len(value) > MAX_POT_FRACTIONS:
        return f"has {len(value)} pot fractions, over the limit of {MAX_POT_FRACTIONS}"
    for fraction in value:
        if isinstance(fraction, bool) or not isinstance(fraction, int | float):
            return f"holds {show(fraction)}, not a number"
        if not (math.isfinite(fraction) and 0 < fraction <= MAX_POT_FRACTION):
            return f"holds {fraction!r}, not a pot fraction in (0, {MAX_POT_FRACTION:g}]"
    return None


_BETTING_FIELDS = {"pot_fractions": Field((list,), check=_fractions), "all_in": Field((bool,))}


def _betting(value: dict[str, Any]) -> str | None:
    return check_fields(value, _BETTING_FIELDS)


#: Known settings and their types (others may be there: scalars, short strings).
_SETTINGS_FIELDS = {
    "alternating": Field((bool,), required=False),
    "linear_average": Field((bool,), required=False),
    "plus": Field((bool,), required=False),
    "single": Field((bool,), required=False),
    "delay": Field((int,), required=False, check=_count),
    "seed": Field((int,), required=False, check=_count),
    "every": Field((int,), required=False, check=_count),
    "rng_state": Field((str,), required=False, check=_text(MAX_SETTING_TEXT)),
    "abstract_game_exploitability": Field((float, type(None)), required=False),
}


def _settings(value: dict[str, Any]) -> str | None:
    if len(value) > MAX_SETTINGS:
        return f"has {len(value)} keys, over the limit of {MAX_SETTINGS}"
    for key, item in value.items():
        if not isinstance(item, bool | int | float | str | type(None)):
            return f"{show(key)} is {type(item).__name__}, not a number, text or None"
        if isinstance(item, str) and len(item) > MAX_SETTING_TEXT:
            return f"{show(key)} has {len(item)} characters, over the limit of {MAX_SETTING_TEXT}"
        if isinstance(item, float) and not math.isfinite(item):
            return f"{show(key)} is {item!r}, not finite"
    return check_fields(value, _SETTINGS_FIELDS, extra=True)


def _names(value: list[Any]) -> str | None:
    if not all(isinstance(name, str) and _NAME.fullmatch(name) for name in value):
        return f"is {show(value)}, not a list of array names"
    if "strategy" not in value:
        return "has no 'strategy' array"
    return None


def _gains(value: list[Any]) -> str | None:
    if len(value) != 3 or not all(isinstance(g, float) and math.isfinite(g) for g in value):
        return f"is {show(value)}, not three finite numbers"
    return None


def _digest(value: str) -> str | None:
    return None if re.fullmatch(r"[0-9a-f]{64}", value) else f"is {show(value)}, not a SHA-256 hex digest"


def _algorithm(value: str) -> str | None:
    return None if _NAME.fullmatch(value) else f"is {show(value)}, not an algorithm name"


#: Every key of the header, its types and what its value may be.
HEADER_FIELDS: dict[str, Field] = {
    "format": Field((str,)),
    "version": Field((int,)),
    "game": Field((str,), check=_text(MAX_GAME_TEXT)),
    "betting_abstraction": Field((dict, type(None)), check=lambda v: None if v is None else _betting(v)),
    "card_abstraction": Field((str,), check=_text(MAX_SPEC_TEXT)),
    "suit_isomorphism": Field((bool,), required=False),
    "algorithm": Field((str,), check=_algorithm),
    "settings": Field((dict, type(None)), required=False, check=lambda v: None if v is None else _settings(v)),
    "iterations": Field((int,), check=_count),
    "exploitability": Field((float, type(None)), check=lambda v: None if v is None else _finite(v)),
    "exploitability_unit": Field((str,), required=False, check=_one_of("chips/hand")),
    "tree_digest": Field((str,), check=_digest),
    "layout": Field((str,), required=False, check=_one_of(PUBLIC_TREE, BUCKETS, THREE_PLAYER, THREE_PLAYER_BUCKETS)),
    "best_response_gains": Field((list,), required=False, check=_gains),
    "arrays": Field((list,), check=_names),
}


def _card_abstraction(spec: str, game: Game) -> str | None:
    """What is wrong with a bucket table's card abstraction spec for ``game``, or None."""
    from strategies.cfr.abstraction.abstraction_file import MAX_BUCKETS
    from strategies.cfr.abstraction.card_abstraction import parse_abstraction_spec
    from strategies.cfr.abstraction.card_tables import AbstractionError

    try:
        parsed = parse_abstraction_spec(spec)
        counts = () if parsed is None else parsed.buckets_per_round(game)
    except AbstractionError as error:
        return str(error)
    if any(count > MAX_BUCKETS for count in counts):
        return f"card abstraction {show(spec)} has over {MAX_BUCKETS:,} buckets in a round"
    return None


def _game(file: HeaderFile, header: dict[str, Any]) -> tuple[Game, BettingAbstraction | None]:
    try:
        game = parse_game(header["game"], source="the header's game")
    except GameDefError as error:
        raise file.fail(str(error)) from None
    three = header.get("layout") in (THREE_PLAYER, THREE_PLAYER_BUCKETS)
    if game.num_players not in (2, 3) or (game.num_players == 3) != three:
        layout = show(header.get("layout", PUBLIC_TREE))
        raise file.fail(
            f"the header's game has {game.num_players} players with layout {layout}; strategy files are"
            f" two-player, or three-player in the {THREE_PLAYER!r} or {THREE_PLAYER_BUCKETS!r} layout"
        )
    if three and not game.is_limit:
        raise file.fail("a three-player no-limit game; three-player strategy files are limit games")
    gains = "best_response_gains" in header
    if (gains and not three) or (not gains and header.get("layout") == THREE_PLAYER):
        raise file.fail("best_response_gains belong in three-player files, and they need them")
    betting = header["betting_abstraction"]
    if game.is_limit != (betting is None):
        kind = "limit" if game.is_limit else "no-limit"
        raise file.fail(f"a {kind} game with betting_abstraction {show(betting)}")
    if betting is None:
        return game, None
    return game, BettingAbstraction(tuple(float(f) for f in betting["pot_fractions"]), betting["all_in"])


def _fits_file(file: HeaderFile, game: Game, size: TreeSize, isomorphism: bool, entry_bytes: float) -> None:
    """A public tree's arrays (``[D, A, H]``, at least ``entry_bytes`` per decision
    and hand, ``D`` at least the decisions over the suit permutations isomorphism
    merges) must be in the file, so a small file cannot make us build a big tree."""
    merged = math.factorial(game.num_suits) if isomorphism else 1
    hands = math.comb(len(game.deck()), game.num_hole_cards)
    needed = math.ceil(-(-size.public_decisions // merged) * hands * entry_bytes)
    if file.size < needed:
        raise file.fail(
            f"the header's tree has up to {size.public_decisions:,} decisions x {hands} hands: its arrays need at"
            f" least {needed:,} bytes, the file has {file.size:,}"
        )


def _decision_bound(file: HeaderFile, game: Game, layout: str, entry_bytes: float) -> tuple[int, int]:
    """``(most, beyond)``: the most betting decisions a tree can have whose arrays
    fit in ``file`` (at least ``entry_bytes`` per entry), and the bytes the arrays
    of one more would need. Every betting decision is at least one decision of the
    public tree (suit isomorphism keeps one board of each class), whose arrays
    hold all its hands, and at least one column of a bucket table.
    :func:`tree_size` stops after ``most``, so a small file with a hostile header
    costs a short walk."""
    per = entry_bytes if layout == BUCKETS else math.comb(len(game.deck()), game.num_hole_cards) * entry_bytes
    most = int(file.size / per)
    return most, math.ceil((most + 1) * per)


def _payoff_fits(file: HeaderFile, game: Game, size: TreeSize) -> None:
    """A three-player tree's dense payoff tables (built when it is solved or its
    epsilon measured) must stay within :data:`MAX_THREE_PLAYER_PAYOFF`."""
    entries = size.public_nodes * math.comb(len(game.deck()), game.num_hole_cards) ** 3
    if entries > MAX_THREE_PLAYER_PAYOFF:
        raise file.fail(
            f"the header's three-player tree has up to {size.public_nodes:,} terminals x hands^3 = {entries:,}"
            f" payoff entries, over the limit of {MAX_THREE_PLAYER_PAYOFF:,}"
        )


def load_strategy(path: str | Path, *, tree: Tree | MultiTree | None = None) -> StrategyFile:
    """Read a strategy file and check it against its tree (``tree``, or the tree
    built again from the header; a bucket table is checked against its betting
    tree and ``tree`` is not used). See the module docstring for the checks and
    their limits.

    Raises:
        StrategyFileError: not a strategy file, an unknown version, a header
            outside the schema or limits, damaged arrays, or arrays that belong
            to a different tree (one line naming the file).
        OSError: the file cannot be read.
    """
    with HeaderFile(path, StrategyFileError, "strategy file") as file:
        header = checked_header(file, FORMAT, FORMAT_VERSION, HEADER_FIELDS)
        if header.get("layout") == THREE_PLAYER_BUCKETS:
            game, _ = _game(file, header)
            return _three_player_buckets(file, header, game)
        checked = header_tree(file, header, tree=tree, entry_bytes=4.0 * len(header["arrays"]))

        def expect(name: str, dtype: np.dtype[Any], shape: tuple[int, ...]) -> str | None:
            if dtype.kind != "f":
                return f"dtype {dtype.name}; strategy arrays are floating point"
            if isinstance(checked.tree, Tree | MultiTree):
                needed = (checked.tree.num_decisions, checked.tree.max_actions, len(checked.tree.hands))
                return None if shape == needed else f"shape {shape}; the tree needs {needed}"
            if len(shape) != 2 or shape[0] != checked.tree.max_actions:
                return f"shape {shape}; the betting tree needs ({checked.tree.max_actions}, columns)"
            return None

        arrays = file.arrays(header["arrays"], expect)
    if checked.layout == BUCKETS and len({array.shape for array in arrays.values()}) > 1:
        raise StrategyFileError(f"{path}: the arrays of a bucket table have different shapes")
    return StrategyFile(
        game=checked.game,
        abstraction=checked.abstraction,
        **solve_record(header),
        arrays=arrays,
        settings=dict(header.get("settings") or {}),
        card_abstraction=header["card_abstraction"],
        isomorphism=checked.isomorphism,
        layout=checked.layout,
        gains=None if checked.layout != THREE_PLAYER else tuple(header["best_response_gains"]),
    )


def checked_header(file: HeaderFile, form: str, version: int, fields: dict[str, Field]) -> dict[str, Any]:
    """``file``'s header, which must name ``form`` and ``version`` and fit ``fields``.

    Raises:
        FileFormatError: ``file``'s error, one line naming the file.
    """
    header = file.header
    if not isinstance(header, dict) or header.get("format") != form:
        raise file.fail(f"not a {file.what} (no {form!r} header)")
    if header.get("version") != version:
        raise file.fail(f"{file.what} version {show(header.get('version'))}; this reader knows {version}")
    problem = check_fields(header, fields, where="the header")
    if problem is not None:
        raise file.fail(problem)
    return header


@dataclass(frozen=True)
class HeaderTree:
    """What :func:`header_tree` found in a checked header: the game, its betting
    abstraction, the layout, the suit isomorphism flag and the tree the arrays
    belong to (a bucket table's betting tree)."""

    game: Game
    abstraction: BettingAbstraction | None
    layout: str
    isomorphism: bool
    tree: Tree | BettingTree | MultiTree


def header_tree(
    file: HeaderFile, header: dict[str, Any], *, tree: Tree | MultiTree | None = None, entry_bytes: float
) -> HeaderTree:
    """The game and tree of a header already checked against :data:`HEADER_FIELDS`
    (any layout but ``three-player-buckets``): the game parsed, the tree sized
    before it is built (a ``public-tree`` or ``three-player`` file must hold at
    least ``entry_bytes`` per decision and hand: a small file cannot make us
    build a big tree), built (or ``tree``, given) and its digest compared. The
    compact playing files (:mod:`strategies.cfr.compact`) share these checks.

    Raises:
        FileFormatError: ``file``'s error, one line naming the file.
    """
    game, abstraction = _game(file, header)
    layout = header.get("layout", PUBLIC_TREE)
    spec = header["card_abstraction"]
    if layout != BUCKETS and spec != "none":
        raise file.fail(f"a {layout} strategy with card abstraction {show(spec)}")
    if layout == BUCKETS:
        problem = _card_abstraction(spec, game)
        if problem is not None:
            raise file.fail(problem)
    isomorphism = bool(header.get("suit_isomorphism", False))
    if layout == THREE_PLAYER and isomorphism:
        raise file.fail("a three-player tree with suit isomorphism; three-player trees keep every board")
    checked: Tree | BettingTree | MultiTree
    try:
        if layout == BUCKETS or tree is None:
            most, beyond = _decision_bound(file, game, layout, entry_bytes)
            size = tree_size(
                game,
                abstraction,
                max_betting_nodes=MAX_BETTING_NODES,
                max_public_nodes=None if layout == BUCKETS else MAX_PUBLIC_NODES,
                max_betting_decisions=most,
                max_work=MAX_TREE_WORK,
            )
            if layout == THREE_PLAYER:
                _payoff_fits(file, game, size)
            if layout != BUCKETS:
                _fits_file(file, game, size, isomorphism, entry_bytes)
        checked = layout_tree(game, abstraction, layout, isomorphism) if layout == BUCKETS or tree is None else tree
    except TooManyDecisions:
        raise file.fail(
            f"the header's tree has over {most:,} betting decisions: its arrays need at least {beyond:,} bytes,"
            f" the file has {file.size:,}"
        ) from None
    except (TreeBudgetError, TreeError) as error:
        raise file.fail(f"the header's tree: {error}") from None
    if tree_digest(checked) != header["tree_digest"]:
        raise file.fail("the arrays belong to a different public tree than the one they are loaded on")
    return HeaderTree(game, abstraction, layout, isomorphism, checked)


def layout_tree(
    game: Game, abstraction: BettingAbstraction | None, layout: str, isomorphism: bool
) -> Tree | BettingTree | MultiTree:
    """The tree the arrays of a file of ``layout`` (any but ``three-player-buckets``)
    are on: a bucket table's betting tree, the three-player tree, or the public tree.

    Raises:
        TreeError: the public tree is over its limits.
    """
    if layout == BUCKETS:
        return build_betting_tree(game, abstraction)
    if layout == THREE_PLAYER:
        return build_multi_tree(game)
    return build_tree(game, abstraction, isomorphism=isomorphism)


def solve_record(header: dict[str, Any]) -> dict[str, Any]:
    """The :class:`StrategyFile` fields every layout's header records alike: the
    algorithm, its iterations and the exploitability (None: not measured)."""
    exploitability = header["exploitability"]
    return {
        "algorithm": header["algorithm"],
        "iterations": header["iterations"],
        "exploitability": None if exploitability is None else float(exploitability),
    }


def _three_player_buckets(file: HeaderFile, header: dict[str, Any], game: Game) -> StrategyFile:
    """The rest of :func:`load_strategy` for a ``three-player-buckets`` file."""
    spec = header["card_abstraction"]
    problem = _card_abstraction(spec, game)
    if problem is not None:
        raise file.fail(problem)
    if header.get("suit_isomorphism", False):
        raise file.fail("three-player bucket tables with suit isomorphism; they have none")
    settings = dict(header.get("settings") or {})
    cut = settings.get(BETTING_CUT)
    if not isinstance(cut, str):
        raise file.fail(f"settings {BETTING_CUT!r} is {show(cut)}, not the raise caps per round ('3,4,4,3')")
    try:
        graph = build_betting_graph(game, parse_cut(cut, game))
        rows = table_rows(graph, spec)
    except (TreeError, ValueError) as error:
        raise file.fail(f"the header's tree: {error}") from None
    if tree_digest(graph) != header["tree_digest"]:
        raise file.fail("the arrays belong to a different betting tree than the one they are loaded on")
    needed = rows * 3 * 4
    if file.size < needed:
        raise file.fail(f"the header's tables have {rows:,} rows: they need at least {needed:,} bytes, the file has"
                        f" {file.size:,}")  # fmt: skip

    def expect(name: str, dtype: np.dtype[Any], shape: tuple[int, ...]) -> str | None:
        if dtype.kind != "f":
            return f"dtype {dtype.name}; strategy arrays are floating point"
        return None if shape == (rows, 3) else f"shape {shape}; the tables need {(rows, 3)}"

    arrays = file.arrays(header["arrays"], expect)
    gains = header.get("best_response_gains")
    return StrategyFile(
        game=game,
        abstraction=None,
        **solve_record(header),
        arrays=arrays,
        settings=settings,
        card_abstraction=spec,
        layout=THREE_PLAYER_BUCKETS,
        gains=None if gains is None else tuple(gains),
    )
