"""The hosted arena's scoring and leaderboard on hand-made seating logs: what a
match's ``result`` holds while it plays and once it is over, and how the
leaderboard pools the matches of a pair."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from analysis.estimators import AIVAT_VALUES
from analysis.hand_files import read_hands
from analysis.hands import Hands, concat
from analysis.match_score import Alternative
from arena.serve.leaderboard import leaderboard
from arena.serve.scoring import Scoring, kept_estimator
from arena.serve.store import MatchRow
from poker.gamedef import load_game

# always-call ("alice") against always-raise (the bot): both show down every hand for 2 chips.
FIRST = ["0:crc:Ks|As:-2|2:alice|always-raise", "1:rc:Qs|As:-2|2:always-raise|alice", "2:crc:As|Qs:2|-2:alice|always-raise"]
SECOND = ["0:rc:Ks|As:-2|2:always-raise|alice", "1:crc:Qs|As:-2|2:alice|always-raise", "2:rc:As|Qs:2|-2:always-raise|alice"]


def match(folder: Path, match_id: str, seatings: list[list[str]], *, hands: int = 3, user_id: int = 1) -> MatchRow:
    """A Kuhn match against always-raise whose seating logs hold ``seatings`` (a full seating gets its SCORE line)."""
    directory = folder / match_id
    directory.mkdir(parents=True)
    for index, lines in enumerate(seatings):
        totals: dict[str, float] = {}
        for line in lines:
            _, _, _, values, names = line.split(":")
            for name, value in zip(names.split("|"), values.split("|")):
                totals[name] = totals.get(name, 0.0) + float(value)
        score = f"SCORE:{'|'.join(f'{v:g}' for v in totals.values())}:{'|'.join(totals)}\n" if len(lines) == hands else ""
        text = "".join(f"STATE:{line}\n" for line in lines)
        (directory / f"seating{index}.log").write_text(f"# name/game/hands/seed seating{index} kuhn {hands} 1\n{text}{score}")
    return MatchRow(
        match_id, user_id, "kuhn", "always-raise", hands, 1, len(seatings) == 2, "finished", None,
        tuple(range(9000, 9000 + len(seatings))), 0, None, None, 0.0, None,
    )


def scoring(folder: Path) -> Scoring:
    return Scoring(lambda row: [folder / row.id / f"seating{k}.log" for k in range(2 if row.duplicate else 1)])


def test_while_a_match_plays_its_result_is_the_money_and_once_over_the_bots_aivat(tmp_path: Path) -> None:
    row = match(tmp_path, "m1", [FIRST, SECOND[:2]])
    scores = scoring(tmp_path)
    names = ("alice", "always-raise")
    playing = scores.result(row, names, over=False)
    assert playing["hands"] == 5
    assert playing["seatings"] == [{"port": 9000, "hands": 3, "complete": True}, {"port": 9001, "hands": 2, "complete": False}]
    assert playing["duplicate"]["alice"] == {"mean": 0.0, "interval": [0.0, 0.0], "hands": 2, "unit": "chips/hand",
                                                 "interval_shown": False}
    assert [p["estimators"] for p in playing["players"]] == [[], []] and playing["players"][0]["best"] is None
    over = scores.result(row, names, over=True)
    alice, bot = over["players"]
    assert alice["best"] == {
        "estimator": "-aivat of always-raise", "mean": 0.0, "interval": [0.0, 0.0], "hands": 2, "unit": "chips/hand",
        "interval_shown": False, "value_function": AIVAT_VALUES,
    }
    assert alice["aivat"] == alice["best"] and playing["players"][0]["aivat"] is None
    assert bot["best"]["estimator"] == "aivat" and alice["estimators"] == [alice["best"]]
    # A match that is over is scored once: its logs no longer change.
    (tmp_path / "m1" / "seating1.log").unlink()
    assert scores.result(row, names, over=True) == over
    assert scores.result(row, names, over=False)["seatings"][1]["hands"] == 0


def test_the_leaderboard_pools_the_hands_of_a_pairs_matches(tmp_path: Path) -> None:
    rows = [
        match(tmp_path, "m1", [FIRST, SECOND]),  # duplicate: 6 hands, 3 duplicate ones
        match(tmp_path, "m2", [FIRST[:2]], hands=2),  # one seating: 2 hands
        match(tmp_path, "m3", [[SECOND[0].replace("alice", "bob")]], hands=1, user_id=2),  # bob: one hand, too few for AIVAT
    ]
    names = {1: ("alice", "always-raise"), 2: ("bob", "always-raise")}
    board = leaderboard("kuhn", load_game("kuhn"), [(row, names[row.user_id]) for row in rows], scoring(tmp_path), 8)
    alice, bob = board["entries"]
    assert (alice["user"], alice["bot"], alice["hands"]) == ("alice", "always-raise", 8)
    assert alice["raw"]["hands"] == 8 and alice["raw"]["mean"] == 0.0  # [-2, 2, 2], [2, -2, -2], [-2, 2]
    assert alice["duplicate"] == {"mean": 0.0, "interval": [0.0, 0.0], "hands": 3, "unit": "chips/hand", "interval_shown": False}
    # the estimate pools every hand: m1's 3 duplicate values and m2's 2 raw ones
    assert (alice["estimate"]["mean"], alice["estimate"]["hands"]) == (0.0, 3 + 2)
    assert alice["aivat"] == {"mean": 0.0, "interval": [0.0, 0.0], "hands": 3 + 2, "unit": "chips/hand", "interval_shown": False}
    # 8 hands, the minimum asked, but an estimate of 5 values shows no interval (the one rule): not ranked
    assert not alice["ranked"] and "rank" not in alice and board["rankings"] is None
    assert (bob["hands"], bob["raw"], bob["aivat"], bob["ranked"]) == (1, None, None, False) and "rank" not in bob
    # 30 more hands (FIRST's three again and again): ranked; the rankings take each match as one result, by its chips
    more = match(tmp_path, "m4", [[f"{hand}:{FIRST[hand % 3].split(':', 1)[1]}" for hand in range(30)]], hands=30)
    board = leaderboard("kuhn", load_game("kuhn"), [(row, names[1]) for row in [*rows[:2], more]], scoring(tmp_path), 8)
    assert board["entries"][0]["ranked"] and board["entries"][0]["rank"] == 1
    rankings = board["rankings"]["always-raise"]
    assert rankings["matches"] == 3 and sorted(rankings["bankroll"]) == ["alice", "bot:always-raise"]


def test_a_match_over_keeps_its_estimates_beside_its_logs(tmp_path: Path) -> None:
    """An estimator's answer for a match that is over is written once and read
    back (a restarted service does not estimate it again) while the hands and
    the policies are the same; other policies or a damaged file estimate again."""
    row = match(tmp_path, "m1", [FIRST, SECOND])
    names = ("alice", "always-raise")
    over = scoring(tmp_path).result(row, names, over=True)
    assert (tmp_path / "m1" / "estimates-aivat_of_known_policies.npz").is_file()
    assert scoring(tmp_path).result(row, names, over=True) == over  # a new service: the same result, read back

    calls: list[int] = []

    def halves(every: Hands, policies: Mapping[str, str]) -> list[Alternative]:
        calls.append(1)
        return [{name: ("halved", every.name_values(name) / 2) for name in every.names}]

    hands = concat([read_hands(tmp_path / "m1" / f"seating{k}.log", load_game("kuhn")) for k in (0, 1)])
    first = kept_estimator(halves, tmp_path / "m1")(hands, {"always-raise": "always-raise"})
    again = kept_estimator(halves, tmp_path / "m1")(hands, {"always-raise": "always-raise"})
    assert len(calls) == 1 and again[0]["alice"][0] == "halved"
    np.testing.assert_array_equal(again[0]["alice"][1], first[0]["alice"][1])
    kept_estimator(halves, tmp_path / "m1")(hands, {})  # other policies: estimated again
    (tmp_path / "m1" / "estimates-halves.npz").write_bytes(b"damaged")
    kept_estimator(halves, tmp_path / "m1")(hands, {})
    assert len(calls) == 3
