"""Lower-variance unbiased estimators of one player's results when the strategy
it played is known (``arena analyze --strategy SPEC --player NAME``, and the
best estimate after ``arena match``): importance sampling
(:func:`analysis.importance.estimate`: basic, early-folds, all-cards,
all-cards+early-folds) and AIVAT (:func:`analysis.aivat.aivat`), on-policy and
with full information. AIVAT's value function is fixed before the data: where
the public tree can be built (Kuhn, Leduc) it is
:class:`analysis.aivat.TreeValues` of the strategy against itself; for a bot
with its own values (:mod:`analysis.known_values`: ``hulhe-ir50``) its entry's;
else, in hold'em, :class:`analysis.aivat.EquityValues` (pot share by showdown
equity). A portfolio's hands are each estimated with the component that played it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from analysis.hands import Hands
from poker.stats import mean_ci, unit_of
from analysis.tables import plural

if TYPE_CHECKING:
    from analysis.aivat import ValueFunction
    from strategies.base import Strategy
    from strategies.imaginary import Policy

__all__ = [
    "EstimatorError",
    "estimators",
    "estimator_table",
    "aivat_column",
    "AIVAT_VALUES",
    "EQUITY_VALUES",
    "PORTFOLIO_VALUES",
    "MAX_TREE_ENTRIES",
]

#: The largest public tree (nodes x private hands) the estimators build.
MAX_TREE_ENTRIES = 1_000_000


class EstimatorError(ValueError):
    """The estimators cannot run: ``usage`` says whether the arguments (not the logs) are at fault."""

    def __init__(self, message: str, *, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


#: What AIVAT's value function is, for the documents: games whose public tree fits, and the others.
AIVAT_VALUES = "TreeValues: the named strategy against itself on the public tree, fixed before the data"
EQUITY_VALUES = (
    "EquityValues: pot share by showdown equity against the opponent's holding (exact from the flop,"
    " sampled without bias pre-flop), fixed before the data"
)
#: A portfolio's hands are estimated with the component that played each.
PORTFOLIO_VALUES = "TreeValues: the component that played each hand against itself on the public tree, fixed before the data"


@dataclass(frozen=True)
class _Group:
    """Hands (rows of the player's hands) played with one strategy, and AIVAT's value function for it."""

    rows: npt.NDArray[np.intp]
    sigma: Policy
    values: ValueFunction
    spec: str


def _prepared(
    every: Hands, player: str, spec: str, *, known_only: bool = False
) -> tuple[Hands, list[_Group], str]:
    """``player``'s hands; the strategy each was played with (``spec``, or for a
    portfolio the component its side file names for that hand) with AIVAT's value
    function (the bot's own where :mod:`analysis.known_values` has an entry for
    ``spec``, that strategy against itself on the public tree where it fits,
    else :class:`analysis.aivat.EquityValues`, refused when ``known_only``); and
    what that value function is; after every check of :func:`estimators`."""
    import strategies  # noqa: F401  (registers the built-in strategies)
    from analysis.aivat import EquityValues, TreeValues
    from analysis.known_values import KnownValuesError, known_values
    from poker.deal import private_hands
    from poker.state import State
    from strategies.base import PublicState, StrategyError, make_strategy
    from strategies.cfr.tree.public import TreeError, build_tree
    from strategies.portfolio import PortfolioStrategy

    game = every.game
    if player not in every.names:
        raise EstimatorError(f"--player {player!r} is not in the logs (players: {', '.join(every.names)})", usage=True)

    def build(text: str) -> Strategy:
        try:
            return make_strategy(text, game, seed=0)
        except (StrategyError, ValueError, OSError) as error:
            raise EstimatorError(f"--strategy {text!r}: {error}", usage=True) from error

    sigma = build(spec)
    if game.num_players != 2:
        raise EstimatorError(f"the estimators need a two-player game, not {game.num_players} players", usage=False)
    held = (every.name_index == every.names.index(player)).any(axis=1)
    hands = every.take(held)
    if len(hands) < 2:
        raise EstimatorError(f"--player {player!r} played {plural(len(hands), 'hand')}; the estimators need two", usage=True)
    portfolio = isinstance(sigma, PortfolioStrategy)
    if portfolio:
        labels = hands.components.get(player)
        if labels is None or not all(labels):
            raise EstimatorError(
                f"--strategy {spec!r}: a portfolio's policy is its component's, which changes from hand to hand, and"
                f" these logs do not say which component played every hand of {player!r}"
                " (no <match>.<name>.components.csv beside them)",
                usage=True,
            )
        column = np.array(labels, dtype=object)
        plays = [(np.flatnonzero(column == label), label.replace(";", ",")) for label in dict.fromkeys(labels)]
    else:
        plays = [(np.arange(len(hands)), spec)]
    try:
        known = None if portfolio else known_values(game, spec, hands, player)
    except KnownValuesError as error:
        raise EstimatorError(f"--strategy {spec!r}: {error}", usage=False) from error
    if known is not None:
        return hands, [_Group(np.arange(len(hands)), known.sigma, known.values, spec)], known.description
    fits = False  # a no-limit tree is an abstraction: its states are not every state a log holds
    if game.is_limit:
        # Stop building as soon as nodes x hands x hands would pass the bound below:
        # hold'em's tree is refused after a few nodes instead of after 150,000.
        hands_count = len(private_hands(game))
        try:
            tree = build_tree(game, max_entries=min(MAX_TREE_ENTRIES, 2 * MAX_TREE_ENTRIES // hands_count))
            fits = tree.num_nodes * tree.num_hands * tree.num_hands <= 2 * MAX_TREE_ENTRIES
        except (TreeError, MemoryError):
            pass
    if not fits and known_only:
        raise EstimatorError(
            "the public tree is too big for exact values and the strategy has no values of its own"
            " (EquityValues would be needed)",
            usage=False,
        )
    groups = []
    for rows, text in plays:
        strategy = build(text) if portfolio else sigma
        try:
            if fits:
                values: ValueFunction = TreeValues(tree, strategy, strategy)
            else:
                strategy.policy(PublicState(State(game), ()))  # a strategy without a policy fails here, not per hand
                values = EquityValues(game)
        except NotImplementedError as error:
            raise EstimatorError(f"--strategy {text!r}: {error}", usage=True) from error
        groups.append(_Group(rows, strategy, values, text))
    return hands, groups, (PORTFOLIO_VALUES if portfolio else AIVAT_VALUES) if fits else EQUITY_VALUES


def _stitched(hands: Hands, groups: list[_Group], player: str, *, importance: bool) -> dict[str, npt.NDArray[np.float64]]:
    """Per-hand columns of every estimator (AIVAT only unless ``importance``), each
    group of hands estimated with its own strategy, back in the hands' order.

    Raises:
        EstimatorError: hands a group's strategy could not have played.
    """
    from analysis.aivat import aivat
    from analysis.importance import ImportanceError, estimate

    columns: dict[str, npt.NDArray[np.float64]] = {}
    for group in groups:
        part = hands.take(group.rows)
        try:
            found = dict(estimate(part, player, group.sigma).columns()) if importance else {}
            found["aivat"] = aivat(part, player, group.sigma, group.values).estimate
        except ImportanceError as error:
            raise EstimatorError(f"--strategy {group.spec!r} could not have played these hands: {error}", usage=False) from error
        except NotImplementedError as error:  # no-limit: a raise size the policy has no column for
            raise EstimatorError(f"--strategy {group.spec!r}: {error}", usage=False) from error
        for name, values in found.items():
            columns.setdefault(name, np.zeros(len(hands)))[group.rows] = values
    return columns


def aivat_column(
    every: Hands, player: str, spec: str, *, known_only: bool = False
) -> tuple[Hands, npt.NDArray[np.float64], str]:
    """``player``'s hands in ``every``, their AIVAT values (chips, on-policy for
    ``spec``; value function as in :func:`estimators`) and what the value
    function is; ``known_only``: only where the public tree gives exact values
    or the bot has its own (:mod:`analysis.known_values`), not the heuristic
    :class:`analysis.aivat.EquityValues`.

    Raises:
        EstimatorError: as :func:`estimators`.
    """
    hands, groups, described = _prepared(every, player, spec, known_only=known_only)
    return hands, _stitched(hands, groups, player, importance=False)["aivat"], described


def estimators(every: Hands, player: str, spec: str) -> list[dict[str, Any]]:
    """:func:`estimator_table`'s rows."""
    return estimator_table(every, player, spec)[0]


def estimator_table(every: Hands, player: str, spec: str) -> tuple[list[dict[str, Any]], str]:
    """``player``'s hands in ``every`` estimated on-policy for the strategy ``spec``:
    ``[{"name", "mean", "std", "ci95", "hands"}, …]`` in the game's unit (raw,
    basic, early-folds, all-cards, all-cards+early-folds, aivat), and what
    AIVAT's value function was (:data:`AIVAT_VALUES`, :data:`EQUITY_VALUES` or
    :data:`PORTFOLIO_VALUES`). A portfolio's hands are each estimated with the
    component that played it (the logs' side files say which): the choice is
    made before the hand's cards, so each hand's estimate stays unbiased.

    Raises:
        EstimatorError: a spec that cannot be built or has no policy, a player
            not in the hands, a portfolio without side files (usage); a game
            not two-player limit, hands the strategy could not have played (not usage).
    """
    hands, groups, described = _prepared(every, player, spec)
    game = every.game
    columns = _stitched(hands, groups, player, importance=True)
    unit = unit_of(game)
    rows = []
    for name, column in columns.items():
        ci = mean_ci(column).scaled(unit.per_chip)
        std = float(np.std(column, ddof=1)) * unit.per_chip
        rows.append({"name": name, "mean": ci.mean, "std": std, "ci95": ci.half_width, "hands": ci.n})
    return rows, described
