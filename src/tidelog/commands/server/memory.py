"""MEMORY USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE and HELP.

USAGE estimates Redis's sizes for our values.  STATS has Redis 7.0's field
list with this process's figures: the allocated totals are the resident
size INFO memory shows as used_memory (the interpreter's allocator keeps
no separate count), startup.allocated is the size when the command
modules were loaded, each database's hash table overheads are what
Redis's dicts would take for its keys, and the allocator ratios are 1
(pymalloc reports no active/resident split).  DOCTOR applies Redis's
"empty" rule (under 5 MB beyond startup) and its peak rule.
"""

from __future__ import annotations

import gc
import logging
import resource
from typing import Any

from ... import heap
from ...errors import (
    SYNTAX,
    CommandError,
)
from ...resp.replies import OK, Map, Verbatim
from ...types.array import Array
from ...types.hash import Hash
from ...types.list import List
from ...types.set import Set
from ...types.stream import Stream
from ...types.zset import ZSet
from ..args import ArgReader
from ..contract import Ctx
from ..encoding import object_encoding
from ..key_specs import ALL_SHARDS, ND, ks
from ..replies import help_command
from ..table import command

log = logging.getLogger("tidelog")


# =====================================================================================
# MEMORY
# =====================================================================================
def _jemalloc_size(n: int) -> int:
    """The jemalloc size class an allocation of n bytes lands in."""
    if n <= 8:
        return 8
    if n <= 128:
        return (n + 15) // 16 * 16
    step = 1 << (n - 1).bit_length() - 3  # four classes per doubling
    return (n + step - 1) // step * step


def _sds_size(length: int, embedded: bool = False) -> int:
    if embedded or 32 <= length < 256:
        header = 3
    elif length < 32:
        header = 1
    elif length < 65536:
        header = 5
    elif length < 2**32:
        header = 9
    else:
        header = 17
    return header + length + 1


def hash_memory(h: Hash) -> int:
    """A hash's bytes as Redis lays it out: a listpack (about 2 bytes of
    header and backlen per element) or a dict (a bucket pointer, a 24-byte
    entry and two sds strings per field), plus field-TTL metadata.  O(N)."""
    if not h.big:
        body = sum(len(f) + len(v) + 4 for f, v in h.map.items())
        if h.ex:  # listpackex: a third element (the deadline, 0 for none) per field
            return 16 + 48 + _jemalloc_size(7 + body + 10 * len(h))
        return 16 + _jemalloc_size(7 + body)
    buckets = 1 << max(2, (len(h) - 1).bit_length())
    entries = sum(24 + _jemalloc_size(_sds_size(len(f))) + _jemalloc_size(_sds_size(len(v)))
                  for f, v in h.map.items())
    # A field with a TTL carries 16 bytes of expiry metadata (Redis 7.4).
    return 16 + 96 + 8 * buckets + entries + 16 * len(h.ttl)


def key_memory(key: bytes, value: Any) -> int:
    """MEMORY USAGE: the bytes Redis would use for this key and value (its
    robj/sds/jemalloc layout for strings; the stream's own estimate)."""
    overhead = _jemalloc_size(_sds_size(len(key))) + 24  # the key's sds + the dict entry
    if isinstance(value, (Stream, Set, ZSet, Array)):
        return value.memory_usage() + overhead
    if isinstance(value, Hash):
        return hash_memory(value) + overhead
    if isinstance(value, List):
        # One quicklist (40 bytes) and, per 8 KB listpack node, its node (32)
        # and the listpack itself.
        nodes = value.lp_bytes // 8192 + 1
        return 16 + 40 + nodes * 32 + _jemalloc_size(value.lp_bytes) + overhead
    encoding = object_encoding(value)
    if encoding == b"int":
        size = 16
    elif encoding == b"embstr":
        size = _jemalloc_size(16 + _sds_size(len(value), embedded=True))
    else:
        size = 16 + _jemalloc_size(_sds_size(len(value)))
    return size + overhead


@command("memory", arity=-2, group="server", since="4.0.0", complexity="Depends on subcommand.",
         summary="A container for memory diagnostics commands", container=True, help=(
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
))
def memory_(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY subcommand [argument ...]"""


@command("memory|usage", arity=-3, flags="readonly", keys=(2, 2, 1), group="server",
         since="4.0.0", complexity="O(N) where N is the number of samples.",
         summary="Estimate the memory usage of a key",
         key_specs=[ks("RO", 2)])
def memory_usage(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY USAGE key [SAMPLES count]"""
    r = ArgReader(argv, 2)
    key = r.next_bytes()
    while r.more():
        if r.next_upper() == b"SAMPLES" and r.more():
            if r.next_int() < 0:
                raise CommandError(SYNTAX)
            # every entry is counted exactly: sampling changes nothing
        else:
            raise CommandError(SYNTAX)
    r.finish()
    value = ctx.db.peek(key)
    return None if value is None else key_memory(key, value)


# What the process held once the commands were loaded (MEMORY STATS'
# startup.allocated): the interpreter and the server's code.
_STARTUP_BYTES = heap.rss()


def _dict_overhead(n: int) -> int:
    """What a Redis dict of n entries takes besides keys and values: a
    24-byte entry each and a bucket pointer per slot (a power of two)."""
    if not n:
        return 0
    return 24 * n + 8 * (1 << max(2, (n - 1).bit_length()))


def memory_figures(ctx: Ctx) -> dict[str, Any]:
    """MEMORY STATS' figures, also read by MEMORY DOCTOR."""
    total = heap.rss()
    peak = max(total, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    startup = min(_STARTUP_BYTES, total)
    dbs = []
    overhead = startup
    keys = 0
    for db in ctx.engine.dbs:
        if not len(db):
            continue
        main, expires = _dict_overhead(len(db)), _dict_overhead(len(db.expires))
        overhead += main + expires
        keys += len(db)
        dbs.append((db.index, main, expires))
    net = total - startup
    dataset = max(0, total - overhead)
    return {"peak": peak, "total": total, "startup": startup, "dbs": dbs, "overhead": overhead,
            "keys": keys, "bytes_per_key": net // keys if keys else 0, "dataset": dataset,
            "dataset_pct": dataset * 100 / net if net > 0 else 0.0,
            "peak_pct": total * 100 / peak if peak else 0.0}


@command("memory|stats", arity=2, group="server", since="4.0.0", complexity="O(1)",
         summary="Show memory usage details",
         tips=(ND, ALL_SHARDS, "response_policy:special"))
def memory_stats(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY STATS"""
    f = memory_figures(ctx)
    total = f["total"]
    fields: list[tuple[bytes, Any]] = [
        (b"peak.allocated", f["peak"]),
        (b"total.allocated", total),
        (b"startup.allocated", f["startup"]),
        (b"replication.backlog", 0),
        (b"clients.slaves", 0),
        (b"clients.normal", 0),   # buffers live in the transport: not counted (CLIENT LIST)
        (b"cluster.links", 0),
        (b"aof.buffer", 0),
        (b"lua.caches", 0),
        (b"functions.caches", 0),
    ]
    for index, main, expires in f["dbs"]:
        fields.append((b"db.%d" % index, Map([
            (b"overhead.hashtable.main", main),
            (b"overhead.hashtable.expires", expires),
            (b"overhead.hashtable.slot-to-keys", 0),
        ])))
    fields += [
        (b"overhead.total", f["overhead"]),
        (b"keys.count", f["keys"]),
        (b"keys.bytes-per-key", f["bytes_per_key"]),
        (b"dataset.bytes", f["dataset"]),
        (b"dataset.percentage", float(f["dataset_pct"])),
        (b"peak.percentage", float(f["peak_pct"])),
        (b"allocator.allocated", total),
        (b"allocator.active", total),
        (b"allocator.resident", total),
        (b"allocator-fragmentation.ratio", 1.0),
        (b"allocator-fragmentation.bytes", 0),
        (b"allocator-rss.ratio", 1.0),
        (b"allocator-rss.bytes", 0),
        (b"rss-overhead.ratio", 1.0),
        (b"rss-overhead.bytes", 0),
        (b"fragmentation", 1.0),
        (b"fragmentation.bytes", 0),
    ]
    return Map(fields)


_DOCTOR_FINE = ("Hi Sam, I can't find any memory issue in your instance. "
                "I can only account for what occurs on this base.\n")
_DOCTOR_EMPTY = ("Hi Sam, this instance is empty or is using very little memory, my issues "
                 "detector can't be used in these conditions. Please, leave for your mission on "
                 "Earth and fill it with some data. The new Sam and I will be back to our "
                 "programming as soon as I finished rebooting.\n")
_DOCTOR_ISSUES = "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
_DOCTOR_PEAK = (
    " * Peak memory: In the past this instance used more than 150% the memory that is "
    "currently using. The allocator is normally not able to release memory after a peak, "
    "so the resident size stays high; MEMORY PURGE may give some back, otherwise only a "
    "restart does.\n\n")


def memory_doctor_text(f: dict[str, Any]) -> str:
    if f["total"] - f["startup"] < 5 * 1024 * 1024:  # Redis's rule, past our startup size
        return _DOCTOR_EMPTY
    if f["peak"] > f["total"] * 3 // 2:
        return _DOCTOR_ISSUES + _DOCTOR_PEAK
    return _DOCTOR_FINE


@command("memory|doctor", arity=2, group="server", since="4.0.0", complexity="O(1)",
         summary="Outputs memory problems report",
         tips=(ND, ALL_SHARDS, "response_policy:special"))
def memory_doctor(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY DOCTOR"""
    return Verbatim(memory_doctor_text(memory_figures(ctx)).encode())


@command("memory|malloc-stats", arity=2, group="server", since="4.0.0",
         complexity="Depends on how much memory is allocated, could be slow",
         summary="Show allocator internal stats",
         tips=(ND, ALL_SHARDS, "response_policy:special"))
def memory_malloc_stats(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY MALLOC-STATS"""
    return Verbatim(b"Stats not supported for the current allocator\n")


@command("memory|purge", arity=2, group="server", since="4.0.0",
         complexity="Depends on how much memory is allocated, could be slow",
         summary="Ask the allocator to release memory",
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def memory_purge(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY PURGE"""
    gc.collect()  # what this process can give back: cycles the collector frees
    return OK


help_command("memory", group="server", since="4.0.0",
             summary="Show helpful text about the different subcommands")
