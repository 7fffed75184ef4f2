"""Exact best response to card-blind strategies in games as large as hold'em.

A *card-blind* strategy chooses its action from the betting alone (the chumps of
the papers: always-fold, always-call, always-raise, call/raise at random). Its
opponent then learns nothing about its cards, so at every point the card-blind
player's hand is uniform over the hands that fit the responder's hand and the
board. That makes the exact best response of Johanson's thesis (ch2 §2.4, seed
000 §5.2; Table 2.1 lists these four strategies in heads-up limit hold'em) cheap
enough for full hold'em:

1. Walk the betting tree alone (no boards). The card-blind player's action
   probabilities are scalars; subtrees of one round that look alike (same
   payoffs, same probabilities, same next-round subtrees) share one *signature*
   and are evaluated once.
2. Last round: given a hand and the full board, a subtree's value depends only on
   ``d = W - L``, the number of opponent hands the responder beats minus those it
   loses to (ties pay 0). So each last-round signature is evaluated once on every
   ``d`` in ``-N..N`` (N = opponent hands that fit) and becomes a lookup table.
3. Earlier rounds: for each board, average the next round's values over the next
   cards (uniform over the cards that fit the responder's hand), then take the
   responder's maximum per hand and the card-blind player's expectation. The
   round before the last is one kernel per board: it ranks every hand on each
   completion, counts W - L with card removal after one sort (the per-card trick
   of §2.4) and reads the tables.
4. The first round that deals board cards enumerates only boards that are
   canonical under suit permutations and adds each one's values to all of its
   images with the hands permuted the same way (§2.4 "suit isomorphism": exact
   because a card-blind strategy is suit-symmetric).

The best-response value of the responder is the mean over its hands of its root
value. Both positions and any number of strategies are done in one sweep over
the boards (the d vectors are shared). Limitations, checked with clear errors: 2
players, 1 or 2 hole cards, no all-in that runs out more than one round at once,
and the strategy really is card-blind.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from numba import njit

from poker.deal import private_hands
from poker.evaluate import card_bit, rank_cardset
from poker.gamedef import Game
from poker.state import Action, State
from strategies.base import PublicState, Strategy
from strategies.cfr.best_response.exact import BestResponse
from strategies.cfr.tree._kernels import showdown_values
from strategies.cfr.tree.public import BettingAbstraction, TreeError, tree_actions

__all__ = ["blind_best_responses", "NotCardBlindError"]

PolicyFn = Callable[[PublicState], npt.NDArray[np.float64]]

# Program node kinds (one program per round: every signature of that round).
_MAX = 0  # the responder decides: maximum over children
_SUM = 1  # the card-blind player decides: probability-weighted sum
_FOLD = 2  # a fold: constant chips
_SHOWDOWN = 3  # last round: stake * d / N
_NEXT = 4  # the next round starts: that signature's value


class NotCardBlindError(ValueError):
    """A policy that gives different action probabilities to different hands."""


@dataclass
class _BettingNode:
    state: State
    children: list[int] = field(default_factory=list)
    actions: tuple[Action, ...] = ()


@dataclass
class _Program:
    """Flattened signatures of one round, children before parents."""

    kind: list[int] = field(default_factory=list)
    value: list[float] = field(default_factory=list)  # fold chips, showdown stake, next signature
    child_start: list[int] = field(default_factory=lambda: [0])
    child: list[int] = field(default_factory=list)
    prob: list[float] = field(default_factory=list)
    roots: list[int] = field(default_factory=list)  # node index of each signature's root

    def arrays(
        self,
    ) -> tuple[
        npt.NDArray[np.int8],
        npt.NDArray[np.float64],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.float64],
    ]:
        return (
            np.array(self.kind, dtype=np.int8),
            np.array(self.value, dtype=np.float64),
            np.array(self.child_start, dtype=np.int32),
            np.array(self.child, dtype=np.int32),
            np.array(self.prob, dtype=np.float64),
        )


def _betting_tree(game: Game, abstraction: BettingAbstraction | None) -> list[_BettingNode]:
    nodes = [_BettingNode(State(game))]
    index = 0
    while index < len(nodes):
        node = nodes[index]
        if not node.state.finished:
            node.actions = tuple(tree_actions(node.state, abstraction))
            for action in node.actions:
                child = node.state.apply(action)
                if child.round > node.state.round + 1:
                    raise TreeError(
                        f"after {child.betting_string()!r} the hand runs out several rounds at once (all-in);"
                        " this best response deals one round at a time"
                    )
                node.children.append(len(nodes))
                nodes.append(_BettingNode(child))
        index += 1
    return nodes


def _blind_rows(
    game: Game, nodes: list[_BettingNode], policy: Strategy | PolicyFn
) -> dict[int, npt.NDArray[np.float64]]:
    """Action probabilities of every decision node (one row: the policy is card-blind)."""
    ask: PolicyFn = policy.policy if isinstance(policy, Strategy) else policy
    rows = {}
    for i, node in enumerate(nodes):
        if node.state.finished:
            continue
        answer = np.asarray(ask(PublicState(node.state, (), node.actions)), dtype=np.float64)
        if not np.allclose(answer, answer[0]):
            raise NotCardBlindError(
                f"the policy's probabilities depend on the cards after {node.state.betting_string()!r}"
            )
        rows[i] = answer[0]
    return rows


class _Signatures:
    """Interned round subtrees of one responder against one card-blind policy."""

    def __init__(self, game: Game, nodes: list[_BettingNode], rows: dict[int, npt.NDArray[np.float64]], responder: int):
        self.game = game
        self.nodes = nodes
        self.rows = rows
        self.responder = responder
        self.programs = [_Program() for _ in range(game.num_rounds)]
        self.ids: list[dict[tuple[object, ...], int]] = [{} for _ in range(game.num_rounds)]
        self.root = self._round_root(0)

    def _round_root(self, node: int) -> int:
        """Signature id of the round subtree starting at ``node``."""
        round_ = self.nodes[node].state.round
        program = self.programs[round_]
        before = len(program.kind)
        key, top = self._emit(node, round_, program)
        ids = self.ids[round_]
        if key in ids:  # already there: drop what was just emitted
            del program.kind[before:], program.value[before:]
            del program.child_start[before + 1 :]
            del program.child[program.child_start[-1] :], program.prob[program.child_start[-1] :]
            return ids[key]
        ids[key] = len(program.roots)
        program.roots.append(top)
        return ids[key]

    def _emit(self, node: int, round_: int, program: _Program) -> tuple[tuple[object, ...], int]:
        state = self.nodes[node].state
        if state.round != round_:
            next_id = self._round_root(node)
            return self._leaf(program, _NEXT, float(next_id), ("next", next_id))
        if state.finished:
            if state.is_showdown():
                stake = float(min(state.spent))
                return self._leaf(program, _SHOWDOWN, stake, ("showdown", stake))
            folder = state.folded.index(True)
            chips = float(-state.spent[folder] if folder == self.responder else state.spent[folder])
            return self._leaf(program, _FOLD, chips, ("fold", chips))
        mine = state.current_player() == self.responder
        parts: list[tuple[float, tuple[object, ...], int]] = []
        for a, child in enumerate(self.nodes[node].children):
            p = 1.0 if mine else float(self.rows[node][a])
            if p == 0.0:
                continue
            key, top = self._emit(child, round_, program)
            parts.append((p, key, top))
        program.kind.append(_MAX if mine else _SUM)
        program.value.append(0.0)
        for p, _, top in parts:
            program.child.append(top)
            program.prob.append(p)
        program.child_start.append(len(program.child))
        return ("max" if mine else "sum", tuple((p, key) for p, key, _ in parts)), len(program.kind) - 1

    @staticmethod
    def _leaf(program: _Program, kind: int, value: float, key: tuple[object, ...]) -> tuple[tuple[object, ...], int]:
        program.kind.append(kind)
        program.value.append(value)
        program.child_start.append(len(program.child))
        return key, len(program.kind) - 1


@njit(cache=True, nogil=True)
def _run_program(kind, value, child_start, child, prob, roots, inputs, showdown_scale, next_values, out):  # type: ignore[no-untyped-def]
    """Evaluate every signature of a round over a vector of inputs (hands, or d).

    ``inputs[j]`` is the showdown multiplier (d / N, last round only);
    ``next_values[s, j]`` the next round's signature values. Writes ``out[r, j]``
    for each root ``r``."""
    n_nodes = kind.shape[0]
    width = out.shape[1]
    buffer = np.zeros((n_nodes, width))
    for i in range(n_nodes):
        k = kind[i]
        if k == _FOLD:
            buffer[i, :] = value[i]
        elif k == _SHOWDOWN:
            for j in range(width):
                buffer[i, j] = value[i] * inputs[j] * showdown_scale
        elif k == _NEXT:
            buffer[i, :] = next_values[int(value[i])]
        elif k == _MAX:
            first = child[child_start[i]]
            buffer[i, :] = buffer[first]
            for c in range(child_start[i] + 1, child_start[i + 1]):
                for j in range(width):
                    buffer[i, j] = max(buffer[i, j], buffer[child[c], j])
        else:
            buffer[i, :] = 0.0
            for c in range(child_start[i], child_start[i + 1]):
                p = prob[c]
                for j in range(width):
                    buffer[i, j] += p * buffer[child[c], j]
    for r in range(roots.shape[0]):
        out[r, :] = buffer[roots[r]]


@njit(cache=True, nogil=True)
def _win_minus_lose(hand_sets, hand_cards, board_set, n_cards, d, ranks, order_buffer):  # type: ignore[no-untyped-def]
    """d[h] = (opponent hands h beats) - (hands it loses to) on ``board_set``, over
    opponent hands sharing no card with h or the board; hands clashing with the
    board get d = 0 and ranks -1. Returns the number of valid hands."""
    n_hands = hand_cards.shape[0]
    n_valid = 0
    for h in range(n_hands):
        if hand_sets[h] & board_set:
            ranks[h] = -1
            d[h] = 0
        else:
            ranks[h] = rank_cardset(hand_sets[h] | board_set)
            order_buffer[n_valid] = h
            n_valid += 1
    valid = order_buffer[:n_valid]
    order = valid[np.argsort(ranks[valid])]
    # Every opponent hand weighs 1, so the float sweep's sums are exact integers.
    values = np.empty(n_hands)
    showdown_values(
        np.ones(n_hands), hand_cards, order, n_valid, ranks, 1.0, 0.0, -1.0, values,
        np.empty(n_hands), np.empty(n_hands), np.empty(n_cards), np.empty(n_cards),
    )
    for h in range(n_hands):
        d[h] = np.int64(values[h])
    return n_valid


@njit(cache=True, nogil=True)
def _average_last_round(hand_sets, hand_cards, board_set, completions, n_cards, n_opponents, tables, out):  # type: ignore[no-untyped-def]
    """out[s, h] = mean over the completions (rows of card ids) that fit hand h of
    ``tables[s, d + N]``: the last round's signature values averaged over its
    board cards, for every hand that fits ``board_set``."""
    n_hands = hand_cards.shape[0]
    d = np.zeros(n_hands, dtype=np.int64)
    ranks = np.zeros(n_hands, dtype=np.int64)
    order_buffer = np.zeros(n_hands, dtype=np.int64)
    counted = np.zeros(n_hands)
    out[:, :] = 0.0
    n_tables = tables.shape[0]
    for row in range(completions.shape[0]):
        full = board_set
        for j in range(completions.shape[1]):
            full |= card_bit(completions[row, j])
        _win_minus_lose(hand_sets, hand_cards, full, n_cards, d, ranks, order_buffer)
        for h in range(n_hands):
            if ranks[h] < 0:
                continue
            counted[h] += 1.0
            index = d[h] + n_opponents
            for s in range(n_tables):
                out[s, h] += tables[s, index]
    for h in range(n_hands):
        if counted[h] > 0.0:
            for s in range(n_tables):
                out[s, h] /= counted[h]


class _Sweep:
    """All responders' signatures evaluated together over the boards."""

    def __init__(
        self,
        game: Game,
        signatures: list[_Signatures],
        isomorphism: bool,
        workers: int = 1,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.game = game
        self.signatures = signatures
        self.isomorphism = isomorphism
        self.workers = workers
        self.progress = progress
        self.hands = private_hands(game).astype(np.int64)
        self.deck = sorted(game.deck())
        self.slots = np.searchsorted(np.array(self.deck), self.hands).astype(np.int64)
        self.hand_sets = np.array(
            [sum(1 << (16 * (c % 4) + c // 4) for c in h) for h in self.hands.tolist()], dtype=np.int64
        )
        self.hand_index = {tuple(h): i for i, h in enumerate(self.hands.tolist())}
        self._permutations: dict[tuple[tuple[int, int], ...], npt.NDArray[np.int64]] = {}
        self.last = game.num_rounds - 1
        k = game.num_hole_cards
        full = game.total_board_cards(self.last)
        self.n_opponents = math.comb(len(self.deck) - full - k, k)
        # Per round: the concatenated programs of every responder, and where each
        # responder's signatures start in the concatenation.
        self.offsets: list[list[int]] = []
        self.programs: list[
            tuple[
                npt.NDArray[np.int8],
                npt.NDArray[np.float64],
                npt.NDArray[np.int32],
                npt.NDArray[np.int32],
                npt.NDArray[np.float64],
                npt.NDArray[np.int32],
            ]
        ] = []
        for round_ in range(game.num_rounds):
            merged = _Program()
            offsets = []
            next_offsets = [0] * len(signatures)
            if round_ + 1 < game.num_rounds:
                total = 0
                for i, sig in enumerate(signatures):
                    next_offsets[i] = total
                    total += len(sig.programs[round_ + 1].roots)
            for i, sig in enumerate(signatures):
                program = sig.programs[round_]
                base = len(merged.kind)
                offsets.append(len(merged.roots))
                for kind, value in zip(program.kind, program.value, strict=True):
                    merged.kind.append(kind)
                    merged.value.append(value + next_offsets[i] if kind == _NEXT else value)
                child_base = len(merged.child)
                merged.child.extend(c + base for c in program.child)
                merged.prob.extend(program.prob)
                merged.child_start.extend(s + child_base for s in program.child_start[1:])
                merged.roots.extend(r + base for r in program.roots)
            self.offsets.append(offsets)
            self.programs.append((*merged.arrays(), np.array(merged.roots, dtype=np.int32)))
        grid = np.arange(-self.n_opponents, self.n_opponents + 1, dtype=np.float64)
        self.tables = self._run(self.last, grid, 1.0 / self.n_opponents, np.zeros((0, len(grid))))

    def _run(
        self, round_: int, inputs: npt.NDArray[np.float64], scale: float, next_values: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        kind, value, child_start, child, prob, roots = self.programs[round_]
        out = np.zeros((len(roots), len(inputs)))
        if len(roots):
            _run_program(kind, value, child_start, child, prob, roots, inputs, scale, next_values, out)
        return out

    def _board_set(self, board: tuple[int, ...]) -> int:
        return sum(1 << (16 * (c % 4) + c // 4) for c in board)

    def _fits(self, board: tuple[int, ...]) -> npt.NDArray[np.bool_]:
        fits: npt.NDArray[np.bool_] = (self.hand_sets & self._board_set(board)) == 0
        return fits

    def values(self, round_: int, board: tuple[int, ...]) -> npt.NDArray[np.float64]:
        """Every signature's value of ``round_`` per hand, given ``board``."""
        n_hands = len(self.hands)
        fits = self._fits(board)
        if round_ == self.last:
            d = np.zeros(n_hands, dtype=np.int64)
            ranks = np.zeros(n_hands, dtype=np.int64)
            _win_minus_lose(
                self.hand_sets,
                self.slots,
                self._board_set(board),
                len(self.deck),
                d,
                ranks,
                np.zeros(n_hands, dtype=np.int64),
            )
            result: npt.NDArray[np.float64] = self.tables[:, d + self.n_opponents] * fits
            return result
        dealt = self.game.num_board_cards[round_ + 1]
        remaining = [c for c in self.deck if c not in board]
        n_next = len(self.programs[round_ + 1][5])
        if round_ + 1 == self.last:
            completions = np.array(list(itertools.combinations(remaining, dealt)), dtype=np.int64).reshape(-1, dealt)
            average = np.zeros((n_next, n_hands))
            _average_last_round(
                self.hand_sets,
                self.slots,
                self._board_set(board),
                completions,
                len(self.deck),
                self.n_opponents,
                self.tables,
                average,
            )
        else:
            average = self._average_next(round_, board, remaining, dealt, n_next)
        result = self._run(round_, np.zeros(n_hands), 0.0, average) * fits
        return result

    def _average_next(
        self, round_: int, board: tuple[int, ...], remaining: list[int], dealt: int, n_next: int
    ) -> npt.NDArray[np.float64]:
        n_hands = len(self.hands)
        total = np.zeros((n_next, n_hands))
        counted = np.zeros(n_hands)
        if self.isomorphism and not board:
            deals = _canonical_deals(self.game, remaining, dealt)
        else:
            deals = [(combo, [None]) for combo in itertools.combinations(remaining, dealt)]
        if board or self.workers <= 1:
            for done, (combo, images) in enumerate(deals, start=1):
                self._add_images(combo, images, self.values(round_ + 1, board + combo), total, counted)
                if not board and self.progress is not None:
                    self.progress(done, len(deals))
            return total / np.maximum(counted, 1.0)
        # The first round's deals go to worker threads (the kernels release the GIL).
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            children = pool.map(lambda deal: self.values(round_ + 1, deal[0]), deals)
            for done, ((combo, images), child) in enumerate(zip(deals, children, strict=True), start=1):
                self._add_images(combo, images, child, total, counted)
                if self.progress is not None:
                    self.progress(done, len(deals))
        return total / np.maximum(counted, 1.0)

    def _add_images(
        self,
        combo: tuple[int, ...],
        images: list[dict[int, int] | None],
        child: npt.NDArray[np.float64],
        total: npt.NDArray[np.float64],
        counted: npt.NDArray[np.float64],
    ) -> None:
        n_hands = len(self.hands)
        for permutation in images:
            if permutation is None:
                image, source = combo, np.arange(n_hands)
            else:
                image = tuple(sorted(permutation[c] for c in combo))
                source = self._hand_permutation(permutation)
            fits = self._fits(image)
            total += child[:, source] * fits
            counted += fits

    def _hand_permutation(self, permutation: dict[int, int]) -> npt.NDArray[np.int64]:
        """source[h] = index of the hand that ``permutation`` maps onto hand h."""
        key = tuple(sorted(permutation.items()))
        if key not in self._permutations:
            inverse = {v: k for k, v in permutation.items()}
            self._permutations[key] = np.array(
                [self.hand_index[tuple(sorted(inverse[c] for c in h))] for h in self.hands.tolist()], dtype=np.int64
            )
        return self._permutations[key]


def _canonical_deals(
    game: Game, remaining: list[int], dealt: int
) -> list[tuple[tuple[int, ...], list[dict[int, int] | None]]]:
    """Each suit-isomorphism class of ``dealt``-card deals from a full deck once:
    (representative, one card permutation per distinct image of it)."""
    suits = sorted({c % 4 for c in game.deck()})
    permutations = [dict(zip(suits, p, strict=True)) for p in itertools.permutations(suits)]
    card_maps = [{c: (c // 4) * 4 + p[c % 4] for c in game.deck()} for p in permutations]
    seen: set[tuple[int, ...]] = set()
    result: list[tuple[tuple[int, ...], list[dict[int, int] | None]]] = []
    for combo in itertools.combinations(remaining, dealt):
        if combo in seen:
            continue
        images: dict[tuple[int, ...], dict[int, int]] = {}
        for card_map in card_maps:
            image = tuple(sorted(card_map[c] for c in combo))
            images.setdefault(image, card_map)
        seen.update(images)
        result.append((combo, list(images.values())))
    return result


def blind_best_responses(
    game: Game,
    policies: Sequence[Strategy | PolicyFn],
    *,
    abstraction: BettingAbstraction | None = None,
    isomorphism: bool = True,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[BestResponse]:
    """Each position's exact best-response value (chips per hand) against each
    card-blind policy, in one sweep over the boards.

    ``workers`` threads share the first board round's deals; ``progress(done,
    total)`` is called as those deals finish.

    Raises:
        NotCardBlindError: a policy's probabilities depend on the cards.
        TreeError: a game this method does not cover (see the module docstring).
    """
    if game.num_players != 2 or game.num_hole_cards > 2:
        raise TreeError("blind best response handles 2 players with 1 or 2 hole cards")
    if game.is_limit and abstraction is not None:
        raise TreeError("a limit game has no betting abstraction")
    if not game.is_limit and abstraction is None:
        abstraction = BettingAbstraction()
    nodes = _betting_tree(game, abstraction)
    signatures: list[_Signatures] = []
    for policy in policies:
        rows = _blind_rows(game, nodes, policy)
        signatures.extend(_Signatures(game, nodes, rows, responder) for responder in (0, 1))
    sweep = _Sweep(game, signatures, isomorphism, workers, progress)
    root = sweep.values(0, ())
    results = []
    for i in range(len(policies)):
        pair = []
        for responder in (0, 1):
            k = 2 * i + responder
            row = sweep.offsets[0][k] + signatures[k].root
            pair.append(float(root[row].mean()))
        results.append(BestResponse((pair[0], pair[1])))
    return results
