"""The examples of the README and the manual (``docs/*.md``) give the output they
show (issue 14: every example reproducible as written). Ports are the OS's choice
here; the rest is verbatim."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where the examples are: the README and every page of the manual.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def test_dealer_example_prints_the_readme_score(tmp_path: Path) -> None:
    blocks = [block for page in PAGES for block in page.read_text().split("```")]
    text = next((block for block in blocks if "arena dealer m1" in block), "")
    dealer = re.search(r"^arena dealer (m1 .*) -p \S+ &", text, flags=re.M)
    agents = re.findall(r"^arena agent (\S+) 127\.0\.0\.1 \d+ (--strategy .*?)\s*(?:&|#|$)", text, flags=re.M)
    score = re.search(r"the dealer's last line: (SCORE:\S+)", text)
    assert dealer and len(agents) == 2 and score, "the arena dealer example of the README or docs/ changed shape"
    with subprocess.Popen(
        _arena("dealer", *dealer.group(1).split(), "-p", "0,0"), cwd=tmp_path, stdout=subprocess.PIPE, text=True
    ) as server:
        assert server.stdout is not None
        ports = server.stdout.readline().split()
        players = [
            subprocess.Popen(_arena("agent", game, "127.0.0.1", port, *options.split()), cwd=tmp_path)
            for (game, options), port in zip(agents, ports)
        ]
        out, _ = server.communicate(timeout=120)
        assert [player.wait(timeout=30) for player in players] == [0, 0]
    assert out.splitlines()[-1] == score.group(1)
