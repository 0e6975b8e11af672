"""MEMORY USAGE and MEMORY HELP: Redis's sizes, estimated for our values."""

from __future__ import annotations

import logging
from typing import Any

from ..errors import (
    SYNTAX,
    CommandError,
)
from ..types.hash import Hash
from ..types.list import List
from ..types.set import Set
from ..types.stream import Stream
from ..types.zset import ZSet
from .args import ArgReader
from .contract import Ctx
from .keys import object_encoding
from .replies import help_reply
from .table import command

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
    if isinstance(value, (Stream, Set, ZSet)):
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
         summary="A container for memory diagnostics commands", container=True)
def memory_(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY subcommand [argument ...]"""


@command("memory|usage", arity=-3, flags="readonly", keys=(2, 2, 1), group="server",
         since="4.0.0", complexity="O(N) where N is the number of samples.",
         summary="Estimate the memory usage of a key")
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


_MEMORY_HELP = [
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
]


@command("memory|help", arity=2, flags="loading stale", group="server", since="4.0.0",
         complexity="O(1)", summary="Show helpful text about the different subcommands")
def memory_help(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY HELP"""
    return help_reply(_MEMORY_HELP)
