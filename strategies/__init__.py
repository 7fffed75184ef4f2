"""How to act: every strategy is a :class:`strategies.base.Strategy`, built by name
with :func:`strategies.base.make_strategy` (``"random"``, ``"always-raise:size=pot"``).

Importing the package registers the built-in strategies: each of their modules
registers itself with :func:`strategies.base.register` on import, and the
registry (:mod:`strategies.base`) stands below them and imports none."""

import strategies.simple  # noqa: F401  (registers the built-in strategies)
import strategies.equilibrium  # noqa: F401  (registers equilibrium)
import strategies.tilt  # noqa: F401  (registers "tilt")
import strategies.bots  # noqa: F401  (registers the named bots of `arena bots`)
import strategies.portfolio  # noqa: F401  (registers "portfolio")
import strategies.resolve.agent  # noqa: F401  (registers "resolve")
import strategies.resolve.modicum  # noqa: F401  (registers "modicum")
from strategies.base import PublicState, Strategy, StrategyError, make_strategy, strategy_names

__all__ = ["PublicState", "Strategy", "StrategyError", "make_strategy", "strategy_names"]
