"""Imaginary observations of one hand: importance-sampling estimates of a strategy's value (Johanson ch7).

One player's expected value under a strategy σ, estimated from hands that were
actually played by a strategy σ̂ of the same player (σ = σ̂: *on-policy*; else
*off-policy*) against an opponent we know nothing about. Each observed hand z
stands for a set of *imaginary* hands z′ whose probability under σ relative to
σ̂ we can compute from our own strategies alone (Johanson Eq 7.3,
``V_U(z) = Σ_{z′ ∈ U⁻¹(z)} V(z′) π^σ(z′) / π^σ̂(U(z′))``): the opponent's and
chance's terms cancel, so the weights come only from ``policy()`` of σ and σ̂.
Four choices of imaginary hands (thesis §7.3, examples 1–4):

``basic``
    Only the observed hand, weighted by ``π_σ(z | h) / π_σ̂(z | h)`` along our
    own actions with our real holding h (1 on-policy: the observed money).
``early-folds``
    Also every point of the observed betting where we faced a bet and could
    have folded: the fold's value (minus what we had put in) weighted by
    ``π_σ(p | h) σ(fold | p, h) / π_σ̂(p | h)``; the observed hand keeps its
    basic weight unless it ended with our own fold, which is one of those
    points. (Folds only: the thesis' footnote-3 variant that also imagines a
    closing call on the last round is not implemented.)
``all-cards``
    Every holding h′ of ours that the opponent cannot tell from the real one:
    the observed betting, the opponent's cards and the board kept, ours replaced
    by each holding that clashes with neither, weighted by
    ``π_σ(z | h′) / Σ_{h″} π_σ̂(z | h″)`` (the deal's uniform probability
    cancels).
``all-cards+early-folds``
    Both: at each fold point p the fold over every holding consistent with the
    opponent's cards and the board dealt by p, weighted by
    ``Σ_{h′} π_σ(p | h′) σ(fold | p, h′) / Σ_{h″} π_σ̂(p | h″)``; plus the
    observed betting over all holdings unless it ended with our fold.

Unbiasedness (Theorem 9): with **full information** (both players' cards known
in every hand, as in a dealer's log) all four are unbiased on-policy, and
off-policy whenever σ̂ plays every action σ can play with positive probability
(at every decision and holding; a card-blind σ̂ such as ``random`` does, a
deterministic one such as ``always-raise`` does not: then ``basic`` and
``early-folds`` are biased, ``all-cards`` only where no holding of σ̂ takes
the betting σ takes).

**Partial information** (``information="partial"``: what a player sees in a
match: the opponent's cards only at a showdown) uses the thesis' adaptation
(§7.3.1): imaginary holdings are those consistent with the board only, the
weights unchanged. ``basic`` and ``early-folds`` never need the opponent's
cards and are unchanged. ``all-cards`` is unchanged on-policy (the fold's value
does not depend on the cards and the weights sum to 1) but **biased
off-policy**: the holdings that clash with the hidden cards are counted.
``all-cards+early-folds`` is **biased** even on-policy, since its fold-point
sums over holdings include impossible ones. Use it for choosing among
strategies (a portfolio), not for reporting a result.

The observed hand's value must be the one its betting and cards give (checked:
a wrong game or position is an error). Two-player games only. Policies are
asked once per distinct public state (betting and board) and cached for the
call; columns are ``PublicState(state, board).actions`` (the legal actions),
which must contain the observed action (no-limit raise sizes other than the
minimum and all-in cannot be weighted).

Why in ``strategies/``: the portfolio agent (:mod:`strategies.portfolio`)
evaluates its components with these estimators after every hand it plays, so an
agent needs them; :mod:`analysis.importance` runs the same :class:`HandEvaluator`
over a whole table of logged hands. Here both reach it, and ``strategies/`` never
imports ``analysis/`` (the layering of ``tests/test_layering.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.excerpt import quote
from poker.gamedef import Game
from poker.protocol import ProtocolError, parse_betting
from poker.state import FOLD, Action, State
from strategies.base import PublicState, Strategy

__all__ = [
    "ESTIMATORS",
    "INFORMATION",
    "CachedPolicy",
    "HandEvaluator",
    "ImportanceError",
    "Policy",
    "PolicyFn",
    "card_bits",
    "check_value",
    "holding_bits",
    "rank_cases",
    "replay_hand",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
PolicyFn = Callable[[PublicState], FloatArray]
#: A strategy (through :meth:`Strategy.policy`) or a bare policy function.
Policy = Strategy | PolicyFn

#: The estimators, in the order of :meth:`HandEvaluator.hand`'s answer (and of
#: :meth:`analysis.importance.Estimates.columns`).
ESTIMATORS: Final = ("basic", "early-folds", "all-cards", "all-cards+early-folds")
#: Full information (every card known) or partial (the opponent's only at a showdown).
INFORMATION: Final = ("full", "partial")
#: Values in logs carry 6 decimals.
_VALUE_TOLERANCE: Final = 1e-5


class ImportanceError(ValueError):
    """Hands that cannot be weighted: a value or action the strategies cannot explain."""


# -- policies -------------------------------------------------------------------------


class CachedPolicy:
    """A policy asked once per public state (betting, board). Its columns are the
    legal actions :class:`PublicState` lists by default, and with a strategy
    that names the actions it plays (``actions(state)``, as the no-limit agents
    that raise other sizes do) those too."""

    def __init__(self, policy: Policy, game: Game) -> None:
        self.ask: PolicyFn = policy.policy if isinstance(policy, Strategy) else policy
        self.own: Callable[[State], Sequence[Action]] | None = getattr(policy, "actions", None)
        self.rows = len(private_hands(game))
        self.cache: dict[tuple[str, tuple[int, ...]], tuple[FloatArray, tuple[Action, ...]]] = {}

    def __call__(self, state: State, board: tuple[int, ...]) -> tuple[FloatArray, tuple[Action, ...]]:
        key = (state.betting_string(), board)
        hit = self.cache.get(key)
        if hit is None:
            columns = dict.fromkeys(state.legal_actions())
            if self.own is not None and not state.game.is_limit:
                columns.update(dict.fromkeys(a for a in self.own(state) if state.is_legal(a)))
            public = PublicState(state, board, tuple(columns))
            answer = np.asarray(self.ask(public), dtype=np.float64)
            if answer.shape != (self.rows, len(public.actions)):
                raise ImportanceError(
                    f"policy at {key[0]!r} has shape {answer.shape}; expected ({self.rows}, {len(public.actions)})"
                )
            hit = (answer, public.actions)
            self.cache[key] = hit
        return hit



# -- replaying the betting ------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    """A betting string replayed: the state before each action, and the end."""

    steps: tuple[tuple[State, Action], ...]
    final: State


def replay_hand(game: Game, betting: str) -> _Line:
    try:
        final = parse_betting(betting, game)
    except ProtocolError as error:
        raise ImportanceError(f"betting {quote(betting)}: {error}") from None
    if not final.finished:
        raise ImportanceError(f"betting {quote(betting)} does not finish the hand")
    steps = []
    state = State(game)
    for actions in final.actions:
        for action in actions:
            steps.append((state, action))
            state = state.apply(action)
    return _Line(tuple(steps), final)


@dataclass(frozen=True)
class _Reach:
    """Our part of the reach, for every holding, of one (position, betting, board)."""

    sigma: FloatArray  # [H] pi_i^sigma(z | h)
    played: FloatArray  # [H] pi_i^sigma_hat(z | h)
    fold_sigma: FloatArray  # [J, H] pi_i^sigma(p_j | h) sigma(fold | p_j, h)
    fold_played: FloatArray  # [J, H] pi_i^sigma_hat(p_j | h)
    fold_value: FloatArray  # [J] our chips after folding at p_j
    fold_board: IntArray  # [J] board cards dealt by p_j
    we_folded: bool


def holding_bits(cards: npt.NDArray[np.int8]) -> npt.NDArray[np.uint64]:
    """Card-set bitmasks of rows of card ids (``-1`` ignored)."""
    shifted = np.where(cards >= 0, np.left_shift(np.uint64(1), np.maximum(cards, 0).astype(np.uint64)), np.uint64(0))
    out: npt.NDArray[np.uint64] = np.bitwise_or.reduce(shifted.astype(np.uint64), axis=-1)
    return out


def card_bits(cards: Sequence[int]) -> np.uint64:
    bits = 0
    for card in cards:
        bits |= 1 << int(card)
    return np.uint64(bits)


class HandEvaluator:
    """The estimators of one hand at a time (:meth:`hand`), with the caches that make
    many hands cheap: replayed bettings, policies, reach vectors, showdown ranks.
    :func:`estimate` runs one over a whole table; the portfolio agent keeps one per
    (evaluated, played) pair and feeds it each hand as it ends."""

    def __init__(self, game: Game, sigma: Policy, played: Policy | None, information: str) -> None:
        if game.num_players != 2:
            raise ImportanceError(f"imaginary observations are implemented for two players, not {game.num_players}")
        if information not in INFORMATION:
            raise ImportanceError(f"information must be one of {INFORMATION}, got {information!r}")
        self.game = game
        self.full = information == "full"
        self.sigma = CachedPolicy(sigma, game)
        self.played = self.sigma if played is None or played is sigma else CachedPolicy(played, game)
        self.holdings = private_hands(game)
        self.hand_bits = holding_bits(self.holdings)
        self.holding_index = {tuple(int(c) for c in h): i for i, h in enumerate(self.holdings)}
        self.lines: dict[str, _Line] = {}
        self.reaches: dict[tuple[int, str, tuple[int, ...]], _Reach] = {}
        self.ranks: dict[tuple[int, ...], npt.NDArray[np.int32]] = {}
        # (estimates, the value the betting and cards give us) per distinct hand
        self.results: dict[tuple[object, ...], tuple[tuple[float, float, float, float], float]] = {}

    def line(self, betting: str) -> _Line:
        line = self.lines.get(betting)
        if line is None:
            line = self.lines[betting] = replay_hand(self.game, betting)
        return line

    def showdown_ranks(self, board: tuple[int, ...]) -> npt.NDArray[np.int32]:
        ranks = self.ranks.get(board)
        if ranks is None:
            from poker.evaluate import showdown_values  # numba: import only when asked

            ranks = self.ranks[board] = np.asarray(showdown_values(self.holdings, board), dtype=np.int32)
        return ranks

    def reach(self, position: int, betting: str, board: tuple[int, ...]) -> _Reach:
        key = (position, betting, board)
        cached = self.reaches.get(key)
        if cached is not None:
            return cached
        game = self.game
        n = len(self.holdings)
        sigma = np.ones(n)
        played = np.ones(n)
        fold_sigma: list[FloatArray] = []
        fold_played: list[FloatArray] = []
        fold_value: list[float] = []
        fold_board: list[int] = []
        we_folded = False
        for state, action in self.line(betting).steps:
            if state.current_player() != position:
                continue
            shown = game.total_board_cards(state.round)
            seen = board[:shown]
            clash = (self.hand_bits & card_bits(seen)) != 0
            p_sigma, actions = self.sigma(state, seen)
            p_played, played_actions = self.played(state, seen)
            if actions != played_actions:
                raise ImportanceError(f"the two policies' columns differ at {state.betting_string()!r}")
            if action not in actions:
                raise ImportanceError(
                    f"betting {quote(betting)}: action {action} at {state.betting_string()!r} is not among the policy"
                    f" columns {[str(a) for a in actions]}"
                )
            if FOLD in actions:
                f = actions.index(FOLD)
                fold_sigma.append(np.where(clash, 0.0, sigma * p_sigma[:, f]))
                fold_played.append(np.where(clash, 0.0, played))
                fold_value.append(-float(state.spent[position]))
                fold_board.append(shown)
            a = actions.index(action)
            sigma = np.where(clash, 0.0, sigma * p_sigma[:, a])
            played = np.where(clash, 0.0, played * p_played[:, a])
            we_folded = action == FOLD
        j = len(fold_value)
        reach = _Reach(
            sigma,
            played,
            np.array(fold_sigma).reshape(j, n),
            np.array(fold_played).reshape(j, n),
            np.array(fold_value, dtype=np.float64),
            np.array(fold_board, dtype=np.int64),
            we_folded,
        )
        self.reaches[key] = reach
        return reach

    def hand(
        self, where: str, position: int, betting: str, hole: Sequence[Sequence[int]], board: tuple[int, ...], value: float
    ) -> tuple[float, float, float, float]:
        """(basic, early folds, all cards, all cards + early folds) of one hand."""
        line = self.line(betting)
        final = line.final
        ours = tuple(sorted(int(c) for c in hole[position]))
        theirs = tuple(sorted(int(c) for c in hole[1 - position]))
        showdown = final.is_showdown()
        known = self.full or showdown
        key = (position, betting, ours, theirs if known else None, board)
        cached = self.results.get(key)
        if cached is not None:
            check_value(where, betting, cached[1], value)
            return cached[0]
        k = self.holding_index.get(ours)
        if k is None:
            raise ImportanceError(f"{where}: hole cards {ours} are not a holding of the game")
        reach = self.reach(position, betting, board)
        if reach.played[k] <= 0:
            raise ImportanceError(
                f"{where}: the played strategy gives probability 0 to the observed betting {quote(betting)} with"
                " these cards (wrong strategy or position?)"
            )
        hidden = card_bits(theirs) if known else np.uint64(0)
        if showdown:
            ranks = self.showdown_ranks(board)
            from poker.evaluate import rank_hands

            their_rank = int(rank_hands(np.array([theirs + board], dtype=np.int8))[0])
            outcome = [float(v[position]) for v in (final.values(r) for r in rank_cases(position))]
            win, tie, lose = outcome
            values = np.where(ranks > their_rank, win, np.where(ranks == their_rank, tie, lose))
        else:
            values = np.full(len(self.holdings), float(final.values()[position]))
        check_value(where, betting, float(values[k]), value)
        valid = (self.hand_bits & (hidden | card_bits(board))) == 0
        basic = float(values[k] * reach.sigma[k] / reach.played[k])
        all_cards = float((values * reach.sigma)[valid].sum() / reach.played[valid].sum())
        early = float((reach.fold_value * reach.fold_sigma[:, k] / reach.fold_played[:, k]).sum())
        # The board dealt by each fold point, and the holdings it (with the opponent's cards) leaves.
        fold_bits = np.array([card_bits(board[:shown]) for shown in reach.fold_board], dtype=np.uint64)
        fold_valid = (self.hand_bits[None, :] & (fold_bits[:, None] | hidden)) == 0
        both = float(
            (
                reach.fold_value
                * np.where(fold_valid, reach.fold_sigma, 0.0).sum(axis=1)
                / np.where(fold_valid, reach.fold_played, 0.0).sum(axis=1)
            ).sum()
        )
        if not reach.we_folded:
            early += basic
            both += all_cards
        result = (basic, early, all_cards, both)
        self.results[key] = (result, float(values[k]))
        return result


def check_value(where: str, betting: str, computed: float, observed: float) -> None:
    if abs(computed - observed) > _VALUE_TOLERANCE:
        raise ImportanceError(
            f"{where}: the observed value {observed:g} is not the {computed:g} that betting {quote(betting)} and the"
            " cards give this position"
        )


def rank_cases(position: int) -> tuple[tuple[int, int], ...]:
    """Ranks by position for our win, a tie and our loss."""
    win = (1, 0) if position == 0 else (0, 1)
    return win, (0, 0), win[::-1]

