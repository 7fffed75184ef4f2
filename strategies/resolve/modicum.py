"""Modicum: depth-limited solving from a small blueprint (Brown, Sandholm &
Amos, "Depth-Limited Solving for Imperfect-Information Games", NeurIPS 2018).

**Pre-flop** (``preflop=resolve``, the default) it solves the pre-flop
street from the real state like any other, but the leaves at the flop are
valued by each hand's showdown equity (as ``resolve:evaluator=equity`` values
them: :class:`strategies.resolve.evaluators.EquityEvaluator`), not by the
blueprint's continuations: with 3 pre-flop buckets those cannot tell AA from
77. ``preflop=blueprint`` plays the blueprint's strategy instead (Modicum's
choice, with a far finer blueprint), reading the real betting on its tree with
:func:`strategies.resolve.continuations.abstract_history` and playing the
real image of its abstract actions (:func:`strategies.translation.real_action`).
Against local best response the choice did not show overall (the same 300
deals: +114 ± 2749 mbb/g, all-in adjusted; benchmarks/hunl_lbr.py): what LBR
wins comes mostly after the flop (docs/results.md).

**From the flop on**, at each of its decisions it solves the rest of the
current street from the real state (:func:`strategies.resolve.depth_limited.build_street_tree`:
fold, call, the ``sizes`` pot fractions and all-in; CFR+ with linear
averaging). Each depth limit (the next street's deal) is a decision of the
opponent among K continuation strategies, every leaf valued by the
blueprint's continuation values (:mod:`strategies.resolve.continuations`);
on the river the tree runs to the end of the hand. The solve is *unsafe*
re-solving, as Modicum's: the root ranges are estimates, not constraints. The
opponent's range is the product over its actions of the blueprint's
probabilities of them (an off-tree raise split between the two nearest
abstract sizes by the pseudo-harmonic mapping); our own is the product of
what we actually played: the root strategy of our own earlier re-solves
(each cached by its public history; the blueprint's probabilities where it
played). Off-tree sizes of the opponent need no more than that: the
re-solve starts from the real state, its pot and stacks, so the real bet is
in the tree; only the range update and the leaves' blueprint nodes read the
bet as its nearest abstract sizes.

Given the public history the agent is deterministic (CFR is, and ranges are a
function of the history), so :meth:`ModicumStrategy.policy` is the re-solve's
strategy for every private hand, which LBR and AIVAT need; ``seed`` only
seeds the draw of the action played.
"""

from __future__ import annotations

import copy
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game
from poker.protocol import MatchState
from poker.state import CALL, Action, State
from strategies.base import Options, PublicState, Strategy, StrategyError, on_columns, register
from strategies.cfr.tree.public import TreeError, tree_actions
from strategies.resolve.blas import one_blas_thread
from strategies.resolve.lookahead import checked_down, lookahead_abstraction, parse_sizes
from strategies.translation import real_action

if TYPE_CHECKING:  # the solver (numba) is imported when an agent is made, not when strategies register
    from strategies.resolve.continuations import Blueprint
    from strategies.resolve.depth_limited import DepthLimitedResolution

__all__ = ["ModicumStrategy", "modicum_from_file"]

#: CFR+ iterations per re-solve by default: p99 0.74 s of CPU a decision and 1.22 s a
#: hand, pre-flop re-solved too (benchmarks/modicum_latency.py), so that a loaded 2-core machine (a load
#: average of 5 and more) stays within 2 s a decision and the dealer's 7 s a hand;
#: 100 took p99 1.88 s of CPU, and a match at a load of 9 ran out of the 7 s.
DEFAULT_ITERATIONS = 50
#: Raise sizes of the re-solve by default (pot fractions; all-in always kept).
DEFAULT_SIZES = "0.5+1/1/"
#: Continuation strategies by default: all of :data:`strategies.resolve.continuations.BIASES`.
DEFAULT_CONTINUATIONS = 4
#: Run-outs of an all-in showdown before the river, at most, by default.
DEFAULT_MAX_BOARDS = 16
#: Pre-flop play by default (:class:`ModicumStrategy`'s ``preflop``).
DEFAULT_PREFLOP = "resolve"
#: The ways to play pre-flop.
PREFLOP_MODES = ("resolve", "blueprint")
#: Re-solves kept (the oldest goes first): a hand's own decisions and the histories an analysis asks about.
CACHED_SOLVES = 64


class ModicumStrategy(Strategy):
    """Depth-limited solving with continuation strategies (module docstring).

    Args:
        game: a two-player game.
        blueprint: the abstract-game strategy played pre-flop and continued at leaves.
        sizes: pot fractions of the re-solve's raises per depth (:func:`parse_sizes`).
        iterations: CFR+ iterations per re-solve.
        continuations: K, the first K of :data:`strategies.resolve.continuations.BIASES`.
        seed: seeds the draws of :meth:`act`.
        max_boards: run-outs of an all-in showdown before the river, at most
            (and of the equity leaves of a pre-flop re-solve).
        preflop: ``"resolve"``: pre-flop decisions re-solve the pre-flop street
            too, its leaves valued by showdown equity (``resolve``'s heuristic);
            ``"blueprint"``: the blueprint plays pre-flop (Modicum's own choice).
    """

    name = "modicum"

    def __init__(
        self,
        game: Game,
        blueprint: Blueprint,
        *,
        sizes: tuple[tuple[float, ...], ...] = ((0.5, 1.0), (1.0,), ()),
        iterations: int = DEFAULT_ITERATIONS,
        continuations: int = DEFAULT_CONTINUATIONS,
        seed: int | None = None,
        max_boards: int = DEFAULT_MAX_BOARDS,
        preflop: str = DEFAULT_PREFLOP,
    ) -> None:
        if game.num_players != 2:
            raise StrategyError(f"strategy 'modicum' plays two-player games; the game has {game.num_players}")
        if blueprint.game.game != game:
            raise StrategyError("strategy 'modicum': the blueprint was solved for another game")
        one_blas_thread()
        from strategies.resolve.continuations import BIASES, ContinuationLeaves, ContinuationValues
        from strategies.resolve.evaluators import HandTable

        if iterations < 1 or not 1 <= continuations <= len(BIASES):
            raise StrategyError(
                f"strategy 'modicum': iterations must be at least 1 and continuations 1 to {len(BIASES)},"
                f" got {iterations} and {continuations}"
            )
        self.values = ContinuationValues(blueprint, continuations)
        self.table = HandTable(game)
        # One evaluator per chooser, kept: its board and leaf tables are reused by every re-solve.
        self._leaves = ContinuationLeaves(self.values, self.table, 1)
        self.game, self.blueprint, self.sizes = game, blueprint, sizes
        _check_preflop(preflop)
        self.iterations, self.max_boards, self.preflop = iterations, max_boards, preflop
        self.seed = secrets.randbits(63) if seed is None else seed
        self._rng = np.random.default_rng(self.seed)
        self._hand_row = {tuple(int(c) for c in h): i for i, h in enumerate(private_hands(game))}
        self._cache: dict[tuple[str, tuple[int, ...]], DepthLimitedResolution] = {}
        #: Wall seconds of every re-solve this agent ran.
        self.solve_seconds: list[float] = []
        self._warm_up()

    def _warm_up(self) -> None:
        """Pay the one-off costs now, before a dealer's clock runs (it allows 7 s a
        hand on average; compiling the kernels on a cold cache takes minutes): the
        numba kernels (compiled, or loaded from their cache) and the blueprint's
        tables, by a throw-away copy (one CFR+ iteration, its own re-solves) that
        re-solves a hand checked down to the last street's first decision: the
        depth-limited solves with continuation leaves on the streets before, the
        showdown-only one on the last; and the blueprint's buckets of a board of
        every street (the opponent's actions there are read off the blueprint)."""
        game = self.game
        state, board = checked_down(game)
        for round_ in range(1, game.num_rounds):
            self.blueprint.sequences.buckets(round_, list(board[: game.total_board_cards(round_)]))
        probe = copy.copy(self)
        probe.iterations, probe._cache, probe.solve_seconds = 1, {}, []
        if state.round > 0:
            probe.resolution(state, board)
        if self.preflop == "resolve":
            probe.resolution(State(game), ())

    def _node(self, abstract: State) -> int:
        return self.blueprint.game.tree.node_of_key[abstract.betting_string()]

    # -- ranges and re-solves ---------------------------------------------------------------

    def ranges(self, state: State, board: tuple[int, ...]) -> npt.NDArray[np.float64]:
        """Both positions' ranges ``[2, H]`` at ``state`` (module docstring), zero on
        hands that clash with ``board``; a range our own actions made empty (a
        history we do not play) is taken uniform."""
        from strategies.resolve.continuations import abstract_history

        game = self.game
        ranges = np.ones((2, len(self._hand_row)))
        me = state.current_player()
        steps, _ = abstract_history(state, self.blueprint.betting)
        for step in steps:
            actor = step.real.current_player()
            seen = board[: game.total_board_cards(step.real.round)]
            own = None
            if actor == me and self._resolves(step.real):
                resolved = self.resolution(step.real, seen)
                actions = resolved.tree.actions(0)
                if step.action in actions:
                    own = resolved.root_policy()[:, actions.index(step.action)]
            if own is None:
                rows = self.blueprint.rows(self._node(step.abstract), seen)
                own = sum((w * rows[:, i] for i, w in step.weights), np.zeros(len(rows)))
            ranges[actor] *= own
        ranges *= self.table.board_mask(board)[None, :]
        for p in range(2):
            if not ranges[p].sum() > 0:
                ranges[p] = self.table.board_mask(board)
        return ranges

    def _resolves(self, state: State) -> bool:
        """Whether our decision at ``state`` is re-solved (else the blueprint plays it)."""
        return state.round > 0 or self.preflop == "resolve"

    def resolution(self, state: State, board: tuple[int, ...]) -> DepthLimitedResolution:
        """The re-solve at our decision ``state`` (``board``: the cards dealt so far), cached."""
        board = tuple(board[: self.game.total_board_cards(state.round)])
        key = (state.betting_string(), board)
        known = self._cache.get(key)
        if known is None:
            if len(self._cache) >= CACHED_SOLVES:  # LBR asks about many histories and never starts a hand
                self._cache.pop(next(iter(self._cache)))
            known = self._cache[key] = self._solve(state, board)
        return known

    def _solve(self, state: State, board: tuple[int, ...]) -> DepthLimitedResolution:
        from strategies.resolve.depth_limited import build_street_tree, solve_street
        from strategies.resolve.evaluators import EquityEvaluator, LeafEvaluator

        start = time.perf_counter()
        game = self.game
        position = state.current_player()
        ranges = self.ranges(state, board)
        last = state.round == game.num_rounds - 1
        tree = build_street_tree(
            game,
            state,
            board,
            lookahead_abstraction(game, state, self.sizes),
            self.table,
            continuations=0 if last or state.round == 0 else self.values.count,
            chooser=1 - position,
        )
        evaluator: LeafEvaluator
        if state.round == 0:  # pre-flop: 1326 hands' own equities, not the blueprint's 3 buckets
            evaluator = EquityEvaluator(game, max_boards=self.max_boards, seed=self.seed)
        else:
            evaluator = self._leaves.evaluator(1 - position)
        result = solve_street(
            tree,
            evaluator,
            position,
            ranges[position],
            opponent_range=ranges[1 - position],
            iterations=self.iterations,
            max_boards=self.max_boards,
            seed=self.seed,
        )
        self.solve_seconds.append(time.perf_counter() - start)
        return result

    # -- decisions ------------------------------------------------------------------------

    def decision(self, state: State, board: tuple[int, ...]) -> tuple[list[Action], npt.NDArray[np.float64]]:
        """The real actions at our decision ``state`` and their probabilities for
        every private hand ``[H, n]`` (an action may appear twice pre-flop, where
        two abstract raises clamp to one real size)."""
        from strategies.resolve.continuations import abstract_history

        if self._resolves(state):
            resolved = self.resolution(state, board)
            return list(resolved.tree.actions(0)), resolved.root_policy()
        _, abstract = abstract_history(state, self.blueprint.betting)
        if abstract is None:
            return [CALL], np.ones((len(self._hand_row), 1))
        real = [real_action(abstract, action, state) for action in tree_actions(abstract, self.blueprint.betting)]
        return real, self.blueprint.rows(self._node(abstract), ())

    def new_hand(self, view: MatchState) -> None:
        self._cache.clear()

    def act(self, view: MatchState) -> Action:
        state = view.state
        hand = self._hand_row.get(tuple(sorted(int(c) for c in view.hole[view.viewer])))
        actions, rows = self.decision(state, tuple(view.board))
        if hand is None:
            return CALL
        row = rows[hand]
        total = float(row.sum())
        action = actions[int(self._rng.choice(len(actions), p=row / total))] if total > 0 else CALL
        return action if state.is_legal(action) else CALL

    def actions(self, state: State) -> tuple[Action, ...]:
        """The actions the agent may take in ``state``: the columns to ask :meth:`policy` for."""
        if self._resolves(state):
            return tuple(tree_actions(state, lookahead_abstraction(self.game, state, self.sizes)))
        return tuple(dict.fromkeys(self.decision(state, ())[0]))

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        """Probabilities of ``public.actions`` for every private hand. Raises
        :class:`NotImplementedError` if the agent plays an action with positive
        probability that is not a column."""
        actions, rows = self.decision(public.state, tuple(public.board))
        return on_columns("modicum", public, actions, rows)


def _check_preflop(preflop: str) -> None:
    if preflop not in PREFLOP_MODES:
        raise StrategyError(f"strategy 'modicum': preflop={preflop!r} is not one of {', '.join(PREFLOP_MODES)}")


def _parse(game: Game, options: Options, seed: int | None) -> ModicumStrategy:
    path = options.text("blueprint", None, meta="PATH")
    sizes_text = options.text("sizes", DEFAULT_SIZES, meta="F+F/F") or DEFAULT_SIZES
    preflop = options.text("preflop", DEFAULT_PREFLOP, meta="|".join(PREFLOP_MODES)) or DEFAULT_PREFLOP
    numbers = {
        "iterations": options.text("iterations", str(DEFAULT_ITERATIONS), meta="N") or str(DEFAULT_ITERATIONS),
        "continuations": options.text("continuations", str(DEFAULT_CONTINUATIONS), meta="K") or str(DEFAULT_CONTINUATIONS),
        "boards": options.text("boards", str(DEFAULT_MAX_BOARDS), meta="K") or str(DEFAULT_MAX_BOARDS),
    }
    try:
        sizes = parse_sizes(sizes_text)
    except TreeError as error:
        raise StrategyError(f"strategy 'modicum': {error}") from None
    if not all(text.isdigit() and int(text) >= 1 for text in numbers.values()):
        raise StrategyError(
            "strategy 'modicum': " + ", ".join(f"{k}={v!r}" for k, v in numbers.items()) + " must be whole numbers, at least 1"
        )
    _check_preflop(preflop)
    return modicum_from_file(
        game,
        path,
        seed=seed,
        sizes=sizes,
        iterations=int(numbers["iterations"]),
        continuations=int(numbers["continuations"]),
        max_boards=int(numbers["boards"]),
        preflop=preflop,
    )


def modicum_from_file(
    game: Game,
    path: str | Path | None,
    *,
    seed: int | None = None,
    sizes: tuple[tuple[float, ...], ...] | None = None,
    iterations: int = DEFAULT_ITERATIONS,
    continuations: int = DEFAULT_CONTINUATIONS,
    max_boards: int = DEFAULT_MAX_BOARDS,
    preflop: str = DEFAULT_PREFLOP,
) -> ModicumStrategy:
    """The agent on the blueprint in ``path`` (an abstract-game strategy file or
    its compact file; None: the one that ships for the game), the defaults unless given.

    Raises:
        StrategyError: none ships, the file cannot be read or is not a blueprint of ``game`` (one line).
    """
    from strategies.cfr import compile_notice
    from strategies.resolve.agent import HAND_KERNELS
    from strategies.resolve.continuations import open_blueprint

    # Loading the blueprint buckets boards already: one compile notice for all of a hand's kernels.
    compile_notice.expect(*HAND_KERNELS, "strategies.cfr.abstraction._kernels")
    blueprint = open_blueprint(game, path, "modicum")
    return ModicumStrategy(
        game,
        blueprint,
        sizes=parse_sizes(DEFAULT_SIZES) if sizes is None else sizes,
        iterations=iterations,
        continuations=continuations,
        seed=seed,
        max_boards=max_boards,
        preflop=preflop,
    )


@register(
    "modicum",
    "depth-limited solving (Modicum): CFR+ on the rest of the street from the real state at every decision,"
    " the opponent picking among K continuation strategies at the street's end;"
    f" blueprint=PATH (abstract-game file or its compact file; default the shipped HUNL one), sizes=F+F/F"
    f" ({DEFAULT_SIZES}), iterations=N ({DEFAULT_ITERATIONS}), continuations=K (1-4: blueprint, fold-, call-,"
    f" raise-biased; 4), boards=K (all-in run-outs, {DEFAULT_MAX_BOARDS}), preflop=resolve|blueprint (re-solve"
    f" pre-flop with equity leaves, or play the blueprint there; {DEFAULT_PREFLOP})",
)
def _modicum(game: Game, options: Options, *, seed: int | None) -> Strategy:
    return _parse(game, options, seed)
