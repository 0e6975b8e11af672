"""Connections to the server and the few questions the planner asks it.

Clients are made from a ``redis://host:port/db`` URL (``rediss://`` and a
password in the URL work as redis-py reads them) and cached per process and
URL: Spark reuses its Python workers, so a task finds the connection the last
one opened.  Nothing here may be pickled; data source objects keep the URL and
call :func:`client` where they run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence

import redis

from .ids import MAX_ID, MIN_ID, StreamId, format_id, parse_id

_clients: dict[tuple[int, str], redis.Redis] = {}
_lock = threading.Lock()


def client(url: str) -> redis.Redis:
    """A client for ``url``, shared by this process (a forked child gets its own)."""
    key = (os.getpid(), url)
    with _lock:
        found = _clients.get(key)
        if found is None:
            found = _clients[key] = redis.Redis.from_url(
                url, decode_responses=False, socket_keepalive=True,
                health_check_interval=30)
            # Raw replies: redis-py would turn entries into dicts, losing repeated
            # field names and their order, which streams keep.
            for name in RAW_REPLIES:
                found.set_response_callback(name, _raw)
        return found


RAW_REPLIES = ("XRANGE", "XREVRANGE", "XINFO STREAM", "XINFO GROUPS", "COMMAND")


def _raw(reply, **_options):
    return reply


def resolve_keys(conn: redis.Redis, keys: Sequence[str], pattern: str | None) -> list[str]:
    """The stream keys to read, sorted: ``keys`` as given, or every stream key that
    matches ``pattern`` (SCAN MATCH ... TYPE stream: O(N) in the keyspace size).
    """
    if not pattern:
        return sorted(set(keys))
    found = {k.decode() for k in conn.scan_iter(match=pattern, count=1000, _type="stream")}
    return sorted(found)


def entry_bounds(conn: redis.Redis, keys: Sequence[str], lo: StreamId = MIN_ID,
                 hi: StreamId = MAX_ID) -> dict[str, tuple[StreamId, StreamId] | None]:
    """Per key, the first and last entry ID within ``[lo, hi]``, or None when there is
    none.  One pipeline of two O(log N) range lookups per key.
    """
    pipe = conn.pipeline(transaction=False)
    for key in keys:
        pipe.execute_command("XRANGE", key, format_id(lo), format_id(hi), "COUNT", 1)
        pipe.execute_command("XREVRANGE", key, format_id(hi), format_id(lo), "COUNT", 1)
    replies = pipe.execute(raise_on_error=False)
    bounds: dict[str, tuple[StreamId, StreamId] | None] = {}
    for i, key in enumerate(keys):
        first, last = replies[2 * i], replies[2 * i + 1]
        for reply in (first, last):
            if isinstance(reply, Exception):
                raise reply
        bounds[key] = (parse_id(first[0][0]), parse_id(last[0][0])) if first and last else None
    return bounds


def last_ids(conn: redis.Redis, keys: Iterable[str]) -> dict[str, StreamId | None]:
    """Per key, the ID of its last entry (None: empty or missing).  O(log N) each."""
    keys = list(keys)
    pipe = conn.pipeline(transaction=False)
    for key in keys:
        pipe.execute_command("XREVRANGE", key, "+", "-", "COUNT", 1)
    out: dict[str, StreamId | None] = {}
    for key, reply in zip(keys, pipe.execute()):
        out[key] = parse_id(reply[0][0]) if reply else None
    return out


def has_command(conn: redis.Redis, name: str) -> bool:
    """Whether the server knows command ``name`` (COMMAND INFO); Tidelog has the Redis 8
    stream commands while reporting the 7.0 grammar version, so features are probed."""
    reply = conn.execute_command("COMMAND", "INFO", name)
    return bool(reply) and reply[0] is not None
