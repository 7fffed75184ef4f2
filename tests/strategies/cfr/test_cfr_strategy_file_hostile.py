"""Hostile strategy files: every one is refused with a one-line StrategyFileError,
fast and without much memory, before anything expensive is built."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from poker.gamedef import format_game, load_game
from strategies.cfr.strategy_file import (
    BUCKETS,
    MAX_POT_FRACTIONS,
    StrategyFile,
    StrategyFileError,
    load_strategy,
    save_strategy,
)
from strategies.cfr.tree.betting import build_betting_tree
from strategies.cfr.tree.public import BettingAbstraction, build_tree
from tests.strategies.cfr.hostile_files import refused

Header = dict[str, Any]
Arrays = dict[str, Any]


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small no-limit Leduc strategy file with a checkpoint's three arrays."""
    game = load_game("leduc.nolimit")
    tree = build_tree(game, BettingAbstraction((1.0,)))
    shape = (tree.num_decisions, tree.max_actions, tree.num_hands)
    arrays = {name: np.full(shape, 0.25) for name in ("strategy", "regret", "cumulative")}
    saved = StrategyFile(game, tree.abstraction, "cfr+", 3, 0.5, arrays, settings={"delay": 0})
    path = tmp_path_factory.mktemp("valid") / "valid.strategy"
    save_strategy(path, saved, tree)
    return path


def _parts(path: Path) -> tuple[Header, Arrays]:
    header, arrays = msgpack.Unpacker(open(path, "rb"), raw=False, max_buffer_size=1 << 26)
    return header, arrays


def _pack(header: Any, arrays: Any) -> bytes:
    packed: bytes = msgpack.packb(header, use_bin_type=True) + msgpack.packb(arrays, use_bin_type=True)
    return packed


def _refused(path: Path, match: str) -> None:
    refused(path, match, load_strategy, StrategyFileError)


def _header_case(edit: Callable[[Header], None]) -> Callable[[Header, Arrays], bytes]:
    def make(header: Header, arrays: Arrays) -> bytes:
        edit(header)
        return _pack(header, arrays)

    return make


def _set(key: str, value: Any) -> Callable[[Header], None]:
    return lambda header: header.__setitem__(key, value)


def _drop(key: str) -> Callable[[Header], None]:
    return lambda header: header.__delitem__(key)


def _betting(fractions: list[Any], all_in: Any = True) -> Callable[[Header], None]:
    return _set("betting_abstraction", {"pot_fractions": fractions, "all_in": all_in})


# 2,000,000-chip stacks and 1-chip blinds: min-raise chains up to the 64-action limit
BIG_NOLIMIT = format_game(replace(load_game("leduc.nolimit"), stack=(2_000_000,) * 2, blind=(1, 1)))
BIG_LIMIT = format_game(
    replace(
        load_game("leduc"),
        num_rounds=4,
        stack=(2_000_000,) * 2,
        blind=(1, 1),
        raise_size=(1,) * 4,
        max_raises=(60,) * 4,
        first_player=(0,) * 4,
        num_board_cards=(0, 1, 1, 1),
    )
)


def _big_nolimit(header: Header) -> None:
    header.update(game=BIG_NOLIMIT, betting_abstraction={"pot_fractions": [0.001], "all_in": True})


def _big_limit(header: Header) -> None:
    header.update(game=BIG_LIMIT, betting_abstraction=None)


HEADER_CASES: dict[str, tuple[Callable[[Header], None], str]] = {
    "300 raise sizes": (_betting([0.01 * (i + 1) for i in range(300)]), "over the limit of 16"),
    "16 small raise sizes": (_betting([0.01 * (i + 1) for i in range(MAX_POT_FRACTIONS)]), "the header's tree"),
    "huge no-limit game": (_big_nolimit, "the header's tree"),
    "huge limit game": (_big_limit, "the header's tree"),
    "game not text": (_set("game", 12), "'game' is 12, not str"),
    "game text too long": (_set("game", "#" * 10_000), "over the limit of 4096"),
    "game text over the msgpack limit": (_set("game", "#" * 100_000), "exceeds max_str_len"),
    "game text nonsense": (_set("game", "GAMEDEF\nnolimit\nEND GAMEDEF\n"), "is missing"),
    "three players": (_set("game", format_game(load_game("kuhn3p"))), "3 players"),
    "no game": (_drop("game"), "has no 'game'"),
    "no digest": (_drop("tree_digest"), "has no 'tree_digest'"),
    "no arrays list": (_drop("arrays"), "has no 'arrays'"),
    "no iterations": (_drop("iterations"), "has no 'iterations'"),
    "iterations text": (_set("iterations", "5"), "'iterations' is '5', not int"),
    "iterations float": (_set("iterations", 5.0), "not int"),
    "iterations negative": (_set("iterations", -1), "not a count"),
    "iterations huge": (_set("iterations", 1 << 63), "not a count"),
    "exploitability nan": (_set("exploitability", float("nan")), "not a finite number"),
    "pot fraction text": (_betting(["1"]), "not a number"),
    "pot fraction inf": (_betting([float("inf")]), "not a pot fraction"),
    "pot fraction negative": (_betting([-1.0]), "not a pot fraction"),
    "pot fraction zero": (_betting([0]), "not a pot fraction"),
    "all_in not bool": (_betting([1.0], all_in=1), "'all_in' is 1, not bool"),
    "betting abstraction list": (_set("betting_abstraction", [1.0]), "not dict or None"),
    "betting abstraction missing on no-limit": (_set("betting_abstraction", None), "a no-limit game"),
    "suit isomorphism text": (_set("suit_isomorphism", "yes"), "not bool"),
    "settings list": (_set("settings", [1, 2]), "not dict or None"),
    "settings delay negative": (_set("settings", {"delay": -1}), "'delay' is -1, not a count"),
    "settings nested": (_set("settings", {"x": {"y": 1}}), "not a number, text or None"),
    "unknown layout": (_set("layout", "sideways"), "not one of"),
    "unknown key": (_set("surprise", 1), "unknown key 'surprise'"),
    "digest not hex": (_set("tree_digest", "x" * 64), "not a SHA-256"),
    "digest wrong": (_set("tree_digest", "0" * 64), "different public tree"),
    "arrays not names": (_set("arrays", [1]), "not a list of array names"),
    "arrays without strategy": (_set("arrays", ["regret"]), "no 'strategy' array"),
    "card abstraction on public tree": (_set("card_abstraction", "ehs2:5:perfect"), "public-tree strategy"),
    "bad card abstraction": (
        lambda h: h.update(layout=BUCKETS, card_abstraction="ehs2:0:perfect"),
        "must be a positive whole number",
    ),
    "wrong format": (_set("format", "acpc-arena-something"), "not a strategy file"),
    "version 2": (_set("version", 2), "strategy file version 2; this reader knows 1"),
    "version text": (_set("version", "1"), "strategy file version '1'"),
}


@pytest.mark.parametrize("case", sorted(HEADER_CASES))
def test_hostile_header_is_refused(valid: Path, tmp_path: Path, case: str) -> None:
    edit, match = HEADER_CASES[case]
    header, arrays = _parts(valid)
    path = tmp_path / "hostile.strategy"
    path.write_bytes(_header_case(edit)(header, arrays))
    _refused(path, match)


def _shape(shape: list[int]) -> Callable[[Arrays], None]:
    return lambda arrays: arrays["strategy"].__setitem__("shape", shape)


def _array_key(key: str, value: Any) -> Callable[[Arrays], None]:
    return lambda arrays: arrays["strategy"].__setitem__(key, value)


ARRAY_CASES: dict[str, tuple[Callable[[Arrays], None], str]] = {
    "huge claimed shape": (_shape([10**9, 10**9, 10**9]), "needs 8000000000000000000000000000 bytes"),
    "shape of the wrong tree": (
        lambda a: a["strategy"].update(shape=[1, 1, 1], data=b"\0" * 8),
        "the tree needs",
    ),
    "negative shape": (_shape([-1, 4, 6]), "non-negative whole numbers"),
    "too many dimensions": (_shape([1] * 40), "array"),
    "object dtype": (_array_key("dtype", "|O"), "dtype '|O' is not one of"),
    "a long dtype is quoted in part": (_array_key("dtype", "x" * 1000), "x'... (960 more characters) is not one of"),
    "integer dtype": (
        lambda a: a["strategy"].update(dtype="<i8"),
        "strategy arrays are floating point",
    ),
    "data not bytes": (_array_key("data", "text"), "data is not binary"),
    "short data": (lambda a: a["strategy"].update(data=a["strategy"]["data"][:-8]), "the file holds"),
    "missing array": (lambda a: a.pop("regret"), "the header lists"),
    "extra array": (lambda a: a.__setitem__("extra", a["strategy"]), "the header lists"),
    "array map not a map": (lambda a: a.__setitem__("strategy", [1, 2, 3]), "not a {dtype, shape, data} map"),
}


@pytest.mark.parametrize("case", sorted(ARRAY_CASES))
def test_hostile_arrays_are_refused(valid: Path, tmp_path: Path, case: str) -> None:
    edit, match = ARRAY_CASES[case]
    header, arrays = _parts(valid)
    edit(arrays)
    path = tmp_path / "hostile.strategy"
    path.write_bytes(_pack(header, arrays))
    _refused(path, match)


def test_damaged_files_are_refused(valid: Path, tmp_path: Path) -> None:
    data = valid.read_bytes()
    header_end = len(msgpack.packb(_parts(valid)[0], use_bin_type=True))
    path = tmp_path / "damaged.strategy"
    for cut in (0, 1, header_end // 2, header_end - 1):
        path.write_bytes(data[:cut])
        _refused(path, "not a strategy file (truncated)")
    for cut in (header_end, header_end + 1, header_end + 1000):
        path.write_bytes(data[:cut])
        _refused(path, "arrays need at least")  # too small for the header's tree: nothing is built
    for cut in ((header_end + len(data)) // 2, len(data) - 1):
        path.write_bytes(data[:cut])
        _refused(path, "the arrays are damaged (truncated)")
    path.write_bytes(data + b"\x01")
    _refused(path, "more data follows the arrays")
    path.write_bytes(data + b"\xc1")
    _refused(path, "bytes that are not msgpack follow the arrays")
    # a binary claiming 2 GiB that the file does not hold
    path.write_bytes(data[:header_end] + b"\x81\xa8strategy\xc6\x80\x00\x00\x00" + bytes(len(data)))
    _refused(path, "the arrays are damaged")


NOT_MSGPACK = {
    "text": b"GAMEDEF\nlimit\nnumPlayers = 2\n",
    "random": bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8)),
    "nil": msgpack.packb(None),
    "list header": msgpack.packb([1, 2, 3]) + msgpack.packb({}),
    "reserved byte": b"\xc1",
    "deep nesting": b"\x91" * 100_000,
    "huge header string": msgpack.packb({"format": "x" * (2 << 20)}),
    "huge header list": msgpack.packb(list(range(100_000))),
    "binary in header": msgpack.packb({"format": b"acpc-arena-strategy"}, use_bin_type=True),
    "claims a 4 GiB map": b"\xdf\xff\xff\xff\xff",
}


@pytest.mark.parametrize("case", sorted(NOT_MSGPACK))
def test_not_a_strategy_file(tmp_path: Path, case: str) -> None:
    path = tmp_path / "junk.strategy"
    path.write_bytes(NOT_MSGPACK[case])
    _refused(path, "not a strategy file")


def test_valid_files_still_load(valid: Path, tmp_path: Path) -> None:
    loaded = load_strategy(valid)
    assert sorted(loaded.arrays) == ["cumulative", "regret", "strategy"]
    assert np.all(loaded.strategy == 0.25)
    game = load_game("hulhe")
    tree = build_betting_tree(game)  # the fewest columns a bucket table of it can have: one a decision
    table = StrategyFile(
        game, None, "pcs", 1, None, {"strategy": np.full((3, tree.num_decisions), 1 / 3)},
        card_abstraction="ehs2:5:perfect", layout=BUCKETS,
    )  # fmt: skip
    save_strategy(tmp_path / "hulhe", table, tree)
    assert load_strategy(tmp_path / "hulhe").arrays["strategy"].shape == (3, tree.num_decisions)


def test_a_bucket_table_too_small_for_its_tree_is_refused_before_the_tree_is_built(tmp_path: Path) -> None:
    # One column a decision at least: 6,378 HULHE decisions cannot fit in a file of four columns.
    game = load_game("hulhe")
    table = StrategyFile(game, None, "pcs", 1, None, {"strategy": np.full((3, 4), 1 / 3)}, layout=BUCKETS)
    path = tmp_path / "small.strategy"
    save_strategy(path, table, build_betting_tree(game))
    size = path.stat().st_size
    most = size // 4  # float32 entries at least, one array
    _refused(path, f"over {most:,} betting decisions: its arrays need at least {4 * (most + 1):,} bytes")


def test_a_small_file_naming_a_huge_bucket_table_is_refused_by_its_size(valid: Path, tmp_path: Path) -> None:
    # The tree is never built (95,505 betting nodes; 1.8 s before the bound): the
    # walk stops once its decisions outnumber the file's bytes / 12 (three float32
    # arrays). Not timed as the cases above are: a bucket table's bound has no
    # hands in it, so the walk still meets ~11,000 decisions (0.4-0.8 s of CPU on
    # a 2-core CI machine, too near their 1 s).
    header, arrays = _parts(valid)
    _big_nolimit(header)
    header.update(layout=BUCKETS, card_abstraction="ehs2:3:perfect")
    path = tmp_path / "hostile.strategy"
    path.write_bytes(_pack(header, arrays))
    with pytest.raises(StrategyFileError, match="betting decisions: its arrays need at least") as caught:
        load_strategy(path)
    assert f"the file has {path.stat().st_size:,}" in str(caught.value)


def test_cli_prints_one_line_for_a_hostile_file(valid: Path, tmp_path: Path) -> None:
    header, arrays = _parts(valid)
    header["betting_abstraction"] = {"pot_fractions": [0.01 * (i + 1) for i in range(300)], "all_in": True}
    path = tmp_path / "hostile.strategy"
    path.write_bytes(_pack(header, arrays))
    junk = tmp_path / "junk.strategy"
    junk.write_bytes(b"\xc1 not msgpack")
    commands = [
        ["exploitability", str(path)],
        ["exploitability", str(junk)],
        ["solve", "--resume", str(path), "--iterations", "5", "-o", str(tmp_path / "out"), "--quiet"],
    ]
    for command in commands:
        done = subprocess.run(
            [sys.executable, "-m", "arena.cli", *command], capture_output=True, text=True, timeout=120
        )
        assert done.returncode != 0, done
        assert "Traceback" not in done.stderr + done.stdout, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and ".strategy: " in lines[0], done.stderr
        assert not (tmp_path / "out").exists()


def test_cli_bucket_table_that_does_not_fit_its_abstraction(tmp_path: Path) -> None:
    game = load_game("leduc")
    table = StrategyFile(game, None, "pcs", 1, None, {"strategy": np.full((3, 5), 1 / 3)}, layout=BUCKETS)
    path = tmp_path / "misfit.strategy"
    save_strategy(path, table, build_betting_tree(game))
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "exploitability", str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "misfit.strategy: card abstraction 'none': " in done.stderr, done.stderr


def test_cli_resume_with_a_damaged_sampler_state(tmp_path: Path) -> None:
    from arena.commands import solve as cli

    out = tmp_path / "pcs.strategy"
    assert cli.main(["leduc", "--algorithm", "pcs", "--iterations", "2", "-o", str(out), "--quiet"]) == 0
    header, arrays = _parts(out)
    header["settings"]["rng_state"] = "[1]"
    out.write_bytes(_pack(header, arrays))
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "solve", "--resume", str(out), "--iterations", "4", "-o", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "arena solve: error: the checkpoint's sampler state is damaged: state must be a dict"
    ), done.stderr


# -- three-player files --------------------------------------------------------------


@pytest.fixture(scope="module")
def valid3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3p Kuhn strategy file of ten CFR+ iterations, as `arena solve kuhn3p` writes it."""
    from strategies.cfr.solvers.multiplayer import MultiCFR, seven_step_epsilon
    from strategies.cfr.strategy_file import THREE_PLAYER
    from strategies.cfr.tree.multi import build_multi_tree

    solver = MultiCFR(build_multi_tree(load_game("kuhn3p")), plus=True)
    solver.run(10)
    check = seven_step_epsilon(solver)
    arrays = {"strategy": solver.average_strategy(), "regret": solver.regret, "cumulative": solver.cumulative}
    saved = StrategyFile(
        solver.tree.game, None, "cfr+", 10, check.epsilon, arrays, layout=THREE_PLAYER, gains=check.gains
    )
    path = tmp_path_factory.mktemp("valid3") / "valid3.strategy"
    save_strategy(path, saved, solver.tree)
    return path


# 3p Leduc with ten ranks: 20 one-card hands, 8,000 deals of three for each of ~15,000 terminals
WIDE_LEDUC3P = format_game(replace(load_game("leduc.limit.3p"), num_ranks=10))

THREE_PLAYER_CASES: dict[str, tuple[Callable[[Header], None], str]] = {
    "as a public tree": (_set("layout", "public-tree"), "3 players with layout 'public-tree'"),
    "two-player game": (_set("game", format_game(load_game("kuhn"))), "2 players with layout 'three-player'"),
    "no gains": (_drop("best_response_gains"), "best_response_gains belong in three-player files"),
    "two gains": (_set("best_response_gains", [0.1, 0.2]), "not three finite numbers"),
    "gain nan": (_set("best_response_gains", [0.1, 0.2, float("nan")]), "not three finite numbers"),
    "gain text": (_set("best_response_gains", [0.1, 0.2, "x"]), "not three finite numbers"),
    "no-limit": (_set("game", format_game(load_game("holdem.nolimit.3p"))), "three-player no-limit game"),
    "suit isomorphism": (_set("suit_isomorphism", True), "keep every board"),
    "hold'em": (_set("game", format_game(load_game("holdem.limit.3p"))), "the header's tree"),
    "digest wrong": (_set("tree_digest", "0" * 64), "different public tree"),
    "card abstraction": (_set("card_abstraction", "ehs2:5:perfect"), "card abstraction"),
}


@pytest.mark.parametrize("case", sorted(THREE_PLAYER_CASES))
def test_hostile_three_player_header_is_refused(valid3: Path, tmp_path: Path, case: str) -> None:
    edit, match = THREE_PLAYER_CASES[case]
    header, arrays = _parts(valid3)
    path = tmp_path / "hostile.strategy"
    path.write_bytes(_header_case(edit)(header, arrays))
    _refused(path, match)


def test_wide_three_player_payoff_tables_are_refused(valid3: Path, tmp_path: Path) -> None:
    # Padded to hold the tree's arrays (489 betting decisions x 20 hands x 12
    # bytes), or the file's size refuses it before the payoff tables are counted.
    header, arrays = _parts(valid3)
    header["game"] = WIDE_LEDUC3P
    path = tmp_path / "hostile.strategy"
    path.write_bytes(_pack(header, {**arrays, "padding": b"\0" * 200_000}))
    _refused(path, "payoff entries, over the limit")


def test_two_player_files_hold_no_gains(valid: Path, tmp_path: Path) -> None:
    header, arrays = _parts(valid)
    header["best_response_gains"] = [0.0, 0.0, 0.0]
    path = tmp_path / "hostile.strategy"
    path.write_bytes(_pack(header, arrays))
    _refused(path, "best_response_gains belong in three-player files")
    assert "best_response_gains" not in _parts(valid)[0]  # a two-player file's header is as before
    loaded = load_strategy(valid)
    with pytest.raises(StrategyFileError, match="is two-player"):
        loaded.build_multi_tree()


def test_three_player_file_round_trip(valid3: Path, tmp_path: Path) -> None:
    from strategies.cfr.solvers.multiplayer import MultiCFR, seven_step_epsilon

    loaded = load_strategy(valid3)
    assert loaded.layout == "three-player" and loaded.iterations == 10 and loaded.gains is not None
    assert sorted(loaded.arrays) == ["cumulative", "regret", "strategy"]
    tree = loaded.build_multi_tree()
    check = seven_step_epsilon(MultiCFR(tree), loaded.strategy)
    assert check.gains == loaded.gains and check.epsilon == loaded.exploitability
    assert load_strategy(valid3, tree=tree).gains == loaded.gains
    with pytest.raises(StrategyFileError, match="reads two-player strategies only"):
        loaded.build_tree()
    with pytest.raises(StrategyFileError, match="goes with another kind of tree"):
        save_strategy(tmp_path / "x", loaded, build_tree(load_game("kuhn")))
    with pytest.raises(StrategyFileError, match="best-response gains go with three-player files"):
        save_strategy(tmp_path / "x", replace(loaded, gains=None), tree)
