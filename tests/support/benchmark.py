"""Running Debian's redis-benchmark against a server under test."""

from __future__ import annotations

import shutil
import subprocess

import pytest

REDIS_BENCHMARK = shutil.which("redis-benchmark")
needs_redis_benchmark = pytest.mark.skipif(REDIS_BENCHMARK is None,
                                           reason="redis-benchmark is not installed")


def run_redis_benchmark(port: int, *args: str, timeout: float = 300) -> list[str]:
    """Run ``redis-benchmark -q`` with ``args`` against 127.0.0.1:port and
    return the names of the tests it finished, in order.  Fails the test when
    it exits non-zero or any reply was an error (redis-benchmark prints
    "Error from server" and stops that test)."""
    assert REDIS_BENCHMARK is not None
    done = subprocess.run([REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(port), "-q", *args],
                          capture_output=True, text=True, timeout=timeout)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "rror" not in out, out
    return [line.split(":")[0].strip() for line in out.replace("\r", "\n").splitlines()
            if "requests per second" in line]
