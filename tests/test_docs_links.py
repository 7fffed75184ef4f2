"""Every relative link of the README and the manual (``docs/*.md``) leads somewhere:
to a file of the repository and, with ``#anchor``, to a heading of that page (GitHub's
anchors: lower case, punctuation dropped, spaces as hyphens). The project stands on its
own, so the pages cite no file a clone lacks. And the README stays a front door: short,
with the detail in the manual."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"```.*?```", flags=re.S)


def _anchors(page: Path) -> set[str]:
    """GitHub's anchor of every heading of PAGE (a repeated heading gets -1, -2, …)."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _FENCE.sub("", page.read_text()), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(page: Path) -> list[str]:
    return _LINK.findall(_FENCE.sub("", page.read_text()))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no file {where.relative_to(ROOT)}")
            continue
        if anchor and (where.suffix != ".md" or anchor not in _anchors(where)):
            broken.append(f"{target}: no heading #{anchor} in {where.relative_to(ROOT)}")
    assert broken == []


def test_the_link_finder_sees_links_anchors_and_images(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A `code` title: it's here\n\n## A `code` title: it's here\n\n"
        "See [x](other.md#b-c) and ![y](pic.png).\n```sh\n[not](a-link.md)\n```\n"
    )
    assert _links(page) == ["other.md#b-c", "pic.png"]
    assert _anchors(page) == {"a-code-title-its-here", "a-code-title-its-here-1"}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_the_pages_cite_nothing_a_clone_lacks(page: Path) -> None:
    """No reference to the private notes the project was built from: the protocol is
    described in docs/protocol.md, papers are cited by author, title and year."""
    text = page.read_text()
    cited = re.findall(r"SPEC(?:\.md)?[ ]§|\bseed[ ]00\d\b|\bthe[ ]digest\b|\.\./shared", text)
    assert cited == []


def test_the_readme_stays_a_front_door() -> None:
    """The README is what it is, the two commands, a short tour and pointers into docs/
    (issue 43): at most 200 lines, none over 200 characters; the rest belongs in the manual."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move detail into docs/"
    assert [n for n, line in enumerate(lines, 1) if len(line) > 200] == [], "README.md lines over 200 characters"
