"""Local best response (LBR): a sampled lower bound on the exploitability of any
strategy that states its policy (Lisý & Bowling, 'Equilibrium Approximation Quality of
Current No-Limit Poker Bots', 2017).

LBR plays real hands (:mod:`poker.state`, :mod:`poker.deal`) in one seat against
the target strategy in the other. It tracks the target's *range*, a distribution
``pi`` over the target's private hands (:func:`poker.deal.private_hands`
order): uniform at the start over the hands that avoid LBR's hole cards, zeroed
on hands that clash with each board card as it is dealt, and after every target
action ``a`` at public state ``s`` updated by Bayes, ``pi(h) ∝ pi(h) sigma(s, h,
a)`` with ``sigma`` the target's :meth:`Strategy.policy` (one call for all hands).
The target's action itself is drawn from its own row of that same answer.

At each of its decisions on an *acting* round LBR picks, with ``pot`` the chips
in the pot and ``asked`` what it must add to call (chips already in are sunk):

* ``U(call) = wp * pot - (1 - wp) * asked``, ``wp`` its win probability (ties
  count 1/2) against ``pi`` over every remaining board (exact enumeration; a
  showdown on the last round), assuming no more betting;
* for each bet size (``x`` chips beyond the call): ``fp = sum_h pi(h)
  sigma(s', h, fold)`` in the state ``s'`` after the bet, ``pi'(h) ∝ pi(h) (1 -
  sigma(s', h, fold))``, ``wp'`` against ``pi'``, and ``U = fp * pot + (1 - fp)
  (wp' (pot + x) - (1 - wp') (asked + x))``;
* the argmax (ties go to the call, then the smaller bet) if it is positive,
  otherwise fold (check when there is nothing to call).

On the other rounds it checks or calls. Rounds are 1-based as in the paper
(hold'em: 1 preflop, 2 flop, 3 turn, 4 river; ``3-4`` acts on turn and river).

Action sets (``--actions``):

======  ===================================================================
fc      fold, call
fcpa    fold, call, pot-size raise (raise by the pot after calling), all-in
56      fold, call, all-in and 55 raises of ``0.05 * 1.15**k`` times the pot
        after calling, k = 0..54 (0.05 to 94.8 pots; the paper's 56-bet set);
        a size below the minimum raise plays the minimum, above the stack all-in
======  ===================================================================

Limit games have one raise size, so ``fcpa`` and ``56`` both mean fold, call,
raise there.

Win probabilities are exact by enumerating the undealt board cards whenever the
run-outs number at most :data:`MAX_ENUMERATED` (every round of Leduc; hold'em
from the flop on: C(47, 2) = 1081 run-outs). Hold'em preflop (C(50, 5) run-outs)
draws :data:`SAMPLED_RUNOUTS` uniform run-outs from the hand's own generator, so
results stay reproducible; LBR is still a legal strategy, so its value remains a
lower bound on the best response.

**Duplicate pairs and reproducibility.** Hand ``i`` deals the cards the
reference dealer deals as hand ``i`` of seed ``S`` (:class:`poker.deal.Dealer`)
and is played twice, LBR in position 0 then in position 1 (cards follow
positions, so the agents swap cards). Each (hand, seating) draws the target's
actions and any sampled run-outs from ``numpy.random.default_rng([S, i,
seating])``, so the results do not depend on how hands are split among worker
processes. The estimate is the mean over hands of the two seatings' average,
with its 95% interval (:func:`poker.stats.mean_ci`).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Final

import numpy as np
import numpy.typing as npt

from poker import _eval_kernels as _k
from poker.deal import Deal, Dealer, private_hands
from poker.gamedef import Game
from poker.hand_rank import hand_values
from poker.state import CALL, FOLD, Action, ActionType, State
from poker.stats import Estimate, mean_ci
from strategies.base import PublicState, Strategy, make_strategy
from strategies.cfr.tree.public import BettingAbstraction

__all__ = [
    "ACTION_SETS",
    "FRACTIONS_56",
    "MAX_ENUMERATED",
    "SAMPLED_RUNOUTS",
    "LbrError",
    "LbrConfig",
    "LbrResult",
    "Rollouts",
    "parse_streets",
    "check_target",
    "initial_range",
    "bayes_update",
    "raise_candidates",
    "Decision",
    "decide",
    "lbr_hand",
    "play_hand",
    "play_hands",
    "run_lbr",
]

#: The action sets of the paper (Table 3): names accepted by ``--actions``.
ACTION_SETS: Final = ("fc", "fcpa", "56")
#: The 55 pot fractions of the 56-bet set (with all-in: 56 bets).
FRACTIONS_56: Final = tuple(0.05 * 1.15**k for k in range(55))
#: LBR's raises as betting abstractions (pot fractions clamped into the legal range, plus all-in).
_FCPA: Final = BettingAbstraction((1.0,))
_FRACTIONS_56_ALL_IN: Final = BettingAbstraction(FRACTIONS_56)
#: The pot-size raise alone (clamped), a column asked of the target.
_POT_RAISE: Final = BettingAbstraction((1.0,), all_in=False)
#: Largest number of board run-outs enumerated exactly for a win probability.
MAX_ENUMERATED: Final = 20_000
#: Run-outs drawn when there are more (hold'em preflop).
SAMPLED_RUNOUTS: Final = 1_000


class LbrError(ValueError):
    """An LBR run that cannot be made: a game that is not heads-up, bad rounds,
    or a target without a usable :meth:`Strategy.policy`."""


@dataclass(frozen=True)
class LbrConfig:
    """LBR's action set (one of :data:`ACTION_SETS`) and its acting rounds
    (0-based round indices; every other round it checks or calls)."""

    actions: str = "fcpa"
    rounds: frozenset[int] = frozenset({0, 1, 2, 3})

    def __post_init__(self) -> None:
        if self.actions not in ACTION_SETS:
            raise LbrError(f"action set {self.actions!r} is not one of {', '.join(ACTION_SETS)}")


def parse_streets(text: str, num_rounds: int) -> frozenset[int]:
    """``"3-4"`` / ``"1,3"`` / ``"2"`` (1-based, as in the paper) -> 0-based rounds."""
    rounds: set[int] = set()
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise LbrError(f"streets {text!r}: {part!r} is not N or N-M (1-based rounds)")
        low = int(match[1])
        high = int(match[2] or low)
        if not 1 <= low <= high <= num_rounds:
            raise LbrError(f"streets {text!r}: rounds run from 1 to {num_rounds} in this game")
        rounds.update(range(low - 1, high))
    return frozenset(rounds)


# -- ranges ----------------------------------------------------------------------


#: The evaluator's bitmask of each card id (:func:`poker._eval_kernels.card_bit`).
_CARD_BITS: Final = [int(b) for b in _k.cardsets(np.arange(52, dtype=np.int64)[:, None])]


@cache
def _hand_sets(game: Game) -> tuple[npt.NDArray[np.int64], dict[tuple[int, ...], int]]:
    """Each private hand as the evaluator's card bitmask, and the row of each (sorted) hand."""
    hands = private_hands(game)
    sets: npt.NDArray[np.int64] = _k.cardsets(hands)
    rows = {tuple(int(c) for c in hand): i for i, hand in enumerate(hands)}
    return sets, rows


def _mask(cards: Sequence[int]) -> int:
    bits = 0
    for card in cards:
        bits |= _CARD_BITS[card]
    return bits


def _avoiding(game: Game, cards: Sequence[int]) -> npt.NDArray[np.bool_]:
    """Which private hands share no card with ``cards``."""
    sets, _ = _hand_sets(game)
    result: npt.NDArray[np.bool_] = (sets & _mask(cards)) == 0
    return result


def initial_range(game: Game, lbr_hole: Sequence[int], board: Sequence[int] = ()) -> npt.NDArray[np.float64]:
    """Uniform over the target's hands that avoid LBR's hole cards and the board."""
    live = _avoiding(game, tuple(lbr_hole) + tuple(board)).astype(np.float64)
    normalised: npt.NDArray[np.float64] = live / live.sum()
    return normalised


def bayes_update(
    range_: npt.NDArray[np.float64], likelihood: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``pi(h) ∝ pi(h) * likelihood(h)``, renormalised (unchanged if all zero)."""
    posterior = range_ * np.where(range_ > 0, likelihood, 0.0)
    total = posterior.sum()
    if total <= 0:
        return range_
    normalised: npt.NDArray[np.float64] = posterior / total
    return normalised


# -- win probabilities -------------------------------------------------------------


class Rollouts:
    """LBR's showdown outcome against each target hand over the remaining boards:
    ``wins[h]`` (ties 1/2) and ``counts[h]`` summed over the run-outs that avoid
    hand ``h``; :meth:`wp` weighs them by a range (exact card removal)."""

    def __init__(
        self, game: Game, hole: Sequence[int], board: Sequence[int], rng: np.random.Generator | None = None
    ) -> None:
        hand_sets, _ = _hand_sets(game)
        known = set(hole) | set(board)
        undealt = [c for c in game.deck() if c not in known]
        to_deal = game.total_board_cards(game.num_rounds - 1) - len(board)
        completions: list[tuple[int, ...]]
        if math.comb(len(undealt), to_deal) <= MAX_ENUMERATED:
            completions = list(combinations(undealt, to_deal))
        else:
            generator = rng if rng is not None else np.random.default_rng(0)
            completions = [
                tuple(int(c) for c in generator.choice(undealt, size=to_deal, replace=False))
                for _ in range(SAMPLED_RUNOUTS)
            ]
        self.runouts = len(completions)
        runouts = np.array(completions, dtype=np.int64).reshape(len(completions), to_deal)
        wins, counts = _k.runout_outcomes(_mask(hole), _mask(board), runouts, hand_sets)
        hero_free = _avoiding(game, tuple(hole))  # target hands sharing a card with ours never occur
        self.wins = wins * hero_free
        self.counts = counts * hero_free

    def wp(self, range_: npt.NDArray[np.float64]) -> float:
        """Win probability (ties 1/2) against ``range_``; 0 for an empty range."""
        total = float(range_ @ self.counts)
        return float(range_ @ self.wins) / total if total > 0 else 0.0


# -- the target's policy --------------------------------------------------------------


def _columns(target: Strategy, state: State, extra: Sequence[Action] = ()) -> tuple[Action, ...]:
    """Columns to ask the target's policy for: the default legal actions, the
    pot-size raise, the actions the target says it plays (``actions(state)``,
    as the equilibrium agent has), and ``extra``; legal ones, without repeats."""
    wanted = list(state.legal_actions())
    if not state.game.is_limit:
        wanted.extend(Action.raise_to(size) for size in _POT_RAISE.raise_to_sizes(state))
    own: Callable[[State], Sequence[Action]] | None = getattr(target, "actions", None)
    if callable(own):
        wanted.extend(own(state))
    wanted.extend(extra)
    seen: dict[Action, None] = {}
    for action in wanted:
        if action not in seen and state.is_legal(action):
            seen[action] = None
    return tuple(seen)


def _policy(
    target: Strategy, state: State, board: tuple[int, ...], columns: tuple[Action, ...]
) -> npt.NDArray[np.float64]:
    try:
        answer = np.asarray(target.policy(PublicState(state, board, columns)), dtype=np.float64)
    except NotImplementedError as error:
        raise LbrError(f"LBR needs the target's action probabilities for every private hand: {error}") from error
    expected = (len(private_hands(state.game)), len(columns))
    if answer.shape != expected:
        raise LbrError(f"target policy at {state.betting_string()!r} has shape {answer.shape}, expected {expected}")
    return answer


# -- LBR's decision -----------------------------------------------------------------


def raise_candidates(state: State, action_set: str) -> list[Action]:
    """LBR's raises in ``state`` for ``action_set`` (legal, without repeats)."""
    bounds = state.raise_bounds()
    if action_set == "fc" or bounds is None:
        return []
    if state.game.is_limit:
        return [Action(ActionType.RAISE)]
    abstraction = _FCPA if action_set == "fcpa" else _FRACTIONS_56_ALL_IN
    return [Action.raise_to(size) for size in abstraction.raise_to_sizes(state)]


@dataclass(frozen=True)
class Decision:
    """LBR's choice and the local utilities it compared (``utilities[action]``)."""

    action: Action
    wp: float
    utilities: dict[Action, float]


def decide(
    state: State,
    board: tuple[int, ...],
    range_: npt.NDArray[np.float64],
    target: Strategy,
    rollouts: Rollouts,
    action_set: str,
) -> Decision:
    """LBR's greedy choice (module docstring) for the player to act in ``state``,
    facing the target whose range is ``range_``."""
    pot = float(sum(state.spent))
    asked = float(state.amount_to_call())
    wp = rollouts.wp(range_)
    utilities = {CALL: wp * pot - (1 - wp) * asked}
    for bet in raise_candidates(state, action_set):
        after = state.apply(bet)
        extra = float(after.max_spent - state.max_spent)
        columns = _columns(target, after)
        fold_rows = _policy(target, after, board, columns)[:, columns.index(FOLD)] if FOLD in columns else None
        if fold_rows is None:
            fp, continuing = 0.0, range_
        else:
            fold_rows = np.where(range_ > 0, fold_rows, 0.0)
            fp = float(range_ @ fold_rows)
            continuing = range_ * (1.0 - fold_rows)
        wp_call = rollouts.wp(continuing) if fp < 1 else 0.0
        called = wp_call * (pot + extra) - (1 - wp_call) * (asked + extra)
        utilities[bet] = fp * pot + (1 - fp) * called
    best = max(utilities, key=lambda a: (utilities[a], -list(utilities).index(a)))
    if utilities[best] <= 0 and state.can_fold():
        best = FOLD
    return Decision(best, wp, utilities)


# -- playing hands -------------------------------------------------------------------


def play_hand(game: Game, target: Strategy, deal: Deal, lbr_position: int, config: LbrConfig, rng: np.random.Generator) -> float:
    """Play one hand with LBR in ``lbr_position``; LBR's winnings in chips."""
    state = lbr_hand(game, target, deal, lbr_position, config, rng)
    return float(hand_values(state, deal.hole, deal.board)[lbr_position])


def lbr_hand(
    game: Game,
    target: Strategy,
    deal: Deal,
    lbr_position: int,
    config: LbrConfig,
    rng: np.random.Generator,
) -> State:
    """:func:`play_hand`'s hand, its final state (the betting: what a variance
    reduction such as AIVAT replays)."""
    _, rows = _hand_sets(game)
    lbr_hole = deal.hole[lbr_position]
    target_row = rows[tuple(sorted(deal.hole[1 - lbr_position]))]
    state = State(game)
    range_ = initial_range(game, lbr_hole)
    seen_board = 0
    rollouts: dict[int, Rollouts] = {}
    while not state.finished:
        board = deal.board[: game.total_board_cards(state.round)]
        if len(board) > seen_board:  # new board cards: card removal
            range_ = bayes_update(range_, _avoiding(game, board).astype(np.float64))
            seen_board = len(board)
        if state.current_player() == lbr_position:
            if state.round in config.rounds:
                if len(board) not in rollouts:
                    rollouts[len(board)] = Rollouts(game, lbr_hole, board, rng)
                action = decide(state, board, range_, target, rollouts[len(board)], config.actions).action
            else:
                action = CALL
        else:
            columns = _columns(target, state)
            policy = _policy(target, state, board, columns)
            row = np.clip(policy[target_row], 0.0, None)
            choice = int(rng.choice(len(columns), p=row / row.sum()))
            action = columns[choice]
            range_ = bayes_update(range_, policy[:, choice])
        state = state.apply(action)
    return state


@cache
def _target(spec: str, game: Game, seed: int) -> Strategy:
    return make_strategy(spec, game, seed=seed)


def play_hands(game: Game, spec: str, seed: int, config: LbrConfig, start: int, stop: int) -> npt.NDArray[np.float64]:
    """Hands ``start..stop-1`` of seed ``seed``, each in both seatings:
    ``float64[stop - start, 2]``, LBR's chips with LBR in position 0 and 1."""
    target = _target(spec, game, seed)
    dealer = Dealer(game, seed=seed)
    for _ in range(start):
        dealer.next_hand()
    out = np.zeros((stop - start, 2))
    for i in range(start, stop):
        deal = dealer.next_hand()
        for position in (0, 1):
            rng = np.random.default_rng([seed, i, position])
            out[i - start, position] = play_hand(game, target, deal, position, config, rng)
    return out


def _chunk(job: tuple[Game, str, int, LbrConfig, int, int]) -> npt.NDArray[np.float64]:
    return play_hands(*job)


@dataclass(frozen=True)
class LbrResult:
    """LBR's winnings per hand and seating (``values[i, position]``, chips) and
    the duplicate estimate (chips per hand)."""

    values: npt.NDArray[np.float64]
    seconds: float

    @property
    def estimate(self) -> Estimate:
        return mean_ci(self.values.mean(axis=1))

    def position(self, position: int) -> Estimate:
        return mean_ci(self.values[:, position])


def check_target(game: Game, spec: str, hands: int, *, seed: int = 1) -> None:
    """Fail before any hand is played (and before a caller prints what it is about
    to run) on what :func:`run_lbr` cannot do.

    Raises:
        LbrError: not a two-player game, or fewer than 2 hands.
        StrategyError: a spec that does not build.
    """
    if game.num_players != 2:
        raise LbrError(f"LBR is defined for two-player games; this one has {game.num_players}")
    if hands < 2:
        raise LbrError("LBR needs at least 2 hands for an interval")
    make_strategy(spec, game, seed=seed)


def run_lbr(
    game: Game,
    spec: str,
    hands: int,
    *,
    seed: int = 1,
    config: LbrConfig = LbrConfig(),
    workers: int = 1,
    progress: Callable[[int], object] | None = None,
    chunk: int = 25,
) -> LbrResult:
    """LBR against the strategy ``spec`` over ``hands`` duplicate pairs.
    ``progress(n)`` is called as each chunk of ``n`` hands finishes.

    Raises:
        LbrError: as :func:`check_target`, or a target whose policy LBR cannot
            read (raised from the first hand played).
        StrategyError: as :func:`check_target`.
    """
    check_target(game, spec, hands, seed=seed)
    started = time.perf_counter()
    jobs = [(game, spec, seed, config, a, min(a + chunk, hands)) for a in range(0, hands, chunk)]
    parts: list[npt.NDArray[np.float64]] = []
    # With workers, the first chunk still plays here, before the pool starts: the
    # numba kernels a hand needs compile once, in this process, saying so once (the
    # workers fork with them, or load them from the cache), not once in every worker.
    here, pooled = (jobs, []) if workers <= 1 else (jobs[:1], jobs[1:])
    for job in here:
        parts.append(_chunk(job))
        if progress:
            progress(job[5] - job[4])
    if pooled:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for job, part in zip(pooled, pool.map(_chunk, pooled)):
                parts.append(part)
                if progress:
                    progress(job[5] - job[4])
    return LbrResult(np.concatenate(parts), time.perf_counter() - started)
