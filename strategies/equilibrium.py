"""The equilibrium agent: plays a strategy file written by ``arena solve … -o FILE``.

``equilibrium:file=PATH`` loads either layout of :mod:`strategies.cfr.strategy_file`:
a ``public-tree`` file (``cfr``, ``cfr+``: ``float64[D, A, H]`` on the public
tree; suit-isomorphic trees included) or a ``buckets`` file (``pcs``,
``abstract``: bucket tables played through
:func:`strategies.cfr.solvers.pcs.bucket_strategy`) or a ``three-player`` file
(``float64[D, A, H]`` on the three-player tree of
:mod:`strategies.cfr.solvers.multiplayer`; 3p Kuhn and Leduc) or a
``three-player-buckets`` file (``es-mccfr``: bucket tables of sampled
three-player CFR, :func:`strategies.cfr.solvers.sampled_multiplayer.policy_rows`;
3p limit hold'em, where the real betting past the file's betting cut is off
the tree and the agent calls, PR2's rule). At every decision it
finds the information set (betting, board, own cards) and samples its action
from the stored average strategy with a ``numpy`` generator seeded from the
strategy's seed.

Limit games: the tree holds every legal action, so the real betting is a node
of the tree. No-limit games: the real betting is re-derived as abstract betting
at every decision by :func:`strategies.translation.translate` (pseudo-harmonic
mapping of off-tree raises, randomised by a hash of seed, hand id and betting,
so the same hand always maps the same way; nothing is carried between
decisions), and an abstract raise is played as the same pot fraction of the
real pot, clamped into ``state.raise_bounds()`` (all-in stays all-in). Where
the abstract and the real hand part (see :mod:`strategies.translation`), or
anything else leaves the tree, the agent calls. Every answer is checked
against ``view.state`` before it is sent (fallback: call), so it never sends
an illegal action.

:meth:`EquilibriumStrategy.policy` states the same policy for every private
hand at once: on the tree (every limit state, and no-limit states reached by
tree actions) it is the file's strategy exactly; off the tree it is the
agent's policy averaged over the translations of the opponent's raises, each
weighted by its probability and by how likely our own earlier actions were
under it (Bayes over the hash's randomness). Its columns are
``public.actions``; :meth:`EquilibriumStrategy.actions` gives the real actions
the agent may take in a state.
"""

from __future__ import annotations

import secrets
from pathlib import Path as FilePath
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game, format_game
from poker.protocol import MatchState
from poker.state import CALL, Action, State
from strategies.base import Options, PublicState, Strategy, StrategyError, on_columns, register
from strategies.cfr.tree.public import BettingAbstraction, DecisionRows, Tree, tree_actions
from strategies.translation import Path, real_action, translate, translation_draw

if TYPE_CHECKING:  # the solver's modules (numba) are imported only when a file is loaded
    from strategies.cfr.solvers.pcs import PCSStrategy
    from strategies.cfr.solvers.sampled_multiplayer import BucketTable
    from strategies.cfr.strategy_file import StrategyFile
    from strategies.cfr.tree.multi import MultiTree

__all__ = ["EquilibriumStrategy", "StrategyTable", "load_table"]

#: Loaded tables by (path, modification time, size): the agents of one process share them.
_TABLES: Final[dict[tuple[str, int, int], StrategyTable]] = {}


class StrategyTable:
    """A strategy file's average strategy, asked per abstract state and board:
    :meth:`rows` gives ``float64[H, n]`` (rows follow :func:`private_hands`,
    columns ``tree_actions(state, abstraction)``)."""

    def __init__(self, saved: StrategyFile) -> None:
        from strategies.cfr.solvers.pcs import bucket_strategy
        from strategies.cfr.strategy_file import BUCKETS, THREE_PLAYER, THREE_PLAYER_BUCKETS

        self.game = saved.game
        self.abstraction: BettingAbstraction | None = saved.abstraction
        self.layout = saved.layout
        self.exploitability = saved.exploitability
        self._pcs: PCSStrategy | None = None
        self._sampled: tuple[BucketTable, npt.NDArray[np.float32]] | None = None
        if saved.layout == BUCKETS:
            self._pcs = bucket_strategy(saved)
            return
        if saved.layout == THREE_PLAYER_BUCKETS:
            self._sampled = _sampled_table(saved), saved.strategy.astype(np.float32, copy=False)
            return
        tree: Tree | MultiTree = saved.build_multi_tree() if saved.layout == THREE_PLAYER else saved.build_tree()
        self._strategy = saved.strategy
        self._rows = DecisionRows.of(tree, isomorphism=saved.isomorphism)

    def rows(self, state: State, board: tuple[int, ...]) -> npt.NDArray[np.float64]:
        """The strategy at the abstract decision ``state`` with ``board`` (the cards
        dealt so far, in dealing order) for every private hand. Rows of hands that
        clash with the board (or have no stored strategy) are uniform.

        Raises:
            KeyError: ``state`` with ``board`` is not a decision of the file's tree.
        """
        game = self.game
        board = board[: game.total_board_cards(state.round)]
        if self._sampled is not None:
            from strategies.cfr.solvers.sampled_multiplayer import policy_rows

            return policy_rows(*self._sampled, state, board)
        if self._pcs is not None:
            from strategies.cfr.solvers.pcs import PCSError

            actions = tuple(tree_actions(state, self.abstraction))
            try:
                return self._pcs.policy(PublicState(state, board, actions))
            except PCSError as error:
                raise KeyError(str(error)) from None
        found = self._rows.find(state, board)
        if found is None:
            raise KeyError(
                f"betting {state.betting_string()!r} with board {list(board)} is not a decision of the strategy's tree"
            )
        row, columns = found
        n = len(tree_actions(state, self.abstraction))
        rows: npt.NDArray[np.float64] = self._strategy[row, :n, :].T[columns]
        empty = rows.sum(axis=1) <= 0
        if empty.any():
            rows = rows.copy()
            rows[empty] = 1.0 / n
        return rows


def _sampled_table(saved: StrategyFile) -> BucketTable:
    """The bucket table of a ``three-player-buckets`` file (its abstraction checked)."""
    from strategies.cfr.abstraction.card_tables import AbstractionError
    from strategies.cfr.solvers.sampled_multiplayer import ABSTRACTION_DIGEST, bucket_table
    from strategies.cfr.strategy_file import BETTING_CUT, StrategyFileError
    from strategies.cfr.tree.public import TreeError

    digest = saved.settings.get(ABSTRACTION_DIGEST)
    try:
        return bucket_table(saved.game, saved.card_abstraction, str(saved.settings[BETTING_CUT]), digest)
    except (AbstractionError, TreeError) as error:
        raise StrategyFileError(f"the strategy's card abstraction: {error}") from None


def load_table(path: str | FilePath) -> StrategyTable:
    """The :class:`StrategyTable` of the strategy file or compact playing file
    (:mod:`strategies.cfr.compact`) at ``path`` (cached per path, modification
    time and size).

    Raises:
        StrategyFileError: not a strategy file we can play.
        OSError: it cannot be read.
    """
    from strategies.cfr.compact import load_playing

    resolved = FilePath(path).resolve()
    stat = resolved.stat()
    key = (str(resolved), stat.st_mtime_ns, stat.st_size)
    table = _TABLES.get(key)
    if table is None:
        table = StrategyTable(load_playing(resolved))
        if len(_TABLES) >= 8:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[key] = table
    return table


class EquilibriumStrategy(Strategy):
    """Plays the average strategy of a :class:`StrategyTable` for one seat (see
    the module docstring). ``seed`` seeds both the action draws and the
    translation's hash (``None``: a random seed)."""

    name = "equilibrium"

    def __init__(self, game: Game, table: StrategyTable, *, seed: int | None = None) -> None:
        if table.game != game:
            raise StrategyError(
                "the strategy file was solved for another game:\n"
                f"{format_game(table.game)}\nnot the game being played:\n{format_game(game)}"
            )
        self.game = game
        self.table = table
        self.abstraction = table.abstraction
        self.seed = secrets.randbits(63) if seed is None else seed
        self._rng = np.random.default_rng(self.seed)
        self._hand_row = {tuple(int(c) for c in h): i for i, h in enumerate(private_hands(game))}

    # -- acting ----------------------------------------------------------------------

    def act(self, view: MatchState) -> Action:
        state = view.state
        action = self._choose(view)
        return action if state.is_legal(action) else CALL

    def _choose(self, view: MatchState) -> Action:
        state = view.state
        abstract = self._abstract(state, view.hand_id)
        if abstract is None:
            return CALL
        try:
            rows = self.table.rows(abstract, view.board)
        except KeyError:
            return CALL
        hand = self._hand_row.get(tuple(sorted(int(c) for c in view.hole[view.viewer])))
        if hand is None:
            return CALL
        row = rows[hand]
        actions = tree_actions(abstract, self.abstraction)
        total = float(row.sum())
        if not total > 0:
            return CALL
        draw = self._rng.random() * total
        chosen = len(actions) - 1
        for i, p in enumerate(row):
            if draw < p:
                chosen = i
                break
            draw -= p
        while row[chosen] <= 0:  # rounding left the draw past the last positive weight
            chosen -= 1
        return real_action(abstract, actions[chosen], state)

    def _abstract(self, state: State, hand_id: int) -> State | None:
        """The abstract decision state for the real ``state`` (one translation, by
        the hash of seed, hand and betting), or ``None`` where the agent falls back."""
        if self.abstraction is None:
            return state
        seed = self.seed
        (path,) = translate(
            state,
            self.abstraction,
            player=state.current_player(),
            draw=lambda betting: translation_draw(seed, hand_id, betting),
        )
        return _decision(path, state)

    # -- the policy of every private hand ------------------------------------------------

    def _paths(self, state: State) -> list[Path]:
        if self.abstraction is None:
            return [Path(1.0, state)]
        paths = translate(state, self.abstraction, player=state.current_player())
        # Paths on which our own past actions are impossible drop out (unless all are:
        # a history this agent did not play, e.g. another agent's seat).
        return [p for p in paths if p.possible and p.probability > 0] or [p for p in paths if p.probability > 0]

    def actions(self, state: State) -> tuple[Action, ...]:
        """The real actions the agent may take in ``state`` (the columns for
        :meth:`policy`): the real images of the abstract actions of every
        translation, in fold, call, raise-size order; call where it falls back."""
        found: set[Action] = set()
        for path in self._paths(state):
            abstract = _decision(path, state)
            if abstract is None:
                found.add(CALL)
                continue
            found.update(real_action(abstract, a, state) for a in tree_actions(abstract, self.abstraction))
        return tuple(sorted(found, key=lambda a: (a.type, a.size)))

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        """Probabilities of ``public.actions`` for every private hand (see the module
        docstring). Raises :class:`NotImplementedError` when the agent plays an
        action with positive probability that is not among the columns."""
        state = public.state
        paths = self._paths(state)
        n_hands = len(self._hand_row)
        columns = {a: i for i, a in enumerate(public.actions)}
        parts: list[npt.NDArray[np.float64]] = []
        weights: list[npt.NDArray[np.float64]] = []
        for path in paths:
            parts.append(self._columns(path, public, columns))
            weight = np.full(n_hands, path.probability)
            for step in path.steps if len(paths) > 1 else ():
                rows = self.table.rows(step.abstract, public.board)
                weight = weight * rows[:, list(step.indices)].sum(axis=1)
            weights.append(weight)
        if len(parts) == 1:
            return parts[0]
        weight_matrix = np.array(weights)
        total = weight_matrix.sum(axis=0)
        prior = np.array([p.probability for p in paths])
        weight_matrix[:, total <= 0] = prior[:, None] / prior.sum()
        total = weight_matrix.sum(axis=0)
        mixed: npt.NDArray[np.float64] = np.einsum("ph,pha->ha", weight_matrix, np.array(parts)) / total[:, None]
        return mixed

    def _columns(self, path: Path, public: PublicState, columns: dict[Action, int]) -> npt.NDArray[np.float64]:
        """One translation's policy on the columns of ``public.actions``."""
        state = public.state
        n_hands = len(self._hand_row)
        abstract = _decision(path, state)
        rows: npt.NDArray[np.float64]
        if abstract is not None:
            try:
                rows = self.table.rows(abstract, public.board)
                real = [real_action(abstract, a, state) for a in tree_actions(abstract, self.abstraction)]
            except KeyError:
                abstract = None
        if abstract is None:
            rows, real = np.ones((n_hands, 1)), [CALL]
        if len(real) == len(public.actions) and all(columns.get(a) == i for i, a in enumerate(real)):
            return rows.copy()  # the tree's own columns: the file's numbers exactly
        return on_columns(self.name, public, real, rows, "; ask for EquilibriumStrategy.actions(state)")


def _decision(path: Path, real: State) -> State | None:
    """The path's abstract state if it is the real decision's (same player to act)."""
    abstract = path.abstract
    if abstract is None or abstract.finished or real.finished:
        return None
    if abstract.current_player() != real.current_player() or abstract.round != real.round:
        return None
    return abstract


@register(
    "equilibrium",
    "plays a solved strategy file (arena solve ... -o FILE): file=PATH; no-limit off-tree bets by pseudo-harmonic"
    " translation",
)
def _equilibrium(game: Game, options: Options, *, seed: int | None) -> Strategy:
    path = options.text("file", meta="PATH")
    if not path:
        raise StrategyError(
            "strategy 'equilibrium' needs file=PATH: a strategy file written by `arena solve GAME ... -o PATH`"
        )
    from strategies.cfr.strategy_file import StrategyFileError

    try:
        table = load_table(path)
    except (StrategyFileError, OSError) as error:
        raise StrategyError(f"strategy 'equilibrium': {error}") from None
    return EquilibriumStrategy(game, table, seed=seed)
