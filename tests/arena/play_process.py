"""``arena play`` as a process for the tests: started with a run directory under
the test's tmp_path, its table URL read from the first line of its stdout, and
stopped (SIGTERM, then kill) if a test leaves it running."""

from __future__ import annotations

import re
import select
import signal
import subprocess
import sys
from pathlib import Path

URL = re.compile(r"http://127\.0\.0\.1:\d+/\?token=\S+")


class PlayProcess:
    def __init__(self, tmp_path: Path, *args: str, stdin: int | None = None) -> None:
        self.run_dir = tmp_path / "run"
        command = [sys.executable, "-m", "arena", "play", *args, "--run-dir", str(self.run_dir)]
        self.process = subprocess.Popen(
            command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
        )

    def url(self, timeout: float = 30.0) -> str:
        """The table's URL, which the command prints once the web server listens."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        match = URL.search(line)
        if match is None:
            self.process.kill()
            _, err = self.process.communicate()
            raise AssertionError(f"arena play printed no URL: {line!r}; stderr: {err}")
        return match[0]

    def finish(self, timeout: float = 30.0) -> tuple[int, str, str]:
        """Wait for the command to end (after the match it lingers while a page is open)."""
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out, err

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()

    def states(self) -> list[str]:
        """The STATE lines of the dealer's log."""
        log = self.run_dir / "match.log"
        return [line for line in log.read_text().splitlines() if line.startswith("STATE:")]
