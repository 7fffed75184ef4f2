"""Exact pre-flop showdown values of hold'em, by the 169 hand classes.

Why: a re-solve values a pre-flop leaf (and an all-in before the flop) by the
showdown averaged over the boards to come. :class:`~strategies.resolve.evaluators.Runouts`
samples ``max_boards`` of the 2,598,960 boards; with the 8 a HUNL decision can
afford, a hand's equity against a range is off by about 0.1 and the pre-flop
strategy follows the sample, not the cards (the small blind's fold probability of
a hand differed by 0.32 on average between two seeds; 256 boards: 0.09 at 45 s a
solve). Here the average over *every* board is exact and costs a 169 x 169
matrix product.

The table: ``S[A, B] = sum over boards b, hands h in class A and o in class B
sharing no card with each other or b, of sign(rank(h, b) - rank(o, b))``
(integers, so exact), computed once over the 134,459 suit-isomorphic boards, each
weighted by how many boards it stands for. A hand ``h`` of class ``A`` against an
opponent whose reach is the same for every hand of a class (``r[B]``) is then
worth ``stake * sum_B r[B] * S[A, B] / (|A| * C(48, 5))`` per unit of reach:
what :class:`~strategies.resolve.evaluators.Runouts` computes when it keeps
every board (its weight is ``1 / C(48, 5)``). The re-solver's pre-flop ranges
are the same for every hand of a class (its leaves, folds and deals treat the
suits alike); :meth:`PreflopShowdowns.values` checks that, and a range that is
not gets sampled run-outs as before.

The table ships in ``strategies/data`` (``python -m
strategies.resolve.preflop_equity`` rebuilds it: about a minute on 2 cores); a
missing or damaged file is rebuilt into the cache directory on first use.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any, Final

import numba as nb
import numpy as np
import numpy.typing as npt
from numba import njit, prange

from poker._eval_kernels import card_bit, rank_cardset
from poker.evaluate import private_hands
from strategies.cfr.abstraction import _kernels as _k
from strategies.cfr.abstraction.cache_files import CacheFileError, default_cache_dir, expect_arrays, read_arrays, write_arrays

__all__ = ["CLASSES", "HandClasses", "PreflopShowdowns", "canonical_boards", "class_sums", "hand_classes", "load_class_sums", "sharing"]

#: Hand classes: 13 pairs, 78 suited and 78 offsuit rank pairs.
CLASSES: Final = 169
#: The file's format tag and its one array.
FORMAT: Final = "holdem-preflop-showdowns/1"
SHIPPED: Final = Path(__file__).resolve().parents[1] / "data" / "holdem-preflop-showdowns.bin"
#: Relative tolerance of the per-class check: fold values sum reach in a different
#: order per card, so a symmetric range is symmetric to rounding only.
SYMMETRY_TOLERANCE: Final = 1e-9


def hand_classes(cards: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int64]:
    """The class (0..168) of each two-card hand ``cards`` (``[H, 2]``, ids
    ``rank * 4 + suit``): ``high * 13 + low`` if suited, ``low * 13 + high`` if
    not (a pair is ``rank * 14``)."""
    ranks = np.asarray(cards, dtype=np.int64) // 4
    suits = np.asarray(cards, dtype=np.int64) % 4
    high, low = ranks.max(axis=1), ranks.min(axis=1)
    suited = suits[:, 0] == suits[:, 1]
    classes: npt.NDArray[np.int64] = np.where(suited, high * 13 + low, low * 13 + high)
    return classes


def canonical_boards(size: int = 5) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """One ``size``-card board of each suit-isomorphism class (``int64[K, size]``)
    and how many boards each stands for (``int64[K]``, summing to C(52, size)):
    the card abstraction's enumeration (:attr:`~strategies.cfr.abstraction.card_tables.CardTables.canonical`)."""
    from poker.gamedef import load_game
    from strategies.cfr.abstraction.card_tables import CardTables

    boards, orbits = _k.canonical_boards(np.arange(52, dtype=np.int64), size, CardTables(load_game("hunl")).perm_maps)
    return boards, orbits


@njit(cache=True, parallel=True)
def _class_sums_kernel(
    boards: npt.NDArray[np.int64],
    weights: npt.NDArray[np.int64],
    hands: npt.NDArray[np.int64],
    classes: npt.NDArray[np.int64],
    sharing: npt.NDArray[np.int64],
    parts: int,
) -> npt.NDArray[np.int64]:
    n_hands = hands.shape[0]
    out = np.zeros((parts, 169, 169), dtype=np.int64)
    for part in prange(parts):
        sums = out[part]
        ranks = np.empty(n_hands, dtype=np.int64)
        below = np.zeros(169, dtype=np.int64)
        group = np.zeros(169, dtype=np.int64)
        total = np.zeros(169, dtype=np.int64)
        for k in range(part, boards.shape[0], parts):
            board = 0
            for j in range(5):
                board |= card_bit(boards[k, j])
            w = weights[k]
            total[:] = 0
            for h in range(n_hands):
                cards = card_bit(hands[h, 0]) | card_bit(hands[h, 1])
                if cards & board:
                    ranks[h] = -1
                else:
                    ranks[h] = rank_cardset(cards | board)
                    total[classes[h]] += 1
            order = np.argsort(ranks)
            below[:] = 0
            start = 0
            while ranks[order[start]] < 0:
                start += 1
            while start < n_hands:  # one group of equal rank at a time, weakest first
                stop = start
                group[:] = 0
                while stop < n_hands and ranks[order[stop]] == ranks[order[start]]:
                    group[classes[order[stop]]] += 1
                    stop += 1
                for i in range(start, stop):
                    h = order[i]
                    row = classes[h]
                    # wins - losses against every valid hand, then the ones sharing a card with h undone
                    for b in range(169):
                        sums[row, b] += w * (2 * below[b] + group[b] - total[b])
                    for j in range(sharing.shape[1]):
                        o = sharing[h, j]
                        if ranks[o] < 0 or ranks[o] == ranks[h]:
                            continue
                        sums[row, classes[o]] += -w if ranks[o] < ranks[h] else w
                for b in range(169):
                    below[b] += group[b]
                start = stop
    return out


def sharing(hands: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each hand, the 100 other hands holding one of its cards."""
    holds = [[] for _ in range(52)]  # type: list[list[int]]
    for h, (a, b) in enumerate(hands.tolist()):
        holds[a].append(h)
        holds[b].append(h)
    return np.array([[o for o in holds[a] + holds[b] if o != h] for h, (a, b) in enumerate(hands.tolist())], dtype=np.int64)


def class_sums(boards: npt.NDArray[np.int64] | None = None, weights: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.int64]:
    """``S`` (module docstring), ``int64[169, 169]``, over ``boards`` with
    ``weights`` (default: every board, through the suit-isomorphic ones)."""
    if boards is None or weights is None:
        boards, weights = canonical_boards()
    hands = private_hands(np.arange(52), 2).astype(np.int64)
    parts = max(1, nb.get_num_threads()) * 4
    sums: npt.NDArray[np.int64] = _class_sums_kernel(boards, weights, hands, hand_classes(hands), sharing(hands), parts).sum(axis=0)
    return sums


def _read(path: Path) -> npt.NDArray[np.int64]:
    header, arrays = read_arrays(path, expect=expect_arrays({"sums": ("<i8", (CLASSES, CLASSES))}))
    if header.get("format") != FORMAT or "sums" not in arrays:
        raise CacheFileError(f"{path}: not a {FORMAT} file")
    sums: npt.NDArray[np.int64] = arrays["sums"]
    return sums


def load_class_sums() -> npt.NDArray[np.int64]:
    """The shipped table; if it is missing or damaged, the cached one, else
    computed (about a minute) and cached."""
    cached = default_cache_dir() / "tables" / SHIPPED.name
    for path in (SHIPPED, cached):
        try:
            return _read(path)
        except (CacheFileError, OSError):
            continue
    sums = class_sums()
    write_arrays(cached, {"format": FORMAT}, {"sums": sums})
    return sums


@cache
def _per_unit_reach() -> npt.NDArray[np.float64]:
    """``S[A, B] / (|A| * C(48, 5))``: class A's value per unit of class B's reach, read once a process."""
    sizes = np.bincount(hand_classes(private_hands(np.arange(52), 2)), minlength=CLASSES).astype(np.float64)
    matrix: npt.NDArray[np.float64] = load_class_sums() / (sizes[:, None] * math.comb(48, 5))
    return matrix


@njit(cache=True, nogil=True)
def _class_means(
    reach: npt.NDArray[np.float64],
    classes: npt.NDArray[np.int64],
    sizes: npt.NDArray[np.float64],
    tolerance: float,
    out: npt.NDArray[np.float64],
) -> bool:
    """``out[l, c]``: the mean of ``reach[l]`` over class c's hands; False as soon
    as a hand's reach is more than ``tolerance`` from its class's mean. One pass
    over the hands a row, where a product with a hands-by-classes matrix would
    multiply 169 times as many numbers (nearly all by 0): a quarter of a
    pre-flop re-solve's time went there."""
    n_rows, n_hands = reach.shape
    for row in range(n_rows):
        out[row, :] = 0.0
        for h in range(n_hands):
            out[row, classes[h]] += reach[row, h]
        for c in range(out.shape[1]):
            out[row, c] /= sizes[c]
        for h in range(n_hands):
            if abs(out[row, classes[h]] - reach[row, h]) > tolerance:
                return False
    return True


class HandClasses:
    """The 169 classes of the hands ``cards`` (``[H, 2]``) and the reach of a
    range by class, for the tables here that sum over a class's hands: they
    hold for a range that is the same on every hand of a class."""

    def __init__(self, cards: npt.NDArray[np.integer[Any]]) -> None:
        self.classes = hand_classes(cards).astype(np.int64)
        #: Hands per class, ``float64[169]``.
        self.sizes = np.bincount(self.classes, minlength=CLASSES).astype(np.float64)

    def reach(self, reach: npt.NDArray[np.float64]) -> npt.NDArray[np.float64] | None:
        """Each class's reach per hand ``[L, 169]`` of the rows of ``reach``
        (``[L, H]``), or None if some class's hands differ (by more than
        :data:`SYMMETRY_TOLERANCE` of the largest reach)."""
        rows = np.ascontiguousarray(reach, dtype=np.float64)
        scale = max(float(np.abs(rows).max(initial=0.0)), 1e-300)
        per_class = np.empty((rows.shape[0], CLASSES))
        if not _class_means(rows, self.classes, self.sizes, SYMMETRY_TOLERANCE * scale, per_class):
            return None
        return per_class


class PreflopShowdowns:
    """A showdown before the flop averaged over every board, exactly, for
    ranges that are the same across the hands of a class (module docstring);
    the interface of :class:`~strategies.resolve.evaluators.Runouts`. A range
    that is not gets ``fallback()``'s sampled run-outs."""

    def __init__(self, cards: npt.NDArray[np.integer[Any]], fallback: Any) -> None:
        self.hand_classes = HandClasses(cards)
        self.matrix = _per_unit_reach()
        self._fallback_factory = fallback
        self._fallback: Any = None

    def values(self, opp_reach: npt.NDArray[np.float64], stakes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Counterfactual values ``[L, H]`` of the hands whose opponent has
        ``opp_reach`` (``[L, H]``) when ``stakes[l]`` chips each are shown down at node ``l``."""
        reach = np.asarray(opp_reach, dtype=np.float64)
        per_class = self.hand_classes.reach(reach)
        if per_class is None:
            if self._fallback is None:
                self._fallback = self._fallback_factory()
            fallback: npt.NDArray[np.float64] = self._fallback.values(reach, stakes)
            return fallback
        values: npt.NDArray[np.float64] = (per_class @ self.matrix.T)[:, self.hand_classes.classes] * np.asarray(stakes, dtype=np.float64)[:, None]
        return values

    def both(self, reach: npt.NDArray[np.float64], stakes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Both players' values ``[2, L, H]`` for the reaches ``[2, L, H]``."""
        return np.stack([self.values(reach[1], stakes), self.values(reach[0], stakes)])


def main() -> None:
    """Rebuild the shipped table."""
    import time

    started = time.perf_counter()
    sums = class_sums()
    write_arrays(SHIPPED, {"format": FORMAT}, {"sums": sums})
    print(f"{SHIPPED}: {CLASSES} x {CLASSES} class sums over every board ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
