"""A hand as a poker player reads it: named streets, each seat's chips in front
of it, actions in words with street amounts, and the bet presets of an online
room.

ACPC counts a raise as the total a player has put in over the whole hand
("r650"); a player at a table counts this street: the chips in front of each
seat, "bets 4", "raises to 12". Blinds are live bets, so they count as
pre-flop chips in front; antes (every seat posting the same: Kuhn, Leduc) go
to the pot, so the first wager there is a bet, as those games' rules call it.
So a street's amounts here are its chips beyond the street's *base*, what
every player still in had put in when it began (all equal then, but the
blinds: stacks reset every hand and a round ends only when the bets are
matched). The raise sizes sent to
the dealer stay hand totals; frontends add :func:`street_base` to what the
person picks. Every amount is replayed through :class:`poker.state.State`, so
the words and the legality come from one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from poker.gamedef import Game
from poker.state import ActionType, State
from strategies.cfr.tree.public import BettingAbstraction

__all__ = [
    "HOLDEM_STREETS", "Step", "Street", "big_blind", "round_names", "streets", "street_base", "raise_presets", "verb", "describe"
]

#: Texas hold'em's streets, by the cards each deals to the board.
HOLDEM_STREETS: Final = ("pre-flop", "flop", "turn", "river")
#: Other games' rounds by their board cards: Leduc's one board card is its flop,
#: Kuhn's single round has no board at all.
_NAMES: Final = {(0, 3, 1, 1): HOLDEM_STREETS, (0, 1): ("pre-flop", "flop"), (0,): ("betting",)}
#: The pot-fraction presets, sized as the bots' betting abstractions size them
#: (of the pot after calling, clamped into the legal range).
_FRACTIONS: Final = (("½ pot", BettingAbstraction((0.5,), all_in=False)),
                     ("⅔ pot", BettingAbstraction((2 / 3,), all_in=False)),
                     ("pot", BettingAbstraction((1.0,), all_in=False)))
#: The common raise: this many times the street's largest bet.
_TIMES: Final = 2.5
#: Third-person verbs of each action, and the person's own when they are
#: "you" (``arena play``'s default name): "you raise to 3", not "you raises".
_VERBS: Final = {"fold": "folds", "check": "checks", "call": "calls", "bet": "bets", "raise": "raises to"}
_YOUR_VERBS: Final = {"fold": "fold", "check": "check", "call": "call", "bet": "bet", "raise": "raise to"}


def round_names(game: Game) -> tuple[str, ...]:
    """The name of each betting round of ``game``: pre-flop/flop/turn/river in
    hold'em, pre-flop/flop in Leduc, "betting" in Kuhn, "round N" elsewhere."""
    names = _NAMES.get(game.num_board_cards)
    return names if names is not None else tuple(f"round {r + 1}" for r in range(game.num_rounds))


def big_blind(game: Game) -> int | None:
    """The big blind, the unit a table may count in; None where every seat
    posts the same ante (Kuhn, Leduc), as :func:`poker.stats.unit_of` decides."""
    return game.big_blind if len(set(game.blind)) > 1 else None


@dataclass(frozen=True)
class Step:
    """One action: who (``position`` in the hand), what (fold, check, call, bet,
    raise), ``amount`` in street chips (paid for a call, the street total for a
    bet or raise, 0 otherwise), whether it left the player all-in, and the table
    after it: each position's chips in front (``front``) and the ``pot`` (a
    replay draws these)."""

    position: int
    action: str
    amount: int
    all_in: bool
    front: tuple[int, ...]
    pot: int


@dataclass(frozen=True)
class Street:
    """One betting round: its steps, its base (chips each live player had in
    when it began), each position's chips in front and the pot when it began
    (``start``, ``start_pot``) and at its end, or now (``front``)."""

    base: int
    steps: tuple[Step, ...]
    front: tuple[int, ...]
    start: tuple[int, ...]
    start_pot: int


def streets(final: State) -> list[Street]:
    """Every round of ``final`` up to its current one, replayed from the start."""
    state = State(final.game)
    result: list[Street] = []
    for round_ in range(final.round + 1):
        base = _antes(final.game) if round_ == 0 else max(state.spent)
        start, start_pot = _front(state, base), sum(state.spent)
        steps = []
        for action, position in zip(final.actions[round_], final.actors[round_]):
            owed = state.amount_to_call()
            in_front = state.spent[position] - base
            street_max = state.max_spent - base
            state = state.apply(action)
            paid = state.spent[position] - base
            if action.type is ActionType.FOLD:
                kind, amount = "fold", 0
            elif action.type is ActionType.CALL:
                kind, amount = ("call", paid - in_front) if owed else ("check", 0)
            else:
                kind, amount = ("raise" if street_max else "bet"), paid
            all_in = amount > 0 and not final.game.is_limit and state.is_all_in(position)
            steps.append(Step(position, kind, amount, all_in, _front(state, base), sum(state.spent)))
        result.append(Street(base, tuple(steps), _front(state, base), start, start_pot))
    return result


def _antes(game: Game) -> int:
    """The ante every seat posts (the pot's, not a bet: no chips in front), or
    0 in a game with blinds, which are bets of the first round."""
    return game.blind[0] if big_blind(game) is None else 0


def _front(state: State, base: int) -> tuple[int, ...]:
    """Each position's chips beyond the street's base (folded ones keep what they left in front)."""
    return tuple(max(0, spent - base) for spent in state.spent)


def street_base(state: State) -> int:
    """What each live player had put in when ``state``'s round began (in the
    first round the ante, or 0 where blinds are its own chips): the hand total
    of a raise is this plus the street amount a person picks."""
    return streets(state)[-1].base


def raise_presets(state: State) -> list[tuple[str, int]]:
    """The bet sizes of an online room's buttons as (label, raise-to hand
    total), each legal: the minimum, ½, ⅔ and 1 pot, 2.5 times the street's
    largest bet (where there is one to multiply) and all-in; [] when no raise
    is legal. Sizes that clamp to the same total are all kept, so the buttons
    stay in their places."""
    bounds = state.raise_bounds()
    if bounds is None:
        return []
    low, high = bounds
    presets = [("min", low)]
    presets += [(label, abstraction.raise_to_sizes(state)[0]) for label, abstraction in _FRACTIONS]
    base = street_base(state)
    street_max = state.max_spent - base
    if street_max > 0:
        presets.append((f"{_TIMES:g}×", min(max(base + round(_TIMES * street_max), low), high)))
    presets.append(("all-in", high))
    return presets


def verb(name: str, step: Step) -> str:
    """What ``name`` did in ``step``: "raises to", "calls", "checks" (the
    amount, if the step has one, follows it)."""
    return (_YOUR_VERBS if name == "you" else _VERBS)[step.action]


def describe(name: str, step: Step) -> str:
    """``step`` in words: "alice raises to 300", "bob calls 200 (all-in)",
    "you check" (a page that counts in big blinds builds the same from
    :func:`verb` and the amount)."""
    text = f"{name} {verb(name, step)}" + (f" {step.amount}" if step.amount else "")
    return text + " (all-in)" if step.all_in else text
