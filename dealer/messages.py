"""The MATCHSTATE texts of one hand, built fast from per-hand pieces.

The dealer sends every seat a view after every action: N texts per state.
``str(view_of(state, deal, …))`` rebuilds the card texts each time (about
13 µs); here the hole and board texts are made once per hand and each message
is a few string joins. The result equals ``str(poker.protocol.view_of(…))``
for every state (``tests/dealer/test_dealer_messages.py``): own cards always,
others' only at a showdown and only if they did not fold (docs/protocol.md, Messages), and
the board through the current round.
"""

from __future__ import annotations

from poker.cards import cards_to_text
from poker.deal import Deal
from poker.gamedef import Game
from poker.state import State

__all__ = ["HandTexts"]


class HandTexts:
    """The messages of one hand, by position."""

    __slots__ = ("_n", "_hole", "_board", "_prefix")

    def __init__(self, game: Game, deal: Deal, hand_id: int) -> None:
        self._n = game.num_players
        self._hole = [cards_to_text(cards) for cards in deal.hole]
        board = cards_to_text(deal.board[: game.num_board_cards[0]])
        self._board = [board]
        for round_ in range(1, game.num_rounds):
            start = game.board_start(round_)
            board += "/" + cards_to_text(deal.board[start : start + game.num_board_cards[round_]])
            self._board.append(board)
        self._prefix = [f"MATCHSTATE:{p}:{hand_id}:" for p in range(self._n)]

    def views(self, state: State) -> list[str]:
        """Each position's MATCHSTATE text for ``state``."""
        n, hole = self._n, self._hole
        tail = f"{state.betting_string()}:"
        board = self._board[state.round]
        if state.is_showdown():
            shown = [cards if not folded else "" for cards, folded in zip(hole, state.folded)]
            return [
                f"{self._prefix[v]}{tail}{'|'.join(hole[p] if p == v else shown[p] for p in range(n))}{board}"
                for v in range(n)
            ]
        return [f"{self._prefix[v]}{tail}{'|' * v}{hole[v]}{'|' * (n - 1 - v)}{board}" for v in range(n)]
