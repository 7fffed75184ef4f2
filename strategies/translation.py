"""Action translation for no-limit games: the real betting as a history of a
betting abstraction's tree, re-derived from scratch at every decision.

A no-limit strategy file is solved on a tree that keeps only fold, call, raises
to a few fractions of the pot and all-in (:class:`BettingAbstraction`). An agent
playing it must read the real betting as an abstract one (*translation*) and
turn its own abstract raises back into real, legal sizes.

**Sizes as pot fractions.** A raise to ``to`` chips in a state is the fraction
``(to - max_spent) / (pot + amount_to_call)`` of the pot after calling
(:func:`pot_fraction`), the unit :class:`BettingAbstraction` builds its raises
in. The real raise is measured in the real state, the abstract raises in the
abstract state the translated history has reached.

**Opponent raises: the pseudo-harmonic mapping** (Ganzfried & Sandholm 2013,
"Action translation in extensive-form games with large action spaces"). A real
raise of fraction ``x`` between two adjacent abstract fractions ``A < x < B``
maps to ``A`` with probability ``f(x) = ((B - x)(1 + A)) / ((B - A)(1 + x))``
and to ``B`` otherwise (:func:`pseudo_harmonic`); at or below the smallest
abstract raise it maps to the smallest, at or above the largest to the largest,
and a real all-in maps to the abstract all-in when the tree has one. The draw
is a uniform number derived from a hash of (agent seed, hand id, real betting
up to and including the raise) (:func:`translation_draw`): re-deriving the
history later in the hand maps every raise exactly as before, with no state
kept between decisions that could drift.

**Own raises.** An abstract raise becomes the same pot fraction of the *real*
pot (all-in stays all-in), rounded to a chip and clamped into
``state.raise_bounds()`` (:func:`real_raise`). Reading our own real raise back,
the abstract raise whose real image it is is taken (the all-in, or the
smallest, when clamping made several coincide); a raise that is no such image
(another agent's history) is translated like an opponent's.

**Divergence.** Translation changes chip counts, so the abstract and the real
hand can part: a real raise just short of all-in maps to the abstract all-in,
after which the abstract hand is over while the real one goes on. After every
action the walk checks that both agree on whether the hand is over, the round
and the player to act; from the first disagreement on the path is *diverged*
(``abstract`` is ``None``) and the agent falls back to calling, which is
always legal.

:func:`translate` walks the real betting once per decision. With a ``draw`` it
follows one path (what an agent does); without, it enumerates every
translation of the opponent's off-tree raises with its probability (what
:meth:`Strategy.policy` needs to state the agent's policy exactly).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from poker.state import CALL, FOLD, Action, ActionType, State
from strategies.cfr.tree.public import BettingAbstraction, tree_actions

__all__ = [
    "Path",
    "Step",
    "map_probabilities",
    "map_raise",
    "pot_fraction",
    "pseudo_harmonic",
    "real_action",
    "real_raise",
    "translate",
    "translation_draw",
]


def pseudo_harmonic(a: float, b: float, x: float) -> float:
    """The probability of mapping a bet of pot fraction ``x`` to the smaller
    abstract size ``a`` (else to ``b``), for ``0 <= a < b``: ``((b - x)(1 + a)) /
    ((b - a)(1 + x))``, clipped to 1 at or below ``a`` and 0 at or above ``b``."""
    if not 0 <= a < b:
        raise ValueError(f"abstract sizes must satisfy 0 <= a < b, got a={a!r}, b={b!r}")
    if x <= a:
        return 1.0
    if x >= b:
        return 0.0
    return ((b - x) * (1 + a)) / ((b - a) * (1 + x))


def map_probabilities(x: float, fractions: Sequence[float]) -> list[tuple[int, float]]:
    """Where a real bet of pot fraction ``x`` goes among ascending abstract
    ``fractions``: ``[(index, probability)]``, one entry (an exact size, or
    outside the abstract range) or two (the neighbours ``A < x < B``)."""
    if not fractions:
        raise ValueError("no abstract sizes to map to")
    if x <= fractions[0]:
        return [(0, 1.0)]
    last = len(fractions) - 1
    if x >= fractions[last]:
        return [(last, 1.0)]
    for i in range(last):
        a, b = fractions[i], fractions[i + 1]
        if x == a:
            return [(i, 1.0)]
        if a < x < b:
            p = pseudo_harmonic(a, b, x)
            return [(i, p), (i + 1, 1.0 - p)]
    return [(last, 1.0)]  # x == fractions[last], handled above; unreachable


def map_raise(x: float, fractions: Sequence[float], u: float) -> int:
    """The index :func:`map_probabilities` picks with the uniform draw ``u`` in
    [0, 1): the smaller neighbour when ``u < f(x)``."""
    choices = map_probabilities(x, fractions)
    if len(choices) == 1 or u < choices[0][1]:
        return choices[0][0]
    return choices[1][0]


def pot_fraction(state: State, raise_to: int) -> float:
    """A raise to ``raise_to`` chips in ``state`` as a fraction of the pot after
    calling (the unit of :class:`BettingAbstraction`)."""
    pot_after_call = sum(state.spent) + state.amount_to_call()
    return (raise_to - state.max_spent) / pot_after_call


def translation_draw(seed: int, hand_id: int, betting: str) -> float:
    """A uniform number in [0, 1) fixed by (seed, hand, betting so far): the same
    real betting maps the same way every time it is re-derived."""
    digest = hashlib.blake2b(f"{seed}:{hand_id}:{betting}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2.0**64


def real_action(abstract: State, action: Action, real: State) -> Action:
    """The real action for the abstract ``action`` taken in ``abstract`` when the
    real state is ``real``: a fold (a call where the real state has nothing to
    fold to), a call, a limit game's raise as it is, a no-limit raise by
    :func:`real_raise`."""
    if action.type is ActionType.FOLD:
        return FOLD if real.can_fold() else CALL
    if action.type is ActionType.CALL:
        return CALL
    return action if real.game.is_limit else real_raise(abstract, action, real)


def real_raise(abstract: State, action: Action, real: State) -> Action:
    """The real action for the abstract raise ``action`` taken in ``abstract``
    when the real state is ``real``: the same pot fraction of the real pot,
    clamped into ``real.raise_bounds()``; an abstract all-in is a real all-in.
    A call where the real state allows no raise."""
    bounds = real.raise_bounds()
    if bounds is None:
        return CALL
    if real.game.is_limit:
        return Action(ActionType.RAISE)
    low, high = bounds
    abstract_bounds = abstract.raise_bounds()
    if abstract_bounds is not None and action.size >= abstract_bounds[1]:
        return Action.raise_to(high)
    pot_after_call = sum(real.spent) + real.amount_to_call()
    to = real.max_spent + round(pot_fraction(abstract, action.size) * pot_after_call)
    return Action.raise_to(min(max(to, low), high))


@dataclass(frozen=True)
class Step:
    """One decision of the tracked player on a path: the abstract state it was
    taken in and the abstract actions (indices into ``tree_actions``) whose real
    image is the action taken (several when clamping made them coincide)."""

    abstract: State
    indices: tuple[int, ...]


@dataclass(frozen=True)
class Path:
    """One translation of the real betting: its ``probability`` (the product of
    the mapping's draws), the abstract state reached (``None`` once diverged),
    the tracked player's decisions on the way, and ``possible``: False when,
    after diverging, that player did something other than the fallback call (so
    this path cannot have produced the real betting)."""

    probability: float
    abstract: State | None
    steps: tuple[Step, ...] = ()
    possible: bool = True


def _agrees(abstract: State, real: State) -> bool:
    if abstract.finished or real.finished:
        return abstract.finished == real.finished
    return abstract.round == real.round and abstract.current_player() == real.current_player()


def _raise_choices(
    abstract: State, actions: list[Action], before: State, action: Action, own: bool
) -> list[tuple[int, float]] | tuple[int, ...]:
    """Abstract raise indices for the real raise ``action`` taken in ``before``:
    for our own raise the indices of abstract raises whose real image it is (a
    tuple; empty if none), else the mapping's ``[(index, probability)]``."""
    raises = [i for i, a in enumerate(actions) if a.type is ActionType.RAISE]
    if own:
        images = tuple(i for i in raises if real_raise(abstract, actions[i], before) == action)
        if images:
            return images
    bounds = before.raise_bounds()
    abstract_bounds = abstract.raise_bounds()
    if bounds is not None and abstract_bounds is not None and action.size >= bounds[1]:
        if actions[raises[-1]].size >= abstract_bounds[1]:
            return [(raises[-1], 1.0)]  # all-in to all-in
    fractions = [pot_fraction(abstract, actions[i].size) for i in raises]
    x = pot_fraction(before, action.size)
    return [(raises[k], p) for k, p in map_probabilities(x, fractions) if p > 0]


def translate(
    real: State,
    abstraction: BettingAbstraction,
    *,
    player: int,
    draw: Callable[[str], float] | None = None,
) -> list[Path]:
    """The real betting of ``real`` (a no-limit state) read as betting of the
    abstraction's tree, re-derived from the start of the hand. ``draw(betting)``
    gives the uniform number for the opponent's raise that ends ``betting``
    (e.g. :func:`translation_draw` with the agent's seed and hand id): one path.
    Without it, every translation with its probability (they sum to 1).
    ``player``'s own decisions are recorded in each path's ``steps`` and its own
    raises read back as the abstract raises they came from."""
    game = real.game
    paths = [Path(1.0, State(game))]
    before = State(game)
    for round_actions in real.actions:
        for action in round_actions:
            actor = before.current_player()
            after = before.apply(action)
            own = actor == player
            grown: list[Path] = []
            for path in paths:
                abstract = path.abstract
                if abstract is None:
                    possible = path.possible and (not own or action == CALL)
                    grown.append(Path(path.probability, None, path.steps, possible))
                    continue
                actions = tree_actions(abstract, abstraction)
                options: list[tuple[int, float]]
                indices: tuple[int, ...]
                if action.type is ActionType.RAISE:
                    if not any(a.type is ActionType.RAISE for a in actions):
                        grown.append(Path(path.probability, None, path.steps, path.possible))
                        continue
                    choices = _raise_choices(abstract, actions, before, action, own)
                    if isinstance(choices, tuple):
                        options, indices = [(_representative(abstract, actions, choices), 1.0)], choices
                    else:
                        options, indices = choices, ()
                else:
                    same = [i for i, a in enumerate(actions) if a.type is action.type]
                    if not same:
                        grown.append(Path(path.probability, None, path.steps, path.possible))
                        continue
                    options, indices = [(same[0], 1.0)], (same[0],)
                if draw is not None and len(options) > 1:
                    u = draw(after.betting_string())
                    options = [(options[0][0] if u < options[0][1] else options[1][0], 1.0)]
                for index, p in options:
                    steps = path.steps + (Step(abstract, indices or (index,)),) if own else path.steps
                    child = abstract.apply(actions[index])
                    grown.append(
                        Path(path.probability * p, child if _agrees(child, after) else None, steps, path.possible)
                    )
            paths = grown
            before = after
    return paths


def _representative(abstract: State, actions: list[Action], images: tuple[int, ...]) -> int:
    """Of abstract raises with one real image, the all-in if it is one, else the smallest."""
    bounds = abstract.raise_bounds()
    if bounds is not None and actions[images[-1]].size >= bounds[1]:
        return images[-1]
    return images[0]
