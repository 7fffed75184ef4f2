"""Hands from any file of hands, picked by its name, and the files a command line names.

:func:`read_hands` reads a ``.log`` (:mod:`analysis.logs`), msgpack records
(:mod:`analysis.records`) or PHH (:mod:`analysis.phh`), and joins the
portfolio agents' side files (:func:`read_components`); :func:`hand_files`
turns a command line's files and folders into the files to read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from analysis._hand_checks import hand_id_problem, is_uint32
from analysis.hands import Hands, HandsError
from analysis.logs import read_log
from analysis.phh import is_phh, read_phh
from analysis.records import is_records, read_records
from poker.excerpt import quote
from poker.gamedef import Game

__all__ = ["read_hands", "read_seatings", "hand_files", "read_components", "HAND_FILE_PATTERNS", "COMPONENTS_SUFFIX"]


def read_hands(
    path: Path, game: Game | None = None, *, skip_damaged: bool = False, validate: bool = False
) -> Hands:
    """:func:`analysis.records.read_records` for ``*.msgpack``, :func:`analysis.phh.read_phh` for
    ``.phh``/``.phhs`` (hands from other sources: PokerKit's datasets, say; every
    hand replayed), :func:`analysis.logs.read_log` otherwise (``validate`` replays the hands of
    logs only)."""
    path = Path(path)
    if is_phh(path):
        hands = read_phh(path, game, skip_damaged=skip_damaged)
    elif is_records(path):
        hands = read_records(path, skip_damaged=skip_damaged)
        if game is not None and hands.game != game:
            raise HandsError(f"{path}: records of another game than the one named")
    else:
        hands = read_log(path, game, skip_damaged=skip_damaged, validate=validate)
    components = read_components(path)
    return hands.with_components(components) if components else hands


def read_seatings(paths: Sequence[Path], game: Game) -> list[Hands | None]:
    """The hands of each seating's log of a match that may still be playing
    (:func:`analysis.match_score.score_match`'s ``tables``): None for a log not
    there yet or whose dealer has not begun it, a line still being written
    skipped."""
    tables: list[Hands | None] = []
    for path in paths:
        try:
            tables.append(read_hands(path, game, skip_damaged=True) if path.is_file() else None)
        except HandsError:  # a log its dealer has not begun
            tables.append(None)
    return tables


#: What :func:`hand_files` takes from a folder, in this order of preference.
HAND_FILE_PATTERNS: Final = ("*.log", "*.hands.msgpack", "*.phhs", "*.phh")


def hand_files(arguments: Sequence[Path]) -> list[Path]:
    """The files of hands named on a command line: files as given, and for a
    folder (a run folder, say) its ``.log`` files, else its records, else its
    PHH files.

    Raises:
        HandsError: a folder with none of them.
    """
    paths: list[Path] = []
    for path in arguments:
        if path.is_dir():
            found = next((files for pattern in HAND_FILE_PATTERNS if (files := sorted(path.glob(pattern)))), [])
            if not found:
                raise HandsError(f"{path}: no .log, .hands.msgpack, .phhs or .phh files in this folder")
            paths += found
        else:
            paths.append(path)
    return paths


#: Side files of a seating: ``<match>.<name>.components.csv`` (``arena.match.components_path``).
COMPONENTS_SUFFIX: Final = ".components.csv"


def read_components(path: Path) -> dict[str, dict[int, str]]:
    """Which component each portfolio agent played each hand with, from the
    side files beside a seating's log or records (``match.1.log`` and
    ``match.1.hands.msgpack`` both have ``match.1.<name>.components.csv``, one
    ``hand_id,component`` line per hand, written by the agent: the dealer's
    records cannot carry it, the ACPC protocol has no channel for it). A hand
    listed twice (a resumed seating replays its unfinished hand) keeps its last
    line. ``{}`` when there are none.

    Raises:
        HandsError: a side file that is not ``hand_id,component`` lines (naming ``file:line``).
    """
    path = Path(path)
    stem = path.name.removesuffix(".hands.msgpack").removesuffix(".log")
    found: dict[str, dict[int, str]] = {}
    for side in sorted(path.parent.glob(f"{stem}.*{COMPONENTS_SUFFIX}")):
        name = side.name[len(stem) + 1 : -len(COMPONENTS_SUFFIX)]
        by_hand: dict[int, str] = {}
        try:
            text = side.read_text(encoding="utf-8")
        except OSError as error:
            raise HandsError(f"{side}: {error.strerror or error}") from None
        for number, line in enumerate(text.splitlines(), start=1):
            hand, comma, label = line.partition(",")
            if not comma or not (hand.isascii() and hand.isdigit()) or not label:
                raise HandsError(f"{side}:{number}: not a 'hand_id,component' line: {quote(line)}")
            if not is_uint32(hand):
                raise HandsError(f"{side}:{number}: {hand_id_problem(quote(hand))}")
            by_hand[int(hand)] = label
        found[name] = by_hand
    return found
