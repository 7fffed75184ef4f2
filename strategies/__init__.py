"""How to act: every strategy is a :class:`strategies.base.Strategy`, built by name
with :func:`strategies.base.make_strategy` (``"random"``, ``"always-raise:size=pot"``)."""

from strategies.base import PublicState, Strategy, StrategyError, make_strategy, private_hands, strategy_names

__all__ = ["PublicState", "Strategy", "StrategyError", "make_strategy", "private_hands", "strategy_names"]
