"""docs/hosting.md's five commands and docs/hosting-web.md's tournament walked
as a newcomer walks them: each ``$`` line run as written by bash, in a fresh
directory, against ``arena serve --data arena-data`` started as the page says
(on its fixed ports: 127.0.0.1:8000, match ports from 9000), and what the page
shows below a command is what it printed.

What a newcomer copies from their own screen the page shows as a placeholder:
a word with ``…`` in it (``3q…Zk`` a token, ``5f0c…`` a match id, ``9c1e…`` a
seat key) stands for whatever the service printed in its place, and is
replaced by that in the commands that follow; a lone ``…`` stands for the rest
of a line; a port number stands for the port the service gave (another where
one was taken, say by a run a moment ago still in TIME_WAIT). The pages'
``export`` lines set the variables the following lines read, as in one shell.

tests/test_readme_walk.py walks every other example of the manual; these two
need a server that stays up on fixed ports, which that walk does not start.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
#: Where the page's service listens (its defaults).
API_PORT = 8000
_PLACEHOLDER = re.compile(r"[\w-]*…[\w-]+|[\w-]+…[\w-]*")
_PORT_NUMBER = re.compile(r"\b9\d{3}\b")
_COMMENT = re.compile(r"\s{2,}#.*$")


def _block(page: str, opening: str) -> list[str]:
    """The lines of the ``console`` block of ``page`` whose first command starts with ``opening``."""
    text = (ROOT / "docs" / page).read_text()
    for found in re.finditer(r"^```console\n(.*?)^```", text, re.S | re.M):
        lines = found.group(1).splitlines()
        if lines and lines[0].startswith(f"$ {opening}"):
            return lines
    raise AssertionError(f"{page} has no console block opening with {opening!r}")


def _toml_block(page: str, name: str) -> str:
    """The ``toml`` block of ``page`` that names its file ``name`` on its first line."""
    text = (ROOT / "docs" / page).read_text()
    found = re.search(rf"^```toml\n(# {re.escape(name)}\n.*?)^```", text, re.S | re.M)
    assert found is not None, f"{page} has no toml block named {name}"
    return found.group(1)


def _steps(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Each command (its continuation lines joined, its comment dropped) and the output shown below it."""
    steps: list[tuple[str, list[str]]] = []
    command: str | None = None
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            steps.append((command, []))
        elif command is not None and command.endswith("\\"):
            command = command[:-1] + " " + line.strip()
            steps[-1] = (command, steps[-1][1])
        else:
            steps[-1][1].append(line)
    return [(_COMMENT.sub("", command).strip(), shown) for command, shown in steps]


def _holes(ports: bool) -> str:
    """What stands for a value the service gives: placeholders, a lone ``…`` and, with ``ports``, port numbers."""
    return f"{_PLACEHOLDER.pattern}|{_PORT_NUMBER.pattern}|…" if ports else f"{_PLACEHOLDER.pattern}|…"


def _pattern(shown: str, ports: bool) -> re.Pattern[str]:
    """A line the page shows as a regular expression, its holes (:func:`_holes`) captured."""
    parts = re.split(f"({_holes(ports)})", shown)
    regex = "".join(
        re.escape(part) if index % 2 == 0 else ".*" if part == "…" else r"([^\s\"]+?)"
        for index, part in enumerate(parts)
    )
    return re.compile(regex + "$")


@dataclass
class _Shell:
    """One shell session in ``cwd``: its variables, and the placeholders learnt so far."""

    cwd: Path
    env: dict[str, str] = field(default_factory=lambda: {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    values: dict[str, str] = field(default_factory=dict)

    def command(self, written: str) -> str:
        """The command as written, with the values learnt in place of its placeholders."""
        return re.sub(f"{_PLACEHOLDER.pattern}|{_PORT_NUMBER.pattern}", lambda m: self.values.get(m.group(0), m.group(0)), written)

    def learn(self, shown: list[str], printed: list[str], what: str, *, ports: bool = True) -> None:
        """Check that ``printed`` holds the ``shown`` lines in a row, learning their
        placeholders (and, with ``ports``, the ports they name)."""
        for start in range(len(printed) - len(shown) + 1):
            matches = [_pattern(line, ports).match(text) for line, text in zip(shown, printed[start:])]
            if all(matches):
                for line, found in zip(shown, matches):
                    assert found is not None
                    names = [p for p in re.findall(_holes(ports), line) if p != "…"]
                    for name, value in zip(names, found.groups()):
                        assert self.values.setdefault(name, value) == value, (name, value, self.values)
                return
        raise AssertionError(f"{what} printed {printed}, not what the page shows: {shown}")

    def run(self, written: str, shown: list[str]) -> str:
        command = self.command(written)
        if command.startswith("export "):
            name, _, value = command.removeprefix("export ").partition("=")
            self.env[name] = subprocess.run(["bash", "-c", f"printf %s {value}"], capture_output=True, text=True,
                                            env=self.env, check=True).stdout
            return ""
        done = subprocess.run(["bash", "-c", command], cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (written, done.stdout, done.stderr)
        self.learn(shown, (done.stdout + done.stderr).splitlines(), written)
        return done.stdout


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture
def shell(tmp_path: Path) -> _Shell:
    """A shell in a fresh directory, where the pages' service can take its port."""
    if not _free(API_PORT):
        pytest.skip(f"127.0.0.1:{API_PORT}, the port the pages' service takes, is in use by another program")
    return _Shell(tmp_path)


def _serve(shell: _Shell) -> subprocess.Popen[str]:
    """Step 1 of docs/hosting.md, in the background: its lines shown, once printed."""
    written, shown = _steps(_block("hosting.md", "arena serve"))[0]
    assert written.endswith("&")
    err = open(shell.cwd / "serve.err", "w")
    server = subprocess.Popen(["bash", "-c", "exec " + written.removesuffix("&").strip()], cwd=shell.cwd, env=shell.env,
                              stdout=subprocess.DEVNULL, stderr=err, text=True)
    deadline = time.monotonic() + 120
    while "web pages" not in (shell.cwd / "serve.err").read_text() and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    shell.learn(shown, (shell.cwd / "serve.err").read_text().splitlines(), written, ports=False)  # a range, not a match's
    return server


def _stop(server: subprocess.Popen[str]) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def test_the_five_commands_of_hosting_run_as_written(shell: _Shell) -> None:
    server = _serve(shell)
    try:
        results = ""
        for written, shown in _steps(_block("hosting.md", "arena serve"))[1:]:
            results = shell.run(written, shown)
        match = json.loads(results)  # step 5: the match, played in both seatings
        assert (match["status"], match["result"]["hands"], match["duplicate"]) == ("finished", 2000, True)
    finally:
        _stop(server)


def test_the_tournament_of_hosting_web_runs_as_written(shell: _Shell) -> None:
    (shell.cwd / "leduc.toml").write_text(_toml_block("hosting-web.md", "leduc.toml"))
    server = _serve(shell)
    try:
        tournament = ""
        for written, shown in _steps(_block("hosting-web.md", "arena users add")):
            tournament = shell.run(written, shown)
        assert json.loads(tournament)["game"] == "leduc"  # the tournament's page, as its owner sees it
    finally:
        _stop(server)
