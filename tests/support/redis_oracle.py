"""Start Debian's redis-server (the reference implementation) for differential tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

REDIS_SERVER = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listening on port {port}")


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
        wait_for_port(self.port)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
