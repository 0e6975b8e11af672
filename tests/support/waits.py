"""Waiting on a running test server's own state, never on the wall clock
alone: ``wait_until`` a predicate holds, ``wait_blocked`` until the engine
counts ``n`` blocked clients (read through ``srv.call``)."""

from __future__ import annotations

import asyncio
import time


def wait_until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.005)


def blocked(srv) -> int:
    return srv.call(lambda: srv.engine.blocked_clients)


def wait_blocked(srv, n: int) -> None:
    wait_until(lambda: blocked(srv) == n)


async def async_wait_blocked(srv, n: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while blocked(srv) != n:
        if time.monotonic() > deadline:
            raise AssertionError(f"never {n} blocked clients")
        await asyncio.sleep(0.005)
