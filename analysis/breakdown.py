"""Breakdowns of :class:`analysis.hands.Hands`: per seat name and per position
means with 95% intervals (:func:`poker.stats.mean_ci`), cumulative results,
and the paired comparison of two players over the same hands. Chips per hand
throughout; :meth:`poker.stats.Estimate.scaled` converts to a game's unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from analysis.hands import Hands
from poker.stats import Estimate, mean_ci

__all__ = ["PlayerSummary", "estimate", "by_name", "by_position", "cumulative", "paired_difference", "summarize"]

FloatArray = npt.NDArray[np.float64]


def estimate(values: FloatArray) -> Estimate:
    """:func:`mean_ci`, with a NaN half-width (not an error) under two values."""
    if values.size < 2:
        return Estimate(float(values.mean()) if values.size else math.nan, math.nan, int(values.size))
    return mean_ci(values)


def _played(hands: Hands, name: str) -> FloatArray:
    chips = hands.name_values(name)
    played: FloatArray = chips[~np.isnan(chips)]
    return played


def by_name(hands: Hands) -> dict[str, Estimate]:
    """Each seat name's mean per hand over the hands it played."""
    return {name: estimate(_played(hands, name)) for name in hands.names}


def by_position(hands: Hands) -> list[Estimate]:
    """The mean per hand of each position (0 = the first position of the game's
    rotation), whoever sat there."""
    return [estimate(hands.values[:, p]) for p in range(hands.players)]


def cumulative(hands: Hands) -> dict[str, FloatArray]:
    """Each seat name's running total over the hands it played, in file order."""
    return {name: np.cumsum(_played(hands, name)) for name in hands.names}


def paired_difference(first: FloatArray, second: FloatArray) -> Estimate:
    """Mean and interval of ``first - second`` hand by hand, over the hands both
    have (not NaN): the paired test of two players over the same cards.

    Raises:
        ValueError: the arrays differ in length.
    """
    if first.shape != second.shape:
        raise ValueError(f"paired values need the same hands, got {first.shape} and {second.shape}")
    both = ~(np.isnan(first) | np.isnan(second))
    return estimate(first[both] - second[both])


@dataclass(frozen=True)
class PlayerSummary:
    """One seat name over a set of hands, in chips: total, mean, sample standard
    deviation per hand and the 95% interval of the mean."""

    name: str
    hands: int
    total: float
    std: float
    estimate: Estimate


def summarize(hands: Hands) -> list[PlayerSummary]:
    """One :class:`PlayerSummary` per seat name, in the order names were first seen."""
    rows = []
    for name in hands.names:
        played = _played(hands, name)
        std = float(np.std(played, ddof=1)) if played.size > 1 else math.nan
        rows.append(PlayerSummary(name, int(played.size), float(played.sum()), std, estimate(played)))
    return rows
