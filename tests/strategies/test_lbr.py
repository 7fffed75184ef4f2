"""Local best response (strategies.lbr, arena lbr) against exact best responses.

Kuhn and Leduc are small enough to check LBR exactly: against deterministic
card-blind chumps every deal is enumerated (LBR is deterministic there, its
win probabilities exact), so LBR's expected value is computed exactly and
compared with :func:`strategies.cfr.best_response.exact.best_response`.
Against stochastic targets every draw of the target is enumerated too
(tests/strategies/lbr_branches.py): a sampled run's 95% interval must hold
that exact value. test_lbr_exact.py checks LBR's range against a card-aware target.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from poker.evaluate import hand_vs_range_equity
from poker.gamedef import Game, load_game
from poker.protocol import MatchState
from poker.state import CALL, FOLD, Action, ActionType, State
from strategies import lbr
from strategies.base import PublicState, Strategy, make_strategy
from strategies.cfr.best_response.exact import best_response, strategy_from_policy
from arena.commands.lbr import main
from strategies.cfr.tree.public import build_tree
from strategies.lbr import (
    FRACTIONS_56,
    LbrConfig,
    LbrError,
    Rollouts,
    bayes_update,
    decide,
    initial_range,
    parse_streets,
    raise_candidates,
    run_lbr,
)
from tests.strategies.lbr_branches import expected_lbr

KUHN = load_game("kuhn")
LEDUC = load_game("leduc")
RAISE = Action(ActionType.RAISE)


def _all_rounds(game: Game) -> LbrConfig:
    return LbrConfig("fcpa", frozenset(range(game.num_rounds)))


def _br_value(game: Game, spec: str) -> float:
    """Exact best-response value against ``spec``, averaged over the two positions."""
    tree = build_tree(game)
    return best_response(tree, strategy_from_policy(tree, make_strategy(spec, game))).exploitability


def _exact_lbr(game: Game, spec: str, seed: int = 1) -> float:
    """LBR's exact expected winnings against ``spec`` on every round: every deal, every draw of the target."""
    return expected_lbr(game, make_strategy(spec, game, seed=seed), _all_rounds(game))


@pytest.mark.parametrize("game", [KUHN, LEDUC], ids=["kuhn", "leduc"])
@pytest.mark.parametrize("spec", ["always-fold", "always-call"])
def test_lbr_is_the_best_response_against_fold_and_call_chumps(game: Game, spec: str) -> None:
    # Greedy one-step look-ahead is optimal here: exact equality over every deal.
    assert _exact_lbr(game, spec) == pytest.approx(_br_value(game, spec), abs=1e-12)


def test_lbr_is_a_lower_bound_against_always_raise() -> None:
    assert _exact_lbr(KUHN, "always-raise") == pytest.approx(1 / 3)
    lbr, br = _exact_lbr(LEDUC, "always-raise"), _br_value(LEDUC, "always-raise")
    assert lbr == pytest.approx(2.1) and br == pytest.approx(71 / 30)  # 2.1 < 2.3667: strictly below


def test_always_fold_wins_the_antes_every_hand() -> None:
    result = run_lbr(LEDUC, "always-fold", 20, seed=3, config=_all_rounds(LEDUC))
    assert (result.values == 1.0).all() and result.estimate.half_width == 0


@pytest.mark.parametrize("spec", ["always-call", "always-raise", "tilt:preset=pink"])
def test_sampled_lbr_estimates_its_exact_value_below_the_best_response(spec: str) -> None:
    # The sampled run's 95% interval holds LBR's exact value (seeded, so this is
    # deterministic), and that value is at most the best response's.
    estimate = run_lbr(LEDUC, spec, 300, seed=11, config=_all_rounds(LEDUC)).estimate
    exact = _exact_lbr(LEDUC, spec, seed=11)
    assert estimate.low <= exact <= estimate.high
    assert exact <= _br_value(LEDUC, spec) + 1e-12


class _Tells(Strategy):
    """Kuhn (hands Q, K, A): bets with probability 0.3 (Q), 0.5 (K), 0.9 (A)."""

    def act(self, view: MatchState) -> Action:
        return CALL

    def policy(self, public: PublicState) -> npt.NDArray[np.float64]:
        bet = np.array([0.3, 0.5, 0.9])
        out = np.zeros((3, len(public.actions)))
        for column, action in enumerate(public.actions):
            if action.type is ActionType.RAISE:
                out[:, column] = bet
            elif action == CALL:
                out[:, column] = 1 - bet
        return out


def test_range_by_bayes_matches_the_hand_posterior() -> None:
    # LBR holds K (row 1): prior 1/2 Q, 1/2 A; the target bets: 0.15 : 0.45.
    hole = (KUHN.deck()[1],)
    prior = initial_range(KUHN, hole)
    assert prior.tolist() == [0.5, 0.0, 0.5]
    target = _Tells()
    state = State(KUHN)
    policy = target.policy(PublicState(state, (), (CALL, RAISE)))
    posterior = bayes_update(prior, policy[:, 1])
    assert posterior == pytest.approx([0.25, 0.0, 0.75])
    # Facing the bet: wp = 1/4, pot 3, asked 1: U(call) = 3/4 - 3/4 = 0, so LBR folds.
    after = state.apply(RAISE)
    decision = decide(after, (), posterior, target, Rollouts(KUHN, hole, ()), "fcpa")
    assert decision.wp == pytest.approx(0.25)
    assert decision.utilities[CALL] == pytest.approx(0.0) and decision.action == FOLD


def test_leduc_win_probability_is_exact_by_enumeration() -> None:
    # LBR holds Js (card 0 of J J Q Q K K) against a uniform range, no board yet:
    # it wins only by pairing (board J: 1 of 4 cards left after the opponent's).
    deck = LEDUC.deck()
    hole = (deck[0],)
    rollouts = Rollouts(LEDUC, hole, ())
    # Opponent J (1/5): tie unless... the only J left is theirs: always a tie (1/2).
    # Opponent Q or K (4/5): LBR wins iff the board is the last J (1/4), loses to
    # their pair (1/4), else loses on high card.
    assert rollouts.wp(initial_range(LEDUC, hole)) == pytest.approx(1 / 5 * 1 / 2 + 4 / 5 * 1 / 4)


def test_worker_count_does_not_change_results() -> None:
    config = _all_rounds(LEDUC)
    one = run_lbr(LEDUC, "random", 24, seed=5, config=config, workers=1, chunk=5)
    two = run_lbr(LEDUC, "random", 24, seed=5, config=config, workers=2, chunk=7)
    assert np.array_equal(one.values, two.values)


def test_holdem_smoke_against_always_call() -> None:
    game = load_game("hulhe")
    result = run_lbr(game, "always-call", 2, seed=1, config=LbrConfig("fcpa", parse_streets("3-4", 4)))
    assert result.values.shape == (2, 2) and np.isfinite(result.values).all()
    assert np.abs(result.values).max() <= 240  # at most the capped betting of a hand


def test_streets_and_action_sets() -> None:
    assert parse_streets("3-4", 4) == frozenset({2, 3})
    assert parse_streets("1,3", 4) == frozenset({0, 2})
    with pytest.raises(LbrError):
        parse_streets("0-2", 4)
    with pytest.raises(LbrError):
        LbrConfig("fcpx")
    assert len(FRACTIONS_56) == 55 and FRACTIONS_56[-1] == pytest.approx(94.8, abs=0.1)
    nolimit = State(load_game("leduc.nolimit"))  # antes 100 each, stack 1200
    assert raise_candidates(nolimit, "fc") == []
    assert raise_candidates(nolimit, "fcpa") == [Action.raise_to(300), Action.raise_to(1200)]
    sizes = raise_candidates(nolimit, "56")
    bounds = nolimit.raise_bounds()
    assert bounds is not None and sizes[0] == Action.raise_to(bounds[0]) and sizes[-1] == Action.raise_to(1200)
    assert raise_candidates(State(LEDUC), "56") == [RAISE]


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["always-fold", "--game", "leduc", "--hands", "4", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "LBR winnings: 1 chips/hand ± 0 (95% CI)" in out
    assert main(["random", "--game", "hunl", "--hands", "2", "--no-progress"]) == 2
    assert "uniform size" in capsys.readouterr().err
    assert main(["always-call", "--game", "kuhn3p", "--hands", "2", "--no-progress"]) == 2


def test_holdem_win_probability_matches_the_equity_helper() -> None:
    game = load_game("hulhe")
    hole, board = (0, 13), (40, 41, 7, 22)
    weights = initial_range(game, hole, board) * np.random.default_rng(1).random(1326)
    expected = hand_vs_range_equity(hole, weights, board, deck=game.deck(), final_board_size=5).value
    assert Rollouts(game, hole, board).wp(weights) == pytest.approx(expected, abs=1e-12)



def test_workers_start_after_the_first_chunk_played_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first chunk plays in this process, before the pool: the numba kernels a
    # hand needs compile here once, with one notice, not in (and once per) worker.
    # The workers fork with this patch and append to the same file.
    played = tmp_path / "played"
    chunks = lbr.play_hands

    def recorded(game: Game, spec: str, seed: int, config: LbrConfig, start: int, stop: int) -> npt.NDArray[np.float64]:
        with played.open("a") as out:
            out.write(f"{start} {os.getpid()}\n")
        return chunks(game, spec, seed, config, start, stop)

    monkeypatch.setattr(lbr, "play_hands", recorded)
    pooled = run_lbr(LEDUC, "random", 24, seed=5, config=LbrConfig(), workers=2, chunk=8)
    pids = dict(line.split() for line in played.read_text().splitlines())
    assert sorted(pids, key=int) == ["0", "8", "16"]
    assert pids["0"] == str(os.getpid()) and pids["8"] != str(os.getpid()) and pids["16"] != str(os.getpid())
    # The figures do not depend on where a chunk plays.
    assert np.array_equal(pooled.values, run_lbr(LEDUC, "random", 24, seed=5, config=LbrConfig(), chunk=8).values)
