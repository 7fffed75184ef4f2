"""A bot's own values for AIVAT: a look-ahead on its policy to the end of the street.

:class:`LookaheadValues` is a :class:`analysis.aivat.ValueFunction` built from
nothing but a strategy σ whose policy is known for every private hand at every
decision (``hulhe-ir50``'s bucket tables, a Leduc equilibrium): our expected
chips at a public state when *both* players play σ until the current betting
round ends, the opponent with its actual holding ``o`` (σ's row of ``o``),
valued there by :class:`analysis.aivat.EquityValues` (the pot shared by
showdown equity; on the river the showdown itself, exact). It is fixed before
the data: it reads σ and the rules, never a hand it corrects, so AIVAT stays
unbiased whatever the opponent really plays; how close σ-against-σ comes to
the real match only decides how much variance goes.

Why a street and not the whole hand: σ against σ to the river over every
run-out is the exact value but costs a tree of thousands of boards per state
(hold'em's turn alone: 44 river cards times its betting); one street is a
tree of at most a few dozen betting states with one policy look-up each (a
bucket gather for ``hulhe-ir50``), and the street's betting is where most of
σ's decisions lie. What it leaves out is the later streets' betting beyond the
pot at the street's end (it values those as checked down): that part of the
money stays uncorrected noise.

The expectations at chance events. AIVAT subtracts, at each deal of board
cards, the expectation of ``V̄`` after it; :meth:`LookaheadValues.expected_deal`
gives it exactly by enumerating the deals where they are at most ``max_deals``
(hold'em's turn and river: 44 to 46 cards, each one street look-ahead). Where
there are more (the flop: 19,600), the street's *first* state, before anyone
acts, is valued by the equities alone, whose expectation over the deal is the
value before it (the pot does not move, equity is a martingale), so no
enumeration is needed; from the street's first action on, the look-ahead
applies again. Kuhn and Leduc are enumerated everywhere.

The pre-flop leaves. Hold'em's pre-flop equities have too many run-outs to
enumerate (1,326 holdings times C(48, 5) boards), so they are *sampled*
without bias as :class:`analysis.aivat.EquityValues` does (``PREFLOP_SAMPLES``
boards for each opponent holding, drawn from a generator seeded by that
holding alone, never from the hands): the expectation at the flop is then the
sampled pre-flop value, an unbiased estimate of the exact one drawn
independently of every deal, so the flop's correction keeps mean zero. The
table of every pair, ``float32[1326, 1326]`` (7 MB), is built once into the
cache directory (``$ACPC_ARENA_CACHE/tables/``; about 40 s on two cores the
first time AIVAT scores a hold'em hand, then read in a tenth of a second): the
expectation at the deal of the opponent's holding needs every row of it.

Cost (hulhe-ir50 against always-call, a loaded 2-core machine): 0.4–0.6 s a
hand on average, nine tenths of it the enumerated turn and river (45 and 44
street look-aheads, each a policy look-up per betting state); 0.5–0.8 s with
two processes at once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Final

import numpy as np
import numpy.typing as npt

from analysis.aivat import AivatError, EquityValues
from poker.deal import private_hands
from poker.gamedef import Game
from poker.state import State
from strategies.base import PublicState, Strategy
from strategies.imaginary import Policy, card_bits, holding_bits

__all__ = ["LookaheadValues", "PREFLOP_SAMPLES", "preflop_equities"]

FloatArray = npt.NDArray[np.float64]

#: Look-ahead values (10 kB each in hold'em) and policy rows (up to 32 kB) kept
#: between calls, cleared when full: a hand's states share them (a hold'em hand
#: that reaches the river makes about 2,000 and 800), hands rarely do.
_VALUE_ENTRIES: Final = 10_000
_POLICY_ENTRIES: Final = 4_000
#: Boards sampled for each opponent holding's pre-flop equities.
PREFLOP_SAMPLES: Final = 2_000
#: The cache file's format tag.
_FORMAT: Final = "preflop-equities/1"


def _sampled_row(game: Game, theirs: int, samples: int) -> npt.NDArray[np.float32]:
    """Every holding's pre-flop equity against holding row ``theirs``, over
    ``samples`` boards drawn uniformly from the cards it leaves, each holding's
    wins divided by the expected number of boards it misses (unbiased, as
    :meth:`analysis.aivat.EquityValues.equity`)."""
    from poker import _eval_kernels as kernels

    holdings = private_hands(game)
    sets = kernels.cardsets(np.ascontiguousarray(holdings))
    final = game.total_board_cards(game.num_rounds - 1)
    undealt = np.setdiff1d(np.array(sorted(game.deck()), dtype=np.int64), holdings[theirs].astype(np.int64))
    keys = np.random.default_rng([20_251_208, theirs]).random((samples, undealt.size))
    completions = undealt[np.argpartition(keys, final - 1, axis=1)[:, :final]]
    theirs_wins, counts = kernels.runout_outcomes(int(sets[theirs]), 0, completions, sets)
    miss = math.comb(undealt.size - game.num_hole_cards, final) / math.comb(undealt.size, final)
    row: npt.NDArray[np.float32] = ((counts - theirs_wins) / (samples * miss)).astype(np.float32)
    return row


@cache
def preflop_equities(game: Game, samples: int = PREFLOP_SAMPLES) -> FloatArray:
    """``[theirs, ours]``: our sampled pre-flop equity with each holding against
    each (module docstring), read from the cache directory or built there."""
    from strategies.cfr.abstraction.cache_files import CacheFileError, default_cache_dir, expect_arrays, read_arrays, write_arrays

    h = len(private_hands(game))
    path = default_cache_dir() / "tables" / f"preflop-equities-{game.num_ranks}x{game.num_suits}-{samples}.bin"
    try:
        header, arrays = read_arrays(path, expect=expect_arrays({"equity": ("<f4", (h, h))}))
        if header.get("format") == _FORMAT and header.get("samples") == samples and "equity" in arrays:
            return np.asarray(arrays["equity"], dtype=np.float64)
    except (CacheFileError, OSError):
        pass
    with ThreadPoolExecutor(max_workers=2) as pool:  # the kernel releases the GIL
        rows = list(pool.map(lambda o: _sampled_row(game, o, samples), range(h)))
    table = np.array(rows, dtype=np.float32)
    try:
        write_arrays(path, {"format": _FORMAT, "samples": samples}, {"equity": table})
    except OSError:  # a cache directory that cannot be written: the table serves this process alone
        pass
    return table.astype(np.float64)


def _policy_function(sigma: Policy) -> Callable[[PublicState], FloatArray]:
    """``sigma``'s policy function; for an equilibrium bot of a limit game its
    table's rows directly (what its ``policy`` returns there, without the
    translation machinery no-limit needs: a sixth of the look-ahead's time)."""
    from strategies.equilibrium import EquilibriumStrategy

    if isinstance(sigma, EquilibriumStrategy) and sigma.abstraction is None:
        table = sigma.table
        return lambda public: table.rows(public.state, public.board)
    return sigma.policy if isinstance(sigma, Strategy) else sigma


class LookaheadValues:
    """σ against σ to the end of the street, equity leaves (module docstring).

    ``sigma`` is the bot's policy (a :class:`strategies.base.Strategy` or a bare
    policy function: rows follow :func:`poker.deal.private_hands`, columns the
    legal actions); ``equity`` the leaves' :class:`EquityValues` (its default
    for the game when None); ``max_deals`` the most deals at one chance event
    enumerated for the expectation; ``preflop_samples`` the boards of each
    opponent holding's pre-flop equities (fewer: a smaller table, built faster,
    as unbiased and noisier)."""

    def __init__(
        self,
        game: Game,
        sigma: Policy,
        *,
        equity: EquityValues | None = None,
        max_deals: int = 100,
        preflop_samples: int = PREFLOP_SAMPLES,
    ) -> None:
        if game.num_players != 2 or not game.is_limit:
            raise AivatError("LookaheadValues is for two-player limit games (no-limit raise sizes are a policy's choice)")
        self.game = game
        self.equity = EquityValues(game) if equity is None else equity
        self._ask = _policy_function(sigma)
        self.holdings = private_hands(game)
        self.bits = holding_bits(self.holdings)
        self.deck = tuple(sorted(game.deck()))
        self.max_deals = max_deals
        #: Sampled pre-flop equities where run-outs are too many to enumerate (hold'em), else None.
        self._preflop = preflop_equities(game, preflop_samples) if self.equity.exact_from > 0 else None
        #: Corrections start at the deal (the pre-flop equities are sampled without bias).
        self.first_round = 0
        self._values: dict[tuple[int, str, tuple[int, ...], int], FloatArray] = {}
        self._policies: dict[tuple[str, tuple[int, ...]], FloatArray] = {}

    # -- the values --------------------------------------------------------------------

    def __call__(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray:
        if self._street_start(state, board) and self._deals(state, board[: self._seen(state)]) > self.max_deals:
            return self._leaf(position, state, board, theirs)
        return self._look(position, state, board, theirs)

    def _leaf(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray:
        """Our pot share by showdown equity (the payoff at a fold)."""
        if self._preflop is None or board or state.finished:
            return self.equity(position, state, board, theirs)
        share: FloatArray = self._preflop[theirs] * float(sum(state.spent)) - float(state.spent[position])
        return share

    def _seen(self, state: State) -> int:
        """Board cards dealt before ``state``'s street."""
        return self.game.total_board_cards(state.round - 1) if state.round else 0

    def _street_start(self, state: State, board: tuple[int, ...]) -> bool:
        """A street's first state, its cards dealt and nobody acted yet (not pre-flop)."""
        return (
            state.round > 0
            and not state.finished
            and len(board) == self.game.total_board_cards(state.round)
            and not state.actions[state.round]
        )

    def _deals(self, state: State, seen: tuple[int, ...]) -> int:
        """How many boards can come at the deal into ``state``'s street (opponent's cards and ours left out)."""
        new = self.game.total_board_cards(state.round) - len(seen)
        return math.comb(len(self.deck) - len(seen) - 2 * self.game.num_hole_cards, new)

    def _look(self, position: int, state: State, board: tuple[int, ...], theirs: int) -> FloatArray:
        """Both players play σ to the street's end; the leaves are the equity values."""
        key = (position, state.betting_string(), board, theirs)
        found = self._values.get(key)
        if found is not None:
            return found
        if state.finished or self.game.total_board_cards(state.round) > len(board):
            value = self._leaf(position, state, board, theirs)
        else:
            rows = self._policy(state, board)
            actor = state.current_player()
            value = np.zeros(len(self.holdings))
            for a, action in enumerate(state.legal_actions()):
                child = self._look(position, state.apply(action), board, theirs)
                value += (rows[:, a] if actor == position else rows[theirs, a]) * child
        if len(self._values) >= _VALUE_ENTRIES:
            self._values.clear()
        self._values[key] = value
        return value

    def _policy(self, state: State, board: tuple[int, ...]) -> FloatArray:
        """σ's rows at ``state`` (columns: the legal actions)."""
        key = (state.betting_string(), board)
        rows = self._policies.get(key)
        if rows is None:
            actions = tuple(state.legal_actions())
            rows = np.asarray(self._ask(PublicState(state, board, actions)), dtype=np.float64)
            if rows.shape != (len(self.holdings), len(actions)):
                raise AivatError(f"σ's policy at {key[0]!r} has shape {rows.shape}; expected ({len(self.holdings)}, {len(actions)})")
            if len(self._policies) >= _POLICY_ENTRIES:
                self._policies.clear()
            self._policies[key] = rows
        return rows

    # -- the expectation at a deal -------------------------------------------------------

    def expected_deal(self, position: int, state: State, seen: tuple[int, ...], reach: FloatArray, theirs: int) -> float:
        """``E[V̄]`` after the board cards about to be dealt at ``state``: the
        equities' martingale where there are more than ``max_deals`` deals (the
        street's first state is valued by them), else every deal enumerated."""
        if self._deals(state, seen) > self.max_deals:
            return float(reach @ self._leaf(position, state, seen, theirs) / reach.sum())
        new = self.game.total_board_cards(state.round) - len(seen)
        blocked = set(seen) | {int(c) for c in self.holdings[theirs]}
        total = 0.0
        for cards in itertools.combinations([c for c in self.deck if c not in blocked], new):
            fits = np.where((self.bits & card_bits(cards)) == 0, reach, 0.0)
            total += float(fits @ self(position, state, seen + cards, theirs))
        # Each holding of ours misses the same number of the deals.
        return total / (float(reach.sum()) * self._deals(state, seen))
