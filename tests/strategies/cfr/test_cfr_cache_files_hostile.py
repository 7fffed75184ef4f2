"""Damaged or tampered cache files (card abstractions, derived tables) are one-line
errors that readers answer by building again, never a crash in a kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from poker.gamedef import load_game
from strategies.cfr.abstraction.bucketing import AbstractionSpec, Feature, Recall
from strategies.cfr.abstraction.cache_files import CacheFileError, expect_arrays, read_arrays, write_arrays
from strategies.cfr.abstraction.card_abstraction import CardAbstraction, load_abstraction
from strategies.cfr.abstraction.card_tables import AbstractionError
from strategies.cfr.file_io import pack_array

SMALL = replace(load_game("hulhe"), num_ranks=5)  # 20-card hold'em, ranks T to A


@pytest.fixture(scope="module", params=[(Feature.EHS2, (3,), Recall.PERFECT), (Feature.HS, (2, 3, 3, 3), Recall.IMPERFECT)])
def saved(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("cache")
    abstraction = CardAbstraction.build(SMALL, AbstractionSpec(*request.param), cache_dir=directory)
    path = directory / "small.abstraction"
    abstraction.save(path)
    return path


def _parts(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    header, arrays = msgpack.Unpacker(open(path, "rb"), raw=False, max_buffer_size=1 << 28)
    return header, arrays


def _write(path: Path, header: Any, arrays: Any) -> None:
    path.write_bytes(msgpack.packb(header, use_bin_type=True) + msgpack.packb(arrays, use_bin_type=True))


def test_saved_abstractions_pass_the_checks(saved: Path) -> None:
    loaded = CardAbstraction.load(saved)
    assert loaded.game == SMALL


def _array(name: str, change: Callable[[np.ndarray], np.ndarray]) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def edit(header: dict[str, Any], arrays: dict[str, Any]) -> None:
        packed = arrays[name]
        array = np.frombuffer(packed["data"], dtype=packed["dtype"]).reshape(packed["shape"])
        arrays[name] = pack_array(change(array.copy()))

    return edit


def _header(key: str, value: Any) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    return lambda header, arrays: header.__setitem__(key, value)


def _bump_last(array: np.ndarray) -> np.ndarray:
    array[-1] += 1000
    return array


TAMPERED: dict[str, tuple[Callable[[dict[str, Any], dict[str, Any]], None], str]] = {
    "game not text": (_header("game", 5), "'game' is 5, not str"),
    "game nonsense": (_header("game", "GAMEDEF\nlimit\nEND GAMEDEF\n"), "is missing"),
    "feature unknown": (_header("feature", "magic"), "'feature' is 'magic', not one of"),
    "buckets zero": (_header("buckets", [0]), "not bucket counts"),
    "buckets text": (_header("buckets", ["3"]), "not bucket counts"),
    "buckets huge": (_header("buckets", [1 << 40]), "not bucket counts"),
    "bucket count per round": (_header("buckets", [3, 3]), "2 bucket counts for 4 rounds"),
    "no recall": (lambda h, a: h.pop("recall"), "has no 'recall'"),
    "version": (_header("version", 7), "card abstraction version 7"),
    "key_start past the keys": (_array("key_start", _bump_last), "key_start"),
    "merged_start past the thresholds": (_array("merged_start", _bump_last), "merged_start"),
    "local_start past local": (_array("local_start", _bump_last), "local_start"),
    "local bucket out of range": (_array("local", lambda a: a + 1000), "local holds a bucket"),
    "local as int64": (_array("local", lambda a: a.astype(np.int64)), "not int32"),
    "table too short": (_array("table", lambda a: a[:, :-1]), "table has shape"),
    "table past merged": (_array("table", lambda a: a + 200), "table points past"),
    "table as floats": (_array("table", lambda a: a.astype(np.float64)), "not unsigned"),
    "final thresholds flat": (_array("final_thresholds", lambda a: a.ravel()), "dimensions"),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_tampered_abstraction_is_refused_and_rebuilt(saved: Path, tmp_path: Path, case: str) -> None:
    edit, match = TAMPERED[case]
    header, arrays = _parts(saved)
    edit(header, arrays)
    path = tmp_path / "bad.abstraction"
    _write(path, header, arrays)
    with pytest.raises(AbstractionError) as caught:
        CardAbstraction.load(path)
    message = str(caught.value)
    assert "\n" not in message and match in message and "bad.abstraction" in message, message


def test_load_abstraction_rebuilds_a_tampered_cache(tmp_path: Path) -> None:
    built = load_abstraction("hs:2:imperfect", SMALL, cache_dir=tmp_path)
    (path,) = tmp_path.glob("*.abstraction")
    header, arrays = _parts(path)
    _array("local", lambda a: a + 1000)(header, arrays)
    _write(path, header, arrays)
    again = load_abstraction("hs:2:imperfect", SMALL, cache_dir=tmp_path)
    board = [int(c) for c in SMALL.deck()[:5]]
    assert np.array_equal(again.buckets(3, board), built.buckets(3, board))
    assert CardAbstraction.load(path).name == "hs:2:imperfect"  # written again


def test_truncated_and_foreign_cache_files(tmp_path: Path) -> None:
    path = tmp_path / "x.msgpack"
    write_arrays(path, {"format": "f", "game": "g"}, {"sum1": np.arange(6, dtype=np.int64)})
    data = path.read_bytes()
    sums = expect_arrays({"sum1": ("<i8", (6,))})
    assert read_arrays(path, expect=sums)[1]["sum1"].tolist() == list(range(6))
    cases = {
        data[: len(data) // 2]: "truncated",
        data[:-1]: "truncated",
        b"": "truncated",
        msgpack.packb({"game": "x" * (1 << 17)}): "exceeds max_str_len",
        msgpack.packb({"arrays": 5}) + msgpack.packb({}): "'arrays' is 5, not list",
    }
    for content, match in cases.items():
        path.write_bytes(content)
        with pytest.raises(CacheFileError, match=match) as caught:
            read_arrays(path, expect=sums)
        assert "\n" not in str(caught.value) and str(caught.value).startswith(f"{path}: ")
    write_arrays(path, {}, {"sum1": np.arange(5, dtype=np.int64)})
    with pytest.raises(CacheFileError, match=r"array 'sum1': int64\[5\]; expected int64\[6\]"):
        read_arrays(path, expect=sums)
