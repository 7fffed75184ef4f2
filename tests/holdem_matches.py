"""Small hold'em matches for the hand-history tests (tests/analysis/test_phh*.py):
random folds, raises and calls in limit, no-limit and three-player limit hold'em."""

from __future__ import annotations

import numpy as np

from analysis.hands import Hands

__all__ = ["MATCHES", "REFERENCE_SECTIONS", "SPLIT_IN_HALVES", "assert_same_hands"]

#: The games PHH and PokerStars text hold, and the bots that play them.
MATCHES = {
    "hulhe": ["random", "always-raise"],
    "hunl": ["random", "always-raise"],
    "holdem.limit.3p": ["random", "always-call", "always-raise"],
}

#: The reference dealer's transcripts (tests/fixtures/acpc) of hold'em games with STATE lines.
REFERENCE_SECTIONS = ("5.1", "5.2", "5.3", "5.4", "5.7")

#: Three-player limit hold'em: the small blind folds, the board plays, 25 chips split in halves.
SPLIT_IN_HALVES = (
    "# name/game/hands/seed split holdem.limit.3p 1 4\n"
    "STATE:0:cfc/cc/cc/cc:2c3d|4s5c|6d7c/AhKhQh/Jh/Th:-5|2.5|2.5:a|b|c\n"
)


def assert_same_hands(ours: Hands, theirs: Hands, *, ids: bool = True) -> None:
    """Cards, betting, values and names hand by hand (and hand ids and seeds with ``ids``)."""
    assert theirs.game == ours.game
    assert theirs.betting == ours.betting
    assert np.array_equal(theirs.hole, ours.hole)
    assert np.array_equal(theirs.board, ours.board)
    assert np.array_equal(theirs.values, ours.values)
    assert [theirs.names_at(row) for row in range(len(theirs))] == [ours.names_at(row) for row in range(len(ours))]
    if ids:
        assert theirs.hand_id.tolist() == ours.hand_id.tolist()
        assert theirs.seed.tolist() == ours.seed.tolist()
