"""``resolve`` and ``modicum`` compile their numba kernels when they are made, not
on their first decision: a seat is built before the dealer listens, so the
dealer's clock (7 s a hand) never pays minutes of compiling on a cold cache.

Proved in a fresh process (an earlier test in this one may have loaded the
kernels already): once the strategy is made, two HUNL hands (both positions,
checked down by ``always-call`` to the river), or two Kuhn hands against
``always-raise``, add no signature to any of the project's kernels. With a warm cache (``make test`` runs ``arena warmup`` first)
this takes seconds; on a cold one the construction compiles, as a fresh clone's
first match does."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

_SCRIPT = """
import sys
from numba.core.registry import CPUDispatcher
from poker.deal import Dealer
from poker.gamedef import load_game
from poker.protocol import MatchState
from poker.state import State
from strategies import make_strategy

def signatures():
    return {
        f"{name}.{attr}": len(value.signatures)
        for name, module in list(sys.modules.items())
        if name.startswith(("poker", "strategies", "analysis"))
        for attr, value in vars(module).items()
        if isinstance(value, CPUDispatcher)
    }

game = load_game(sys.argv[2])
ours = make_strategy(sys.argv[1], game, seed=1)
opponent = make_strategy(sys.argv[3], game, seed=2)
made = signatures()
dealer = Dealer(game, seed=1)
for hand in range(2):
    deal = dealer.next_hand()
    state = State(game)
    ours.new_hand(MatchState(hand, hand, state, tuple(deal.hole[p] if p == hand else () for p in range(2)), ()))
    while not state.finished:
        player = state.current_player()
        hole = tuple(deal.hole[p] if p == player else () for p in range(2))
        view = MatchState(player, hand, state, hole, deal.board[: game.total_board_cards(state.round)])
        state = state.apply((ours if player == hand else opponent).act(view))
played = signatures()
print({name: (made.get(name, 0), count) for name, count in played.items() if made.get(name, 0) != count})
"""


@pytest.mark.parametrize("spec", ["resolve", "modicum"])
def test_making_the_strategy_compiles_every_kernel_a_hunl_hand_runs(spec: str) -> None:
    _no_compile_after_making(spec, "hunl", "always-call")


def test_making_resolve_compiles_the_re_solve_within_a_street_in_kuhn() -> None:
    """Kuhn has one street: only a raise after the agent's check brings it back to
    that street (the gadget's re-solve), which ``always-raise`` does at once."""
    _no_compile_after_making("resolve", "kuhn", "always-raise")


def _no_compile_after_making(spec: str, game: str, opponent: str) -> None:
    run = subprocess.run([sys.executable, "-c", _SCRIPT, spec, game, opponent], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert ast.literal_eval(run.stdout.strip().splitlines()[-1]) == {}
