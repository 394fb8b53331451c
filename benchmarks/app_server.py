"""A server process started and waited for: one implementation for the browser benchmark and the browser tests.

``benchmarks.bench_browser.Server`` (the benchmark, ``tests/browser/test_bench_browser.py``),
``tests/browser/conftest.py``'s ``AppServer`` (every browser test) and
``tests/browser/test_installed_app.py`` (``craft app`` of the installed wheel)
each start a process that serves the app and wait for its
``/_stcore/health`` to answer 200. They differ in the command, its working
folder and environment only; the waiting, the deadline and the stopping are
here.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

#: Seconds a fresh server may take to answer its health check: Streamlit's import and the app's warm-up
#: (``explorer.serve`` compiles CRAFT's kernels first) take 10-40 s on a busy 2-core machine.
START_TIMEOUT_S = 120.0
#: How often the health check is asked while the server starts.
POLL_S = 0.1
#: Seconds a server is given to end after SIGTERM before it is killed.
STOP_TIMEOUT_S = 15.0


class ServerDidNotStart(RuntimeError):
    """The server exited, or did not answer its health check in time; the message ends with its log."""


def free_port() -> int:
    """A TCP port free on localhost now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``command`` run in ``cwd`` with ``env``, its output in ``log_path``, serving ``http://localhost:port``."""

    def __init__(self, command: Sequence[str], *, port: int, cwd: Path, env: Mapping[str, str], log_path: Path,
                 start_timeout_s: float = START_TIMEOUT_S):
        self.command = [str(part) for part in command]
        self.port = port
        self.url = f"http://localhost:{port}"
        self.cwd = cwd
        self.env = dict(env)
        self.log_path = log_path
        self.start_timeout_s = start_timeout_s
        self.process: subprocess.Popen | None = None
        #: Seconds from the start to the first healthy answer.
        self.ready_s: float | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> float:
        """Start the process and wait until it answers; the seconds that took.

        Raises
        ------
        ServerDidNotStart
            If it exits first or does not answer within ``start_timeout_s`` (then it is stopped).
        """
        started = time.perf_counter()
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        # Its own session: stop() ends the server, not the test run.
        self.process = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = started + self.start_timeout_s
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise ServerDidNotStart(f"{self.command[0]} exited with code {self.process.returncode}:\n{self.log()}")
            with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError, OSError), \
                    urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    self.ready_s = time.perf_counter() - started
                    return self.ready_s
            time.sleep(POLL_S)
        self.stop()
        raise ServerDidNotStart(f"{self.url}/_stcore/health did not answer within {self.start_timeout_s:g} s:\n"
                                f"{self.log()}")

    def log(self, tail: int = 6000) -> str:
        """The last ``tail`` characters of the server's output."""
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after ``STOP_TIMEOUT_S``; closes the log."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_TIMEOUT_S)
        if self._log is not None:
            self._log.close()
            self._log = None
