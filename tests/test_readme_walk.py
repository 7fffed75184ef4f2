"""The README and the manual (``docs/*.md``) walked as a newcomer walks them: every
``arena`` command (and the ``printf`` that writes an example's input) of a page's
``sh`` blocks runs, in order, in one fresh directory per page, and where the page
shows the output right below a block, the output is that (run directories aside).
A page that opens with a command an earlier page opened with gets that run's
output and files (the same command in an empty directory), not a second run.

A line is left out only for a reason named here: a template (placeholders in
capitals), the dealer-and-agents example (``tests/test_readme_examples.py`` runs
it with free ports), an agent that needs a dealer already listening, or a run
that takes longer than the suite may (the HULHE abstraction build: minutes).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The pages walked: the README, then every page of the manual.
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

#: Lines of the pages not run here, and why.
NOT_RUN = {
    "arena agent hulhe 127.0.0.1 44267 --strategy random --seed 1": "needs a dealer listening on 44267",
    "arena solve hulhe --algorithm abstract --abstraction ehs2:5:perfect --iterations 600 --every 50 -o hulhe.strategy": (
        "builds the HULHE abstraction and joint tables: about 13 minutes"
    ),
    "arena solve --resume hulhe.strategy --iterations 1000 -o hulhe.strategy": "resumes the HULHE solve above",
}
_TEMPLATE = re.compile(r"\b(GAME|HOST|PORT|NAME|matchName)\b")


def _steps(page: Path) -> list[tuple[list[str], list[str] | None]]:
    """(commands of one sh block of PAGE, the output block shown right after it or None).
    A configuration block whose first line names its file (``# leduc.toml``) is a
    step too: ``write FILE`` with the block as its output, written before what follows."""
    blocks = re.findall(r"```(\w*)\n(.*?)```", page.read_text(), flags=re.S)
    steps: list[tuple[list[str], list[str] | None]] = []
    for index, (kind, body) in enumerate(blocks):
        named = re.match(r"# (\S+\.toml)\n", body)
        if kind == "toml" and named:
            steps.append(([f"write {named.group(1)}"], body.splitlines()))
            continue
        if kind != "sh" or re.search(r"&\s*(#|$)", body, flags=re.M):  # a server in the background
            continue
        lines = body.splitlines()
        commands = [line.split("  #")[0].strip() for line in lines if line.startswith(("arena ", "printf "))]
        commands = [c for c in commands if not _TEMPLATE.search(c) and c not in NOT_RUN]
        follows = blocks[index + 1] if index + 1 < len(blocks) else None
        shown = follows[1].splitlines() if follows is not None and follows[0] == "" else None
        if commands:
            steps.append((commands, shown))
    return steps


def _normalised(lines: list[str], where: Path) -> list[str]:
    """Without run-directory names (they carry the time) and the directory the
    commands ran in (paths are shown relative to it)."""
    lines = [line.replace(f"{where}/", "").rstrip() for line in lines if line.strip()]
    return [re.sub(r"run dir \S+", "run dir …", line) for line in lines]


def test_the_walk_finds_the_commands_of_the_readme_and_the_manual() -> None:
    count = {str(page.relative_to(ROOT)): sum(len(commands) for commands, _ in _steps(page)) for page in PAGES}
    assert count["README.md"] >= 3, "the README's commands were not found"
    manual = sum(n for name, n in count.items() if name.startswith("docs/"))
    assert manual >= 25, f"the manual's commands were not found: {count}"


#: A page's first command, run in its empty directory -> what it printed (its
#: directory written :data:`_HERE`) and a copy of the directory it left. The
#: README's tour opens a page of the manual too: the same command from the same
#: empty directory prints the same and leaves the same files, so it runs once.
_FIRST_RUNS: dict[str, tuple[subprocess.CompletedProcess[str], Path]] = {}
_HERE = "\0the page's directory\0"


def _run(command: str, where: Path) -> subprocess.CompletedProcess[str]:
    if command.startswith("printf "):
        argv = ["bash", "-c", command]
    else:
        argv = [sys.executable, "-m", "arena.cli", *shlex.split(command)[1:]]
    return subprocess.run(argv, cwd=where, capture_output=True, text=True, timeout=600, check=False)


def _moved(done: subprocess.CompletedProcess[str], old: str, new: str) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.replace(old, new), done.stderr.replace(old, new))


def _run_first(command: str, where: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in the empty directory ``where``, or what it did there before (:data:`_FIRST_RUNS`)."""
    if command not in _FIRST_RUNS:
        done = _run(command, where)
        left = where.with_name(f"{where.name}-first")
        shutil.copytree(where, left)
        _FIRST_RUNS[command] = (_moved(done, str(where), _HERE), left)
        return done
    done, left = _FIRST_RUNS[command]
    shutil.copytree(left, where, dirs_exist_ok=True)
    return _moved(done, _HERE, str(where))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_command_of_a_page_runs_and_prints_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    fresh = True  # nothing has run or been written in tmp_path yet
    for commands, shown in _steps(page):
        if commands[0].startswith("write "):
            assert shown is not None
            (tmp_path / commands[0].removeprefix("write ")).write_text("\n".join(shown) + "\n")
            fresh = False
            continue
        for command in commands:
            done = _run_first(command, tmp_path) if fresh else _run(command, tmp_path)
            fresh = False
            assert done.returncode == 0, f"{command}\n{done.stderr}"
            assert "Traceback" not in done.stderr, f"{command}\n{done.stderr}"
            if "--target" in command:  # the page names the iteration where it stops
                stops = re.search(r"stops\s+at\s+iteration\s+(\d+)", page.read_text())
                measured = re.findall(r"^iteration (\d+):", done.stdout, flags=re.M)
                assert stops is not None and measured[-1] == stops.group(1), (command, measured[-3:])
        if shown is not None:
            assert _normalised(done.stdout.splitlines(), tmp_path) == _normalised(shown, tmp_path), commands[-1]

