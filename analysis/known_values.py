"""The bots whose own values score their matches: bot name -> AIVAT's policy and value function.

Wherever a match is scored (:func:`analysis.match_score.score_match`: ``arena
match``'s table, a hosted match's ``result``, its page, the leaderboard), a
player seated as a bot named here is estimated by AIVAT with the policy and
the value function its entry gives; its opponent's figure is the negative
(two-player zero-sum). Kuhn and Leduc need no entry: their public tree gives
exact values for any strategy with a policy (:class:`analysis.aivat.TreeValues`).

The contract of an entry (how ``hunl-modicum``'s recorded re-solves plug in):

* ``SOURCES[bot] = "package.module:function"``: imported on first use, so an
  entry costs nothing until a match of that bot is scored;
* ``function(game, spec, hands, player) -> KnownValues``: ``spec`` the strategy
  spec the bot was seated with (``hulhe-ir50``, or with ``:options``),
  ``hands`` the bot's hands of the match (every hand holds ``player``, the
  bot's name in them; ``hands.source`` the log they came from, beside which a
  bot may have recorded its policy while it played), ``player`` that name;
* :class:`KnownValues`: ``sigma`` the bot's policy for its whole range at each
  of its decisions in these hands (every action it took must have positive
  probability for its holding: AIVAT refuses a hand otherwise), ``values`` an
  :class:`analysis.aivat.ValueFunction` fixed before these hands (it may read
  the bot's files and recordings of the bot's own computations, never the
  hands' outcomes it corrects), ``description`` one line saying what the value
  function is (shown in the JSON beside the figure);
* it raises :class:`KnownValuesError` when it cannot apply (another game, no
  recording beside the log): the match is then scored without AIVAT.

Heavy set-up is the entry's to cache (a module-level cache per game, a file
under the cache directory): a hosted service scores many matches of one bot.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Final

from analysis.aivat import ValueFunction
from analysis.hands import Hands
from poker.gamedef import Game
from strategies.imaginary import Policy

__all__ = ["KnownValues", "KnownValuesError", "SOURCES", "ValuesSource", "known_values", "source_of", "hulhe_lookahead"]


class KnownValuesError(ValueError):
    """A bot's values do not apply to these hands (the message says why)."""


@dataclass(frozen=True)
class KnownValues:
    """What AIVAT needs to estimate one bot's hands (module docstring)."""

    sigma: Policy
    values: ValueFunction
    description: str


#: ``(game, spec, the bot's hands, its name in them) -> KnownValues``.
ValuesSource = Callable[[Game, str, Hands, str], KnownValues]

#: Bot name -> ``"module:function"`` of its :data:`ValuesSource`.
SOURCES: Final[dict[str, str]] = {
    "hulhe-ir50": "analysis.known_values:hulhe_lookahead",
    # The re-solving bots: the values they recorded beside each seating's log as they played.
    "hunl-modicum": "analysis.recorded_values:recorded_source",
    "resolve": "analysis.recorded_values:recorded_source",
}

#: What :func:`hulhe_lookahead`'s value function is, for the documents.
LOOKAHEAD_VALUES: Final = (
    "LookaheadValues: the bot's own policy for both players to the end of the street, leaves by showdown"
    " equity (exact on the river), fixed before the data"
)


def source_of(spec: str) -> ValuesSource | None:
    """The :data:`ValuesSource` of the bot a strategy ``spec`` seats (its name is
    the spec's part before ``:``); None for a strategy with no entry."""
    found = SOURCES.get(spec.split(":", 1)[0].strip())
    if found is None:
        return None
    module, _, function = found.partition(":")
    source: ValuesSource = getattr(importlib.import_module(module), function)
    return source


def known_values(game: Game, spec: str, hands: Hands, player: str) -> KnownValues | None:
    """The entry of ``spec``'s bot applied to its hands; None where it has no entry.

    Raises:
        KnownValuesError: the entry does not apply to these hands.
    """
    source = source_of(spec)
    return None if source is None else source(game, spec, hands, player)


def hulhe_lookahead(game: Game, spec: str, hands: Hands, player: str) -> KnownValues:
    """``hulhe-ir50``: its bucket tables' policy, and :class:`analysis.policy_values.LookaheadValues`
    on it (one per game and spec in a process: its caches serve every match)."""
    sigma, values = _lookahead(game, spec)
    return KnownValues(sigma, values, LOOKAHEAD_VALUES)


@cache
def _lookahead(game: Game, spec: str) -> tuple[Policy, ValueFunction]:
    import strategies  # noqa: F401  (registers the built-in strategies)
    from analysis.policy_values import LookaheadValues
    from strategies.base import StrategyError, make_strategy

    try:
        sigma = make_strategy(spec, game, seed=0)
    except (StrategyError, ValueError, OSError) as error:
        raise KnownValuesError(f"{spec!r}: {error}") from None
    return sigma, LookaheadValues(game, sigma)
