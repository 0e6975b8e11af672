"""The benchmark's workloads: one list of plain definitions.

A workload is one redis-benchmark command line (with ``{key}`` standing for
the workload's key), a pipeline depth, a number of connections, and optional
hooks:

``reset(target, wl)``
    once per server before any request of the workload is sent (also before
    the calibration probes): create or clear the data it needs.  Raise
    ``Skip`` when the server cannot run the workload.
``rand_range(target, wl)``
    the ``-r`` value for redis-benchmark (``__rand_int__`` is replaced by a
    12-digit, zero-padded number in ``0 .. r-1``), or None.
``before(target, wl)`` / ``after(target, wl, requests, ctx)``
    around each measured run: ``before`` returns a context, ``after`` returns
    a list of problems (e.g. the stream did not grow by exactly the number
    of requests sent).  Problems are recorded with the result.
``cleanup(target, wl)``
    once after the workload, e.g. to free memory.

To add a workload, append to WORKLOADS (or write a family function like
``xadd`` below).  Hooks talk to the server through ``target.client``
(a small RESP client); ``target.state`` caches data shared by workloads,
such as the preloaded stream.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import resp
from fanout import Subscribers, message_frame


class Skip(Exception):
    """The server cannot run this workload (the message says why)."""


@dataclass
class Target:
    """A running server as the workloads see it."""
    name: str                      # "redis" or "tidelog"
    server: Any                    # servers.Server
    client: resp.Client
    preload: int                   # entries in the preloaded stream
    state: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Workload:
    id: str
    label: str
    command: tuple[str, ...]
    key: str
    pipeline: int = 1
    clients: int = 1
    reset: Callable[[Target, Workload], None] | None = None
    rand_range: Callable[[Target, Workload], int | None] | None = None
    before: Callable[[Target, Workload], Any] | None = None
    after: Callable[[Target, Workload, int, Any], list[str]] | None = None
    cleanup: Callable[[Target, Workload], None] | None = None

    def argv(self) -> list[str]:
        return [a.replace("{key}", self.key) for a in self.command]


# -- shared helpers -------------------------------------------------------------

ENTRY = ("sensor", "17", "temp", "21.5")   # two fields, the same in every entry
PRELOAD_KEY = "bench:preloaded"


def _xlen(target: Target, key: str) -> int:
    n = target.client.call("XLEN", key)
    if not isinstance(n, int):
        raise TypeError(f"XLEN {key} replied {n!r}, not an integer")
    return n


def _delete(target: Target, wl: Workload) -> None:
    # Best effort: the checks compare XLEN before and after, so a server
    # without DEL can still be measured.
    try:
        target.client.call("DEL", wl.key)
    except resp.RespError:
        pass


def _xlen_before(target: Target, wl: Workload) -> int:
    return _xlen(target, wl.key)


def _grew_by_requests(target: Target, wl: Workload, requests: int, before: int) -> list[str]:
    added = _xlen(target, wl.key) - before
    if added != requests:
        return [f"XLEN grew by {added}, expected {requests}"]
    return []


def preload(target: Target, batch: int = 1000) -> dict:
    """Fill PRELOAD_KEY with entries 1-0 .. N-0 (pipelined), once per server."""
    if "preload" in target.state:
        return target.state["preload"]
    c = target.client
    if _xlen(target, PRELOAD_KEY):
        c.call("DEL", PRELOAD_KEY)
    rss0 = target.server.rss_bytes()
    cpu0 = target.server.cpu_seconds()
    t0 = time.monotonic()
    n = target.preload
    for first in range(1, n + 1, batch):
        cmds = [("XADD", PRELOAD_KEY, f"{i}-0") + ENTRY
                for i in range(first, min(first + batch, n + 1))]
        for reply in c.pipeline(cmds):
            if isinstance(reply, resp.RespError):
                raise Skip(f"preload failed: XADD replied -{reply}")
    seconds = time.monotonic() - t0
    cpu = target.server.cpu_seconds() - cpu0
    length = _xlen(target, PRELOAD_KEY)
    if length != n:
        raise Skip(f"preload failed: XLEN is {length}, expected {n}")
    info = {"entries": n, "seconds": round(seconds, 3),
            "server_cpu_s": round(cpu, 3),
            "rss_before_bytes": rss0, "rss_after_bytes": target.server.rss_bytes()}
    info["id_parsing"] = check_padded_ids(target)
    target.state["preload"] = info
    return info


def check_padded_ids(target: Target) -> dict:
    """redis-benchmark sends __rand_int__ as 12 zero-padded digits; check that
    the server reads '000000000042' as the ID 42-0, like Redis does."""
    c = target.client
    n = target.preload
    probes = {}
    for start in (0, 42, max(0, n - 10)):
        padded = c.call_raw("XRANGE", PRELOAD_KEY, f"{start:012d}", "+", "COUNT", "10")
        plain = c.call_raw("XRANGE", PRELOAD_KEY, f"{start}-0", "+", "COUNT", "10")
        replies = resp.parse(padded)[0]
        first = replies[0][0].decode() if isinstance(replies, list) and replies else None
        probes[f"{start:012d}"] = {
            "same_as_plain_id": padded == plain,
            "entries": len(replies) if isinstance(replies, list) else None,
            "first_id": first,
            "reply_bytes": len(padded),
            "reply_sha1": hashlib.sha1(padded).hexdigest(),
            "reply_head": padded[:80].decode("latin-1"),
        }
    ok = all(p["same_as_plain_id"] and p["entries"] == 10 for p in probes.values())
    return {"ok": ok, "probes": probes}


def _preloaded(target: Target, wl: Workload) -> None:
    info = preload(target)
    if not info["id_parsing"]["ok"]:
        raise Skip("zero-padded start IDs are not read like Redis reads them: "
                   f"{info['id_parsing']['probes']}")


def _rand_start(target: Target, wl: Workload) -> int:
    # Starts 0 .. N-10, so every reply holds exactly 10 entries.
    return target.preload - 9


def _unchanged(target: Target, wl: Workload, requests: int, before: Any) -> list[str]:
    length = _xlen(target, wl.key)
    return [] if length == target.preload else [f"XLEN is {length}, expected {target.preload}"]


# -- the workload families ----------------------------------------------------------

def xadd(pipeline: int, clients: int) -> Workload:
    wid = f"xadd-p{pipeline}-c{clients}"
    return Workload(
        id=wid, label="XADD * (2 fields)",
        command=("XADD", "{key}", "*") + ENTRY, key=f"bench:{wid}",
        pipeline=pipeline, clients=clients,
        reset=_delete, before=_xlen_before, after=_grew_by_requests, cleanup=_delete)


def xrange10(pipeline: int, clients: int) -> Workload:
    return Workload(
        id=f"xrange10-p{pipeline}-c{clients}", label="XRANGE random start COUNT 10",
        command=("XRANGE", "{key}", "__rand_int__", "+", "COUNT", "10"), key=PRELOAD_KEY,
        pipeline=pipeline, clients=clients,
        reset=_preloaded, rand_range=_rand_start, after=_unchanged)


def ping(pipeline: int, clients: int) -> Workload:
    """The floor: a command that does nothing, so its cost is the parser,
    the dispatch and the reply encoder."""
    return Workload(
        id=f"ping-p{pipeline}-c{clients}", label="PING", command=("PING",),
        key="", pipeline=pipeline, clients=clients)


# -- the other data types: one write (or pop) per request --------------------------------

# Random members or fields are drawn from 0 .. TYPE_RANGE-1, so a run fills a
# hash, set or sorted set of up to that many (the big encodings, as a busy key
# has); pops start from a list of POP_PRELOAD elements.
TYPE_RANGE = 100_000
POP_PRELOAD = 3_000_000


def _fill_list(target: Target, wl: Workload) -> None:
    """A list of POP_PRELOAD elements for the pops (RPUSH, 1,000 per command)."""
    _delete(target, wl)
    batch = ["RPUSH", wl.key] + ["element"] * 1000
    for _ in range(0, POP_PRELOAD, 100_000):
        target.client.pipeline([batch] * 100)


def _type_range(target: Target, wl: Workload) -> int:
    return TYPE_RANGE


def _type_check(command: str) -> Callable[[Target, Workload, int, Any], list[str]]:
    """After a run: the key holds the type the command writes, and nothing
    answered an error (redis-benchmark would have stopped)."""
    expected = {"HSET": "hash", "SADD": "set", "ZADD": "zset", "LPUSH": "list",
                "LPOP": "list"}[command]

    def check(target: Target, wl: Workload, requests: int, before: Any) -> list[str]:
        kind = target.client.call("TYPE", wl.key)
        kind = kind.decode() if isinstance(kind, bytes) else str(kind)
        return [] if kind == expected else [f"TYPE {wl.key} is {kind}, expected {expected}"]
    return check


def datatype(command: str, pipeline: int, clients: int) -> Workload:
    """HSET, SADD, ZADD and LPUSH on one key; LPOP from a preloaded list."""
    args = {"HSET": ("f__rand_int__", "v"), "SADD": ("m__rand_int__",),
            "ZADD": ("__rand_int__", "m__rand_int__"), "LPUSH": ("element",),
            "LPOP": ()}[command]
    wid = f"{command.lower()}-p{pipeline}-c{clients}"
    return Workload(
        id=wid, label=f"{command} {' '.join(args)}".strip(),
        command=(command, "{key}") + args, key=f"bench:{wid}",
        pipeline=pipeline, clients=clients,
        reset=_fill_list if command == "LPOP" else _delete,
        rand_range=_type_range if "__rand_int__" in " ".join(args) else None,
        after=_type_check(command), cleanup=_delete)


# -- Pub/Sub fan-out: one publisher, N subscribers on one channel -------------------

FANOUT_MESSAGE = "reading:sensor-17:21.5"   # the same in every PUBLISH of a run


def _subscribe(count: int) -> Callable[[Target, Workload], None]:
    def reset(target: Target, wl: Workload) -> None:
        _unsubscribe(target, wl)
        target.state[wl.id] = Subscribers(target.server.port, wl.key.encode(), count)
        receivers = target.client.call("PUBSUB", "NUMSUB", wl.key)[1]
        if receivers != count:
            raise Skip(f"PUBSUB NUMSUB says {receivers} subscribers, expected {count}")
    return reset


def _unsubscribe(target: Target, wl: Workload) -> None:
    subscribers = target.state.pop(wl.id, None)
    if subscribers is not None:
        subscribers.close()


def _received_before(target: Target, wl: Workload) -> list[int]:
    return target.state[wl.id].totals()


def _every_subscriber_got_all(target: Target, wl: Workload, requests: int,
                              before: list[int]) -> list[str]:
    """Each subscriber received exactly one message per PUBLISH."""
    frame = len(message_frame(wl.key.encode(), FANOUT_MESSAGE.encode()))
    expected = [b + requests * frame for b in before]
    got = target.state[wl.id].wait_for(expected)
    short = [(i, (g - b) / frame) for i, (g, b) in enumerate(zip(got, before))
             if g - b != requests * frame]
    if short:
        return [f"{len(short)} subscribers received other than {requests} messages "
                f"(first: subscriber {short[0][0]} got {short[0][1]:g})"]
    return []


def publish(subscribers: int, pipeline: int, clients: int) -> Workload:
    """PUBLISH to one channel that ``subscribers`` connections follow: the
    server writes every message ``subscribers`` times."""
    wid = f"publish-s{subscribers}-p{pipeline}-c{clients}"
    return Workload(
        id=wid, label=f"PUBLISH to {subscribers} subscribers",
        command=("PUBLISH", "{key}", FANOUT_MESSAGE), key=f"bench:{wid}",
        pipeline=pipeline, clients=clients,
        reset=_subscribe(subscribers), before=_received_before,
        after=_every_subscriber_got_all, cleanup=_unsubscribe)


TYPE_COMMANDS = ("HSET", "SADD", "ZADD", "LPUSH", "LPOP")


# -- scripting: EVALSHA of a one-command script ------------------------------------------
INCR_SCRIPT = "return redis.call('INCR', KEYS[1])"
INCR_SHA = "61636018f4e6b5817b89791bbed242f93fa089e3"  # SHA1 of INCR_SCRIPT


def _load_incr(target: Target, wl: Workload) -> None:
    _delete(target, wl)
    sha = target.client.call("SCRIPT", "LOAD", INCR_SCRIPT)
    sha = sha.decode() if isinstance(sha, bytes) else str(sha)
    if sha != INCR_SHA:
        raise Skip(f"SCRIPT LOAD answered {sha!r}")


def _counter_before(target: Target, wl: Workload) -> int:
    value = target.client.call("GET", wl.key)
    return int(value) if value else 0


def _counted(target: Target, wl: Workload, requests: int, before: Any) -> list[str]:
    value = int(target.client.call("GET", wl.key) or 0)
    return [] if value == before + requests else [f"{wl.key} is {value}, expected {before + requests}"]


def evalsha(pipeline: int, clients: int) -> Workload:
    """EVALSHA of ``return redis.call('INCR', KEYS[1])``: the cost of running a script."""
    wid = f"evalsha-incr-p{pipeline}-c{clients}"
    return Workload(
        id=wid, label="EVALSHA (INCR script)", command=("EVALSHA", INCR_SHA, "1", "{key}"),
        key=f"bench:{wid}", pipeline=pipeline, clients=clients,
        reset=_load_incr, before=_counter_before, after=_counted, cleanup=_delete)


DEPTHS = (1, 16, 128)
CONNECTIONS = (1, 8)

# The read workloads come first so the stream is preloaded into a fresh server
# (its memory growth is then the memory of those entries).
WORKLOADS: list[Workload] = (
    [xrange10(p, c) for p in DEPTHS for c in CONNECTIONS]
    + [xadd(p, c) for p in DEPTHS for c in CONNECTIONS]
    + [ping(128, c) for c in CONNECTIONS]
    + [datatype(command, 16, 8) for command in TYPE_COMMANDS]
    + [publish(n, 16, 1) for n in (10, 100)]
    + [evalsha(1, 8), evalsha(16, 8)]
)
