"""Tilts: CFR strategies of a non-zero-sum copy of the game whose payoffs are
shifted per outcome class (Johanson 2016 thesis ch2, "Tilting the payoffs",
Table 2.3).

The tilted player believes each hand is worth its real payoff ``u`` plus a
percentage of it, one percentage per outcome class, in the order of Table 2.3:

============  ==================================  ===========================
option        outcome class                       tilted payoff (``u`` real)
============  ==================================  ===========================
``win``       we win a showdown (``u = +stake``)   ``u * (1 + win/100)``
``lose``      we lose a showdown (``u = -stake``)  ``u * (1 + lose/100)``
``fold``      we fold (``u = -our chips in``)      ``u * (1 + fold/100)``
``opp-fold``  the opponent folds (``u = +theirs``) ``u * (1 + opp-fold/100)``
============  ==================================  ===========================

Sign convention. The table's caption says "the percent added to a player's
payoff", so a tilt of ``t`` % adds ``t/100 * u`` to the real payoff ``u`` (the
chips won or lost, never the pot): a positive tilt enlarges the outcome's payoff
in magnitude, a negative one shrinks it. For a win that is a bigger (``+``) or
smaller (``-``) prize; for a loss a bigger (``+``) or smaller (``-``) penalty.
This is the reading the text fixes for Red, ``0,-7,0,0``: the Polaris tilts
"decreased the penalty for the loser", i.e. a lost showdown costs 93 % of the
stake (the other reading, ``u + t/100 * |u|``, would make Red's loser pay 107 %).
Where the table is ambiguous, Green's ``-7`` on "win by opponent fold", we apply
the same rule: a pot won by a fold is worth 93 % of the chips won. At a
showdown the stake is the smaller of the two commitments (all of it in limit
games), so in pot terms a showdown tilt is ``t/2`` % of the pot. Split pots
(``u = 0``) are not tilted. The opponent keeps the real zero-sum payoffs, so a
tilt is solved once per seat: seat ``p``'s rows come from the game in which only
position ``p``'s payoffs are tilted (:func:`solve_tilt`). Zero tilts are the
real game, and the solve is then the plain CFR+ solve, array for array.

Presets (Table 2.3, percentages ``win, lose, fold, opp-fold``):

==========  ==================  =====================================
preset      tilt %              thesis HULHE exploitability (mbb/g)
==========  ==================  =====================================
``pink``    0, 0, 0, 0          235.294 (the abstract equilibrium)
``orange``  7, 0, 0, 7          227.457
``peach``   0, 0, 0, 7          228.325
``red``     0, -7, 0, 0         257.231
``green``   0, -7, 0, -7        263.702
==========  ==================  =====================================

Spec: ``tilt:preset=NAME`` or ``tilt:win=W,lose=L,fold=F,opp-fold=O`` (percent,
missing ones 0; given with a preset they replace its values), ``iterations=N``
(CFR+ iterations, default :data:`DEFAULT_ITERATIONS`). Only games whose public
tree the exact solver can walk are accepted (Kuhn, Leduc: a solve takes well under
a second there). The strategy is cached in ``$ACPC_ARENA_CACHE/tilts/`` (default
``~/.cache/acpc-arena``, as the card abstractions) as a strategy file whose
``settings`` record the tilt; a missing or damaged cache file is solved again.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game, format_game
from strategies.base import Options, Strategy, StrategyError, register
from strategies.cfr.abstraction.cache_files import default_cache_dir
from strategies.cfr.strategy_file import StrategyFile, StrategyFileError, load_strategy, save_strategy
from strategies.cfr.tree.public import NodeKind, Tree, TreeError, build_tree, zero_sum_payoff
from strategies.equilibrium import EquilibriumStrategy, StrategyTable

if TYPE_CHECKING:
    from strategies.cfr.solvers.solver import Solver

__all__ = [
    "DEFAULT_ITERATIONS",
    "FIELDS",
    "MAX_TILT_NODES",
    "PRESETS",
    "Tilt",
    "TiltStrategy",
    "cache_path",
    "load_or_solve",
    "parse_tilt",
    "solve_tilt",
    "solve_tilted_game",
    "tilted_payoff",
]

#: CFR+ iterations of a tilt solve (Leduc: ~0.05 s per seat, exploitability of
#: the zero tilt 2.2e-5 chips/hand).
DEFAULT_ITERATIONS: Final = 4000
#: The largest public tree (nodes x private hands) a tilt is solved on at construction.
MAX_TILT_NODES: Final = 2_000_000
#: Option names, in Table 2.3's order.
FIELDS: Final = ("win", "lose", "fold", "opp-fold")
#: A tilt of more than this many percent is refused (-100 % zeroes an outcome).
MAX_PERCENT: Final = 100.0


@dataclass(frozen=True)
class Tilt:
    """Percentages added to the tilted player's payoff when it wins a showdown,
    loses a showdown, folds, or wins because the opponent folded (see the
    module docstring for the sign convention)."""

    win: float = 0.0
    lose: float = 0.0
    fold: float = 0.0
    opp_fold: float = 0.0

    def __post_init__(self) -> None:
        for name, value in zip(FIELDS, self.values):
            if not math.isfinite(value) or abs(value) > MAX_PERCENT:
                raise ValueError(f"tilt {name}={value!r} is not a percentage in [-{MAX_PERCENT:g}, {MAX_PERCENT:g}]")

    @property
    def values(self) -> tuple[float, float, float, float]:
        """``(win, lose, fold, opp_fold)`` percent."""
        return (self.win, self.lose, self.fold, self.opp_fold)

    def describe(self) -> str:
        """``"win=7,lose=0,fold=0,opp-fold=7"``."""
        return ",".join(f"{name}={value:g}" for name, value in zip(FIELDS, self.values))


#: Johanson thesis Table 2.3 (the Polaris 2008 components).
PRESETS: Final[dict[str, Tilt]] = {
    "pink": Tilt(0, 0, 0, 0),
    "orange": Tilt(7, 0, 0, 7),
    "peach": Tilt(0, 0, 0, 7),
    "red": Tilt(0, -7, 0, 0),
    "green": Tilt(0, -7, 0, -7),
}


def tilted_payoff(tree: Tree, tilt: Tilt, position: int) -> npt.NDArray[np.float64]:
    """The payoff table ``float64[N, 2, 3]`` (:func:`zero_sum_payoff`'s layout:
    ``[win, tie, lose]`` at showdowns, slot 0 at folds) with ``position``'s
    payoffs tilted and the other position's real."""
    if position not in (0, 1):
        raise ValueError(f"position must be 0 or 1, got {position}")
    payoff = zero_sum_payoff(tree)
    scale = 1.0 + np.array(tilt.values) / 100.0
    win, lose, fold, opp_fold = (float(s) for s in scale)
    folds = tree.kind == NodeKind.FOLD
    payoff[folds & (tree.player == position), position, :] *= fold
    payoff[folds & (tree.player == 1 - position), position, :] *= opp_fold
    showdowns = tree.kind == NodeKind.SHOWDOWN
    payoff[showdowns, position, 0] *= win
    payoff[showdowns, position, 2] *= lose
    return payoff


def solve_tilted_game(tree: Tree, tilt: Tilt, position: int, iterations: int = DEFAULT_ITERATIONS) -> Solver:
    """The CFR+ solver (:class:`Solver` defaults) after ``iterations`` on the
    non-zero-sum game where ``position`` is tilted and the other position is
    not; its average strategy is the profile of both positions."""
    from strategies.cfr.solvers.solver import Algorithm, Solver  # numba: only when solving

    solver = Solver(tree, Algorithm.CFR_PLUS, payoff=tilted_payoff(tree, tilt, position))
    solver.run(iterations)
    return solver


def solve_tilt(tree: Tree, tilt: Tilt, iterations: int = DEFAULT_ITERATIONS) -> npt.NDArray[np.float64]:
    """The tilted player's strategy ``float64[D, A, H]`` for both seats: CFR+
    (:class:`Solver` defaults) for ``iterations`` on each seat's tilted game,
    seat ``p``'s decision rows taken from the game where ``p`` is tilted. Zero
    tilts multiply every payoff by exactly 1, so they give the plain
    ``Solver(tree).run(iterations)`` average, bit for bit."""
    strategy = np.empty((tree.num_decisions, tree.max_actions, tree.num_hands))
    for position in (0, 1):
        solver = solve_tilted_game(tree, tilt, position, iterations)
        rows = tree.decision_player == position
        strategy[rows] = solver.average_strategy()[rows]
    return strategy


def cache_path(game: Game, tilt: Tilt, iterations: int, cache_dir: Path | None = None) -> Path:
    """Where the tilt's strategy file is cached: the game's digest, the tilt and
    the iterations in the name, under ``cache_dir`` (default
    ``default_cache_dir() / "tilts"``)."""
    folder = default_cache_dir() / "tilts" if cache_dir is None else cache_dir
    digest = hashlib.sha256(format_game(game).encode()).hexdigest()[:16]
    values = "_".join(f"{value:g}" for value in tilt.values)
    return folder / f"{digest}-tilt_{values}-cfr+{iterations}.strategy"


def _settings(tilt: Tilt) -> dict[str, float]:
    return {f"tilt_{name.replace('-', '_')}": float(value) for name, value in zip(FIELDS, tilt.values)}


def load_or_solve(
    game: Game, tilt: Tilt, iterations: int = DEFAULT_ITERATIONS, *, cache_dir: Path | None = None
) -> StrategyFile:
    """The tilt's strategy file (public-tree layout, no suit isomorphism): read
    from the cache if it is there and holds this tilt, else solved
    (:func:`solve_tilt`) and cached.

    Raises:
        TreeError: a game whose public tree is too big to solve here.
    """
    tree = build_tree(game, max_entries=MAX_TILT_NODES)
    path = cache_path(game, tilt, iterations, cache_dir)
    try:
        saved = load_strategy(path, tree=tree)
        settings_match = all(saved.settings.get(k) == v for k, v in _settings(tilt).items())
        if settings_match and saved.iterations == iterations and saved.algorithm == "cfr+":
            return saved
    except (OSError, StrategyFileError):
        pass  # absent or damaged: solve again
    saved = StrategyFile(
        game=game,
        abstraction=None,
        algorithm="cfr+",
        iterations=iterations,
        exploitability=None,
        arrays={"strategy": solve_tilt(tree, tilt, iterations)},
        settings={"alternating": True, "linear_average": True, "delay": 0, **_settings(tilt)},
    )
    try:
        save_strategy(path, saved, tree)
    except OSError:
        pass  # a read-only cache: play the solved strategy all the same
    return saved


class TiltStrategy(EquilibriumStrategy):
    """A tilt (:func:`load_or_solve`) played as the equilibrium agent plays any
    strategy file: ``act`` samples the information set's row, ``policy`` gives
    the stored rows exactly."""

    name = "tilt"

    def __init__(
        self,
        game: Game,
        tilt: Tilt,
        iterations: int = DEFAULT_ITERATIONS,
        *,
        seed: int | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        super().__init__(game, StrategyTable(load_or_solve(game, tilt, iterations, cache_dir=cache_dir)), seed=seed)
        self.tilt = tilt
        self.iterations = iterations


def parse_tilt(options: Options) -> Tilt:
    """The tilt of a ``tilt:`` spec's options (``preset`` and/or the four percentages)."""
    preset = options.choice("preset", ("none", *PRESETS), "none")
    base = PRESETS.get(preset, Tilt())
    values = list(base.values)
    for i, name in enumerate(FIELDS):
        raw = options.text(name, meta="PERCENT")
        if raw is None:
            continue
        try:
            values[i] = float(raw)
        except ValueError:
            raise StrategyError(f"strategy 'tilt': option {name}={raw!r} is not a number (percent)") from None
    try:
        return Tilt(*values)
    except ValueError as error:
        raise StrategyError(f"strategy 'tilt': {error}") from None


def _iterations(options: Options) -> int:
    raw = options.text("iterations", meta="N")
    if raw is None:
        return DEFAULT_ITERATIONS
    if not raw.isdigit() or not 1 <= int(raw) <= 1_000_000:
        raise StrategyError(f"strategy 'tilt': option iterations={raw!r} is not a count in 1..1000000")
    return int(raw)


@register(
    "tilt",
    "CFR+ on payoffs tilted per outcome (Johanson Table 2.3): preset=pink|orange|peach|red|green"
    " or win=,lose=,fold=,opp-fold= (percent); iterations=N; small games (Kuhn, Leduc)",
)
def _tilt(game: Game, options: Options, *, seed: int | None) -> Strategy:
    tilt = parse_tilt(options)
    iterations = _iterations(options)
    try:
        return TiltStrategy(game, tilt, iterations, seed=seed)
    except TreeError as error:
        raise StrategyError(f"strategy 'tilt' solves the game's whole public tree: {error}") from None
