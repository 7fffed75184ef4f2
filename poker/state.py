"""The betting state machine with the reference dealer's exact semantics (docs/protocol.md, The
betting rules).

A :class:`State` is the public betting of one hand: chips committed per position,
folds, the actions of each round with their actors, the round and whether the
hand is over. It holds no cards, so solvers can walk it as a public tree; payoffs
take the hand ranks (or, for convenience, the cards) as an argument.

States are immutable: :meth:`State.apply` returns a new state, so a tree builder
can branch from any node and a dealer can keep the history for free.

Reference rules kept exactly, including their quirks:

* raise-to sizes; ``min_raise_to`` starts at twice the big blind, becomes
  ``max(min_raise_to, 2x - max_spent)`` after a raise to x (an all-in raise smaller
  than a full raise never lowers it), and ``max_spent + max(1, big blind)`` when
  a round starts;
* a raise needs fewer than ``max_raises`` raises this round, at most
  ``64 - num_players`` actions this round, and two players able to act; a short
  stack facing ``min_raise_to > stack`` may only go all-in, unless it already
  cannot match ``max_spent``;
* folding is legal only facing a bet; calling is always legal and calls all-in
  for less with a short stack;
* limit raises go to ``min(max_spent + raise_size, stack)``; the reference does
  not require ``max_spent < stack`` there, and neither do we;
* the round ends when the calls since the last raise (counting only players not
  all-in, and the raiser if not all-in) cover every active player; if at most one
  player can still act the hand jumps to the last round (all-in run-out);
* payoffs use the reference's side-pot loop, splitting ties equally.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from poker.gamedef import MAX_NUM_ACTIONS, Game

__all__ = ["ActionType", "Action", "State", "IllegalActionError", "FOLD", "CALL"]


class IllegalActionError(ValueError):
    """An action the current state does not allow; the message says which rule."""


class ActionType(enum.IntEnum):
    FOLD = 0
    CALL = 1
    RAISE = 2


@dataclass(frozen=True, slots=True)
class Action:
    """One betting action. ``size`` is the raise-to total in no-limit games (chips
    committed this hand, blinds included) and 0 otherwise."""

    type: ActionType
    size: int = 0

    @staticmethod
    def raise_to(size: int) -> Action:
        return Action(ActionType.RAISE, size)

    def __str__(self) -> str:
        letter = "fcr"[self.type]
        return f"r{self.size}" if self.type is ActionType.RAISE and self.size else letter


FOLD = Action(ActionType.FOLD)
CALL = Action(ActionType.CALL)
_LIMIT_RAISE = Action(ActionType.RAISE)


class State:
    """The betting of one hand. Positions are relative to the button (ACPC "player")."""

    __slots__ = (
        "game",
        "spent",
        "max_spent",
        "min_raise_to",
        "folded",
        "actions",
        "actors",
        "round",
        "finished",
        "_player",
        "_raises",
        "_betting",
        "_active",
        "_called",
    )

    game: Game
    spent: tuple[int, ...]
    max_spent: int
    min_raise_to: int
    folded: tuple[bool, ...]
    actions: tuple[tuple[Action, ...], ...]
    actors: tuple[tuple[int, ...], ...]
    round: int
    finished: bool
    _player: int  # cached current player, -1 when finished
    _raises: int  # cached raises in the current round
    _betting: str  # cached betting_string(): a dealer asks for it after every action
    _active: int  # cached num_active(): every raise and every action's round check need it
    _called: int  # players not all-in who acted since the round's last raise, the raiser included, folds not

    def __init__(self, game: Game) -> None:
        """The state at the start of a hand: blinds posted, nothing dealt (``initState``)."""
        self.game = game
        self.spent = game.blind
        self.max_spent = max(game.blind)
        self.min_raise_to = 2 * max(game.blind) if max(game.blind) > 0 else 1
        self.folded = (False,) * game.num_players
        self.actions = ((),)
        self.actors = ((),)
        self.round = 0
        self.finished = False
        self._raises = 0
        self._betting = ""
        self._active = sum(1 for chips, stack in zip(self.spent, game.stack) if chips < stack)
        self._called = 0
        self._player = self._find_player()

    # -- queries -----------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<State {self.betting_string()!r} spent={list(self.spent)}{' finished' if self.finished else ''}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return self.game == other.game and self.actions == other.actions and self.actors == other.actors

    def __hash__(self) -> int:
        return hash((self.actions, self.actors))

    def is_all_in(self, position: int) -> bool:
        return self.spent[position] >= self.game.stack[position]

    def is_active(self, position: int) -> bool:
        """Not folded and not all-in: the player can still act."""
        return not self.folded[position] and self.spent[position] < self.game.stack[position]

    def num_active(self) -> int:
        return self._active

    def num_folded(self) -> int:
        return sum(self.folded)

    def num_raises(self) -> int:
        """Raises made in the current round (blinds do not count)."""
        return self._raises

    def num_called(self) -> int:
        """Players not all-in who have acted since the round's last raise (the
        raiser included, folds not): with the raises, what decides when the
        round ends, so part of what a betting situation's future depends on."""
        return self._called

    def current_player(self) -> int:
        """The position to act; the hand must not be finished."""
        if self.finished:
            raise IllegalActionError("the hand is finished; nobody is to act")
        return self._player

    def _find_player(self) -> int:
        if self.finished:
            return -1
        n, folded, spent, stack = self.game.num_players, self.folded, self.spent, self.game.stack
        actors = self.actors[self.round]
        p = (actors[-1] + 1) % n if actors else self.game.first_player[self.round]
        for _ in range(n):
            if not folded[p] and spent[p] < stack[p]:
                return p
            p = (p + 1) % n
        raise AssertionError("an unfinished hand always has an active player")

    def can_fold(self) -> bool:
        """Folding is legal only facing a bet (never when a check is free)."""
        if self.finished:
            return False
        p = self.current_player()
        return self.spent[p] < self.max_spent

    def amount_to_call(self) -> int:
        """Chips the current player adds by calling (less than the bet if short)."""
        p = self.current_player()
        return min(self.max_spent, self.game.stack[p]) - self.spent[p]

    def raise_bounds(self) -> tuple[int, int] | None:
        """The legal raise-to range ``(min, max)`` in chips committed this hand, or
        ``None`` if no raise is legal. In limit games both ends are the one legal
        raise-to amount (the reference's ``raiseIsValid`` reports 0 there)."""
        if self.finished or self.num_raises() >= self.game.max_raises[self.round]:
            return None
        if len(self.actions[self.round]) + self.game.num_players > MAX_NUM_ACTIONS:
            return None
        if self._active <= 1:
            return None
        p = self._player
        stack = self.game.stack[p]
        if self.game.is_limit:
            to = min(self.max_spent + self.game.raise_size[self.round], stack)
            return to, to
        if self.min_raise_to > stack:
            if self.max_spent >= stack:
                return None
            return stack, stack
        return self.min_raise_to, stack

    def can_raise(self) -> bool:
        return self.raise_bounds() is not None

    def legal_actions(self, raise_sizes: Sequence[int] = ()) -> list[Action]:
        """Fold (if legal), call, then raises: the limit raise, or for no-limit the
        given raise-to sizes that are legal (default: the minimum and all-in)."""
        if self.finished:
            return []
        result = [FOLD] if self.can_fold() else []
        result.append(CALL)
        bounds = self.raise_bounds()
        if bounds is not None:
            if self.game.is_limit:
                result.append(_LIMIT_RAISE)
            else:
                low, high = bounds
                sizes = raise_sizes or (low, high)
                result.extend(Action.raise_to(s) for s in sorted(set(sizes)) if low <= s <= high)
        return result

    def is_legal(self, action: Action) -> bool:
        try:
            self.verify(action)
        except IllegalActionError:
            return False
        return True

    def verify(self, action: Action) -> None:
        """Raise :class:`IllegalActionError` saying why ``action`` is not legal here
        (rounds counted from 1 in the text, as tables and people count them)."""
        if self.finished:
            raise IllegalActionError(f"{action} is not legal: the hand is finished")
        if action.type is ActionType.FOLD:
            if not self.can_fold():
                raise IllegalActionError("fold is not legal when a check is free")
        elif action.type is ActionType.RAISE:
            bounds = self.raise_bounds()
            if bounds is None:
                raise IllegalActionError(f"no raise is legal in round {self.round + 1}: {self._why_no_raise()}")
            if not self.game.is_limit and not bounds[0] <= action.size <= bounds[1]:
                raise IllegalActionError(
                    f"raise to {action.size} chips is outside the legal range {bounds[0]}..{bounds[1]}"
                    f" in round {self.round + 1}"
                )
        if action.size and (action.type is not ActionType.RAISE or self.game.is_limit):
            raise IllegalActionError(f"{action.type.name.lower()} carries a size {action.size}; only no-limit raises do")

    def _why_no_raise(self) -> str:
        if self.num_raises() >= self.game.max_raises[self.round]:
            return f"the cap of {self.game.max_raises[self.round]} raises is reached"
        if self.num_active() <= 1:
            return "no other player can respond"
        if len(self.actions[self.round]) + self.game.num_players > MAX_NUM_ACTIONS:
            return "the round is too close to the 64-action limit"
        return "the player cannot put in more chips than the bet it faces"

    def repair(self, action: Action | None) -> tuple[Action, str | None]:
        """The reference dealer's treatment of a response (``isValidAction`` with
        ``tryFixing`` then call substitution; docs/protocol.md, The dealer's rules):
        no-limit sizes are clamped into range, sizes on other actions dropped, anything
        still illegal (``None`` stands for an unknown action letter) becomes a call.
        Returns the action to apply and the WARNING text, if any."""
        if action is None:
            return CALL, "WARNING: invalid action, changed to call"
        if action.type is ActionType.CALL and not self.finished:
            return CALL, None  # the common answer: its size, if any, is dropped and a call is always legal
        if action.type is not ActionType.RAISE or self.game.is_limit:
            action = Action(action.type)
        if action.type is ActionType.RAISE and not self.game.is_limit:
            bounds = self.raise_bounds()
            if bounds is not None:
                low, high = bounds
                if action.size < low:
                    return Action.raise_to(low), f"WARNING: raise of {action.size} increased to {low}"
                if action.size > high:
                    return Action.raise_to(high), f"WARNING: raise of {action.size} decreased to {high}"
        if self.is_legal(action):
            return action, None
        return CALL, "WARNING: invalid action, changed to call"

    # -- transitions ---------------------------------------------------------------

    def apply(self, action: Action) -> State:
        """The state after the current player takes ``action`` (``doAction``)."""
        if self.finished or action.type is not ActionType.CALL or action.size:
            self.verify(action)  # (a plain call is legal whenever the hand is not finished)
        game = self.game
        p = self._player
        spent = list(self.spent)
        max_spent = self.max_spent
        min_raise_to = self.min_raise_to
        folded = self.folded
        called = self._called
        if action.type is ActionType.FOLD:
            folded = folded[:p] + (True,) + folded[p + 1 :]
        elif action.type is ActionType.CALL:
            spent[p] = min(max_spent, game.stack[p])
            called += spent[p] < game.stack[p]
        else:
            if game.is_limit:
                max_spent = min(max_spent + game.raise_size[self.round], game.stack[p])
            else:
                min_raise_to = max(min_raise_to, 2 * action.size - max_spent)
                max_spent = action.size
            spent[p] = max_spent
            called = int(max_spent < game.stack[p])

        new = object.__new__(State)
        new.game = game
        new.spent = tuple(spent)
        new.max_spent = max_spent
        new.min_raise_to = min_raise_to
        new.folded = folded
        new.actions = self.actions[:-1] + (self.actions[-1] + (action,),)
        new.actors = self.actors[:-1] + (self.actors[-1] + (p,),)
        new.round = self.round
        new.finished = False
        new._raises = self._raises + (action.type is ActionType.RAISE)
        new._betting = self._betting + str(action)
        # The actor was active; it is no longer if it folded or is now all-in.
        new._active = self._active - (folded[p] or spent[p] >= game.stack[p])
        new._called = called
        new._close_round()
        new._player = new._find_player()
        return new

    def _close_round(self) -> None:
        game = self.game
        if self.num_folded() + 1 >= game.num_players:
            self.finished = True
            return
        active = self.num_active()
        if self._called < active:
            return
        if active > 1 and self.round + 1 < game.num_rounds:
            self.round += 1
            self.actions += ((),)
            self.actors += ((),)
            self._betting += "/"
            self._raises = 0
            self._called = 0
            self.min_raise_to = self.max_spent + max(1, max(game.blind))
            return
        self.finished = True
        if active <= 1:
            # All-in run-out: jump to the last round so the whole board is dealt.
            missing = game.num_rounds - 1 - self.round
            self.actions += ((),) * missing
            self.actors += ((),) * missing
            self._betting += "/" * missing
            self.round = game.num_rounds - 1

    # -- results -------------------------------------------------------------------

    def betting_string(self) -> str:
        """Rounds 0..round separated by '/', as ``printBetting`` writes them."""
        return self._betting

    def is_showdown(self) -> bool:
        """Finished with more than one player not folded."""
        return self.finished and self.num_folded() + 1 < self.game.num_players

    def values(self, ranks: Sequence[int] | None = None) -> tuple[Fraction, ...]:
        """Chips won (+) or lost (-) per position; they sum to zero.

        ``ranks`` gives each position's hand rank (higher is better) and is needed
        only at a showdown; folded positions' ranks are ignored. Values are exact
        fractions because split pots can leave thirds (the reference prints them
        with six decimals)."""
        if not self.finished:
            raise IllegalActionError("values are defined only for a finished hand")
        n = self.game.num_players
        if not self.is_showdown():
            winner = self.folded.index(False)
            pot = sum(self.spent)
            return tuple(Fraction(pot - self.spent[p]) if p == winner else Fraction(-self.spent[p]) for p in range(n))
        if ranks is None or len(ranks) != n:
            raise ValueError(f"a showdown needs one hand rank per position, got {ranks!r}")
        strength = [-1 if self.folded[p] else ranks[p] for p in range(n)]
        remaining = list(self.spent)
        values = [Fraction(0)] * n
        contenders = [p for p in range(n) if remaining[p] > 0]
        while contenders:
            level = min(remaining[p] for p in contenders)
            best = max(strength[p] for p in contenders)
            winners = [p for p in contenders if strength[p] == best]
            share = Fraction(level * len(contenders), len(winners))
            for p in contenders:
                values[p] -= level
                if strength[p] == best:
                    values[p] += share
                remaining[p] -= level
            contenders = [p for p in contenders if remaining[p] > 0]
        return tuple(values)
