"""Strategy files: a msgpack header followed by msgpack-packed numpy arrays.

A file is two msgpack objects in a row:

1. the header, a map: ``format`` (``"acpc-arena-strategy"``), ``version``
   (:data:`FORMAT_VERSION`), ``game`` (the game definition text of
   :func:`poker.gamedef.format_game`), ``betting_abstraction`` (``None`` for a
   limit game, else ``{"pot_fractions": [...], "all_in": bool}``),
   ``card_abstraction`` (``"none"``: every private hand is its own bucket),
   ``suit_isomorphism`` (the tree keeps one board per suit-isomorphism class of
   the first board round; see :func:`strategies.cfr.tree.build_tree`),
   ``algorithm`` and ``settings`` (alternating, linear_average, delay),
   ``iterations``, ``exploitability`` (chips per hand, or ``None`` if not
   measured), ``tree_digest`` (SHA-256 of the tree's decision-node keys and hands,
   so a file is never read onto a different tree) and ``arrays`` (the names that
   follow);
2. a map from array name to ``{"dtype", "shape", "data"}`` (raw little-endian
   bytes, C order). ``strategy`` (the normalised average strategy,
   ``float64[D, A, H]``) is always there; ``regret`` and ``cumulative`` are there
   when the file is also a checkpoint that :mod:`strategies.cfr.cli` can resume.

``layout`` (absent in older files: ``"public-tree"``) says how the arrays are
indexed. ``"public-tree"``: ``[D, A, H]`` on the tree of :func:`build_tree`.
``"buckets"`` (public chance sampling, :mod:`strategies.cfr.pcs`): ``[A, R]``
bucket tables on the betting-only tree (:func:`build_betting_tree`), columns
per decision and bucket of the ``card_abstraction`` spec (rebuilt with
:func:`strategies.cfr.abstraction.load_abstraction`); ``tree_digest`` then
covers the betting tree's keys, and :attr:`StrategyFile.strategy` expands the
table onto the full public tree (small games only).

Writing goes to a temporary file in the same directory that then replaces the
target, so an interrupted save never leaves half a file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import numpy.typing as npt

from poker.gamedef import Game, format_game, parse_game
from strategies.cfr.cache_files import pack_array, unpack_array
from strategies.cfr.betting_tree import BettingTree, build_betting_tree
from strategies.cfr.tree import BettingAbstraction, Tree, build_tree

__all__ = [
    "BUCKETS",
    "FORMAT",
    "FORMAT_VERSION",
    "PUBLIC_TREE",
    "StrategyFile",
    "StrategyFileError",
    "load_strategy",
    "save_strategy",
    "tree_digest",
]

FORMAT = "acpc-arena-strategy"
FORMAT_VERSION = 1
PUBLIC_TREE = "public-tree"
BUCKETS = "buckets"


class StrategyFileError(ValueError):
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

    @cached_property
    def strategy(self) -> npt.NDArray[np.float64]:
        """The average strategy ``[D, A, H]`` on :meth:`build_tree` (a bucket table
        is expanded onto it, which needs a game small enough for that tree)."""
        table: npt.NDArray[np.float64] = self.arrays["strategy"]
        if self.layout == PUBLIC_TREE:
            return table
        expanded: npt.NDArray[np.float64] = self.bucket_strategy().tree_strategy(self.build_tree())
        return expanded

    def build_tree(self) -> Tree:
        """The public tree the arrays belong to (built again from the header); for
        a bucket table, the full public tree its strategy is played on."""
        return build_tree(self.game, self.abstraction, isomorphism=self.isomorphism)

    def bucket_strategy(self) -> Any:
        """A bucket table's :class:`strategies.cfr.pcs.PCSStrategy` (card
        abstraction rebuilt from its spec)."""
        from strategies.cfr.abstraction import load_abstraction
        from strategies.cfr.pcs import PCSStrategy

        if self.layout != BUCKETS:
            raise StrategyFileError("only a bucket-table strategy file has a bucket strategy")
        abstraction = load_abstraction(self.card_abstraction, self.game)
        return PCSStrategy(self.game, abstraction, self.arrays["strategy"], betting=self.abstraction)


def tree_digest(tree: Tree | BettingTree) -> str:
    """SHA-256 over the decision-node keys (in row order) and the private hands
    (a betting tree: its decision keys alone)."""
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


def _unpack_array(name: str, packed: dict[str, Any]) -> npt.NDArray[Any]:
    try:
        return unpack_array(packed)
    except (KeyError, TypeError, ValueError) as error:
        raise StrategyFileError(f"array {name!r} is damaged: {error}") from None


def save_strategy(path: str | Path, strategy_file: StrategyFile, tree: Tree | BettingTree) -> None:
    """Write ``strategy_file`` (whose arrays are on ``tree``: a :class:`Tree`, or
    the :class:`BettingTree` of a bucket table) to ``path`` atomically."""
    if isinstance(tree, Tree) != (strategy_file.layout == PUBLIC_TREE):
        raise StrategyFileError(f"a {strategy_file.layout!r} strategy file goes with the other kind of tree")
    if isinstance(tree, Tree):
        expected = (tree.num_decisions, tree.max_actions, tree.num_hands)
        for name, array in strategy_file.arrays.items():
            if array.shape != expected:
                raise StrategyFileError(f"array {name!r} has shape {array.shape}; the tree needs {expected}")
    elif len({array.shape for array in strategy_file.arrays.values()}) > 1:
        raise StrategyFileError("the arrays of a bucket table must all have one shape")
    if "strategy" not in strategy_file.arrays:
        raise StrategyFileError("a strategy file needs a 'strategy' array")
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
        "arrays": sorted(strategy_file.arrays),
    }
    arrays = {name: pack_array(array) for name, array in strategy_file.arrays.items()}
    target = Path(path)
    handle, temporary = tempfile.mkstemp(dir=target.parent or Path("."), prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(msgpack.packb(header, use_bin_type=True))
            out.write(msgpack.packb(arrays, use_bin_type=True))
        os.chmod(temporary, 0o644)  # mkstemp makes it private; a strategy file is not secret
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_strategy(path: str | Path, *, tree: Tree | None = None) -> StrategyFile:
    """Read a strategy file and check it against its tree (``tree``, or the tree
    built again from the header; a bucket table is checked against its betting
    tree and ``tree`` is not used).

    Raises:
        StrategyFileError: not a strategy file, an unknown version, damaged
            arrays, or arrays that belong to a different tree.
    """
    try:
        with open(path, "rb") as stream:
            unpacker = msgpack.Unpacker(stream, raw=False, max_buffer_size=0)
            header = unpacker.unpack()
            packed = unpacker.unpack()
    except (msgpack.OutOfData, msgpack.UnpackException, ValueError) as error:
        raise StrategyFileError(f"{path}: not a strategy file ({error or 'truncated'})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise StrategyFileError(f"{path}: not a strategy file (no {FORMAT!r} header)")
    if header.get("version") != FORMAT_VERSION:
        raise StrategyFileError(
            f"{path}: strategy file version {header.get('version')!r}; this reader knows {FORMAT_VERSION}"
        )
    game = parse_game(header["game"], source=f"{path} header")
    betting = header["betting_abstraction"]
    abstraction = (
        None if betting is None else BettingAbstraction(tuple(betting["pot_fractions"]), bool(betting["all_in"]))
    )
    arrays = {name: _unpack_array(name, value) for name, value in packed.items()}
    result = StrategyFile(
        game=game,
        abstraction=abstraction,
        algorithm=header["algorithm"],
        iterations=int(header["iterations"]),
        exploitability=header["exploitability"],
        arrays=arrays,
        settings=dict(header.get("settings") or {}),
        card_abstraction=header["card_abstraction"],
        isomorphism=bool(header.get("suit_isomorphism", False)),
        layout=str(header.get("layout", PUBLIC_TREE)),
    )
    if result.layout not in (PUBLIC_TREE, BUCKETS):
        raise StrategyFileError(f"{path}: unknown array layout {result.layout!r}")
    if result.layout == PUBLIC_TREE and result.card_abstraction != "none":
        raise StrategyFileError(f"{path}: a public-tree strategy with card abstraction {result.card_abstraction!r}")
    checked: Tree | BettingTree
    if result.layout == BUCKETS:
        checked = build_betting_tree(game, abstraction)
    else:
        checked = result.build_tree() if tree is None else tree
    if tree_digest(checked) != header["tree_digest"]:
        raise StrategyFileError(f"{path}: the arrays belong to a different public tree than the one they are loaded on")
    if "strategy" not in arrays:
        raise StrategyFileError(f"{path}: no 'strategy' array")
    return result
