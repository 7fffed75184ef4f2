"""The repo's copies of the reference material are verbatim copies of the originals.

``tests/fixtures/acpc`` holds the reference dealer's transcripts (section 5 of the
protocol notes the project was built from) and the ACPC game files. The originals
live outside the repository; these tests compare against them where a checkout
of them sits beside the clone (``../shared/acpc``, as in CI) and skip in a plain
clone, which has nothing to compare against.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acpc_fixtures import FIXTURES, SECTION_5, SECTION_5_END, SECTION_5_START


def test_spec_section_5_is_verbatim(shared_acpc_dir: Path) -> None:
    spec = (shared_acpc_dir / "SPEC.md").read_text()
    section = spec[spec.index(SECTION_5_START) : spec.index(SECTION_5_END)]
    assert SECTION_5.read_text() == section, "refresh tests/fixtures/acpc/spec_section5.md from ../shared/acpc/SPEC.md"


def test_game_files_are_verbatim(shared_acpc_dir: Path) -> None:
    theirs = sorted(path.name for path in (shared_acpc_dir / "games").iterdir())
    ours = sorted(path.name for path in (FIXTURES / "games").iterdir())
    assert ours == theirs
    for name in theirs:
        assert (FIXTURES / "games" / name).read_bytes() == (shared_acpc_dir / "games" / name).read_bytes(), name


@pytest.mark.parametrize("path", sorted((FIXTURES / "games").glob("*.game")), ids=lambda path: path.stem)
def test_shipped_game_files_are_the_reference_files(path: Path) -> None:
    """Every reference file we ship under poker/games is the verbatim original."""
    shipped = Path(__file__).resolve().parents[1] / "poker" / "games" / path.name
    assert shipped.read_bytes() == path.read_bytes()
