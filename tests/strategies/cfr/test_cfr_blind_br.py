"""Best response to card-blind strategies equals the exact public-tree best response."""

from __future__ import annotations

import numpy as np
import pytest

from poker.gamedef import load_game
from strategies.base import PublicState, make_strategy
from strategies.cfr.best_response.blind import NotCardBlindError, blind_best_responses
from strategies.cfr.best_response.exact import best_response, strategy_from_policy
from strategies.cfr.tree.public import TreeError, build_tree

CHUMPS = ["always-fold", "always-call", "always-raise", "probe", "random:size=min"]


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
@pytest.mark.parametrize("isomorphism", [True, False])
def test_blind_br_equals_the_public_tree_best_response(name: str, isomorphism: bool) -> None:
    game = load_game(name)
    tree = build_tree(game)
    strategies = [make_strategy(spec, game, seed=3) for spec in CHUMPS]
    results = blind_best_responses(game, strategies, isomorphism=isomorphism)
    for strategy, result in zip(strategies, results, strict=True):
        exact = best_response(tree, strategy_from_policy(tree, strategy))
        assert result.values == pytest.approx(exact.values, abs=1e-12)


def test_blind_br_kuhn_always_call_is_one_third() -> None:
    # Bet K (+2), Q gets 0 either way, check J (-1): (2 + 0 - 1) / 3 in both seats.
    (result,) = blind_best_responses(load_game("kuhn"), [make_strategy("always-call", load_game("kuhn"))])
    assert result.values == pytest.approx((1 / 3, 1 / 3), abs=1e-15)


def test_blind_br_nolimit_leduc_with_one_round_all_ins() -> None:
    game = load_game("leduc.nolimit")
    tree = build_tree(game)
    strategies = [make_strategy(spec, game) for spec in ("always-call", "always-raise:size=max", "probe:size=pot")]
    for strategy, result in zip(strategies, blind_best_responses(game, strategies), strict=True):
        exact = best_response(tree, strategy_from_policy(tree, strategy))
        assert result.values == pytest.approx(exact.values, abs=1e-9)


def test_blind_br_rejects_card_dependent_policies() -> None:
    game = load_game("kuhn")

    def by_card(public: PublicState) -> np.ndarray:
        rows = np.zeros((3, len(public.actions)))
        rows[:, 0] = 1.0
        rows[2] = 0.0
        rows[2, -1] = 1.0  # the best card always takes the last action
        return rows

    with pytest.raises(NotCardBlindError, match="depend on the cards after ''"):
        blind_best_responses(game, [by_card])


def test_blind_br_rejects_multi_round_run_outs() -> None:
    game = load_game("hunl")
    with pytest.raises(TreeError, match="runs out several rounds at once"):
        blind_best_responses(game, [make_strategy("always-call", game)])
