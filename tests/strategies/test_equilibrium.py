"""The equilibrium agent: it plays the stored strategy (exactly, through policy();
in frequency, through act()), both file layouts, and full no-limit matches over
TCP against off-tree raise sizes without a single dealer WARNING."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from arena.commands import match
from poker.deal import private_hands
from poker.gamedef import Game, load_game
from poker.protocol import MatchState
from poker.state import CALL, Action, State
from strategies import PublicState, Strategy, StrategyError, make_strategy, strategy_names
from strategies.base import Options, register
from arena.commands import solve as cli
from strategies.cfr.solvers.pcs import tree_strategy
from strategies.cfr.strategy_file import load_strategy
from strategies.equilibrium import EquilibriumStrategy

KUHN = load_game("kuhn")
LEDUC = load_game("leduc")
NL = load_game("leduc.nolimit")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Strategy files solved here: Kuhn CFR+, Leduc CFR+, Leduc PCS (lossless and
    3 hand-strength buckets), no-limit Leduc CFR+ with pot/all-in and with ½ pot, pot, all-in."""
    root = tmp_path_factory.mktemp("equilibrium")
    runs = {
        "kuhn": ["kuhn", "--iterations", "2000"],
        "leduc": ["leduc", "--iterations", "300"],
        "leduc-pcs": ["leduc", "--algorithm", "pcs", "--abstraction", "none", "--iterations", "3000"],
        "leduc-hs3": ["leduc", "--algorithm", "pcs", "--abstraction", "hs:3:perfect", "--iterations", "3000"],
        "nl": ["leduc.nolimit", "--bet-sizes", "1", "--iterations", "100"],
        "nl2": ["leduc.nolimit", "--bet-sizes", "0.5,1", "--iterations", "100", "--suit-isomorphism"],
    }
    out = {}
    for name, args in runs.items():
        out[name] = root / f"{name}.strat"
        assert cli.main([*args, "-o", str(out[name]), "--quiet"]) == 0
    return out


def equilibrium(path: Path, game: Game, seed: int = 1) -> EquilibriumStrategy:
    strategy = make_strategy(f"equilibrium:file={path}", game, seed=seed)
    assert isinstance(strategy, EquilibriumStrategy)
    return strategy


def test_registered_and_its_errors(files: dict[str, Path], tmp_path: Path) -> None:
    assert "equilibrium" in strategy_names()
    with pytest.raises(StrategyError, match="needs file=PATH"):
        make_strategy("equilibrium", KUHN)
    with pytest.raises(StrategyError, match="another game"):
        make_strategy(f"equilibrium:file={files['kuhn']}", LEDUC)
    with pytest.raises(StrategyError, match="equilibrium"):
        make_strategy(f"equilibrium:file={tmp_path / 'missing'}", KUHN)
    with pytest.raises(StrategyError, match="has no option size; it takes file=PATH"):
        make_strategy(f"equilibrium:file={files['kuhn']},size=pot", KUHN)


@pytest.mark.parametrize("name", ["kuhn", "leduc", "leduc-pcs", "leduc-hs3", "nl", "nl2"])
def test_policy_is_the_files_strategy(files: dict[str, Path], name: str) -> None:
    """At every decision of the file's tree (both layouts; suit isomorphism too)
    policy() is the stored average strategy: exactly for public-tree files."""
    saved = load_strategy(files[name])
    game = saved.game
    strategy = equilibrium(files[name], game)
    tree = saved.build_tree()
    stored = tree_strategy(saved, tree)
    hands = private_hands(game)
    for d, node in enumerate(tree.decision_nodes):
        board = tree.boards[tree.board_index[node]]
        n = int(tree.num_children[node])
        ours = strategy.policy(PublicState(tree.states[node], board, tree.actions(node)))
        valid = ~np.isin(hands, board).any(axis=1)
        if saved.layout == "public-tree" and not saved.isomorphism:
            assert np.array_equal(ours[valid], stored[d, :n, valid]), tree.key(int(node))
        else:
            np.testing.assert_allclose(ours[valid], stored[d, :n, valid], rtol=0, atol=1e-12)
        assert strategy.actions(tree.states[node]) == tuple(sorted(tree.actions(node), key=lambda a: (a.type, a.size)))


def test_kuhn_act_plays_the_stored_probabilities(files: dict[str, Path]) -> None:
    """Empirical frequencies of act() over 3000 decisions per information set are
    within 4.5 sigma of the file's probabilities."""
    saved = load_strategy(files["kuhn"])
    tree = saved.build_tree()
    strategy = equilibrium(files["kuhn"], KUHN, seed=123)
    hands = private_hands(KUHN)
    n = 3000
    for d, node in enumerate(tree.decision_nodes):
        state = tree.states[node]
        actions = tree.actions(node)
        player = state.current_player()
        for h, hand in enumerate(hands):
            hole = tuple(tuple(int(c) for c in hand) if p == player else () for p in range(2))
            counts = dict.fromkeys(actions, 0)
            for hand_id in range(n):
                counts[strategy.act(MatchState(player, hand_id, state, hole, ()))] += 1
            for a, action in enumerate(actions):
                p = saved.strategy[d, a, h]
                sigma = math.sqrt(max(p * (1 - p), 1e-12) / n)
                assert abs(counts[action] / n - p) <= 4.5 * sigma + 1e-9, (state, hand, action)


def test_same_seed_same_play(files: dict[str, Path]) -> None:
    a, b = equilibrium(files["leduc"], LEDUC, seed=9), equilibrium(files["leduc"], LEDUC, seed=9)
    views = [MatchState(0, i, State(LEDUC), ((i % 6 // 2 * 4 + 36 + i % 2,), ()), ()) for i in range(200)]
    assert [a.act(v) for v in views] == [b.act(v) for v in views]


def random_states(game: Game, rng: np.random.Generator, count: int) -> list[tuple[MatchState, int]]:
    """No-limit decisions reached by random real betting: fold/call/raise to a
    size uniform in the legal range, or the odd sizes (min+1, all-in, ...)."""
    out = []
    deck = sorted(game.deck())
    for hand_id in range(count):
        cards = [int(c) for c in rng.permutation(deck)]
        state = State(game)
        length = int(rng.integers(0, 7))
        for _ in range(length):
            if state.finished:
                break
            bounds = state.raise_bounds()
            pick = rng.random()
            if bounds is not None and pick < 0.6:
                low, high = bounds
                size = int(rng.choice([low, min(low + 1, high), high, max(high - 1, low), rng.integers(low, high + 1)]))
                state = state.apply(Action.raise_to(size))
            elif state.can_fold() and pick > 0.95:
                state = state.apply(Action(0))
            else:
                state = state.apply(CALL)
        if state.finished:
            continue
        viewer = state.current_player()
        hole = tuple((cards[p],) if p == viewer else () for p in range(2))
        board = tuple(cards[2 : 2 + game.total_board_cards(state.round)])
        out.append((MatchState(viewer, hand_id, state, hole, board), hand_id))
    return out


@pytest.mark.parametrize("name", ["nl", "nl2"])
def test_no_limit_acts_legally_and_policy_is_a_distribution(files: dict[str, Path], name: str) -> None:
    """Thousands of off-tree no-limit decisions: every answer is legal; policy()
    on the agent's own columns is a distribution per hand; act() only ever picks
    among those columns (what the translation on the drawn path allows)."""
    strategy = equilibrium(files[name], NL, seed=4)
    rng = np.random.default_rng(0)
    hands = private_hands(NL)
    for view, _ in random_states(NL, rng, 1500):
        action = strategy.act(view)
        assert view.state.is_legal(action), (view, action)
        columns = strategy.actions(view.state)
        assert action in columns
        board = view.board
        policy = strategy.policy(PublicState(view.state, board, columns))
        valid = ~np.isin(hands, board).any(axis=1)
        np.testing.assert_allclose(policy[valid].sum(axis=1), 1.0, atol=1e-12)
        assert (policy >= 0).all()


def test_policy_off_tree_is_the_average_over_translations(files: dict[str, Path]) -> None:
    """Facing an off-tree opening bet the policy is the f(x) / 1 - f(x) mixture of
    the two abstract nodes' policies (no earlier own action to weigh)."""
    from strategies.translation import pseudo_harmonic

    strategy = equilibrium(files["nl2"], NL)
    real = State(NL).apply(Action.raise_to(250))  # 0.75 pot: between 0.5 (r200) and 1 (r300)
    f = pseudo_harmonic(0.5, 1.0, 0.75)
    low = strategy.table.rows(State(NL).apply(Action.raise_to(200)), ())
    high = strategy.table.rows(State(NL).apply(Action.raise_to(300)), ())
    columns = strategy.actions(real)
    policy = strategy.policy(PublicState(real, (), columns))
    # Abstract after r200: f, c, r400 (½ pot), r600 (pot), r1200; after r300: f, c, r600, r900, r1200.
    # In the real state (r250, pot after calling 500) ½ pot is r500, pot r750, all-in r1200.
    assert [str(a) for a in columns] == ["f", "c", "r500", "r750", "r1200"]
    np.testing.assert_allclose(policy, f * low + (1 - f) * high, atol=1e-14)


# -- full matches over TCP through our dealer ------------------------------------------


ODD = "test-odd-raiser"


class OddRaiser(Strategy):
    """Raises by odd sizes in turn: min+1, 0.37 pot, all-in, max-1, min; calls otherwise."""

    def __init__(self) -> None:
        self.turn = 0

    def act(self, view: MatchState) -> Action:
        state = view.state
        bounds = state.raise_bounds()
        self.turn += 1
        if bounds is None or self.turn % 6 == 0:
            return CALL
        low, high = bounds
        pot = sum(state.spent) + state.amount_to_call()
        sizes = [low + 1, state.max_spent + round(0.37 * pot), high, high - 1, low]
        return Action.raise_to(min(max(sizes[self.turn % 5], low), high))


if ODD not in strategy_names():

    @register(ODD, "test only: odd no-limit raise sizes")
    def _odd(game: Game, options: Options, *, seed: int | None) -> Strategy:
        return OddRaiser()


def play(tmp_path: Path, game: str, bots: list[str], hands: int = 300) -> dict[str, object]:
    run = tmp_path / "run"
    code = match.main(
        [game, *bots, "--hands", str(hands), "--seed", "5", "--duplicate", "--in-process", "--run-dir", str(run)]
    )
    assert code == 0
    errs = sorted(run.glob("*.err"))
    assert len(errs) == 2
    warnings = [line for err in errs for line in err.read_text().splitlines() if "WARNING" in line]
    assert warnings == []
    import json

    results: dict[str, object] = json.loads((run / "results.json").read_text())
    return results


def test_leduc_match(files: dict[str, Path], tmp_path: Path) -> None:
    play(tmp_path, "leduc", [f"equilibrium:file={files['leduc']}", "random"])


def test_leduc_bucket_file_match(files: dict[str, Path], tmp_path: Path) -> None:
    play(tmp_path, "leduc", [f"equilibrium:file={files['leduc-hs3']}", "always-raise"])


@pytest.mark.parametrize(
    "opponent",
    ["always-raise:size=pot", "always-raise:size=max", "random:size=uniform", ODD, "equilibrium"],
)
def test_no_limit_match_without_warnings(files: dict[str, Path], tmp_path: Path, opponent: str) -> None:
    if opponent == "equilibrium":
        opponent = f"equilibrium:file={files['nl']}"  # the pot/all-in bot against the ½-pot one
    play(tmp_path, "leduc.nolimit", [f"equilibrium:file={files['nl2']}", opponent])


@pytest.mark.parametrize("name", ["kuhn3p-cfr", "leduc3p-cfr"])
def test_three_player_policy_is_the_files_strategy(name: str) -> None:
    """The shipped three-player files: at every decision of the three-player tree
    policy() is the stored strategy exactly, and act() answers with an action the
    file plays there (the hand's own row)."""
    from strategies.bots import LIBRARY, bot_path

    path = bot_path(LIBRARY[name])
    saved = load_strategy(path)
    game = saved.game
    strategy = equilibrium(path, game)
    tree = saved.build_multi_tree()
    hands = private_hands(game)
    for node in tree.decision_nodes[:: max(1, len(tree.decision_nodes) // 400)]:
        d = int(tree.decision_index[node])
        state, board = tree.states[node], tree.boards[node]
        actions = tuple(state.legal_actions())
        ours = strategy.policy(PublicState(state, board, actions))
        valid = ~np.isin(hands, board).any(axis=1)
        assert np.array_equal(ours[valid], saved.strategy[d, : len(actions), valid]), tree.key(int(node))
        player = state.current_player()
        h = int(np.flatnonzero(valid)[0])
        hole = tuple(tuple(int(c) for c in hands[h]) if p == player else () for p in range(3))
        played = strategy.act(MatchState(player, 7, state, hole, board))
        assert saved.strategy[d, actions.index(played), h] > 0
