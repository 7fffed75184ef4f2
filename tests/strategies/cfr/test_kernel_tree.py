"""The public tree reaches the numba kernels as a :class:`KernelTree`, read by name:
no kernel or caller depends on the order of its arrays."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from poker.gamedef import load_game
from strategies.cfr.tree.public import KernelTree, build_tree

ROOT = Path(__file__).resolve().parents[3]
KERNEL_MODULES = ("strategies/cfr/tree/_kernels.py", "strategies/resolve/_kernels.py", "strategies/cfr/tree/public.py")


def test_kernel_tree_holds_the_trees_arrays_by_name() -> None:
    tree = build_tree(load_game("leduc"), isomorphism=True)
    arrays = tree.kernel_arrays
    assert isinstance(arrays, KernelTree)
    for name in KernelTree._fields:
        assert getattr(arrays, name) is getattr(tree, "hand_slots" if name == "hand_cards" else name), name


def test_padding_widens_only_the_hand_axis() -> None:
    tree = build_tree(load_game("leduc"))
    padded = tree.padded_kernel_arrays(8)
    widened = {"board_mask", "hand_cards", "hand_rank", "rank_order", "outcome", "sign", "hand_perm"}
    for name in KernelTree._fields:
        old, new = getattr(tree.kernel_arrays, name), getattr(padded, name)
        if name in widened:
            assert new.shape != old.shape and new.dtype == old.dtype, name
            assert np.array_equal(new[tuple(slice(0, n) for n in old.shape)], old), name
        else:
            assert new is old, name
    assert (padded.hand_cards[6:] == len(tree.game.deck())).all() and (padded.board_mask[:, 6:] == 0).all()


def test_no_site_unpacks_the_tree_by_position() -> None:
    by_position = re.compile(r"\btree\[\s*-?\d*\s*:?\s*-?\d*\s*\]|\barrays\[\d+\]")
    found = [
        f"{module}:{number}: {line.strip()}"
        for module in KERNEL_MODULES
        for number, line in enumerate((ROOT / module).read_text().splitlines(), 1)
        if by_position.search(line) and not line.lstrip().startswith(("#", "``"))
    ]
    assert not found, found
