"""The portfolio agent (strategies/portfolio.py): seeded, deterministic choices;
choices that concentrate on the component that is clearly best against the
opponent; always-legal actions and policies; learning only from what the seat
sees; a short in-process match without dealer WARNINGs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from arena.commands.match import main as match_main
from poker.deal import Deal
from poker.gamedef import load_game
from poker.protocol import MatchState, parse_betting, view_of
from poker.state import Action, State
from strategies import PublicState, StrategyError, make_strategy
from strategies.portfolio import DEFAULT_SETS, PortfolioStrategy, play_hands

LEDUC = load_game("leduc")
#: Against always-call: opp-fold=25 is worth 0.80 chips/hand, leduc-cfr 0.63, green 0.48 (exact).
STATION = "portfolio:bots=leduc-cfr+tilt:preset=green+tilt:opp-fold=25"


@pytest.fixture(autouse=True, scope="module")
def tilt_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ACPC_ARENA_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def portfolio(spec: str = STATION, seed: int = 3) -> PortfolioStrategy:
    strategy = make_strategy(spec, LEDUC, seed=seed)
    assert isinstance(strategy, PortfolioStrategy)
    return strategy


def choices(spec: str, opponent: str, hands: int, seed: int) -> list[tuple[int, int]]:
    agent = portfolio(spec, seed)
    play_hands(LEDUC, [agent, make_strategy(opponent, LEDUC, seed=11)], hands, seed=5)
    return agent.choices


def test_the_choices_are_fixed_by_the_seed() -> None:
    first = choices(STATION, "random", 400, seed=7)
    assert first == choices(STATION, "random", 400, seed=7)
    assert len({k for _, k in first}) > 1  # it did switch
    assert first != choices(STATION, "random", 400, seed=8)  # the components' draws follow the seed


def test_the_choices_concentrate_on_the_best_component_against_always_call() -> None:
    agent = portfolio()
    values = play_hands(LEDUC, [agent, make_strategy("always-call", LEDUC)], 3000, seed=5)
    picked = np.array([k for _, k in agent.choices])
    assert (picked[1500:] == 2).mean() > 0.9, np.bincount(picked, minlength=3)
    assert int(np.argmax(agent.mean)) == 2
    # The estimates are near the exact values 0.63, 0.48, 0.80 (biased estimator: loose).
    assert np.allclose(agent.mean, [0.63, 0.48, 0.80], atol=0.2), agent.mean
    assert values[:, 0].mean() > 0.63


def test_actions_and_policies_are_legal_and_are_the_current_components() -> None:
    agent = portfolio()
    opponent = make_strategy("random", LEDUC, seed=2)
    seen: list[tuple[PublicState, int]] = []
    act = agent.act

    def checked(view: MatchState) -> Action:
        public = PublicState(view.state, view.board)
        rows = agent.policy(public)
        assert rows.shape == (6, len(public.actions))
        component = agent.components[agent.current].policy(public)
        assert np.array_equal(rows, component)
        seen.append((public, agent.current))
        return act(view)

    agent.act = checked  # type: ignore[method-assign]
    play_hands(LEDUC, [agent, opponent], 300, seed=9)  # raises on an illegal action
    assert len({k for _, k in seen}) == 3


def test_it_learns_only_what_the_seat_sees() -> None:
    """A hand the opponent folds gives the same estimates whatever cards it held."""
    state = parse_betting("rf", LEDUC)  # we raise, the opponent folds
    assert state.finished and not state.is_showdown()
    estimates = []
    for theirs in ((43,), (47,), (51,)):  # Leduc's cards: Qs Qh Ks Kh As Ah = 42, 43, 46, 47, 50, 51
        deal = Deal(hole=((42,), theirs), board=(46,))
        view = view_of(state, deal, hand_id=0, viewer=0)
        assert view.hole[1] == ()
        agent = portfolio()
        agent.new_hand(view_of(State(LEDUC), deal, hand_id=0, viewer=0))
        found = agent.estimates(view)
        assert found is not None
        estimates.append(found)
    assert all(np.array_equal(estimates[0], e) for e in estimates)


def test_specs_defaults_and_errors(tmp_path: Path) -> None:
    assert portfolio("portfolio").labels == DEFAULT_SETS["leduc"]
    custom = portfolio("portfolio:bots=always-call+tilt:win=7;opp-fold=7,explore=0.5,warmup=2")
    assert custom.labels == ("always-call", "tilt:win=7;opp-fold=7")
    assert custom.explore == 0.5 and custom.warmup == 2
    with pytest.raises(StrategyError, match="no default component set"):
        make_strategy("portfolio", load_game("hulhe"), seed=1)
    with pytest.raises(StrategyError, match="estimator"):
        make_strategy("portfolio:estimator=best", LEDUC, seed=1)
    with pytest.raises(StrategyError, match="cannot be a portfolio"):
        make_strategy("portfolio:bots=portfolio+always-call", LEDUC, seed=1)
    with pytest.raises(StrategyError, match="has no option"):
        make_strategy("portfolio:colour=red", LEDUC, seed=1)


def test_the_log_names_the_component_of_every_hand(tmp_path: Path) -> None:
    log = tmp_path / "choices.csv"
    agent = portfolio(f"{STATION},log={log}")
    play_hands(LEDUC, [agent, make_strategy("always-raise", LEDUC)], 50, seed=1)
    agent.close()
    lines = log.read_text().splitlines()
    assert lines == [f"{hand},{agent.labels[k]}" for hand, k in agent.choices]
    assert agent.last_component == agent.labels[agent.choices[-1][1]]


def test_a_short_in_process_match_has_no_dealer_warnings(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ["leduc", "portfolio", "always-raise", "--hands", "200", "--seed", "3", "--duplicate", "--in-process"]
    assert match_main([*argv, "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs
    assert [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    assert "portfolio" in json.dumps(json.loads((run / "results.json").read_text()))
