"""analysis.match_score: one match's figures from hand-made seatings, each checked exactly."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from analysis.hands import Hands
from analysis.logs import read_log
from analysis.estimators import AIVAT_VALUES
from analysis.match_score import Alternative, MatchScore, ScoreError, score_match
from poker.gamedef import max_loss
from poker.gamedef import load_game
from poker.stats import mean_ci

KUHN = load_game("kuhn")


def seating(tmp_path: Path, name: str, lines: list[str], *, score: str | None = None) -> Hands:
    """A Kuhn log of ``lines`` (``hand:betting:cards:values:names``), with a SCORE line when given."""
    text = "".join(f"STATE:{line}\n" for line in lines) + (f"SCORE:{score}\n" if score else "")
    path = tmp_path / f"{name}.log"
    path.write_text(f"# name/game/hands/seed {name} kuhn {len(lines)} 1\n{text}")
    return read_log(path, KUHN)


# Seating 1: alice in seat 1 (position 0 in even hands), bob in seat 2; the dealer seats position p in seat (p + h) mod 2.
FIRST = [
    "0:rc:Ks|Qs:2|-2:alice|bob",
    "1:cc:As|Qs:1|-1:bob|alice",
    "2:rf:Qs|Ks:1|-1:alice|bob",
    "3:crc:Ks|As:-2|2:bob|alice",
]
# Seating 2: the same cards by position, the seats swapped.
SECOND = [
    "0:cc:Ks|Qs:1|-1:bob|alice",
    "1:rc:As|Qs:2|-2:alice|bob",
    "2:cc:Qs|Ks:-1|1:bob|alice",
    "3:rf:Ks|As:1|-1:alice|bob",
]


def test_one_seating_gives_the_raw_means_and_no_duplicate(tmp_path: Path) -> None:
    score = score_match([seating(tmp_path, "one", FIRST, score="1|-1:alice|bob")], ["alice", "bob"], game=KUHN, hands=4)
    alice, bob = score.players
    assert alice.raw.values.tolist() == [2, -1, 1, 2] and bob.raw.values.tolist() == [-2, 1, -1, -2]
    assert alice.raw.hand_id.tolist() == [0, 1, 2, 3]
    assert alice.raw.estimate == mean_ci([2, -1, 1, 2])
    assert alice.duplicate is None and alice.estimate is alice.raw
    assert (alice.chips, bob.chips) == (1.0, -1.0)  # the SCORE line's, not the hands' sum (4)
    assert score.hands == 4 and score.complete and alice.estimators == () and alice.best is None
    assert score.to_json()["duplicate"] is None


def test_duplicate_value_is_each_hands_mean_over_the_seatings(tmp_path: Path) -> None:
    tables = [
        seating(tmp_path, "one", FIRST, score="4|-4:alice|bob"),
        seating(tmp_path, "two", SECOND, score="-5|5:bob|alice"),
    ]
    score = score_match(tables, ["alice", "bob"], game=KUHN, hands=4)
    alice = score.player("alice")
    # alice: [2, -1, 1, 2] in seating 1, [-1, 2, 1, 1] in seating 2
    assert alice.duplicate is not None
    assert alice.duplicate.values.tolist() == [0.5, 0.5, 1.0, 1.5] and alice.duplicate.hand_id.tolist() == [0, 1, 2, 3]
    assert alice.estimate is alice.duplicate and alice.duplicate.estimate == mean_ci([0.5, 0.5, 1.0, 1.5])
    assert alice.raw.values.tolist() == [2, -1, 1, 2, -1, 2, 1, 1]  # seating by seating
    assert alice.chips == 4 + 5 and score.player("bob").chips == -4 - 5
    assert score.player("bob").duplicate.values.tolist() == [-0.5, -0.5, -1.0, -1.5]  # type: ignore[union-attr]
    # The seatings in the other order give the same duplicate values.
    swapped = score_match(tables[::-1], ["alice", "bob"], game=KUHN, hands=4).player("alice").duplicate
    assert swapped is not None and swapped.values.tolist() == alice.duplicate.values.tolist()


def test_partial_seatings_pair_only_the_hands_every_seating_finished(tmp_path: Path) -> None:
    tables = [seating(tmp_path, "one", FIRST, score="4|-4:alice|bob"), seating(tmp_path, "two", SECOND[:2])]
    score = score_match(tables, ["alice", "bob"], game=KUHN, hands=4)
    assert [(s.hands, s.complete) for s in score.seatings] == [(4, True), (2, False)] and not score.complete
    alice = score.player("alice")
    assert alice.duplicate is not None and alice.duplicate.values.tolist() == [0.5, 0.5]
    assert alice.raw.values.tolist() == [2, -1, 1, 2, -1, 2]
    assert alice.chips == 4 + 1  # seating 2 has no SCORE line yet: its hands added
    # One seating not begun: no hand is paired; the headline figure is the raw one.
    alone = score_match([tables[0], None], ["alice", "bob"], game=KUHN, hands=4).player("alice")
    assert alone.duplicate is not None and alone.duplicate.values.size == 0 and alone.estimate is alone.raw


def test_no_hands_at_all_scores_zero_hands(tmp_path: Path) -> None:
    empty = seating(tmp_path, "one", [])
    score = score_match([empty, None], ["alice", "bob"], game=KUHN, hands=4)
    assert score.hands == 0 and [p.chips for p in score.players] == [0.0, 0.0]
    document = score.to_json()
    assert document["players"][0]["estimate"] is None and document["duplicate"] == {"alice": None, "bob": None}
    assert score_match([None], ["alice", "bob"], game=KUHN, hands=4).to_json()["hands"] == 0
    with pytest.raises(ScoreError, match="one.log is not a log of the match's game"):
        score_match([empty], ["alice", "bob"], game=load_game("leduc"), hands=4)


def test_a_player_absent_from_a_hand_is_left_out_of_it(tmp_path: Path) -> None:
    lines = [*FIRST[:2], "2:rf:Qs|Ks:1|-1:carol|bob", FIRST[3]]
    score = score_match([seating(tmp_path, "one", lines)], ["alice", "bob", "carol"], game=KUHN, hands=4)
    alice, bob, carol = score.players
    assert alice.raw.hand_id.tolist() == [0, 1, 3] and alice.raw.values.tolist() == [2, -1, 2]
    assert bob.raw.values.size == 4 and carol.raw.values.tolist() == [1]
    assert score.to_json()["players"][2]["estimate"] is None  # one hand: no interval


def test_duplicate_seatings_whose_cards_differ_are_refused(tmp_path: Path) -> None:
    other = [SECOND[0].replace("Ks|Qs", "As|Qs"), *SECOND[1:]]
    tables = [seating(tmp_path, "one", FIRST), seating(tmp_path, "two", other)]
    with pytest.raises(ScoreError, match="hand 0: position 0's hole cards are Ks"):
        score_match(tables, ["alice", "bob"], game=KUHN, hands=4)


def test_aivat_applies_to_a_player_whose_policy_is_known(tmp_path: Path) -> None:
    """always-call against always-raise: both show down every hand for 2 chips, and
    AIVAT with always-raise's value function (always-raise against itself, which
    ends every hand as this one does) removes all of the cards' luck."""
    first = ["0:crc:Ks|As:-2|2:call|raise", "1:rc:Qs|As:-2|2:raise|call", "2:crc:As|Qs:2|-2:call|raise"]
    second = ["0:rc:Ks|As:-2|2:raise|call", "1:crc:Qs|As:-2|2:call|raise", "2:rc:As|Qs:2|-2:raise|call"]
    tables = [seating(tmp_path, "one", first), seating(tmp_path, "two", second)]
    plain = score_match(tables, ["call", "raise"], game=KUHN, hands=3)
    assert all(p.estimators == () and p.best is None for p in plain.players)
    score = score_match(tables, ["call", "raise"], game=KUHN, hands=3, policies={"raise": "always-raise"})
    call, raise_ = score.players
    assert raise_.best is not None and raise_.best.estimator == "aivat"
    assert call.best is not None and call.best.estimator == "-aivat of raise"
    assert raise_.best.values.tolist() == [0.0, 0.0, 0.0] and raise_.best.hand_id.tolist() == [0, 1, 2]
    assert call.best.values.tolist() == [0.0, 0.0, 0.0]
    document = score.to_json()["players"][1]
    assert document["best"] == {
        "estimator": "aivat", "mean": 0.0, "interval": [0.0, 0.0], "hands": 3, "unit": "chips/hand",
        "interval_shown": False, "value_function": AIVAT_VALUES,
    }
    assert document["estimators"] == [document["best"]] and document["aivat"] == document["best"]
    assert score.to_json()["players"][0]["aivat"]["estimator"] == "-aivat of raise"
    assert plain.to_json()["players"][0]["aivat"] is None


def test_an_estimator_plugs_in_and_the_narrowest_alternative_is_kept(tmp_path: Path) -> None:
    table = seating(tmp_path, "one", FIRST)

    def halves(every: Hands, policies: Mapping[str, str]) -> list[Alternative]:
        """Two alternatives: each hand's chips halved (narrower), and the chips as they are."""
        return [
            {name: ("as is", every.name_values(name)) for name in every.names},
            {name: ("halved", every.name_values(name) / 2) for name in every.names},
            {name: ("nothing", np.full(len(every), np.nan)) for name in every.names},  # no interval: never kept
        ]

    def never(every: Hands, policies: Mapping[str, str]) -> list[Alternative]:
        return []

    score: MatchScore = score_match([table], ["alice", "bob"], game=KUHN, hands=4, estimators=(never, halves))
    alice = score.player("alice")
    assert [e.estimator for e in alice.estimators] == ["halved"] and alice.best is alice.estimators[0]
    assert alice.best.values.tolist() == [1.0, -0.5, 0.5, 1.0]


def test_the_hands_a_leaving_player_left_are_charged_its_largest_loss(tmp_path: Path) -> None:
    """Seating 2 ends after 2 hands because alice left: hands 2 and 3 of it cost her 2
    chips each (Kuhn's most: the ante and one bet), paid to bob, in every figure."""
    assert (max_loss(KUHN), max_loss(load_game("leduc")), max_loss(load_game("holdem.limit.2p"))) == (2, 13, 2300)
    assert max_loss(load_game("holdem.nolimit.2p.reverse_blinds")) == 20000
    tables = [seating(tmp_path, "one", FIRST, score="4|-4:alice|bob"), seating(tmp_path, "two", SECOND[:2])]
    score = score_match(tables, ["alice", "bob"], game=KUHN, hands=4, left="alice")
    alice, bob = score.players
    assert alice.raw.values.tolist() == [2, -1, 1, 2, -1, 2, -2, -2] and bob.raw.values.tolist()[-2:] == [2, 2]
    assert alice.duplicate is not None and alice.duplicate.values.tolist() == [0.5, 0.5, -0.5, 0.0]
    assert (alice.chips, bob.chips, alice.charged, bob.charged) == (4 + 1 - 4, -4 - 1 + 4, 2, 0)
    assert score.hands == 6 and score.to_json()["players"][0]["charged"] == 2  # hands played stay played
    # A seating never begun is charged whole; nobody leaving charges nothing.
    whole = score_match([tables[0], None], ["alice", "bob"], game=KUHN, hands=4, left="alice").player("alice")
    assert whole.raw.values.size == 8 and whole.duplicate is not None and whole.duplicate.values.tolist() == [0, -1.5, -0.5, 0]
    assert score_match(tables, ["alice", "bob"], game=KUHN, hands=4).player("alice").charged == 0
    with pytest.raises(ScoreError, match="'carol', who left, is not a player"):
        score_match(tables, ["alice", "bob"], game=KUHN, hands=4, left="carol")


def test_quitting_when_behind_never_beats_playing_on(tmp_path: Path) -> None:
    """always-call (alice) against a bot that bets its king alone: 30 fixed deals of
    6 hands. Quitting before the last hand whenever behind, alice's figure over the
    30 matches is no higher than playing every match out (nor is any match's)."""
    rng = np.random.default_rng(44)
    played_out, quitting, quits = [], [], 0
    for match in range(30):
        lines = []
        for hand in range(6):
            mine, bot = rng.choice(["Js", "Qs", "Ks"], 2, replace=False)
            win = 1 if "JQK".index(mine[0]) > "JQK".index(bot[0]) else -1
            first, betting = ("alice|bot", "crc" if bot == "Ks" else "cc") if hand % 2 == 0 else ("bot|alice", "rc" if bot == "Ks" else "cc")
            cards = f"{mine}|{bot}" if hand % 2 == 0 else f"{bot}|{mine}"
            value = win * (2 if bot == "Ks" else 1)
            values = f"{value}|{-value}" if hand % 2 == 0 else f"{-value}|{value}"
            lines.append(f"{hand}:{betting}:{cards}:{values}:{first}")
        whole = score_match([seating(tmp_path, f"whole{match}", lines)], ["alice", "bot"], game=KUHN, hands=6)
        behind = sum(whole.player("alice").raw.values[:5]) < 0
        quits += behind
        quit_ = score_match([seating(tmp_path, f"quit{match}", lines[:5] if behind else lines)], ["alice", "bot"],
                            game=KUHN, hands=6, left="alice" if behind else None)
        assert quit_.player("alice").raw.values.sum() <= whole.player("alice").raw.values.sum()
        played_out.append(whole.player("alice").raw.values)
        quitting.append(quit_.player("alice").raw.values)
    assert sum(v.size for v in quitting) == 180 and 5 < quits < 30
    assert np.concatenate(quitting).mean() <= np.concatenate(played_out).mean() < 0
