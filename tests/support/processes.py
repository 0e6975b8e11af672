"""Server processes a test starts, stopped whatever happens to the test.

A test asks the ``processes`` fixture (``tests/conftest.py``) for servers:
``processes.tidelog(args, port=...)`` starts ``tidelog-server`` and waits for
PING, ``processes.redis(...)`` starts Debian's redis-server, ``processes.popen``
any other command.  The fixture's finaliser kills whatever is still running,
after a pass, a failed assertion or an exception alike.  Fixtures of a wider
scope hold a ``ProcessGroup`` of their own and call ``stop_all()`` after their
``yield``.

Every process started here is also remembered in ``STARTED``; the session's
last hook (``tests/conftest.py``) kills any still running and fails the run,
so a leak is a test failure, not a process left on the machine.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

import pytest
import redis

import tidelog
from tests.support.redis_oracle import REDIS_SERVER, free_port, wait_for_port

STARTUP_TIMEOUT = 30.0

# Every Popen started through this module, until it is reaped.
STARTED: weakref.WeakSet[subprocess.Popen] = weakref.WeakSet()


def server_command() -> list[str]:
    """The installed entry point next to this Python, else ``python -m``."""
    entry = Path(sys.executable).parent / "tidelog-server"
    if entry.exists():
        return [str(entry)]
    return [sys.executable, "-m", "tidelog.server.main"]


def server_env() -> dict[str, str]:
    """Our environment, with tidelog importable even without an install."""
    env = dict(os.environ)
    src = str(Path(tidelog.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    return env


def stop(proc: subprocess.Popen) -> None:
    """SIGKILL if it still runs, then reap it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(30)
    STARTED.discard(proc)


def stop_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group ``proc`` leads (it was started in a new session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    stop(proc)


class ServerProcess:
    """tidelog-server in a subprocess; output goes to files (never a full pipe)."""

    def __init__(self, args: list[str], workdir: Path, port: int | None = None,
                 password: str | None = None) -> None:
        self.port = port
        self.password = password  # requirepass, for the readiness PING and client()
        self.workdir = workdir
        self.stdout_path = workdir / f"server-{id(self)}.out"
        self.stderr_path = workdir / f"server-{id(self)}.err"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(server_command() + args, cwd=workdir, env=server_env(),
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        STARTED.add(self.proc)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_ready(self) -> None:
        """Until PING answers; fails early, with the output, if the process exits."""
        assert self.port is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"tidelog-server exited with {self.proc.returncode}\n"
                            f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}")
            try:
                with redis.Redis(port=self.port, socket_timeout=5, password=self.password,
                                 socket_connect_timeout=1) as client:
                    if client.ping():
                        return
            except redis.ConnectionError as exc:
                last_error = exc
            time.sleep(0.05)
        pytest.fail(f"tidelog-server did not answer PING on port {self.port} within "
                    f"{STARTUP_TIMEOUT} s ({last_error})\nstdout:\n{self.stdout}\n"
                    f"stderr:\n{self.stderr}")

    def rss_kib(self) -> int:
        """The process's resident size (VmRSS), KiB."""
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def client(self) -> redis.Redis:
        assert self.port is not None
        return redis.Redis(port=self.port, socket_timeout=30, decode_responses=True,
                           password=self.password)

    def wait(self, timeout: float = 30.0) -> int:
        """The exit code; a process still running after ``timeout`` is killed and fails the test."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"tidelog-server still running after {timeout} s\n"
                        f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}")
        STARTED.discard(self.proc)
        return code

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM (a clean shutdown, as Redis's), then the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def sigkill(self) -> None:
        """``kill -9`` at this moment: the crash the durability tests are about."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        STARTED.discard(self.proc)

    def kill(self) -> None:
        stop(self.proc)


class RedisServer:
    """A throwaway redis-server on a free loopback port, no persistence."""

    def __init__(self, *extra: str) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed")
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="redis-oracle-")
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--enable-debug-command", "yes", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        STARTED.add(self.proc)
        try:
            wait_for_port(self.port)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)


class ProcessGroup:
    """The processes one test (or one fixture) started; ``stop_all`` kills the living."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._stops: list = []

    def tidelog(self, args: list[str], port: int | None = None,
                ready: bool = True, password: str | None = None) -> ServerProcess:
        """tidelog-server with ``args``; with ``ready``, once it answers PING on
        ``port`` (authenticating with ``password``: its requirepass)."""
        proc = ServerProcess(args, self.workdir, port, password)
        self._stops.append(proc.kill)
        if ready:
            proc.wait_ready()
        return proc

    def redis(self, *extra: str) -> RedisServer:
        """Debian's redis-server on a free port (see ``RedisServer``)."""
        srv = RedisServer(*extra)
        self._stops.append(srv.stop)
        return srv

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Any other command, as ``subprocess.Popen`` takes it.  With
        ``start_new_session=True`` its whole process group is killed at the end
        (``make run`` and the server it starts, for example)."""
        proc = subprocess.Popen(argv, **kwargs)
        STARTED.add(proc)
        if kwargs.get("start_new_session"):
            self._stops.append(lambda: stop_group(proc))
        else:
            self._stops.append(lambda: stop(proc))
        return proc

    def stop_all(self) -> None:
        while self._stops:
            self._stops.pop()()
