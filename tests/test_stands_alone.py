"""The project stands on its own: nothing in it cites material a clone does not have.

The project was built from private notes kept beside the repository (a protocol
specification, digests of the papers, the papers themselves). A clone has none of them,
so no docstring, comment, message, page, benchmark or test may send its reader there:
papers are cited by author, title and year (docs/README.md, References) and the protocol
and the dealer's rules by docs/protocol.md. ``tests/fixtures/acpc/`` is left out: it holds
verbatim copies of reference material (``tests/test_fixtures.py`` compares them byte for
byte with their originals), which keep their own words.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Collection
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".md", ".toml", ".js", ".html")
#: Verbatim copies of the reference material, checked against the originals by
#: ``tests/test_fixtures.py``: they keep their own words.
VERBATIM = "tests/fixtures/acpc/"
# (The spaces are written ``[ ]`` so that this file does not cite what it looks for.)
CITATION = re.compile(r"SPEC\.md|SPEC[ ]§|\bseed[ ]0\d\d\b|\bthe[ ]digest\b|\bdigest[ ]§|\.\./shared", re.IGNORECASE)

#: The one legitimate reader of the notes: where a checkout of them sits beside the clone
#: (its ``shared`` folder), ``tests/test_fixtures.py``, with the ``shared_acpc_dir``
#: fixture of ``tests/conftest.py``, checks that the copies in ``tests/fixtures/acpc`` are
#: verbatim; a plain clone skips it. These two files may name the path and the file they read;
#: nothing else in them may cite the notes.
FIXTURE_COMPARISON = {
    "tests/conftest.py": {"SPEC" + ".md", "../" + "shared"},
    "tests/test_fixtures.py": {"SPEC" + ".md", "../" + "shared"},
}


def _tracked() -> list[str]:
    """The repository's files, tracked or not yet (every file under ROOT where git is missing)."""
    try:
        command = ["git", "ls-files", "--cached", "--others", "--exclude-standard"]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", "node_modules", "__pycache__"}
        return [
            str(path.relative_to(ROOT))
            for path in ROOT.rglob("*")
            if path.is_file() and not skip.intersection(path.relative_to(ROOT).parts)
        ]


def _checked() -> list[str]:
    return sorted(
        name for name in _tracked() if name.endswith(SUFFIXES) and not name.startswith(VERBATIM)
    )


def citations(text: str, allowed: Collection[str] = ()) -> list[str]:
    """Each line of ``text`` that cites the notes, numbered, less the ``allowed`` strings."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        cited = [match for match in CITATION.findall(line) if match not in allowed]
        if cited:
            found.append(f"{number}: {line.strip()}")
    return found


def test_every_checked_file_is_found() -> None:
    names = _checked()
    assert {"README.md", "docs/protocol.md", "poker/state.py", "tests/test_stands_alone.py"} <= set(names)
    assert "tests/fixtures/seed003/README.md" in names
    assert not [name for name in names if name.startswith(VERBATIM)]


@pytest.mark.parametrize("name", _checked())
def test_no_file_cites_what_a_clone_lacks(name: str) -> None:
    path = ROOT / name
    if not path.is_file():  # deleted in the work tree, not yet in the index
        return
    found = citations(path.read_text(errors="replace"), FIXTURE_COMPARISON.get(name, set()))
    assert found == [], f"{name} cites notes a clone does not have:\n" + "\n".join(found)


def test_the_finder_sees_each_kind_of_citation() -> None:
    spec, seed, digest, shared = "SPEC", "seed", "digest", "../" + "shared"
    text = f"a ({spec}.md §2.6)\nb, {spec} §4\nc: {seed} 003's table\nd {seed.capitalize()} 000\ne the {digest}'s\nf {digest} §5\ng {shared}/x\n"
    assert [line.split(":")[0] for line in citations(text)] == ["1", "2", "3", "4", "5", "6", "7"]
    assert citations("seed 0, --seed 3, a SHA-256 digest, SPEC's policy, spec_section5.md") == []
    assert citations(f"read {shared}/acpc/{spec}.md", {spec + ".md", shared}) == []
