"""AIVAT: control variates at chance events and at our own decisions (Burch et al. 2018).

An unbiased, low-variance estimate of one player's chips per hand from hands
it played with a known strategy σ (on-policy) against any opponent, with every
card known (a dealer's log: full information). A *value function* ``V``, fixed
before the data is seen, gives our expected chips at any public state for
each of our holdings against the opponent's actual holding. Along each hand's
public path, with ``r`` our *range* (the deal's probability of each of our
holdings given the opponent's cards and the board, times σ's probability of
our actions so far) and ``V̄(s) = Σ_h r(h) V(s, h) / Σ_h r(h)``:

* **the deal**: ``V̄(root)`` for the opponent's actual holding minus its
  expectation over the opponent's holdings (our own holding never enters:
  it is averaged over our range throughout, the imaginary-observation idea);
* **each public chance event** (board cards): ``V̄(s·c) − Σ_c' P(c' | s) V̄(s·c')``,
  ``P`` the probability of each deal given the opponent's cards and our range;
  the run-out of an all-in too (its cards come after the last action: with
  :class:`EquityValues`, whose value at the all-in is the run-outs' mean, the
  estimate keeps none of the run-out's luck, as the all-in adjustment of
  :mod:`analysis.allin`, but over our range instead of our holding);
* **each of our decisions**: ``V̄(s·a) − Σ_b P(b | s) V̄(s·b)`` with
  ``P(b | s) = Σ_h r(h) σ(b | s, h) / Σ_h r(h)``;
* **the opponent's decisions**: no correction, unless its policy is *known*
  (``opponent=``: then ``V̄(s·a) − Σ_b ρ(b | s, o) V̄(s·b)``, the MIVAT term for
  a known player; a wrong ρ makes the estimate biased).

The estimate of a hand is ``Σ_h r(h) u(z, h) / Σ_h r(h)`` (the game's payoff at
the observed terminal ``z`` over our final range, from the rules, never from
``V``) minus the sum of those corrections. Each correction has expectation 0
given what happened before it, whatever ``V`` is, as long as ``V`` does not
depend on the hand being estimated; so the estimate is unbiased, and its
variance is small when ``V`` is close to the truth. With ``V`` the exact value
of the profile actually played and a deterministic opponent, every hand gives
exactly the profile's value.

:class:`TreeValues` is the value function of limit games whose public tree can
be built (Kuhn, Leduc): the exact expected value, for every pair of holdings,
of σ against a fixed opponent model (the equilibrium, say), one backward pass
over :func:`strategies.cfr.tree.public.build_tree`. :class:`EquityValues` is
the heuristic one for two-player hold'em, limit and no-limit: our pot share by
the exact showdown equity of each holding against the opponent's over every
run-out, checked down from here; the expectation at a deal is then the value
before it (no enumeration of deals), and the corrections start at the flop
(pre-flop equities of 1326 holdings are too many run-outs to enumerate per
hand). Any other :class:`ValueFunction` plugs in the same way (a
DeepStack-style network, an abstraction's values); it may say from which round
it corrects (``first_round``) and give the expectation at a deal itself
(``expected_deal``, :class:`ExpectedDeal`), else the estimator enumerates every
deal (a flop: 19,600). No-limit needs σ's policy columns for the observed raise
sizes (as in :mod:`analysis.importance`). Partial information (the opponent's
cards unknown after a fold) is not implemented: it would average over the
opponent's range under a model as well.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from analysis.hands import Hands
from analysis.importance import per_hand, player_positions
from poker.deal import private_hands
from poker.gamedef import Game
from poker.state import State
from strategies.imaginary import (
    CachedPolicy,
    ImportanceError,
    Policy,
    card_bits,
    check_value,
    holding_bits,
    rank_cases,
    replay_hand,
)

__all__ = ["Aivat", "AivatError", "EquityValues", "ExpectedDeal", "TreeValues", "ValueFunction", "aivat", "terminal_payoffs"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Range mass below which a hand counts as impossible under σ.
_TINY: Final = 1e-300


class AivatError(ImportanceError):
    """Hands AIVAT cannot estimate: not played by σ, a state the value function lacks."""


class ValueFunction(Protocol):
    """Our expected chips at a public state, for every holding of ours.

    ``position`` is ours, ``state`` the betting (finished at a terminal, between
    rounds at a chance event before its board cards), ``board`` the cards dealt
    so far in dealing order, ``theirs`` the opponent's holding as a row of
    :func:`poker.deal.private_hands`. Returns ``float64[H]`` in that row
    order; entries of holdings that clash with ``theirs`` or the board are ignored.
    It must be fixed before the hands are seen."""

    def __call__(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray: ...


class ExpectedDeal(Protocol):
    """An optional method of a value function: the exact expectation, over the
    board cards about to be dealt at ``state`` (between rounds, ``seen`` the
    board so far), of ``V̄`` after them for our range ``reach`` against the
    opponent's holding ``theirs``; what :meth:`_Estimator.deal` otherwise works
    out by enumerating every deal."""

    def __call__(self, position: int, state: State, seen: tuple[int, ...], reach: FloatArray, theirs: int) -> float: ...


class EquityValues:
    """A heuristic value function for two-player hold'em, limit or no-limit (and
    any other two-player game): our **pot share by showdown equity**,
    ``V(s, h) = eq(h, o | board) · pot − our chips in``, where ``eq`` is the
    equity (ties half) of our holding ``h`` against the opponent's actual holding
    ``o`` over the run-outs of the board (:func:`poker._eval_kernels.runout_outcomes`,
    one numba pass for all our holdings); a folded hand is worth its payoff. It
    reads no log and no strategy, so AIVAT stays unbiased; it only decides how
    much variance goes. It is not the value of any strategy: it assumes the
    hand is checked down from here.

    Why it is cheap. At a deal the pot does not move and the equity before the
    deal is the average of the equities after it, so the expectation AIVAT
    subtracts at a chance event is ``V̄`` before it (:meth:`expected_deal`: no
    enumeration of deals). The equity vector depends on the board and ``o``
    only, not the betting, so a street's decisions share one run-out pass.

    Where the run-outs are too many to enumerate (more than ``max_work`` hand
    ranks: hold'em pre-flop, 1326 holdings × C(48, 5) run-outs, 2.3 G), the
    equity is **sampled**: ``samples`` full boards drawn uniformly from the
    cards ``o`` leaves, each holding's wins summed over the boards it does not
    touch and divided by ``samples`` times the chance ``p`` that a board misses
    it (the same for every holding). Dividing by the expected count, not the
    count seen, keeps every holding's estimate exactly unbiased, so the three
    corrections that use it keep mean zero: the deal (``E_o[V̄(root)]`` is
    ``pot/2 − ours`` exactly, by symmetry: :meth:`root_mean`), our pre-flop
    decisions (any function fixed before the decision will do) and the flop (its
    expectation is the exact pre-flop value, which the sample estimates without
    bias, drawn independently of the real flop). The boards come from
    ``numpy.random.default_rng(seed)``, fresh for each opponent holding (then
    kept), never from the hands. ``samples=0`` instead leaves those rounds
    uncorrected (:attr:`first_round`: each correction has mean zero on its own,
    so leaving some out costs only variance). Kuhn and Leduc are enumerated."""

    def __init__(self, game: Game, *, max_work: int = 5_000_000, samples: int = 2_000, seed: int = 0) -> None:
        from poker import _eval_kernels as kernels

        if game.num_players != 2:
            raise AivatError(f"EquityValues is for two players, not {game.num_players}")
        if samples < 0:
            raise AivatError(f"samples={samples} must be at least 0")
        self.game = game
        self._kernels = kernels
        self.holdings = private_hands(game)
        self.sets = kernels.cardsets(np.ascontiguousarray(self.holdings))
        self.deck = np.array(sorted(game.deck()), dtype=np.int64)
        self.final = game.total_board_cards(game.num_rounds - 1)
        self.samples = samples
        self._rng = np.random.default_rng(seed)
        hole = game.num_hole_cards
        work = [
            math.comb(self.deck.size - 2 * hole - game.total_board_cards(r), self.final - game.total_board_cards(r))
            * len(self.holdings)
            for r in range(game.num_rounds)
        ]
        #: Boards of this many cards or more are enumerated; fewer are sampled.
        self.exact_from = next(game.total_board_cards(r) for r, w in enumerate(work) if w <= max_work)
        #: The first round whose states AIVAT corrects (see the class docstring).
        self.first_round = 0 if samples else next(r for r, w in enumerate(work) if w <= max_work)
        self._equity: dict[tuple[tuple[int, ...], int], FloatArray] = {}

    def equity(self, board: Sequence[int], theirs: int) -> FloatArray:
        """Our equity (ties half) with every holding against holding row
        ``theirs`` over the run-outs of ``board`` (0 for holdings that clash):
        exact, or sampled without bias below :attr:`exact_from` board cards."""
        key = (tuple(sorted(int(c) for c in board)), theirs)
        found = self._equity.get(key)
        if found is not None:
            return found
        if len(self._equity) > 4096:
            self._equity.clear()
        kernels = self._kernels
        hole = self.game.num_hole_cards
        known = np.array(key[0] + tuple(int(c) for c in self.holdings[theirs]), dtype=np.int64)
        undealt = np.setdiff1d(self.deck, known)
        missing = self.final - len(key[0])
        board_set = int(kernels.cardsets(np.array([key[0]], dtype=np.int64))[0]) if key[0] else 0
        if len(key[0]) >= self.exact_from:
            completions = undealt[kernels.combination_indices(undealt.size, missing)]
            theirs_wins, counts = kernels.runout_outcomes(int(self.sets[theirs]), board_set, completions, self.sets)
            out: FloatArray = np.where(counts > 0, 1.0 - theirs_wins / np.maximum(counts, 1.0), 0.0)
        else:
            keys = self._rng.random((self.samples, undealt.size))
            completions = undealt[np.argpartition(keys, missing - 1, axis=1)[:, :missing]]
            theirs_wins, counts = kernels.runout_outcomes(int(self.sets[theirs]), board_set, completions, self.sets)
            # P(a uniform completion misses one holding), the same for every holding that misses the board.
            miss = math.comb(undealt.size - hole, missing) / math.comb(undealt.size, missing)
            out = (counts - theirs_wins) / (self.samples * miss)
        self._equity[key] = out
        return out

    def __call__(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray:
        if state.finished and not state.is_showdown():
            return np.full(len(self.holdings), float(state.values()[position]))
        share: FloatArray = self.equity(board, theirs) * float(sum(state.spent)) - float(state.spent[position])
        return share

    def expected_deal(self, position: int, state: State, seen: tuple[int, ...], reach: FloatArray, theirs: int) -> float:
        """``V̄`` before the deal: the equity is a martingale over the run-out
        and the pot does not move at a deal (class docstring)."""
        return float(reach @ self(position, state, seen, theirs) / reach.sum())

    def root_mean(self, position: int) -> float:
        """``E_o[V̄(root)]``: every pair of disjoint holdings is as likely either
        way round and their equities sum to 1, so the mean equity is 1/2."""
        root = State(self.game)
        return float(sum(root.spent)) / 2 - float(root.spent[position])


class TreeValues:
    """Exact values of σ (at our position) against a fixed ``model`` of the
    opponent on the public tree, for every pair of holdings: a
    :class:`ValueFunction` for Kuhn, Leduc and other small limit games.

    ``values[p][node]`` is ``float64[H, H]``: position ``p``'s chips, ours the
    rows, theirs the columns, 0 where the holdings clash with each other or the
    board. ``exact[p]`` is the profile's value for position ``p`` (the mean over
    the deal)."""

    def __init__(self, tree: object, sigma: Policy, model: Policy) -> None:
        from strategies.cfr.best_response.exact import strategy_from_policy
        from strategies.cfr.tree.public import NodeKind, Tree

        if not isinstance(tree, Tree):
            raise TypeError(f"TreeValues needs a strategies.cfr.tree.public.Tree, got {type(tree).__name__}")
        if tree.isomorphism:
            raise AivatError("TreeValues needs a tree built without suit isomorphism")
        self.tree = tree
        mine = strategy_from_policy(tree, sigma)
        theirs = strategy_from_policy(tree, model)
        h = tree.num_hands
        compatible = (holding_bits(tree.hands)[:, None] & holding_bits(tree.hands)[None, :]) == 0
        payoff = tree.payoff
        self.values: tuple[FloatArray, FloatArray] = (np.zeros((tree.num_nodes, h, h)), np.zeros((tree.num_nodes, h, h)))
        for position in (0, 1):
            out = self.values[position]
            for node in range(tree.num_nodes - 1, -1, -1):  # a parent precedes its children
                kind = int(tree.kind[node])
                b = int(tree.board_index[node])
                mask = tree.board_mask[b][:, None] * tree.board_mask[b][None, :] * compatible
                if kind == NodeKind.FOLD:
                    value = np.full((h, h), payoff[node, position, 0])
                elif kind == NodeKind.SHOWDOWN:
                    value = float(tree.spent[node].min()) * tree.sign[b]
                elif kind == NodeKind.CHANCE:
                    value = np.zeros((h, h))
                    for child in tree.children(node):
                        cb = tree.board_mask[int(tree.board_index[child])]
                        value += cb[:, None] * cb[None, :] * out[child]
                    value *= tree.chance_weight[node]
                else:
                    d = int(tree.decision_index[node])
                    children = out[tree.children(node)]  # [A, H, H]
                    actor = int(tree.player[node])
                    strategy = (mine if actor == position else theirs)[d, : len(children), :]  # [A, H]
                    weights = strategy[:, :, None] if actor == position else strategy[:, None, :]
                    value = (weights * children).sum(axis=0)
                out[node] = value * mask
        self.exact = tuple(float(v[0].sum() / (compatible * tree.board_mask[0][:, None]).sum()) for v in self.values)
        self._nodes: dict[tuple[str, tuple[int, ...]], int] = {}
        for node in range(tree.num_nodes):
            board = tree.boards[int(tree.board_index[node])]
            self._nodes[(tree.states[node].betting_string(), board)] = node

    def __call__(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray:
        canonical: list[int] = []
        start = 0
        for count in self.tree.game.num_board_cards:  # the tree deals each round's cards in sorted order
            canonical.extend(sorted(board[start : start + count]))
            start += count
        node = self._nodes.get((state.betting_string(), tuple(canonical)))
        if node is None:
            raise AivatError(f"public state {state.betting_string()!r} with board {board} is not in the tree")
        column: FloatArray = self.values[position][node][:, theirs]
        return column


def terminal_payoffs(
    holdings: npt.NDArray[np.int8], position: int, final: State, board: tuple[int, ...], theirs: tuple[int, ...]
) -> FloatArray:
    """The rules' payoff of each of ``holdings`` (ours) at the finished hand
    ``final`` against the opponent's ``theirs``: what AIVAT averages over our
    final range (here and in :mod:`analysis.recorded_values`)."""
    if not final.is_showdown():
        return np.full(len(holdings), float(final.values()[position]))
    from poker.evaluate import rank_hands, showdown_values

    ranks = np.asarray(showdown_values(holdings, board), dtype=np.int32)
    their_rank = int(rank_hands(np.array([theirs + board], dtype=np.int8))[0])
    win, tie, lose = (float(final.values(list(r))[position]) for r in rank_cases(position))
    out: FloatArray = np.where(ranks > their_rank, win, np.where(ranks == their_rank, tie, lose))
    return out


@dataclass(frozen=True)
class Aivat:
    """Per-hand AIVAT terms (``float64[n]``), our chips per hand.

    ``raw`` the observed money; ``value`` the payoff at the observed terminal
    averaged over our final range; ``chance`` the corrections at the deal and
    the board cards (value after the event minus its expectation),
    ``chance_baseline`` the sum of those expectations (for diagnostics);
    ``decisions`` the corrections at our decisions; ``opponent`` those at the
    opponent's decisions (zero unless its policy was given). :attr:`estimate`
    is the AIVAT value; take its mean with :func:`poker.stats.mean_ci`."""

    raw: FloatArray
    value: FloatArray
    chance: FloatArray
    chance_baseline: FloatArray
    decisions: FloatArray
    opponent: FloatArray

    @property
    def estimate(self) -> FloatArray:
        out: FloatArray = self.value - self.chance - self.decisions - self.opponent
        return out


class _Estimator:
    """One call's caches: replayed bettings, policies, showdown ranks, hand results."""

    def __init__(self, game: Game, sigma: Policy, values: ValueFunction, opponent: Policy | None) -> None:
        if game.num_players != 2:
            raise AivatError(f"AIVAT is implemented for two players, not {game.num_players}")
        self.game = game
        self.sigma = CachedPolicy(sigma, game)
        self.opponent = None if opponent is None else CachedPolicy(opponent, game)
        self.values = values
        #: Corrections start at this round (:attr:`ValueFunction` may say, e.g. :class:`EquityValues`).
        self.first_round = int(getattr(values, "first_round", 0))
        self.expected_deal: ExpectedDeal | None = getattr(values, "expected_deal", None)
        self.values_root_mean: Callable[[int], float] | None = getattr(values, "root_mean", None)
        self.holdings = private_hands(game)
        self.hand_bits = holding_bits(self.holdings)
        self.index = {tuple(int(c) for c in h): i for i, h in enumerate(self.holdings)}
        self.deck = sorted(game.deck())
        self.root_means: dict[int, float] = {}
        self.results: dict[tuple[object, ...], tuple[tuple[float, float, float, float, float], float]] = {}

    def root_mean(self, position: int) -> float:
        """The expectation over the deal of the opponent's holding of ``V̄(root)``
        (the value function's own ``root_mean`` when it has one)."""
        mean = self.root_means.get(position)
        if mean is None and self.values_root_mean is not None:
            mean = self.root_means[position] = float(self.values_root_mean(position))
        if mean is None:
            root = State(self.game)
            total = 0.0
            for o, bits in enumerate(self.hand_bits):
                valid = (self.hand_bits & bits) == 0
                total += float(self.values(position, root, (), o)[valid].mean())
            mean = self.root_means[position] = total / len(self.hand_bits)
        return mean

    def value(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray:
        answer = np.asarray(self.values(position, state, board, theirs), dtype=np.float64)
        if answer.shape != (len(self.holdings),):
            raise AivatError(f"value function at {state.betting_string()!r} gave shape {answer.shape}")
        return answer

    def terminal(self, position: int, final: State, board: tuple[int, ...], theirs: tuple[int, ...]) -> FloatArray:
        """The rules' payoff of every holding of ours at a finished hand."""
        return terminal_payoffs(self.holdings, position, final, board, theirs)

    def hand(
        self, where: str, position: int, betting: str, hole: Sequence[Sequence[int]], board: tuple[int, ...], raw: float
    ) -> tuple[float, float, float, float, float]:
        """(value, chance, chance baseline, decisions, opponent) of one hand."""
        ours = tuple(sorted(int(c) for c in hole[position]))
        theirs = tuple(sorted(int(c) for c in hole[1 - position]))
        key = (position, betting, ours, theirs, board)
        cached = self.results.get(key)
        if cached is not None:
            check_value(where, betting, cached[1], raw)
            return cached[0]
        k, o = self.index.get(ours), self.index.get(theirs)
        if k is None or o is None:
            raise AivatError(f"{where}: hole cards {ours}, {theirs} are not holdings of the game")
        game = self.game
        line = replay_hand(game, betting)
        reach = np.where((self.hand_bits & card_bits(theirs)) == 0, 1.0, 0.0)
        first = self.first_round
        if first == 0:
            mean = self.root_mean(position)
            start = float(reach @ self.value(position, State(game), (), o) / reach.sum())
            chance, baseline = start - mean, mean
        else:  # no value before round `first`: the deal goes uncorrected
            chance = baseline = 0.0
        decisions = against = 0.0
        seen: tuple[int, ...] = ()
        for state, action in line.steps:
            actor = state.current_player()
            corrected = state.round >= first
            if actor == position:
                policy, actions = self.sigma(state, seen)
                a = actions.index(action)
                taken = reach * policy[:, a]
                if taken.sum() <= _TINY or taken[k] <= 0:
                    raise AivatError(f"{where}: σ gives probability 0 to {action} at {state.betting_string()!r}")
                if corrected:
                    children = np.array([self.value(position, state.apply(b), seen, o) for b in actions])  # [A, H]
                    expected = float((reach[:, None] * policy * children.T).sum() / reach.sum())
                    decisions += float(taken @ children[a] / taken.sum()) - expected
                reach = taken
            elif self.opponent is not None and corrected:
                policy, actions = self.opponent(state, seen)
                level = reach.sum()
                children = np.array([reach @ self.value(position, state.apply(b), seen, o) / level for b in actions])
                against += float(children[actions.index(action)] - policy[o] @ children)
            after = state.apply(action)
            shown = game.total_board_cards(after.round)
            if not after.finished and shown > len(seen):
                if corrected:
                    correction, expected, reach = self.deal(position, after, seen, board[:shown], reach, theirs, o)
                    chance += correction
                    baseline += expected
                else:
                    reach = self.fits(board[:shown], reach)
                seen = board[:shown]
        if len(board) > len(seen):  # an all-in's run-out: dealt after the last action, still chance events and our range's cards
            if line.final.round >= first:
                correction, expected, reach = self.deal(position, line.final, seen, board, reach, theirs, o)
                chance += correction
                baseline += expected
            else:
                reach = self.fits(board[len(seen) :], reach)
        values = self.terminal(position, line.final, board, theirs)
        check_value(where, betting, float(values[k]), raw)
        result = (float(reach @ values / reach.sum()), chance, baseline, decisions, against)
        self.results[key] = (result, float(values[k]))
        return result

    def deal(
        self,
        position: int,
        state: State,
        seen: tuple[int, ...],
        dealt: tuple[int, ...],
        reach: FloatArray,
        theirs: tuple[int, ...],
        o: int,
    ) -> tuple[float, float, FloatArray]:
        """The board cards ``dealt[len(seen):]``: (correction, expectation, range after)."""
        new = dealt[len(seen) :]
        if self.expected_deal is not None:
            expected = float(self.expected_deal(position, state, seen, reach, o))
        else:
            blocked = set(seen) | set(theirs)
            remaining = [c for c in self.deck if c not in seen]
            # Deals that avoid the opponent's cards, the board and one holding of ours (all holdings hold as many cards).
            deals = math.comb(len(self.deck) - len(seen) - len(theirs) - self.game.num_hole_cards, len(new))
            total = reach.sum()
            expected = 0.0
            for cards in itertools.combinations(remaining, len(new)):
                if blocked.intersection(cards):
                    continue
                fits = np.where((self.hand_bits & card_bits(cards)) == 0, reach, 0.0)
                expected += float(fits @ self.value(position, state, seen + cards, o))
            expected /= total * deals
        fits = self.fits(new, reach)
        after = float(fits @ self.value(position, state, dealt, o) / fits.sum())
        return after - expected, expected, fits

    def fits(self, cards: Sequence[int], reach: FloatArray) -> FloatArray:
        """Our range after ``cards`` are dealt: holdings that hold one of them drop out."""
        fits: FloatArray = np.where((self.hand_bits & card_bits(cards)) == 0, reach, 0.0)
        if fits.sum() <= _TINY:
            raise AivatError(f"board cards {tuple(cards)} leave no holding of ours")
        return fits


def aivat(
    hands: Hands,
    player: str | int | Sequence[int] | IntArray,
    sigma: Policy,
    values: ValueFunction,
    *,
    opponent: Policy | None = None,
) -> Aivat:
    """AIVAT terms of ``player``'s hands, played on-policy by ``sigma``, with every card known.

    ``player`` is a name in ``hands.names``, one position for every hand, or a
    position per hand; ``values`` a :class:`ValueFunction` fixed before the data
    (e.g. :class:`TreeValues`); ``opponent`` the opponent's policy if it is
    known exactly (adds corrections at its decisions; biased if it is wrong).

    Raises:
        AivatError: a hand σ could not have played, a value the rules do not
            give, a public state the value function lacks, a game that is not
            two-player.
    """
    positions = player_positions(hands, player, AivatError)
    estimator = _Estimator(hands.game, sigma, values, opponent)
    raw, hand_args = per_hand(hands, positions)
    out = np.array([estimator.hand(*args) for args in hand_args]).reshape(len(hands), 5)
    return Aivat(raw, *(out[:, j].copy() for j in range(5)))
