"""All-in adjustment (:mod:`analysis.allin`): exact values of hand-built all-in
hands (NL Leduc by counting its four possible board cards; hold'em AA vs KK
and a three-player side pot against :func:`poker.evaluate.hand_vs_range_equity`,
an independent enumeration), hands that are not adjusted keep their values,
and over many simulated hands the adjusted mean agrees with the money with a
smaller spread."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import strategies  # noqa: F401  (registers the built-in strategies)
from analysis.allin import AllInError, adjusted_hands, allin_values
from analysis.breakdown import paired_difference
from arena.commands.analyze import main
from analysis.logs import read_log
from analysis.importance import simulate_hands
from poker.cards import cards_from_text
from poker.evaluate import hand_vs_range_equity, private_hands
from poker.gamedef import Game, load_game
from strategies.base import make_strategy

LEDUC_NL = load_game("leduc.nolimit.2p")
HUNL = load_game("holdem.nolimit.2p.reverse_blinds")
HOLDEM_3P = load_game("holdem.nolimit.3p")


def log_of(tmp_path: Path, game: Game, *lines: str) -> Path:
    path = tmp_path / "hands.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def equity(hole: str, theirs: str, board: str, deck: list[int]) -> tuple[float, float]:
    """(win, tie) of ``hole`` against the one hand ``theirs`` over every hold'em run-out from ``deck``."""
    hands = private_hands(deck, 2)
    mine = sorted(cards_from_text(theirs))
    weights = np.array([1.0 if sorted(map(int, h)) == mine else 0.0 for h in hands])
    result = hand_vs_range_equity(cards_from_text(hole), weights, cards_from_text(board), deck=deck, final_board_size=5)
    return result.win, result.tie


def test_leduc_preflop_all_in_is_the_average_over_the_four_cards_left(tmp_path: Path) -> None:
    path = log_of(
        tmp_path,
        LEDUC_NL,
        # As against Kh: the board is one of Qs Qh Ks Ah; only Ks pairs the king: As wins 3 of 4.
        "STATE:0:r1200c/:As|Kh/Ks:-1200|1200:a|b",
        # As against Ah: every board card ties them.
        "STATE:1:r1200c/:As|Ah/Kh:0|0:b|a",
        # not all in, all in on the last round, all in then a fold: left as they are.
        "STATE:2:cc/cc:As|Kh/Qs:100|-100:a|b",
        "STATE:3:cc/r1200c:Qs|Kh/Qh:1200|-1200:b|a",
        "STATE:4:r1200f:Qs|Kh:100|-100:a|b",
    )
    hands = read_log(path, LEDUC_NL)
    result = allin_values(hands)
    assert result.adjusted.tolist() == [True, True, False, False, False]
    assert result.runouts.tolist() == [4, 4, 0, 0, 0]
    assert result.values[0].tolist() == [1200 * 3 / 4 - 1200 / 4, -(1200 * 3 / 4 - 1200 / 4)]
    assert result.values[1].tolist() == [0.0, 0.0]
    assert result.values[2:].tolist() == hands.values[2:].tolist()


def test_hunl_preflop_aces_against_kings(tmp_path: Path) -> None:
    path = log_of(tmp_path, HUNL, "STATE:0:r20000c///:AsAh|KsKh/2c3d4h/5c/6d:0|0:aces|kings")
    adjusted, result = adjusted_hands(read_log(path, HUNL))
    win, tie = equity("AsAh", "KsKh", "", sorted(HUNL.deck()))
    assert 0.80 < win + tie / 2 < 0.84  # AA against KK: about 82%
    assert result.runouts.tolist() == [1_712_304]  # C(48, 5)
    assert adjusted.values[0, 0] == pytest.approx(20000 * (win - (1 - win - tie)), abs=1e-6)
    assert adjusted.name_values("kings")[0] == pytest.approx(-adjusted.values[0, 0], abs=1e-9)


def test_three_players_with_a_side_pot_and_a_folded_player(tmp_path: Path) -> None:
    # Reference transcript 5.4 (tests/fixtures/acpc/spec_section5.md): P2 folds for 100, P1 and
    # P3 are all in on the flop.
    line = "STATE:0:r300r1000fc/r20000c//:3c4d|9d6c|6d7h/AsKsTd/8h/3s:20100|-100|-20000:P1|P2|P3"
    adjusted, result = adjusted_hands(read_log(log_of(tmp_path, HOLDEM_3P, line), HOLDEM_3P))
    deck = sorted(set(HOLDEM_3P.deck()) - set(cards_from_text("9d6c")))
    win, tie = equity("3c4d", "6d7h", "AsKsTd", deck)
    lose = 1 - win - tie
    assert result.runouts.tolist() == [903]  # C(43, 2)
    expected = [win * 20100 + tie * 50 - lose * 20000, -100, -win * 20000 + tie * 50 + lose * 20100]
    assert adjusted.values[0].tolist() == pytest.approx(expected, abs=1e-9)
    assert adjusted.values[0].sum() == pytest.approx(0, abs=1e-9)


def test_a_game_without_all_ins_keeps_its_values() -> None:
    call = make_strategy("always-call", HUNL, seed=0)
    hands = simulate_hands(HUNL, [call, call], 40, seed=2)
    result = allin_values(hands)
    assert not result.adjusted.any()
    assert np.array_equal(result.values, hands.values)


def test_unbiased_and_lower_variance_on_many_leduc_hands() -> None:
    """E[money − adjusted] = 0 (the run-out is dealt uniformly from the same
    cards): the paired difference's interval holds 0, over 6000 hands in which a
    third of the hands are all in before the board."""
    players = [make_strategy("random:size=max", LEDUC_NL, seed=1), make_strategy("always-call", LEDUC_NL, seed=2)]
    hands = simulate_hands(LEDUC_NL, players, 6000, seed=5)
    result = allin_values(hands)
    assert 1000 < result.adjusted.sum() < 5000
    raw, adjusted = hands.values[:, 0], result.values[:, 0]
    difference = paired_difference(raw, adjusted)
    assert difference.low <= 0 <= difference.high
    assert np.std(adjusted) < 0.8 * np.std(raw)
    # Every adjusted value averages four board cards: four times it is a whole number of chips.
    assert np.allclose((result.values[result.adjusted] * 4) % 1, 0)


def test_analyze_adds_the_all_in_rows_for_no_limit_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = log_of(
        tmp_path,
        LEDUC_NL,
        "# name/game/hands/seed m leduc.nolimit 2 1",
        "STATE:0:r1200c/:As|Kh/Ks:-1200|1200:a|b",
        "STATE:1:r1200c/:Kh|As/Ks:1200|-1200:b|a",
    )
    assert main([str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "all-in adjusted: 2 of 2 hands all in before the board was complete" in out[4]
    assert out[6].split() == ["a", "2", "600.000", "0.000", "±0.000"]
    limit = tmp_path / "limit.log"
    limit.write_text("# name/game/hands/seed m leduc 2 1\nSTATE:0:cc/cc:Ks|Qh/As:-100|100:a|b\nSTATE:1:cc/cc:Ks|Qh/As:100|-100:b|a\n")
    assert main([str(limit)]) == 0
    assert "all-in" not in capsys.readouterr().out


def test_a_hand_with_missing_cards_is_an_error() -> None:
    hands = simulate_hands(LEDUC_NL, [make_strategy("always-raise:size=max", LEDUC_NL, seed=0)] * 2, 4, seed=1)
    broken = hands.hole.copy()
    broken[0, 1, 0] = -1
    with pytest.raises(AllInError, match="simulated"):
        allin_values(replace(hands, hole=broken))
