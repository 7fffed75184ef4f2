"""Three-player CFR and the seven-step epsilon check of Abou Risk & Szafron (2010) on 3p Kuhn."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from poker.evaluate import rank_hand
from poker.gamedef import load_game
from poker.state import State
from arena.commands import solve as solve_cli
from strategies.cfr.solvers.multiplayer import MultiCFR, seven_step_epsilon
from strategies.cfr.strategy_file import load_strategy
from strategies.cfr.tree.multi import MultiTree, build_multi_tree
from strategies.cfr.tree.public import TreeError

KUHN3 = build_multi_tree(load_game("kuhn3p"))


def _reference_best_response(tree: MultiTree, strategy: np.ndarray, position: int) -> float:
    """Per-history best response on a game without board cards: for each own
    card, the other two positions' card pairs carry their reach in a dict."""
    keys = {tree.states[n].betting_string(): n for n in range(len(tree.kind)) if tree.kind[n] == 0}
    cards = [int(h[0]) for h in tree.hands]

    def walk(state: State, own: int, others: dict[tuple[int, int], float]) -> float:
        if state.finished:
            total = 0.0
            for (a, b), r in others.items():
                hands = [a, b]
                hands.insert(position, own)
                ranks = [rank_hand([cards[h]]) for h in hands] if state.is_showdown() else None
                total += r * float(state.values(ranks)[position])
            return total
        node = keys[state.betting_string()]
        d = int(tree.decision_index[node])
        actions = [state.apply(a) for a in state.legal_actions()]
        actor = state.current_player()
        if actor == position:
            return max(walk(child, own, others) for child in actions)
        slot = [p for p in range(3) if p != position].index(actor)
        return sum(
            walk(child, own, {pair: r * strategy[d, a, pair[slot]] for pair, r in others.items()})
            for a, child in enumerate(actions)
        )

    total = 0.0
    for own in range(len(cards)):
        pairs = {(a, b): 1.0 for a, b in itertools.permutations(range(len(cards)), 2) if own not in (a, b)}
        total += walk(State(tree.game), own, pairs)
    return total / tree.num_deals


def test_multiplayer_uniform_profile_is_zero_sum_and_best_responses_match_the_reference() -> None:
    solver = MultiCFR(KUHN3)
    rng = np.random.default_rng(9)
    strategy = rng.random((KUHN3.num_decisions, KUHN3.max_actions, len(KUHN3.hands)))
    strategy /= strategy.sum(axis=1, keepdims=True)
    check = seven_step_epsilon(solver, strategy)
    assert sum(check.profile_values) == pytest.approx(0.0, abs=1e-12)
    for position in range(3):
        assert check.best_response_values[position] == pytest.approx(
            _reference_best_response(KUHN3, strategy, position), abs=1e-12
        )


def test_multiplayer_kuhn3p_seven_step_epsilon_below_one_hundredth() -> None:
    # Abou Risk & Szafron (2010), Table 1: CFR on 3p Kuhn is an
    # epsilon-Nash equilibrium, epsilon 0.0016902 antes/hand after 1e8 iterations.
    # Our vanilla CFR (simultaneous updates, uniform average) with exact best
    # responses reaches epsilon 0.00552 after 1000 iterations (gains 0.00611,
    # 0.00602, 0.00444) and 0.00072 after 10000 (measured).
    solver = MultiCFR(KUHN3)
    solver.run(1000)
    check = seven_step_epsilon(solver)
    assert check.epsilon == pytest.approx(0.005524, abs=1e-5)
    assert check.epsilon < 0.01
    assert all(g >= -1e-12 for g in check.gains)  # a best response never does worse
    assert sum(check.profile_values) == pytest.approx(0.0, abs=1e-12)


def test_multiplayer_rejects_two_player_games() -> None:
    with pytest.raises(TreeError, match="this solver is for 3 players; the game has 2"):
        build_multi_tree(load_game("kuhn"))


def test_multiplayer_cfr_plus_beats_vanilla_cfr_on_kuhn3p() -> None:
    # Measured: after 1000 simultaneous iterations vanilla CFR's seven-step epsilon
    # is 0.005524 and CFR+'s (regret floor, linear average) 0.000475.
    plus = MultiCFR(KUHN3, plus=True)
    plus.run(1000)
    check = seven_step_epsilon(plus)
    assert check.epsilon == pytest.approx(0.00047514, abs=1e-8)
    assert all(g >= -1e-12 for g in check.gains)
    assert plus.regret.min() >= 0.0


def test_multiplayer_leduc3p_payoffs_are_the_rules_values() -> None:
    # The vectorised payoff tables against poker.state's values, deal by deal,
    # at every terminal of 3p Leduc (showdowns with pairs, splits and folds).
    tree = build_multi_tree(load_game("leduc.limit.3p"))
    payoff = tree.payoff
    cards = [int(h[0]) for h in tree.hands]
    rng = np.random.default_rng(3)
    terminals = np.flatnonzero(tree.kind == 2)
    for t in rng.choice(len(terminals), 300, replace=False):
        node = int(terminals[t])
        state, board = tree.states[node], tree.boards[node]
        for i, j, k in itertools.permutations(range(len(cards)), 3):
            deal = (cards[i], cards[j], cards[k])
            if set(deal) & set(board):
                assert not payoff[t, :, i, j, k].any()
                continue
            ranks = [rank_hand([c, *board]) for c in deal] if state.is_showdown() else None
            assert tuple(payoff[t, :, i, j, k]) == tuple(float(v) for v in state.values(ranks))
    assert not payoff[:, :, 0, 0, :].any()  # one card twice


def test_solve_writes_three_player_files_and_resumes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    straight, part = tmp_path / "straight.strategy", tmp_path / "part.strategy"
    assert solve_cli.main(["kuhn3p", "--iterations", "300", "-o", str(straight), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "(seven-step epsilon); best-response gains by position:" in out
    assert solve_cli.main(["kuhn3p", "--iterations", "100", "-o", str(part), "--quiet"]) == 0
    assert solve_cli.main(["--resume", str(part), "--iterations", "300", "-o", str(part), "--quiet"]) == 0
    assert part.read_bytes() == straight.read_bytes()
    saved = load_strategy(straight)
    assert saved.layout == "three-player" and saved.settings["plus"] is True and saved.gains is not None
    solver = MultiCFR(KUHN3, plus=True)
    solver.run(300)
    assert np.array_equal(saved.strategy, solver.average_strategy())
    assert seven_step_epsilon(solver).gains == saved.gains
    vanilla = tmp_path / "vanilla.strategy"
    assert solve_cli.main(["kuhn3p", "--algorithm", "cfr", "--iterations", "50", "-o", str(vanilla), "--quiet"]) == 0
    assert load_strategy(vanilla).settings["plus"] is False


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--algorithm", "pcs"], "solved by --algorithm cfr+ or cfr, not pcs"),
        (["--suit-isomorphism"], "do not apply to three-player games"),
        (["--delay", "3"], "do not apply to three-player games"),
        (["--bet-sizes", "1"], "limit games only"),
    ],
)
def test_solve_refuses_options_three_player_games_lack(
    options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.strategy"
    assert solve_cli.main(["kuhn3p", *options, "--iterations", "5", "-o", str(out), "--quiet"]) == 2  # usage: docs/exit-statuses.md
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists()


def test_multiplayer_rejects_no_limit_games() -> None:
    with pytest.raises(TreeError, match="limit games"):
        build_multi_tree(load_game("holdem.nolimit.3p"))
