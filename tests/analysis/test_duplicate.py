"""analysis.duplicate: pairing the seatings of ``arena match --duplicate`` and scoring them exactly as it does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from analysis.breakdown import by_name, by_position, cumulative, paired_difference, summarize
from analysis.duplicate import DuplicateError, combined_estimates, find_duplicates, pair, seat_order
from analysis.hand_files import read_hands
from analysis.hands import Hands
from arena.commands.match import main as arena_match


def run(directory: Path, game: str, hands: int, seed: int, *bots: str, duplicate: bool = True) -> Path:
    argv = [game, "--hands", str(hands), "--seed", str(seed), *bots, "--in-process", "--run-dir", str(directory)]
    assert arena_match(argv + (["--duplicate"] if duplicate else [])) == 0
    return directory


def logs(directory: Path) -> list[Hands]:
    return [read_hands(path) for path in sorted(directory.glob("match*.log"))]


@pytest.fixture(scope="module")
def leduc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run(tmp_path_factory.mktemp("leduc"), "leduc", 60, 4, "random", "always-raise")


@pytest.fixture(scope="module")
def kuhn3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run(tmp_path_factory.mktemp("kuhn3"), "kuhn3p", 40, 9, "random", "always-call", "probe")


@pytest.mark.parametrize("fixture", ["leduc", "kuhn3"])
def test_duplicate_score_is_arena_matchs_to_the_last_bit(fixture: str, request: pytest.FixtureRequest) -> None:
    directory: Path = request.getfixturevalue(fixture)
    agents = json.loads((directory / "results.json").read_text())["agents"]
    for tables in (logs(directory), [read_hands(p) for p in sorted(directory.glob("match*.hands.msgpack"))]):
        sets, rest = find_duplicates(tables)
        assert len(sets) == 1 and rest == []
        estimates = sets[0].estimates()
        assert list(estimates) == [a["name"] for a in agents]
        for agent in agents:
            estimate = estimates[agent["name"]]
            assert (estimate.mean, estimate.half_width, estimate.n) == (agent["mean"], agent["ci95"], agent["hands"])
        assert combined_estimates(sets) == estimates
        assert np.allclose(sets[0].values.sum(axis=1), 0)


def test_seatings_in_any_order_pair(kuhn3: Path) -> None:
    tables = logs(kuhn3)
    assert len({seat_order(t) for t in tables}) == 6
    forward = pair(tables).estimates()
    backward = pair(tables[::-1]).estimates()
    for name, estimate in forward.items():
        assert backward[name].mean == pytest.approx(estimate.mean, abs=1e-12)


def tampered(directory: Path, tmp_path: Path, edit: str) -> list[Path]:
    """The duplicate logs copied to ``tmp_path``, the second with hand 7 edited."""
    paths = []
    for path in sorted(directory.glob("match*.log")):
        lines = path.read_text().splitlines()
        if path.name == "match.2.log":
            row = next(i for i, line in enumerate(lines) if line.startswith("STATE:7:"))
            fields = lines[row].split(":")
            if edit == "cards":  # the two positions' hole cards swapped: still a valid line
                holes = fields[3].split("/")[0].split("|")
                fields[3] = fields[3].replace("|".join(holes), "|".join(reversed(holes)), 1)
                lines[row] = ":".join(fields)
            else:
                del lines[row]
        copy = tmp_path / path.name
        copy.write_text("\n".join(lines) + "\n")
        paths.append(copy)
    return paths


def test_a_tampered_log_is_refused_naming_the_hand(leduc: Path, tmp_path: Path) -> None:
    tables = [read_hands(p) for p in tampered(leduc, tmp_path, "cards")]
    with pytest.raises(DuplicateError) as raised:
        pair(tables)
    message = str(raised.value)
    assert message.startswith("hand 7: position 0's hole cards are ")
    assert f"{tmp_path / 'match.1.log'}:12 but " in message and f"{tmp_path / 'match.2.log'}:12" in message
    with pytest.raises(DuplicateError, match="^hand 7: "):
        find_duplicates(tables)


def test_a_missing_hand_is_refused_naming_it(leduc: Path, tmp_path: Path) -> None:
    tables = [read_hands(p) for p in tampered(leduc, tmp_path, "drop")]
    with pytest.raises(DuplicateError, match=r"^hand 7 is in .*match\.1\.log but not in .*match\.2\.log"):
        pair(tables)


def test_what_is_not_a_duplicate_match(leduc: Path, tmp_path: Path) -> None:
    first, second = logs(leduc)
    with pytest.raises(DuplicateError, match="has 2 seatings, got 1 logs"):
        pair([first])
    with pytest.raises(DuplicateError, match="hand 0: the logs do not put every player in every position once"):
        pair([first, first])
    assert find_duplicates([first, first]) == ([], [first, first])
    other = logs(run(tmp_path / "other", "leduc", 60, 5, "random", "always-raise"))
    sets, rest = find_duplicates([first, other[1]])  # other seed: a plain pair of logs
    assert sets == [] and len(rest) == 2
    repeated = first.take(np.array([0, 0, 1]))
    with pytest.raises(DuplicateError, match="hand 0 appears twice"):
        pair([repeated, second])


def test_breakdowns(leduc: Path) -> None:
    first, second = logs(leduc)
    names = by_name(first)
    chips = first.name_values("random")
    assert names["random"].mean == chips.mean() and names["random"].n == 60
    positions = by_position(first)
    assert [p.mean for p in positions] == [first.values[:, 0].mean(), first.values[:, 1].mean()]
    assert np.array_equal(cumulative(first)["always-raise"], np.cumsum(first.name_values("always-raise")))
    rows = summarize(first)
    assert [(r.name, r.hands, r.total) for r in rows] == [
        ("random", 60, chips.sum()),
        ("always-raise", 60, -chips.sum()),
    ]
    assert rows[0].std == pytest.approx(np.std(chips, ddof=1))
    difference = paired_difference(first.name_values("random"), first.name_values("always-raise"))
    assert difference.mean == pytest.approx(2 * chips.mean())
    with pytest.raises(ValueError, match="same hands"):
        paired_difference(chips, chips[:3])
