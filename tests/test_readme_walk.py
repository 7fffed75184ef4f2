"""The README and the manual (``docs/*.md``) walked as a newcomer walks them: every
``arena`` command (and the ``printf`` that writes an example's input) of a page's
``sh`` blocks runs, in order, in one fresh directory per page (its ``*`` patterns
expanded, as a shell would); a configuration block
that names its file (``# leduc.toml``) is written there; a ``python`` block runs as a
doctest. Where the page shows an output right below a command block, the block's last
command printed that, up to what varies from run to run (:func:`_normalised`: run
directories' names, the page's directory, timings, and the lines after a closing
``…``). docs/README.md ("The examples") tells readers the same.

What is not run, or not compared, the page itself says, in a sentence beside the block
(:data:`_NOTE`: "not run by the tests: …"), and
:func:`test_every_example_is_run_and_compared_or_says_why_not` holds every page to it; a
synopsis (placeholders in capitals) is not an example. The dealer-and-agents example
is run by ``tests/test_readme_examples.py`` with free ports.

A page that opens with a command an earlier page opened with gets that run's output and
files (the same command in an empty directory), not a second run.
"""

from __future__ import annotations

import doctest
import io
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The pages walked: the README, then every page of the manual.
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", flags=re.S | re.M)
#: A line of a block that is a command a reader would type (a ``$`` prompt allowed).
_COMMAND = re.compile(r"(?:\$ )?(?:arena [a-z][\w-]*(?=\s|$)|(?:printf|make|curl|docker|python3?|mmdebstrap|[A-Z_]+=\S+)\s)")
#: What the walk runs itself: our command and the ``printf`` that writes an input.
_RUNNABLE = ("arena ", "printf ")
#: A synopsis, not an example: placeholders in capitals.
_TEMPLATE = re.compile(r"\b(GAME|HOST|PORT|NAME|matchName)\b")
#: The sentence beside a block that says why the walk does not run it or compare its output.
_NOTE = re.compile(r"\b(?:[Rr]un|compared) by the tests\b")  # "not run by …", "run by … with free ports"
_NOT_RUN = re.compile(r"\b[Nn]ot run by the tests\b")
_NOT_COMPARED = re.compile(r"\bnot compared by the tests\b", flags=re.I)
#: How many lines of prose beside a block (before it, or after it and its output) a note may be.
_NEAR = 3


@dataclass(frozen=True)
class Example:
    """One command block of a page, the output shown right below it, and the note beside them."""

    page: Path
    line: int  # of the opening fence, from 1
    kind: str
    body: list[str]
    shown: list[str] | None
    note: str | None

    @property
    def commands(self) -> list[str]:
        """The block's commands, comments and synopses left out."""
        lines = [line.removeprefix("$ ").split("  #")[0].strip() for line in self.body if _COMMAND.match(line)]
        return [line for line in lines if not _TEMPLATE.search(line)]

    @property
    def runs(self) -> bool:
        """Whether the walk runs it: an ``sh`` block of our commands, none in the background,
        and no note that says it is not run."""
        background = any(re.search(r"&\s*(#|$)", line) for line in self.body)
        ours = all(command.startswith(_RUNNABLE) for command in self.commands)
        not_run = self.note is not None and _NOT_RUN.search(self.note) is not None
        return self.kind == "sh" and bool(self.commands) and ours and not background and not not_run

    @property
    def compared(self) -> bool:
        not_compared = self.note is not None and _NOT_COMPARED.search(self.note) is not None
        return self.runs and self.shown is not None and not not_compared

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _fences(text: str) -> list[tuple[str, str, int, int]]:
    """(kind, body, first line, last line) of every fenced block, lines from 0."""
    return [
        (m.group(1), m.group(2), text.count("\n", 0, m.start()), text.count("\n", 0, m.end()))
        for m in _FENCE.finditer(text)
    ]


def _note(lines: list[str], first: int, last: int) -> str | None:
    """The note beside lines FIRST..LAST of a page: in the paragraph that leads into them
    or the one right below them (a blank line between allowed), at most :data:`_NEAR`
    lines from them."""

    def paragraph(side: list[str]) -> list[str]:
        if side and not side[0].strip():
            side = side[1:]
        taken = []
        for line in side[:_NEAR]:
            if not line.strip() or line.startswith("```"):
                break
            taken.append(line)
        return taken

    before = paragraph(lines[max(0, first - _NEAR - 1) : first][::-1])[::-1]
    near = " ".join(before + paragraph(lines[last + 1 : last + _NEAR + 2]))
    return near if _NOTE.search(near) else None


def examples(page: Path) -> list[Example]:
    """The command blocks of PAGE, in order, each with the output shown right below it."""
    text = page.read_text()
    lines = text.splitlines()
    fences = _fences(text)
    found = []
    for index, (kind, body, first, last) in enumerate(fences):
        if kind in ("toml", "python") or not any(_COMMAND.match(line) for line in body.splitlines()):
            continue
        follows = fences[index + 1] if index + 1 < len(fences) else None
        shown = None
        if follows is not None and follows[2] == last + 1 and follows[0] in ("", "text"):
            if not any(_COMMAND.match(line) for line in follows[1].splitlines()):
                shown, last = follows[1].splitlines(), follows[3]
        found.append(Example(page, first + 1, kind, body.splitlines(), shown, _note(lines, first, last)))
    return found


def _steps(page: Path) -> list[tuple[str, list[str], list[str] | None]]:
    """What the walk does on PAGE, in order: ("write", [FILE], its lines), ("doctest",
    [block], None) or ("run", commands, the output to compare them with or None)."""
    text = page.read_text()
    run = {example.line: example for example in examples(page) if example.runs}
    steps: list[tuple[str, list[str], list[str] | None]] = []
    for kind, body, first, _ in _fences(text):
        named = re.match(r"# (\S+\.toml)\n", body)
        if kind == "toml" and named:
            steps.append(("write", [named.group(1)], body.splitlines()))
        elif kind == "python":
            steps.append(("doctest", [body], None))
        elif first + 1 in run:
            example = run[first + 1]
            steps.append(("run", example.commands, example.shown if example.compared else None))
    return steps


def _normalised(lines: list[str], where: Path) -> list[str]:
    """LINES without what varies from run to run: run-directory names (they carry the
    time), the directory the commands ran in (paths are shown relative to it), and
    timings (``0.3 s``, ``2.36 ms``); blank lines and trailing spaces dropped."""
    lines = [line.replace(f"{where}/", "").rstrip() for line in lines if line.strip()]
    lines = [re.sub(r"run dir \S+", "run dir …", line) for line in lines]
    return [re.sub(r"\b\d+(?:\.\d+)? (s|ms)\b", r"… \1", line) for line in lines]


def _agrees(printed: list[str], shown: list[str], where: Path) -> bool:
    """Whether PRINTED is SHOWN, normalised; a shown last line ``…`` stands for the rest."""
    printed, shown = _normalised(printed, where), _normalised(shown, where)
    if shown and shown[-1] == "…":
        shown = shown[:-1]
        printed = printed[: len(shown)]
    return printed == shown


def test_the_walk_finds_the_commands_of_the_readme_and_the_manual() -> None:
    count = {str(page.relative_to(ROOT)): sum(len(c) for kind, c, _ in _steps(page) if kind == "run") for page in PAGES}
    assert count["README.md"] >= 2, "the README's commands were not found"
    manual = sum(n for name, n in count.items() if name.startswith("docs/"))
    assert manual >= 25, f"the manual's commands were not found: {count}"
    compared = sum(shown is not None for page in PAGES for kind, _, shown in _steps(page) if kind == "run")
    assert compared >= 14, f"only {compared} outputs compared"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_example_is_run_and_compared_or_says_why_not(page: Path) -> None:
    """A command block the walk does not run, or an output it does not compare, has a
    sentence beside it that says why (``not run by the tests: …``)."""
    silent = [
        example.where()
        for example in examples(page)
        if example.note is None and ((example.commands and not example.runs) or (example.shown and not example.compared))
    ]
    assert not silent, f"examples neither run and compared nor saying why not: {silent}"


def test_the_examples_finder_sees_outputs_and_notes(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Run it:\n\n```sh\narena games\n```\n```\nkuhn\n```\n\n"
        "```sh\narena serve &\n```\nNot run by the tests: a server that stays up.\n\nA table:\n"
        "```text\narena play leduc\n```\n\n```sh\narena agent GAME HOST PORT\n```\n"
        "```sh\narena lbr x\n```\n```text\ntime: 1 s\n```\nIts output is not compared by the tests: the time.\n"
    )
    found = examples(page)
    assert [(e.line, e.commands, e.shown, e.runs, e.compared) for e in found] == [
        (3, ["arena games"], ["kuhn"], True, True),
        (10, ["arena serve &"], None, False, False),
        (16, ["arena play leduc"], None, False, False),
        (20, [], None, False, False),
        (23, ["arena lbr x"], ["time: 1 s"], True, False),
    ]
    assert [e.note is not None for e in found] == [False, True, False, False, True]
    assert _agrees(["a", "time: 0.31 s (2 ms)", "b"], ["a", "time: 9 s (1.5 ms)", "…"], tmp_path)
    assert not _agrees(["a", "c"], ["a", "b"], tmp_path)
    (tmp_path / "runs" / "1-hulhe-7").mkdir(parents=True)
    assert _expanded("runs/*-hulhe-7", tmp_path) == ["runs/1-hulhe-7"]
    assert _expanded("runs/*-leduc-7", tmp_path) == ["runs/*-leduc-7"]


#: A page's first command, run in its empty directory -> what it printed (its
#: directory written :data:`_HERE`) and a copy of the directory it left. The
#: README's tour opens a page of the manual too: the same command from the same
#: empty directory prints the same and leaves the same files, so it runs once.
_FIRST_RUNS: dict[str, tuple[subprocess.CompletedProcess[str], Path]] = {}
_HERE = "\0the page's directory\0"


def _expanded(argument: str, where: Path) -> list[str]:
    """ARGUMENT as a shell expands it in WHERE: a pattern (``runs/*-hulhe-7``) becomes the
    paths it matches, sorted, or stays as it is where none does."""
    if not any(c in argument for c in "*?["):
        return [argument]
    return sorted(str(path.relative_to(where)) for path in where.glob(argument)) or [argument]


def _run(command: str, where: Path) -> subprocess.CompletedProcess[str]:
    if command.startswith("printf "):
        argv = ["bash", "-c", command]
    else:
        arguments = [expanded for argument in shlex.split(command)[1:] for expanded in _expanded(argument, where)]
        argv = [sys.executable, "-m", "arena.cli", *arguments]
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


def _doctest(block: str, page: Path) -> None:
    """A ``python`` block of PAGE as a doctest: every ``>>>`` line's output as shown."""
    test = doctest.DocTestParser().get_doctest(block, {}, page.name, str(page), 0)
    assert test.examples, f"{page.name}: a python block without >>> lines"
    report = io.StringIO()
    result = doctest.DocTestRunner(verbose=False).run(test, out=report.write)
    assert result.failed == 0, report.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_command_of_a_page_runs_and_prints_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    fresh = True  # nothing has run or been written in tmp_path yet
    for kind, commands, shown in _steps(page):
        if kind == "write":
            assert shown is not None
            (tmp_path / commands[0]).write_text("\n".join(shown) + "\n")
            fresh = False
            continue
        if kind == "doctest":
            _doctest(commands[0], page)
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
            assert _agrees(done.stdout.splitlines(), shown, tmp_path), (commands[-1], done.stdout)
