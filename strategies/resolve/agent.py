"""The continual re-solving agent (DeepStack; Burch 2017 thesis ch6, §6.1).

Between its decisions the agent keeps only **our range** (the probability of
each of our private hands given our own actions so far, normalised) and the
**opponent's counterfactual values** per private hand (the constraints of the
next re-solve, in the units of that range). At each of its decisions it builds
the lookahead at the real public state (:mod:`strategies.resolve.lookahead`),
solves it with CFR+ and the gadget (:mod:`strategies.resolve.resolver`) and
plays the average strategy of its own hand. With an evaluator
(:mod:`strategies.resolve.evaluators`) the lookahead stops at the end of the
street before the last (:mod:`strategies.resolve.depth_limited`); the values
carried across the chance event are then the evaluator's for the deal that
came. The carried pair is updated:

* after **our action** ``a``: range ← range ⊙ σ(a) (Bayes), opponent values ←
  its best-response counterfactual values in the child after ``a`` (values
  against our re-solved strategy, so the next re-solve's constraints are always
  feasible: our old strategy meets them exactly);
* after **chance**: the values of the child for the board that came, the range
  zeroed on hands that clash with it;
* after **the opponent's action**: no update (Lemma 27: the values before its
  action bound what it can get after any action, on the lookahead or not, so
  off-tree bets need no translation). When the opponent's action ends the round
  (a call, always on the lookahead) the next chance update reads the values
  below that call, as DeepStack-Leduc's ``get_chance_action_cfv`` does: the
  only place per-board values exist.

Every range update renormalises and divides the values by the same factor
(values are linear in our reach). The first decision of a hand is the **root
solve** (both ranges uniform, no gadget), shared by both seats: position 0
plays it, and position 1 takes its opponent values at the root as the first
constraints. The root solve is computed once per agent.

**Policy of every hand.** Given the public history the agent is deterministic
(CFR is, and our sampled actions are public), so :meth:`ResolvingStrategy.policy`
replays the history from the start of the hand, re-solving at each of its own
decisions on the way (each re-solve cached by its public history), and answers
the last re-solve's root strategy for every private hand. Where our own earlier
action had probability 0 for every hand in our range (a history the agent never
plays), the answer is uniform: no hand of ours reaches it.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game, shipped_name
from poker.protocol import MatchState
from poker.state import CALL, Action, ActionType, State
from strategies.base import Options, PublicState, Strategy, StrategyError, on_columns, register
from strategies.cfr.tree.public import MAX_ENTRIES, BettingAbstraction, NodeKind, TreeError, board_key, tree_actions
from strategies.resolve.blas import one_blas_thread
from strategies.resolve.lookahead import build_lookahead, checked_down, lookahead_abstraction, parse_sizes
from strategies.resolve.recording import ValueRecorder

if TYPE_CHECKING:  # the solver (numba) is imported on the first re-solve, not when strategies register
    from strategies.resolve.continuations import ContinuationLeaves
    from strategies.resolve.evaluators import Evaluator, HandTable
    from strategies.resolve.resolver import Resolution

__all__ = ["Carry", "ResolvingStrategy", "resolve_from_blueprint"]

#: Run-outs an all-in showdown before the last street, or the ``equity`` evaluator, enumerates at most.
DEFAULT_MAX_BOARDS = 64
#: First-street re-solves an agent keeps from hand to hand (:meth:`ResolvingStrategy.new_hand`):
#: about 1.4 MB each in HUNL, and a match against fcpa betting meets a few dozen lines.
CACHED_FIRST_STREET = 64


@dataclass(frozen=True)
class Carry:
    """What continual re-solving carries between our decisions for one position:
    our normalised ``range`` and the opponent's ``values`` (None before any
    solve of the hand), plus where the last re-solve's tree has got to
    (``source`` and its ``node``, and ``scale``: the factor from that tree's
    values at ``node`` to the carried units) so a chance event can read that
    board's values."""

    position: int
    range: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64] | None
    source: Resolution | None
    node: int
    scale: float


class ResolvingStrategy(Strategy):
    """Continual re-solving for either seat (see the module docstring).

    Args:
        game: a two-player game the public tree can represent.
        sizes: pot fractions per lookahead depth (no-limit; see
            :func:`strategies.resolve.lookahead.parse_sizes`), all-in always kept.
        iterations: CFR iterations per re-solve (CFR+, or ``discount``'s).
        preflop_iterations: CFR+ iterations per re-solve of the first street
            (None: ``iterations``).
        root_iterations: CFR+ iterations of the root solve (None:
            ``preflop_iterations``): it is the same public state every hand, so it
            runs once per agent (in :meth:`warm_up`, before any dealer's clock)
            and can afford to converge where a decision's re-solve cannot.
        river_iterations: CFR+ iterations per re-solve of the last street
            (None: ``iterations``); with an evaluator its lookahead is the
            cheapest (HUNL's river: 0.04 s at 50 iterations of CFR+).
        discount: with an evaluator, the streets before the last solved by
            discounted CFR with these (a, b, g)
            (:data:`strategies.resolve.depth_limited.DISCOUNTED_CFR`), not CFR+.
        seconds: a time budget per re-solve instead (> 0; not deterministic).
        max_seconds: with an evaluator, a cap on each re-solve of the streets
            before the last: its iterations stop once it has run this long
            (0: none). Where the cap is reached play depends on the machine's
            speed; where it is not, it is the play without it.
        seed: seeds the draws of :meth:`act`.
        evaluator: None for the exact lookahead (to the end of the hand), or an
            :class:`strategies.resolve.evaluators.Evaluator` that values the
            end of every street but the last (the lookahead then stops there;
            on the last street it is exact anyway).
        max_boards: run-outs of all-in showdowns before the last street, at
            most this many boards (a seeded sample beyond; all of them in Leduc).
        continuations: with an evaluator, Modicum's continuation leaves from
            their ``first_round`` on (:class:`strategies.resolve.continuations.ContinuationLeaves`):
            each depth limit is the opponent's pick among K continuations of a
            blueprint, and the values carried across the deal are its values
            on the deal that came; ``evaluator`` values the streets before.
        record: append each hand's policies and values to this file as the
            hand ends (:mod:`strategies.resolve.recording`: AIVAT with the
            agent's own values); None (the default) records nothing.
    """

    name = "resolve"

    def __init__(
        self,
        game: Game,
        *,
        sizes: tuple[tuple[float, ...], ...] = ((1.0,),),
        iterations: int = 1000,
        preflop_iterations: int | None = None,
        root_iterations: int | None = None,
        river_iterations: int | None = None,
        discount: tuple[float, float, float] | None = None,
        seconds: float = 0.0,
        max_seconds: float = 0.0,
        seed: int | None = None,
        evaluator: Evaluator | None = None,
        max_boards: int = DEFAULT_MAX_BOARDS,
        continuations: ContinuationLeaves | None = None,
        record: str | Path | None = None,
    ) -> None:
        _two_players(game)
        one_blas_thread()
        if min(n for n in (iterations, preflop_iterations, root_iterations, river_iterations) if n is not None) < 1:
            raise StrategyError(
                f"strategy 'resolve': iterations must be at least 1, got {iterations}, {preflop_iterations},"
                f" {root_iterations} and {river_iterations}"
            )
        self.game = game
        self.sizes = sizes
        self.iterations = iterations
        self.preflop_iterations = iterations if preflop_iterations is None else preflop_iterations
        self.root_iterations = self.preflop_iterations if root_iterations is None else root_iterations
        self.river_iterations = iterations if river_iterations is None else river_iterations
        self.discount = discount
        self.seconds = seconds
        self.max_seconds = max_seconds
        self.seed = secrets.randbits(63) if seed is None else seed
        self.evaluator = evaluator
        self.max_boards = max_boards
        self.continuations = continuations
        self._before_picks = evaluator
        if evaluator is not None and continuations is not None and continuations.first_round > 0:
            from strategies.resolve.continuations import CarriedByBlueprint

            self._before_picks = CarriedByBlueprint(evaluator, continuations, continuations.blueprint_before)
        self._table: HandTable | None = None
        self._rng = np.random.default_rng(self.seed)
        self._n_hands = len(private_hands(game))
        self._hand_row = {tuple(int(c) for c in h): i for i, h in enumerate(private_hands(game))}
        self._roots: dict[int, Resolution] = {}
        self._cache: dict[tuple[int, str, tuple[int, ...]], Resolution | None] = {}
        #: Wall seconds of every re-solve this agent ran, lookahead build included (root solve too).
        self.solve_seconds: list[float] = []
        self.recorder = None if record is None else ValueRecorder(game, record)

    # -- re-solving --------------------------------------------------------------------

    def _solve(
        self, state: State, board: tuple[int, ...], carry: Carry, chooser: int | None = None, iterations: int | None = None
    ) -> Resolution:
        """The re-solve at ``state`` with ``carry``; at continuation picks
        ``chooser`` picks (default the opponent of the player to act);
        ``iterations`` (default by street) of CFR+."""
        from strategies.resolve.resolver import resolve_tree

        start = time.perf_counter()
        if iterations is None:
            last = state.round == self.game.num_rounds - 1
            iterations = self.preflop_iterations if state.round == 0 else self.river_iterations if last else self.iterations
        result: Resolution
        if self.evaluator is None or state.round == self.game.num_rounds - 1:
            tree = build_lookahead(self.game, state, board, self.sizes)
            result = resolve_tree(
                tree,
                state.current_player(),
                carry.range,
                constraint=carry.values,
                iterations=iterations,
                seconds=self.seconds,
            )
        else:
            from strategies.resolve.depth_limited import build_street_tree, solve_street
            from strategies.resolve.evaluators import HandTable

            if self._table is None:
                self._table = HandTable(self.game)
            abstraction = lookahead_abstraction(self.game, state, self.sizes)
            leaves = self.continuations
            picks = leaves is not None and state.round >= leaves.first_round
            opponent = 1 - state.current_player() if chooser is None else chooser
            street = build_street_tree(
                self.game, state, board, abstraction, self._table,
                continuations=leaves.values.count if leaves is not None and picks else 0, chooser=opponent,
            )  # fmt: skip
            result = solve_street(
                street,
                leaves.evaluator(opponent) if leaves is not None and picks else self._before_picks,
                state.current_player(),
                carry.range,
                constraint=carry.values,
                iterations=iterations,
                seconds=self.seconds,
                max_seconds=self.max_seconds,
                max_boards=self.max_boards,
                seed=self.seed,
                discount=self.discount,
            )
        self.solve_seconds.append(time.perf_counter() - start)
        return result

    def root_solve(self, position: int | None = None) -> Resolution:
        """The hand's root solve (both ranges uniform, no gadget), computed once
        and shared by both positions; but where the first street's depth limits
        are continuation picks, those belong to the opponent of whoever
        re-solves, so ``position`` (default: the one to act first) gets its
        own, in which the other picks: position 0's values where position 1 picks
        understate what position 0 can get, and would make loose constraints."""
        state = State(self.game)
        first = state.current_player()
        picks = self.continuations is not None and self.continuations.first_round == 0
        key = first if position is None or not picks else position
        if key not in self._roots:
            self._roots[key] = self._solve(
                state, (), Carry(first, np.ones(self._n_hands), None, None, 0, 1.0), chooser=1 - key, iterations=self.root_iterations
            )
        return self._roots[key]

    def resolution(self, state: State, board: tuple[int, ...]) -> Resolution | None:
        """The re-solve at our decision ``state`` (with ``board`` dealt so far) for
        the position to act, after replaying the hand's history; None where the
        agent's own earlier actions had probability 0."""
        position = state.current_player()
        board = tuple(board[: self.game.total_board_cards(state.round)])
        key = (position, state.betting_string(), board_key(self.game, board, state.round))
        if key in self._cache:
            return self._cache[key]
        result = self._replay(position, state, board)
        self._cache[key] = result
        return result

    def _replay(self, position: int, target: State, board: tuple[int, ...]) -> Resolution | None:
        game = self.game
        root = self.root_solve(position)
        # The root solve's ranges are 1 per hand: normalising divides its values by H.
        scale = float(root.ranges[position].sum())
        first = None if position == root.position else root.br_values[1 - position, 0] / scale
        carry = Carry(position, root.ranges[position] / scale, first, root, 0, scale)
        state = State(game)
        for round_ in range(target.round + 1):
            if round_ > 0:
                carry_or_none = _after_chance(carry, board[: game.total_board_cards(round_)], game, round_)
                if carry_or_none is None:
                    return None
                carry = carry_or_none
            for action in target.actions[round_]:
                if state.current_player() == position:
                    resolved = root if carry.values is None else self.resolution(state, board)
                    if resolved is None:
                        return None
                    next_carry = _after_our_action(carry, resolved, action)
                    if next_carry is None:
                        return None
                    carry = next_carry
                else:
                    carry = _after_opponent_action(carry, action)
                state = state.apply(action)
        if carry.values is None:
            return root
        return self._solve(target, board, carry)

    def warm_up(self) -> None:
        """Compile every kernel a hand runs now (or load it from numba's cache),
        not on the first decision, where the dealer's clock runs: its 7 s a hand
        would not cover minutes of compiling on a cold cache; then this agent's
        root solve (:data:`LARGE_GAME_DEFAULTS`' ``root``: seconds in HUNL). A throw-away agent
        (one CFR+ iteration, this agent's evaluator) replays a hand checked down
        to the last street's first decision: the root solve, the gadget's
        re-solve on every street and the carries between them; this agent's draws
        are untouched."""
        probe = ResolvingStrategy(
            self.game, sizes=self.sizes, iterations=1, seed=0, evaluator=self.evaluator, max_boards=1,
            continuations=self.continuations, discount=self.discount,
        )  # fmt: skip
        state, board = checked_down(self.game)
        probe.resolution(state, board)
        # The same position's second decision of that street (it called, then was raised):
        # the gadget's re-solve within a street, which a one-street game (Kuhn) reaches only so.
        bounds = (called := state.apply(CALL)).raise_bounds()
        if bounds is not None:
            raised = called.apply(Action(ActionType.RAISE) if self.game.is_limit else Action.raise_to(bounds[0]))
            if not raised.finished and raised.current_player() == state.current_player():
                probe.resolution(raised, board)
        for position in range(self.game.num_players):
            self.root_solve(position)  # the same every hand: once, here

    # -- the Strategy interface ----------------------------------------------------------

    def new_hand(self, view: MatchState) -> None:
        """Forget the last hand's re-solves but the first street's: a re-solve
        depends only on the public history, and before any card is dealt that is
        the betting alone, which recurs hand after hand (a later street's board
        rarely does). Kept up to :data:`CACHED_FIRST_STREET`, the oldest dropped
        first: off-tree sizes make ever new bettings."""
        first_street = [key for key in self._cache if "/" not in key[1] and not key[2]]
        kept = {key: self._cache[key] for key in first_street[-CACHED_FIRST_STREET:]}
        self._cache.clear()
        self._cache.update(kept)
        if self.recorder is not None:
            self.recorder.begin(view, self.root_solve(view.viewer))

    def observe(self, view: MatchState) -> None:
        if self.recorder is not None:
            self.recorder.observe(view)

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.close()

    def act(self, view: MatchState) -> Action:
        state = view.state
        resolved = self.resolution(state, view.board)
        hand = self._hand_row.get(tuple(sorted(int(c) for c in view.hole[view.viewer])))
        if resolved is None or hand is None:
            return CALL
        row = resolved.root_policy()[hand]
        actions = resolved.tree.actions(0)
        total = float(row.sum())
        chosen = int(self._rng.choice(len(actions), p=row / total)) if total > 0 else 0
        action = actions[chosen] if state.is_legal(actions[chosen]) else CALL
        if self.recorder is not None:
            self.recorder.decision(state, tuple(view.board[: self.game.total_board_cards(state.round)]), resolved, action)
        return action

    def actions(self, state: State) -> tuple[Action, ...]:
        """The actions the agent may take in ``state`` (its lookahead's root
        actions): the columns to ask :meth:`policy` for."""
        return tuple(tree_actions(state, lookahead_abstraction(self.game, state, self.sizes)))

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        """Probabilities of ``public.actions`` for every private hand (the module
        docstring says how). Raises :class:`NotImplementedError` if the agent
        plays an action with positive probability that is not a column."""
        resolved = self.resolution(public.state, public.board)
        if resolved is None:
            return np.full((self._n_hands, len(public.actions)), 1.0 / len(public.actions))
        return on_columns("resolve", public, resolved.tree.actions(0), resolved.root_policy())


def _normalised(
    carry: Carry, reach: npt.NDArray[np.float64], values: npt.NDArray[np.float64], source: Resolution, node: int, scale: float
) -> Carry | None:
    """The carry with our new (unnormalised) ``reach`` and the opponent's
    ``values`` (at ``node`` of ``source``, in units ``scale`` times the carried
    ones), both divided by the reach's total."""
    total = float(reach.sum())
    if not total > 0:
        return None
    new_scale = scale * total
    return Carry(carry.position, reach / total, values / new_scale, source, node, new_scale)


def _after_our_action(carry: Carry, resolved: Resolution, action: Action) -> Carry | None:
    tree = resolved.tree
    actions = tree.actions(0)
    if action not in actions:
        return None
    a = actions.index(action)
    child = int(tree.action_child[0, a])
    # In the units of the re-solve's own root range (1 per hand in the root solve).
    reach = resolved.ranges[resolved.position] * resolved.root_policy()[:, a]
    return _normalised(carry, reach, resolved.br_values[1 - carry.position, child], resolved, child, 1.0)


def _after_opponent_action(carry: Carry, action: Action) -> Carry:
    """No update of the values; follow the action on the last tree if it is there."""
    source = carry.source
    if source is None:
        return carry
    node = carry.node
    tree = source.tree
    if tree.kind[node] == NodeKind.DECISION and action in tree.actions(node):
        child = int(tree.action_child[node, tree.actions(node).index(action)])
        return Carry(carry.position, carry.range, carry.values, source, child, carry.scale)
    return Carry(carry.position, carry.range, carry.values, None, 0, carry.scale)


def _after_chance(carry: Carry, board: tuple[int, ...], game: Game, round_: int) -> Carry | None:
    """The values of the last tree's child for ``board``; our range masked by it."""
    from strategies.resolve.street_tree import StreetTree

    source = carry.source
    if source is None or not (
        source.tree.kind[carry.node] == NodeKind.CHANCE or (isinstance(source.tree, StreetTree) and source.tree.is_pick(carry.node))
    ):
        raise TreeError(
            "continual re-solving lost the lookahead before a chance event (an opponent action off the"
            " lookahead ended the round)"
        )
    mask, values, child = source.values_after_chance(carry.node, board_key(game, board, round_))
    after = _normalised(carry, carry.range * mask, values, source, child, carry.scale)
    if after is None or child >= 0:
        return after
    return Carry(after.position, after.range, after.values, None, 0, after.scale)  # no tree below a depth limit


#: The value net shipped for NL Leduc (``arena train-values``; its header records the command).
SHIPPED_NETS = {"leduc.nolimit.2p": Path(__file__).resolve().parents[1] / "data" / "leduc-nl-values.npz"}


#: ``resolve``'s defaults where the exact lookahead from a hand's first decision is
#: over the tree limit (hold'em: HUNL's holds more than 66,316 nodes x 1,326 hands):
#: the ``continuations`` evaluator where a blueprint ships for the game (HUNL:
#: exact exploitability on NL Leduc 0.063 chips a hand against equity's 26.8,
#: benchmarks/continuations_leduc.py), else ``equity`` (no value net ships for these
#: games); discounted CFR (``solver``: at 50 iterations the flop's and turn's re-solves
#: were 2-16 % of the pot exploitable within their lookahead, CFR+'s 4-34 %) and
#: iterations and run-outs that keep a HUNL hand within the dealer's 7 s a hand
#: (p99 1.24 s of CPU a decision, 1.16 s a hand on 2 cores, the turn's 48 rivers the
#: slowest: benchmarks/modicum_latency.py); ``preflop`` times the iterations on the
#: first street, whose lookahead is the cheapest (exact equity leaves), ``river`` on
#: the last (exact, no leaves: CFR+ at 50 iterations left 30-150 chips of a pair
#: exploitable, at 400 1-10), and ``root`` the root solve's, run once per agent (after
#: 200 iterations its policy was 0.20 in total variation per hand from 1600's, after
#: 400 0.11); ``boards``: the flop's all-in run-outs (pre-flop and the turn's are exact).
LARGE_GAME_DEFAULTS: Final = {
    "evaluator": "continuations", "fallback": "equity", "iterations": 100, "preflop": 4, "root": 10, "river": 4, "boards": 32,
    "solver": "dcfr",
}  # fmt: skip
#: The most ``max_seconds=`` takes: the ACPC's clock gives 7 s a hand on average.
MAX_CAP_SECONDS: Final = 60.0
#: The most ``within_bucket=`` takes: beyond twice the showdown spread it is no longer a
#: correction to the blueprint's values but another evaluator.
MAX_WITHIN: Final = 2.0
#: ``solver=``'s choices: the streets an evaluator ends solved by CFR+ or discounted CFR
#: (:data:`strategies.resolve.depth_limited.DISCOUNTED_CFR`); the last street and the
#: exact lookahead always by CFR+ (the engine's kernels).
SOLVERS: Final = ("cfr+", "dcfr")
#: The kernel modules a hand of re-solving runs: on a cold cache one compile
#: notice names them all when the agent is made (:func:`_parse`).
HAND_KERNELS: Final = ("poker._eval_kernels", "strategies.cfr.tree._kernels", "strategies.resolve._kernels")
#: ``preflop=``'s choices with ``evaluator=continuations``: the pre-flop street's
#: leaves valued by showdown equity (the default), by the blueprint played on by both
#: (``blueprint``), or by the opponent's pick of continuations like every later
#: street's (``continuations``); in hold'em the last two value each hand by its own
#: flop sequences over every flop (:mod:`strategies.resolve.preflop_leaves`), in other
#: games by the blueprint's first-round sequences (Leduc's are its cards). Against
#: local best response on the same 300 deals neither beat equity's total: they fold
#: more to a pre-flop raise (docs/results.md).
PREFLOP_LEAVES: Final = ("equity", "blueprint", "continuations")
#: Run-outs an option may ask for: each holds about 100 bytes per private hand
#: (hold'em: 130 KB), and every leaf evaluation walks them all.
MAX_BOARDS = 4096


def _fits(build: Callable[[], object]) -> str | None:
    """None if ``build()`` makes its tree within the limits, else why not."""
    try:
        build()
    except TreeError as error:
        return str(error)
    return None


def _exact_problem(game: Game, sizes: tuple[tuple[float, ...], ...]) -> str | None:
    """Why the exact lookahead from a hand's first decision does not fit, or None.
    Counted first without building (:func:`strategies.cfr.tree.budget.tree_size`,
    bounded work) on every depth's sizes at every depth, a tree that holds the
    lookahead: the public tree's builder walks the whole betting tree before it
    can count, which many sizes make endless."""
    from strategies.cfr.strategy_file import MAX_BETTING_NODES, MAX_TREE_WORK
    from strategies.cfr.tree.budget import TreeBudgetError, tree_size

    union = BettingAbstraction(tuple(sorted({f for level in sizes for f in level})))
    hands = len(private_hands(game))
    try:
        tree_size(
            game,
            None if game.is_limit else union,
            max_betting_nodes=MAX_BETTING_NODES,
            max_public_nodes=MAX_ENTRIES // hands,
            max_work=MAX_TREE_WORK,
        )
    except TreeBudgetError as error:
        return f"{error} x {hands} hands = {MAX_ENTRIES:,} entries"
    return _fits(lambda: build_lookahead(game, State(game), (), sizes))


def _default_evaluator(game: Game) -> str:
    """The evaluator of a game the exact lookahead does not fit (:data:`LARGE_GAME_DEFAULTS`)."""
    from strategies.resolve.continuations import SHIPPED_BLUEPRINTS

    ships = shipped_name(game) in SHIPPED_BLUEPRINTS
    return str(LARGE_GAME_DEFAULTS["evaluator" if ships else "fallback"])


def _continuation_leaves(
    game: Game, path: str | None, count_text: str | None, preflop: str | None, blend_text: str | None, within_text: str | None
) -> ContinuationLeaves:
    """``evaluator=continuations``' leaves: the blueprint at ``path`` (default the
    one that ships for the game), its first ``continuations`` K continuations
    (default all), from the flop on unless ``preflop=continuations``; before the
    picks, blueprint values with ``preflop=blueprint``, ``preflop_blend`` of them
    (default 1) and the rest equity; ``within_bucket`` W (default 0) of each
    hand's showdown spread within its blueprint bucket
    (:class:`strategies.resolve.continuations.ContinuationEvaluator`)."""
    from strategies.cfr import compile_notice
    from strategies.resolve.continuations import BIASES, ContinuationLeaves, ContinuationValues, open_blueprint
    from strategies.resolve.evaluators import HandTable

    count_text = count_text or str(len(BIASES))
    if not count_text.isdigit() or not 1 <= int(count_text) <= len(BIASES):
        raise StrategyError(f"strategy 'resolve': continuations must be 1 to {len(BIASES)}, got {count_text!r}")
    preflop = preflop or PREFLOP_LEAVES[0]
    if preflop not in PREFLOP_LEAVES:
        raise StrategyError(f"strategy 'resolve': preflop={preflop!r} is not one of {', '.join(PREFLOP_LEAVES)}")
    blend = _blend(blend_text, preflop)
    within = _within(within_text)
    compile_notice.expect("strategies.cfr.abstraction._kernels")  # the blueprint buckets boards
    if preflop != "equity":
        compile_notice.expect("strategies.resolve.preflop_leaves")
    blueprint = open_blueprint(game, path, "resolve")
    first_round = 0 if preflop == "continuations" else 1
    return ContinuationLeaves(ContinuationValues(blueprint, int(count_text)), HandTable(game), first_round, blend, within)


def _within(text: str | None) -> float:
    """``within_bucket=W``: the weight of each hand's showdown spread within its
    blueprint bucket at the depth limits, 0 (none, the default) to 2."""
    if text is None:
        return 0.0
    within = _number(text)
    if not 0.0 <= within <= MAX_WITHIN:
        raise StrategyError(f"strategy 'resolve': within_bucket must be 0 to {MAX_WITHIN:g}, got {text!r}")
    return within


def _number(text: str) -> float:
    """An option's number, NaN where the text is none: a range check then refuses it in one line."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def _cap(text: str | None, kind: str) -> float:
    """``max_seconds=S``: the cap on each re-solve of the streets an evaluator
    ends (:class:`ResolvingStrategy`), more than 0 and at most
    :data:`MAX_CAP_SECONDS`; None: no cap."""
    if text is None:
        return 0.0
    if kind == "exact":
        raise StrategyError("strategy 'resolve': max_seconds= caps the streets an evaluator ends; evaluator=exact has none")
    cap = _number(text)
    if not 0.0 < cap <= MAX_CAP_SECONDS:
        raise StrategyError(f"strategy 'resolve': max_seconds must be more than 0 and at most {MAX_CAP_SECONDS:g}, got {text!r}")
    return cap


def _blend(text: str | None, preflop: str) -> float:
    """``preflop_blend=W``: the blueprint's share of the pre-flop leaves' values
    with ``preflop=blueprint`` (default 1), 0 with the other choices."""
    if preflop != "blueprint":
        if text is not None:
            raise StrategyError(f"strategy 'resolve': preflop_blend= goes with preflop=blueprint, not preflop={preflop}")
        return 0.0
    if text is None:
        return 1.0
    blend = _number(text)
    if not 0.0 < blend <= 1.0:
        raise StrategyError(f"strategy 'resolve': preflop_blend must be over 0 and at most 1 (0 is preflop=equity), got {text!r}")
    return blend


def _two_players(game: Game) -> None:
    """Refuse a game of more than two players, before any lookahead is sized
    (the re-solving code reads two ranges)."""
    if game.num_players != 2:
        raise StrategyError(f"strategy 'resolve' plays two-player games; the game has {game.num_players}")


def _parse(game: Game, options: Options, seed: int | None) -> ResolvingStrategy:
    from strategies.cfr import compile_notice

    _two_players(game)
    compile_notice.expect(*HAND_KERNELS)  # checking the sizes ranks hands already
    sizes_text = options.text("sizes", "1", meta="F+F/F") or "1"
    try:
        sizes = parse_sizes(sizes_text)
    except TreeError as error:
        raise StrategyError(f"strategy 'resolve': {error}") from None
    # The first decision's lookahead is the biggest a hand builds: checked here, before any hand.
    root = State(game)
    exact_problem = _exact_problem(game, sizes)
    large = exact_problem is not None
    kind = options.choice("evaluator", ("exact", "net", "equity", "continuations"), _default_evaluator(game) if large else "exact")
    blueprint_path = options.text("blueprint", None, meta="PATH")
    count_text = options.text("continuations", None, meta="K")
    preflop = options.text("preflop", None, meta="|".join(PREFLOP_LEAVES))
    blend_text = options.text("preflop_blend", None, meta="W")
    within_text = options.text("within_bucket", None, meta="W")
    if kind != "continuations" and (blueprint_path, count_text, preflop, blend_text, within_text) != (None,) * 5:
        raise StrategyError(
            "strategy 'resolve': blueprint=, continuations=, preflop=, preflop_blend= and within_bucket= go with evaluator=continuations"
        )
    default_iterations = str(LARGE_GAME_DEFAULTS["iterations"] if large else 1000)
    default_boards = str(LARGE_GAME_DEFAULTS["boards"] if large else DEFAULT_MAX_BOARDS)
    iterations_text = options.text("iterations", default_iterations, meta="N") or default_iterations
    preflop_text = options.text("preflop_iterations", None, meta="N")
    root_text = options.text("root_iterations", None, meta="N")
    river_text = options.text("river_iterations", None, meta="N")
    solver = options.choice("solver", SOLVERS, str(LARGE_GAME_DEFAULTS["solver"]) if large and kind != "exact" else SOLVERS[0])
    seconds_text = options.text("seconds", "0", meta="S") or "0"
    cap_text = options.text("max_seconds", None, meta="S")
    model = options.text("model", None, meta="PATH")
    boards_text = options.text("boards", default_boards, meta="K") or default_boards
    record = options.text("record", None, meta="PATH")
    try:
        iterations = int(iterations_text)
        seconds = float(seconds_text)
        boards = int(boards_text)
        preflop_iterations = iterations * int(str(LARGE_GAME_DEFAULTS["preflop"]) if large else 1) if preflop_text is None else int(preflop_text)
        root_iterations = (
            max(preflop_iterations, iterations * int(str(LARGE_GAME_DEFAULTS["root"])) if large else 0) if root_text is None else int(root_text)
        )
        river_iterations = iterations * int(str(LARGE_GAME_DEFAULTS["river"]) if large else 1) if river_text is None else int(river_text)
    except ValueError:
        raise StrategyError(
            f"strategy 'resolve': iterations={iterations_text!r}, preflop_iterations={preflop_text!r},"
            f" root_iterations={root_text!r}, river_iterations={river_text!r}, seconds={seconds_text!r} and"
            f" boards={boards_text!r} must be numbers"
        ) from None
    if not 1 <= boards <= MAX_BOARDS:
        raise StrategyError(f"strategy 'resolve': boards must be 1 to {MAX_BOARDS}, got {boards}")
    if model is not None and kind != "net":
        raise StrategyError("strategy 'resolve': model=PATH goes with evaluator=net")
    max_seconds = _cap(cap_text, kind)
    if solver != SOLVERS[0] and kind == "exact":
        raise StrategyError(f"strategy 'resolve': solver={solver} solves the streets an evaluator ends; evaluator=exact solves by CFR+ only")
    if kind == "exact" and exact_problem is not None:
        raise StrategyError(
            f"strategy 'resolve': evaluator=exact looks ahead to the end of the hand, and from the first decision"
            f" {exact_problem}; evaluator=equity (the default here) stops at the end of each street"
        )
    from strategies.resolve.evaluators import EquityEvaluator, HandTable, NetEvaluator  # numba: only for a resolve agent
    from strategies.resolve.depth_limited import DISCOUNTED_CFR

    leaves = _continuation_leaves(game, blueprint_path, count_text, preflop, blend_text, within_text) if kind == "continuations" else None
    if kind != "exact":
        from strategies.resolve.depth_limited import build_street_tree

        abstraction = lookahead_abstraction(game, root, sizes)
        picks = leaves.values.count if leaves is not None and leaves.first_round == 0 else 0
        street_problem = _fits(lambda: build_street_tree(game, root, (), abstraction, HandTable(game), continuations=picks))
        if street_problem is not None:
            raise StrategyError(f"strategy 'resolve': sizes={sizes_text}: {street_problem}")
    evaluator: Evaluator | None = None
    if kind in ("equity", "continuations"):
        evaluator = EquityEvaluator(game, max_boards=boards, seed=0 if seed is None else seed)
    elif kind == "net":
        from strategies.resolve.values import ValueNetError

        name = shipped_name(game)
        if model is None and (name is None or name not in SHIPPED_NETS):
            raise StrategyError(
                "strategy 'resolve': no value net ships for this game; give evaluator=net,model=PATH"
                " (arena train-values) or use evaluator=equity"
            )
        try:
            evaluator = NetEvaluator(game, model if model is not None else SHIPPED_NETS[str(name)])
        except ValueNetError as error:
            raise StrategyError(f"strategy 'resolve': {error}") from None
    agent = ResolvingStrategy(
        game, sizes=sizes, iterations=iterations, preflop_iterations=preflop_iterations, root_iterations=root_iterations,
        river_iterations=river_iterations, discount=DISCOUNTED_CFR if solver == "dcfr" else None, seconds=seconds, seed=seed,
        max_seconds=max_seconds, evaluator=evaluator, max_boards=boards,
        continuations=leaves, record=record,
    )  # fmt: skip
    agent.warm_up()  # before any dealer's clock: a seat is built before the dealer listens
    return agent


def resolve_from_blueprint(game: Game, path: str | Path, *, seed: int | None = None, record: str | None = None) -> ResolvingStrategy:
    """``resolve:evaluator=continuations`` with its other defaults, its leaves
    from the blueprint at ``path`` (given apart from a spec string, which a path
    with a comma would break): how the named bot ``hunl-modicum`` plays its file
    (:mod:`strategies.bots`).

    ``record`` is the ``record=PATH`` option (:class:`ResolvingStrategy`).

    Raises:
        StrategyError: the file is not a blueprint of ``game``, or ``record`` cannot be opened (one line).
    """
    options = {"evaluator": "continuations", "blueprint": str(path)} | ({} if record is None else {"record": record})
    return _parse(game, Options("resolve", options), seed)


@register(
    "resolve",
    "continual re-solving (DeepStack): CFR+ with the gadget at every decision on a lookahead from the real state;"
    " sizes=F+F/F (pot fractions per depth, default 1), iterations=N (1000) or seconds=S, preflop_iterations=N (the"
    " first street's; iterations, 4 x iterations where the defaults below apply), root_iterations=N (the root solve's,"
    " once per agent; preflop_iterations, 10 x iterations where the defaults below apply), river_iterations=N (the last"
    " street's; iterations, 4 x where the defaults below apply), solver=cfr+|dcfr (the streets an evaluator ends:"
    " CFR+ or discounted CFR; dcfr where the defaults below apply); evaluator=exact (to the"
    " end of the hand, default), net (learned values at the street's end; model=PATH, default the shipped one) or"
    " equity (a weaker heuristic: showdown equity at the street's end over at most boards=K run-outs, default 64) or"
    " continuations (Modicum's leaves: the opponent picks among continuations=K (4) of blueprint=PATH (default the"
    " shipped HUNL one) from the flop on, or pre-flop too with preflop=continuations; before it equity leaves, or the"
    " blueprint's values with preflop=blueprint, preflop_blend=W of them and the rest equity's, default 1;"
    " within_bucket=W adds W x each hand's showdown spread within its blueprint bucket, default 0);"
    " max_seconds=S stops a re-solve of those streets' iterations after S seconds (default none: play then depends on"
    " the machine's speed where the cap is reached); record=PATH appends each hand's policies and values to PATH"
    " (AIVAT with the agent's own values, analysis/recorded_values.py);"
    " where the exact lookahead does not fit (hold'em) the defaults are evaluator=continuations where a blueprint"
    " ships (HUNL), else equity, iterations=100, solver=dcfr, boards=32 (pre-flop and with one card to come: every board)",
)
def _resolve(game: Game, options: Options, *, seed: int | None) -> Strategy:
    return _parse(game, options, seed)
