"""Compact playing files (strategies.cfr.compact): they play exactly what their
writer says (round trip), a compact Leduc bot's exploitability is computed
exactly beside the float one's, a bucket table carries its card abstraction
(seated with an empty cache), and hostile files get one-line errors, fast."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from arena.commands import match
from arena.commands import solve as solve_cli
from poker.deal import private_hands
from strategies.base import PublicState
from strategies.bots import DATA_DIR
from strategies.cfr.best_response.exact import exploitability
from strategies.cfr.compact import (
    MAX_INFLATED,
    CompactFileError,
    compact_of,
    load_compact,
    load_playing,
    quantize,
    save_compact,
    write_compact,
)
from strategies.cfr.solvers.pcs import PCSStrategy, bucket_strategy
from strategies.cfr.strategy_file import load_strategy
from strategies.equilibrium import EquilibriumStrategy, StrategyTable
from tests.strategies.cfr.hostile_files import refused

LEDUC = DATA_DIR / "leduc-cfr.strategy"


def test_quantize_sums_to_the_levels_moves_less_than_one_level_and_keeps_zeros() -> None:
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(4), size=1000)
    p[::7, 1] = 0.0
    p[::7] /= p[::7].sum(axis=1, keepdims=True)
    p[5] = 0.0  # an information set with no strategy stays empty
    p[6] = [1 / 3, 1 / 3, 1 / 3, 0]  # ties: the first actions get the extra level
    for levels in (255, 65535):
        q, largest = quantize(p.T, axis=0, levels=levels)
        q = q.T
        sums = q.sum(axis=1, dtype=np.int64)
        assert sums[5] == 0 and (np.delete(sums, 5) == levels).all()
        assert ((p == 0) <= (q == 0)).all()
        assert largest == np.abs(q / levels - p).max() < 1 / levels
    q, _ = quantize(p[6:7], axis=1)
    assert q.tolist() == [[85, 85, 85, 0]]
    q, _ = quantize(np.array([[0.5, 0.25, 0.25]]), axis=1)
    assert q.tolist() == [[127, 64, 64]]  # 127.5, 63.75, 63.75: two levels left, to the largest remainders


@pytest.mark.parametrize(
    ("levels", "compact_exploitability"),
    [(255, 0.004635916218897196), (65535, 1.5204438029818579e-05)],
)
def test_a_compact_leduc_bot_round_trips_and_its_exploitability_is_exact(
    tmp_path: Path, levels: int, compact_exploitability: float
) -> None:
    path = tmp_path / "leduc.compact"
    report = write_compact(LEDUC, path, levels=levels)
    saved = load_strategy(LEDUC)
    expected, largest = quantize(saved.arrays["strategy"], axis=1, levels=levels)
    loaded = load_compact(path)
    assert loaded.levels == levels and loaded.arrays["strategy"].dtype == expected.dtype
    assert np.array_equal(loaded.arrays["strategy"], expected)
    assert np.array_equal(loaded.strategy, expected / levels)
    assert report.max_difference == largest < 1 / levels
    assert report.compact_bytes < report.source_bytes / 15
    tree = saved.build_tree()
    assert exploitability(tree, saved.strategy) == pytest.approx(8.19221523649244e-06, rel=1e-9)
    assert exploitability(tree, loaded.strategy) == pytest.approx(compact_exploitability, rel=1e-9)
    # Written again from what was read: the same file.
    again = tmp_path / "again.compact"
    save_compact(again, compact_of(loaded)[0], max_difference=report.max_difference)
    assert again.read_bytes() == path.read_bytes()
    # The equilibrium agent plays q / levels at every decision of the tree.
    agent = EquilibriumStrategy(saved.game, StrategyTable(load_playing(path)), seed=1)
    hands = private_hands(saved.game)
    for d, node in enumerate(tree.decision_nodes):
        board = tree.boards[tree.board_index[node]]
        n = int(tree.num_children[node])
        played = agent.policy(PublicState(tree.states[node], board, tree.actions(node)))
        valid = ~np.isin(hands, board).any(axis=1)
        assert np.array_equal(played[valid], expected[d, :n, valid] / levels), tree.key(int(node))


def test_a_bucket_table_carries_its_card_abstraction_and_plays_with_an_empty_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    full = tmp_path / "ir.strategy"
    argv = ["leduc", "--algorithm", "pcs", "--abstraction", "ehs2:lossless,2:imperfect", "--iterations", "50"]
    assert solve_cli.main([*argv, "-o", str(full), "--quiet"]) == 0
    path = tmp_path / "ir.compact"
    report = write_compact(full, path)
    saved = load_strategy(full)
    digest = bucket_strategy(saved).abstraction.digest  # type: ignore[attr-defined]
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(empty))
    loaded = load_compact(path)
    assert loaded.cards is not None and loaded.cards.digest == digest
    q, largest = quantize(saved.arrays["strategy"], axis=0)
    assert np.array_equal(loaded.arrays["strategy"], q) and report.max_difference == largest
    tree = saved.build_tree()
    exact = PCSStrategy(saved.game, loaded.cards, q / 255, betting=None).tree_strategy(tree)
    assert np.array_equal(bucket_strategy(loaded).tree_strategy(tree), exact)
    run = tmp_path / "run"
    argv = ["leduc", f"equilibrium:file={path}", "always-raise", "--hands", "60", "--seed", "2", "--duplicate"]
    assert match.main([*argv, "--in-process", "--run-dir", str(run)]) == 0
    logs = [*run.glob("*.err"), *run.glob("*.log")]
    assert logs and [line for log in logs for line in log.read_text().splitlines() if "WARNING" in line] == []
    assert json.loads((run / "results.json").read_text())
    assert list(empty.iterdir()) == []  # nothing built, nothing cached


# -- hostile files -----------------------------------------------------------------

Header = dict[str, Any]
Arrays = dict[str, Any]


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("valid") / "leduc.compact"
    write_compact(LEDUC, path)
    return path


def _refused(path: Path, match_text: str) -> None:
    refused(path, match_text, load_compact, CompactFileError)


def _blob(data: bytes) -> dict[str, Any]:
    return {"dtype": "|u1", "shape": [len(data)], "data": data}


def _strategy(arrays: Arrays) -> bytes:
    return zlib.decompress(arrays["strategy"]["data"])


def _restore(header: Header, arrays: Arrays, raw: bytes) -> None:
    arrays["strategy"] = _blob(zlib.compress(raw))


def _sum_broken(header: Header, arrays: Arrays) -> None:
    raw = bytearray(_strategy(arrays))
    raw[0] = (raw[0] + 1) % 256 if raw[0] != 255 else 254
    _restore(header, arrays, bytes(raw))


def _bomb(header: Header, arrays: Arrays) -> None:
    header["stored"]["strategy"]["shape"] = [1 << 28, 4]
    arrays["strategy"] = _blob(zlib.compress(bytes(1 << 12)))


def _extra_array(header: Header, arrays: Arrays) -> None:
    header["arrays"].append("cards.keys")
    header["stored"]["cards.keys"] = {"dtype": "<i8", "shape": [1]}


CASES: dict[str, tuple[Callable[[Header, Arrays], None], str]] = {
    "another format": (lambda h, a: h.update(format="acpc-arena-strategy"), "not a compact strategy file"),
    "another version": (lambda h, a: h.update(version=2), "version 2"),
    "levels 7": (lambda h, a: h.update(levels=7), "not 255 or 65535"),
    "difference 2": (lambda h, a: h.update(max_difference=2.0), "not a probability difference"),
    "stored not a map": (lambda h, a: h["stored"].update(strategy=[1]), "not a {dtype, shape} map"),
    "stored object dtype": (lambda h, a: h["stored"]["strategy"].update(dtype="|O"), "has dtype"),
    "negative shape": (lambda h, a: h["stored"]["strategy"].update(shape=[-1]), "non-negative"),
    "wrong strategy shape": (lambda h, a: h["stored"]["strategy"].update(shape=[3, 3]), "levels on the tree need uint8"),
    "wrong strategy dtype": (lambda h, a: h["stored"]["strategy"].update(dtype="<u2"), "levels on the tree need uint8"),
    "uint16 levels, uint8 data": (lambda h, a: h.update(levels=65535), "levels on the tree need uint16"),
    "over the size limit": (
        lambda h, a: h["stored"]["strategy"].update(shape=[MAX_INFLATED + 1]),
        "over the limit",
    ),
    "a zlib bomb's claim": (_bomb, "cannot hold"),
    "deflate garbage": (lambda h, a: a.update(strategy=_blob(b"\x78\x9c" + bytes(range(200)))), "damaged"),
    "too short": (lambda h, a: _restore(h, a, _strategy(a)[:-1]), "exactly"),
    "too long": (lambda h, a: _restore(h, a, _strategy(a) + b"\0"), "exactly"),
    "bytes after the stream": (
        lambda h, a: a.update(strategy=_blob(a["strategy"]["data"] + b"junk")),
        "exactly",
    ),
    "sums broken": (_sum_broken, "sum to neither 0 nor 255"),
    "an extra array": (_extra_array, "a public-tree file holds strategy"),
    "a typed blob": (lambda h, a: a.update(strategy={"dtype": "<f8", "shape": [1], "data": bytes(8)}), "uint8 blobs"),
    "another tree": (lambda h, a: h.update(tree_digest="0" * 64), "different public tree"),
    "three-player buckets": (lambda h, a: h.update(layout="three-player-buckets"), "not made"),
}


def _edited(source: Path, path: Path, edit: Callable[[Header, Arrays], None]) -> Path:
    """``source`` with its header and arrays changed by ``edit``, written to ``path``."""
    header, arrays = msgpack.Unpacker(open(source, "rb"), raw=False)
    edit(header, arrays)
    path.write_bytes(msgpack.packb(header, use_bin_type=True) + msgpack.packb(arrays, use_bin_type=True))
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_compact_files_are_one_line_errors(valid: Path, tmp_path: Path, case: str) -> None:
    edit, expected = CASES[case]
    _refused(_edited(valid, tmp_path / "hostile.compact", edit), expected)


def test_truncated_and_full_files_are_one_line_errors(valid: Path, tmp_path: Path) -> None:
    data = valid.read_bytes()
    for cut in (0, 5, len(data) // 2, len(data) - 1):
        path = tmp_path / f"cut{cut}.compact"
        path.write_bytes(data[:cut])
        with pytest.raises(CompactFileError) as caught:
            load_compact(path)
        assert "\n" not in str(caught.value) and str(caught.value).startswith(f"{path}: ")
    _refused(LEDUC, "not a compact strategy file (no 'acpc-arena-compact' header)")


@pytest.fixture(scope="module")
def buckets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compact Leduc bucket table with its card abstraction (PCS, 5 iterations)."""
    folder = tmp_path_factory.mktemp("buckets")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ACPC_ARENA_CACHE", str(folder / "cache"))
        argv = ["leduc", "--algorithm", "pcs", "--abstraction", "ehs2:lossless,2:imperfect", "--iterations", "5"]
        assert solve_cli.main([*argv, "-o", str(folder / "ir.strategy"), "--quiet"]) == 0
        write_compact(folder / "ir.strategy", folder / "ir.compact")
    return folder / "ir.compact"


def _cards(name: str, change: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, Any]]) -> Callable[[Header, Arrays], None]:
    def edit(header: Header, arrays: Arrays) -> None:
        claim = header["stored"][name]
        array = np.frombuffer(zlib.decompress(arrays[name]["data"]), dtype=claim["dtype"]).reshape(claim["shape"])
        changed = change(array.copy())
        header["stored"][name] = {"dtype": changed.dtype.str, "shape": list(changed.shape)}
        arrays[name] = _blob(zlib.compress(changed.tobytes()))

    return edit


def _without_cards(header: Header, arrays: Arrays) -> None:
    for name in [n for n in header["stored"] if n.startswith("cards.")]:
        del header["stored"][name], arrays[name]
        header["arrays"].remove(name)


BUCKET_CASES: dict[str, tuple[Callable[[Header, Arrays], None], str]] = {
    "a bucket past the counts": (_cards("cards.local", lambda a: a + 100), "local holds a bucket outside"),
    "a table past the thresholds": (_cards("cards.table", lambda a: a + 200), "points past the merged thresholds"),
    "a table of another shape": (_cards("cards.table", lambda a: a[:, :-1]), "table has shape"),
    "offsets out of order": (_cards("cards.key_start", lambda a: a[::-1].copy()), "key_start is not"),
    "keys as floats": (_cards("cards.keys", lambda a: a.astype(np.float64)), "not int64"),
    "no card abstraction": (_without_cards, "holds strategy and the card abstraction's"),
    "more columns than the tree": (lambda h, a: h["stored"]["strategy"].update(shape=[3, 1000]), "the tree need"),
}


@pytest.mark.parametrize("case", sorted(BUCKET_CASES))
def test_hostile_card_abstractions_are_one_line_errors(buckets: Path, tmp_path: Path, case: str) -> None:
    assert load_compact(buckets).cards is not None
    edit, expected = BUCKET_CASES[case]
    _refused(_edited(buckets, tmp_path / "hostile.compact", edit), expected)
