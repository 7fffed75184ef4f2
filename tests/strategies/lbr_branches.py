"""LBR's exact expected winnings as :mod:`strategies.lbr` plays, against any
target, in games small enough to enumerate (Kuhn, Leduc).

:func:`strategies.lbr.lbr_hand` draws the target's actions from a random
generator; :class:`Branches` stands in for it and plays one branch of those
draws, keeping each draw's probabilities, so that :func:`expected_hand` can
walk every branch and weight each finished hand by the probability of its
draws. LBR itself draws nothing in these games (its win probabilities are
enumerated), so this is the exact expectation of what the module plays.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

import numpy as np
import numpy.typing as npt

from poker.deal import Deal
from poker.gamedef import Game
from poker.hand_rank import hand_values
from strategies.base import Strategy
from strategies.lbr import LbrConfig, lbr_hand


class Branches:
    """The generator :func:`lbr_hand` is given, played along ``path``: the target's
    draw number ``k`` takes column ``path[k]``, past the path the first column
    with positive probability."""

    def __init__(self, path: Sequence[int]) -> None:
        self.path = path
        self.drawn: list[npt.NDArray[np.float64]] = []
        self.taken: list[int] = []

    def choice(self, n: int, p: npt.NDArray[np.float64]) -> int:
        k = len(self.drawn)
        index = self.path[k] if k < len(self.path) else int(np.flatnonzero(p > 0)[0])
        self.drawn.append(np.asarray(p, dtype=np.float64))
        self.taken.append(index)
        return index


def deals(game: Game) -> list[Deal]:
    """Every deal of a heads-up game with one hole card each, in dealing order (equally likely)."""
    n_board = game.total_board_cards(game.num_rounds - 1)
    return [
        Deal(hole=((cards[0],), (cards[1],)), board=tuple(cards[2:])) for cards in permutations(game.deck(), 2 + n_board)
    ]


def expected_hand(game: Game, target: Strategy, deal: Deal, position: int, config: LbrConfig) -> float:
    """LBR's expected chips in ``position`` for ``deal``, over every branch of the target's draws."""
    total = 0.0
    paths: list[list[int]] = [[]]
    while paths:
        path = paths.pop()
        branches = Branches(path)
        final = lbr_hand(game, target, deal, position, config, branches)  # type: ignore[arg-type]
        weight = float(np.prod([p[i] for p, i in zip(branches.drawn, branches.taken)]))
        total += weight * float(hand_values(final, deal.hole, deal.board)[position])
        for k in range(len(path), len(branches.drawn)):
            others = np.flatnonzero(branches.drawn[k] > 0)
            paths += [branches.taken[:k] + [int(other)] for other in others if other != branches.taken[k]]
    return total


def expected_lbr(game: Game, target: Strategy, config: LbrConfig) -> float:
    """LBR's exact expected chips per hand over every deal, both seats alike (what
    :func:`strategies.lbr.run_lbr`'s duplicate estimate estimates)."""
    return float(np.mean([expected_hand(game, target, deal, position, config) for deal in deals(game) for position in (0, 1)]))
