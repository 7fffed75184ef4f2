"""The card-blind "chump" strategies of the ACPC papers and the reference example player.

Each one picks fold / call / raise with weights that depend only on the betting,
never on the cards, so :meth:`Strategy.policy` is the same row for every private
hand. Weights are over the *legal* actions and renormalised, as the reference
``example_player`` does (docs/bots.md, Simple bots):

=============  =========================================================
always-call    call (or check) every time
always-raise   raise when a raise is legal, else call
always-fold    fold when folding is legal (facing a bet), else check
random         fold 0.06 (if legal), call 0.47, raise 0.47 (if legal)
probe          never folds: call and raise 1/2 each when a raise is legal
=============  =========================================================

No-limit raise sizes (option ``size``): ``min`` (the minimum raise-to),
``max`` (all-in), ``pot`` (raise by the pot after calling, clamped to the legal
range) or, for ``random`` only and by default, ``uniform``: an integer uniform on
[min, max] like the example player. Randomness comes from a
``numpy.random.Generator`` seeded with the strategy's seed, so play is
reproducible (the example player seeds from the clock and is not).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game
from poker.protocol import MatchState
from poker.state import CALL, FOLD, Action, ActionType, State
from strategies.base import Options, PublicState, Strategy, register

__all__ = ["CardBlind", "RANDOM_WEIGHTS", "SIZES"]

#: The example player's weights for fold, call and raise (``example_player.c``).
RANDOM_WEIGHTS: Final = (0.06, 0.47, 0.47)
#: No-limit raise-size rules accepted by the ``size`` option.
SIZES: Final = ("min", "max", "pot", "uniform")

Weights = tuple[float, float, float]


class CardBlind(Strategy):
    """Fold / call / raise with fixed weights ``(fold, call, raise)``; weights of
    illegal actions are dropped and the rest renormalised. ``size`` is the
    no-limit raise rule (one of :data:`SIZES`)."""

    def __init__(self, game: Game, weights: Weights, *, size: str = "min", seed: int | None = None) -> None:
        if size not in SIZES:
            raise ValueError(f"raise size rule {size!r} is not one of {SIZES}")
        if min(weights) < 0 or sum(weights) <= 0:
            raise ValueError(f"weights {weights!r} must be non-negative with a positive sum")
        self.game = game
        self.weights = weights
        self.size = size
        self._rng = np.random.default_rng(seed)

    def distribution(self, state: State) -> Weights:
        """Probabilities of fold, call and raise in ``state`` (legal ones only)."""
        fold, call, raise_ = self.weights
        fold = fold if state.can_fold() else 0.0
        raise_ = raise_ if state.can_raise() else 0.0
        total = fold + call + raise_
        if total == 0:
            return (0.0, 1.0, 0.0)  # no legal action has weight (always-fold facing no bet): check
        return (fold / total, call / total, raise_ / total)

    def act(self, view: MatchState) -> Action:
        state = view.state
        probabilities = self.distribution(state)
        kind = self._pick(probabilities)
        if kind is ActionType.FOLD:
            return FOLD
        if kind is ActionType.CALL:
            return CALL
        return self._raise(state)

    def _pick(self, probabilities: Weights) -> ActionType:
        """The example player's draw: the first action whose cumulative weight
        exceeds a uniform [0, 1) number. A certain action draws nothing."""
        positive = [t for t, p in zip(ActionType, probabilities) if p > 0]
        if len(positive) == 1:
            return positive[0]
        draw = self._rng.random()
        for kind, p in zip(ActionType, probabilities):
            if draw < p:
                return kind
            draw -= p
        return positive[-1]  # rounding left a sliver above the last weight

    def _raise(self, state: State) -> Action:
        bounds = state.raise_bounds()
        if bounds is None:
            raise AssertionError("a raise was chosen where none is legal")
        if self.game.is_limit:
            return Action(ActionType.RAISE)
        low, high = bounds
        if self.size == "uniform":
            return Action.raise_to(int(self._rng.integers(low, high, endpoint=True)))
        return Action.raise_to(_raise_to(state, self.size, low, high))

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        """The same row for every private hand: the fold/call/raise probabilities
        placed on the matching columns of ``public.actions``."""
        state = public.state
        fold, call, raise_ = self.distribution(state)
        row = np.zeros(len(public.actions))
        wanted = [(FOLD, fold), (CALL, call)]
        if raise_ > 0:
            wanted.append((self._policy_raise(state), raise_))
        for action, p in wanted:
            if p == 0:
                continue
            if action not in public.actions:
                raise NotImplementedError(
                    f"strategy {self.name!r} plays {action} with probability {p:g}"
                    f" but the columns are {[str(a) for a in public.actions]}"
                )
            row[public.actions.index(action)] = p
        return np.tile(row, (len(private_hands(self.game)), 1))

    def _policy_raise(self, state: State) -> Action:
        bounds = state.raise_bounds()
        if bounds is None:
            raise AssertionError("a raise has positive probability where none is legal")
        if self.game.is_limit:
            return Action(ActionType.RAISE)
        low, high = bounds
        if self.size == "uniform" and low != high:
            raise NotImplementedError(
                f"strategy {self.name!r} raises to a uniform size in {low}..{high}; a policy over"
                " discrete actions cannot express it (use size=min, max or pot)"
            )
        return Action.raise_to(_raise_to(state, self.size, low, high))


def _raise_to(state: State, size: str, low: int, high: int) -> int:
    """Raise-to chips for a deterministic size rule, within ``[low, high]``."""
    if size == "min" or size == "uniform":  # uniform with low == high
        return low
    if size == "max":
        return high
    pot_after_call = sum(state.spent) + state.amount_to_call()
    return min(max(state.max_spent + pot_after_call, low), high)


def _size(options: Options, default: str = "min", *, uniform: bool = False) -> str:
    return options.choice("size", SIZES if uniform else SIZES[:3], default)


@register("always-call", "call or check every time")
def _always_call(game: Game, options: Options, *, seed: int | None) -> Strategy:
    return CardBlind(game, (0.0, 1.0, 0.0), seed=seed)


@register("always-raise", "raise when legal, else call; size=min|max|pot (no-limit, default min)")
def _always_raise(game: Game, options: Options, *, seed: int | None) -> Strategy:
    return CardBlind(game, (0.0, 0.0, 1.0), size=_size(options), seed=seed)


@register("always-fold", "fold when facing a bet, else check")
def _always_fold(game: Game, options: Options, *, seed: int | None) -> Strategy:
    return CardBlind(game, (1.0, 0.0, 0.0), seed=seed)


@register("random", "the example player: fold .06, call .47, raise .47; size=uniform|min|max|pot")
def _random(game: Game, options: Options, *, seed: int | None) -> Strategy:
    return CardBlind(game, RANDOM_WEIGHTS, size=_size(options, "uniform", uniform=True), seed=seed)


@register("probe", "never folds; call or raise with probability 1/2 each; size=min|max|pot")
def _probe(game: Game, options: Options, *, seed: int | None) -> Strategy:
    return CardBlind(game, (0.0, 0.5, 0.5), size=_size(options), seed=seed)
