"""Means with 95% confidence intervals, and the unit a game's results are reported in.

The interval is the normal approximation over independent per-hand values:
``mean ± 1.96 · s / √n`` with ``s`` the sample standard deviation (``n − 1`` in
the denominator). Poker results are sums of many hands, so the approximation
is the one the ACPC used for its significance checks; it needs
at least two values.

When an interval is *shown* is one rule, :func:`interval_shown` (at least
:data:`MIN_INTERVAL_VALUES` values: hands, or duplicate pairs), which every
figure with an interval applies — the web and terminal tables, the match
page, the API's ``result`` (``interval_shown``) and the leaderboard — with
:func:`interval_note` as the words in its place.

Units (ARCHITECTURE.md "Rules of the house"): games with blinds (hold'em) are
reported in milli-big-blinds per game (hand), ``1000 · chips / big_blind``;
games without blinds, whose every player posts the same ante (Kuhn, Leduc), in
chips per hand — a milli-big-blind of an ante is not a unit anyone quotes.

Why in ``poker/``, the bottom layer: every layer reports numbers this way, not
only ``analysis/``: a human seat's running result (``agent/``), local best
response's estimate (``strategies/``), the tables of ``analysis/`` and
``arena/``. Placed above them, it would make the lower layers import an upper
one; it needs nothing but numpy and the game's blinds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game

__all__ = [
    "Z_95", "MIN_INTERVAL_VALUES", "Estimate", "mean_ci", "pooled", "interval_shown", "interval_note", "Unit", "unit_of",
    "format_chips",
]

#: Two-sided 95% quantile of the standard normal distribution.
Z_95: Final = 1.96
#: The values (hands, or duplicate pairs) an estimate rests on before its 95%
#: interval is shown: the normal approximation wants about 30, and under
#: that an interval misleads (two equal results read "± 0"; two hands that
#: happened to win look significant).
MIN_INTERVAL_VALUES: Final = 30


def interval_shown(values: int) -> bool:
    """Whether an estimate over ``values`` values shows its 95% interval (the one rule)."""
    return values >= MIN_INTERVAL_VALUES


def interval_note(planned: int | None = None, what: str = "hands") -> str:
    """What stands in place of an interval not shown yet: when it will be, or,
    where the match plans fewer than :data:`MIN_INTERVAL_VALUES` ``what``
    (``planned``), that it will not be."""
    if planned is not None and planned < MIN_INTERVAL_VALUES:
        return f"no 95% interval under {MIN_INTERVAL_VALUES} {what}"
    return f"a 95% interval after {MIN_INTERVAL_VALUES} {what}"


@dataclass(frozen=True)
class Estimate:
    """A mean and the half-width of its 95% interval, over ``n`` values."""

    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def scaled(self, factor: float) -> Estimate:
        """The same estimate in another unit (``factor`` per unit of the values)."""
        return Estimate(self.mean * factor, self.half_width * abs(factor), self.n)


def mean_ci(values: Sequence[float] | npt.NDArray[np.float64], *, z: float = Z_95) -> Estimate:
    """Mean of ``values`` and the half-width ``z · s / √n`` of its interval.

    Raises:
        ValueError: fewer than two values (no variance estimate).
    """
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1 or data.size < 2:
        raise ValueError(f"a confidence interval needs at least two values in one dimension, got shape {data.shape}")
    deviation = float(np.std(data, ddof=1))
    return Estimate(float(np.mean(data)), z * deviation / math.sqrt(data.size), int(data.size))


def pooled(parts: Sequence[Estimate], *, z: float = Z_95) -> Estimate:
    """The estimate :func:`mean_ci` would give over all the values behind
    ``parts`` (each made by it with the same ``z``), from their counts, means
    and half-widths alone.

    Why: a figure pooled over runs whose per-hand values are gone (a file lost
    with a checkout, a run recorded only as its line) is still the same figure:
    each part's sample deviation is ``half_width · √n / z``, and the pooled sum
    of squares is the parts' own plus their means' spread around the pooled
    mean, ``Σ (n_g − 1) s_g² + Σ n_g (m_g − M)²``. Exact up to how the parts
    were rounded.

    Raises:
        ValueError: no parts, or a part over fewer than two values.
    """
    if not parts or min(part.n for part in parts) < 2:
        raise ValueError(f"pooling needs parts of at least two values each, got counts {[part.n for part in parts]}")
    n = sum(part.n for part in parts)
    mean = sum(part.n * part.mean for part in parts) / n
    squares = sum((part.n - 1) * (part.half_width * math.sqrt(part.n) / z) ** 2 + part.n * (part.mean - mean) ** 2 for part in parts)
    return Estimate(mean, z * math.sqrt(squares / (n - 1)) / math.sqrt(n), n)


@dataclass(frozen=True)
class Unit:
    """How to report per-hand chip results: ``value_in_unit = chips * per_chip``."""

    name: str
    per_chip: float

    def format(self, chips: float, digits: int = 6) -> str:
        """``chips`` per hand in this unit with ``digits`` significant digits, e.g. ``"3.2 mbb/g"``."""
        return f"{chips * self.per_chip:.{digits}g} {self.name}"


def unit_of(game: Game) -> Unit:
    """mbb/g for games with blinds (some player posts more than another),
    chips/hand for games where every player posts the same ante."""
    if len(set(game.blind)) > 1:
        return Unit("mbb/g", 1000 / game.big_blind)
    return Unit("chips/hand", 1.0)


def format_chips(chips: float) -> str:
    """A chip amount for a table: the exact integer when it is one, else rounded
    to two decimals (split pots leave fractions such as ``557848.166667``)."""
    if math.isfinite(chips) and chips == round(chips):
        return str(int(chips))
    text = f"{chips:.2f}"
    return "0.00" if text == "-0.00" else text
