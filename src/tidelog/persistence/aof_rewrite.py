"""The AOF rewrite format: the dataset as the commands that rebuild it.

Streams go out in the forms of ``REFERENCE-streams.md`` §4.2 (entries,
then the stream's counters, groups, consumers and PELs, IDMP state);
:func:`rdb_can_hold` says whether an RDB base could hold the dataset
instead (``aof-use-rdb-preamble``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..ids import MAX_ID, MIN_ID, StreamID
from ..rdb import staging
from ..resp.doubles import format_double
from ..types.array import INDEX_MAX, Array
from ..types.hash import Hash
from ..types.list import List
from ..types.set import Set
from ..types.stream import Stream
from ..types.zset import ZSet
from .aof_format import encode_command

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")


def _id(id: StreamID) -> bytes:
    return b"%d-%d" % id


def stream_commands(key: bytes, s: Stream, idmp_defaults: tuple[int, int]) -> Iterator[list[bytes]]:
    """The commands that rebuild one stream (REFERENCE-streams §4.2)."""
    if s.length:
        for id, fv in s.range(MIN_ID, MAX_ID):
            yield [b"XADD", key, _id(id), *fv]
    else:
        # Creates the key, then empties it; XSETID below sets the real IDs.
        yield [b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]
    yield [b"XSETID", key, _id(s.last_id), b"ENTRIESADDED", b"%d" % s.entries_added,
           b"MAXDELETEDID", _id(s.max_deleted_entry_id)]
    for group in s.groups.values():
        yield [b"XGROUP", b"CREATE", key, group.name, _id(group.last_id),
               b"ENTRIESREAD", b"%d" % group.entries_read]
        for consumer in group.consumers.values():
            if not consumer.pel:
                yield [b"XGROUP", b"CREATECONSUMER", key, group.name, consumer.name]
                continue
            for id, entry in consumer.pel.items():
                yield [b"XCLAIM", key, group.name, consumer.name, b"0", _id(id),
                       b"TIME", b"%d" % entry.delivery_time,
                       b"RETRYCOUNT", b"%d" % entry.delivery_count, b"JUSTID", b"FORCE"]
        # Unowned (XNACKed) entries, in release order.
        for id in group._nacked.values():
            entry = group.pel.get(id)
            if entry is not None:
                yield [b"XNACK", key, group.name, b"SILENT", b"IDS", b"1", _id(id),
                       b"RETRYCOUNT", b"%d" % entry.delivery_count, b"FORCE"]
    idmp = s.idmp
    if idmp is not None:
        if (idmp.duration, idmp.maxsize) != idmp_defaults:
            yield [b"XCFGSET", key, b"IDMP-DURATION", b"%d" % idmp.duration,
                   b"IDMP-MAXSIZE", b"%d" % idmp.maxsize]
        for pid, iid, id, _t in idmp.pairs():
            yield [b"XIDMPRECORD", key, pid, iid, _id(id)]


# The value types beyond strings and streams: Python class -> the commands
# that rebuild a value (each bounded in size, as Redis's rewrite batches
# elements 64 to a command).
VALUE_COMMANDS: dict[type, Callable[[bytes, Any], Iterator[list[bytes]]]] = {}

# Elements per RPUSH in a rewrite (Redis's AOF_REWRITE_ITEMS_PER_CMD).
ITEMS_PER_COMMAND = 64


def list_commands(key: bytes, value: List) -> Iterator[list[bytes]]:
    """A list as RPUSHes of 64 elements each, head first."""
    batch: list[bytes] = []
    for item in value:
        batch.append(item)
        if len(batch) == ITEMS_PER_COMMAND:
            yield [b"RPUSH", key, *batch]
            batch = []
    if batch:
        yield [b"RPUSH", key, *batch]


VALUE_COMMANDS[List] = list_commands


def hash_commands(key: bytes, h: Hash) -> Iterator[list[bytes]]:
    """HSET key f v ..., 64 pairs to a command (as Redis's rewrite batches),
    then the field TTLs."""
    flat = h.flat()
    for at in range(0, len(flat), 128):
        yield [b"HSET", key, *flat[at:at + 128]]
    # Field TTLs: HPEXPIREAT key <abs ms> FIELDS n f ..., one per deadline
    # (the fields sharing it batched by 64), as Redis 7.4's rewrite.
    by_deadline: dict[int, list[bytes]] = {}
    for field, when in h.ttl.items():
        by_deadline.setdefault(when, []).append(field)
    for when, fields in by_deadline.items():
        for at in range(0, len(fields), 64):
            batch = fields[at:at + 64]
            yield [b"HPEXPIREAT", key, b"%d" % when, b"FIELDS", b"%d" % len(batch), *batch]


VALUE_COMMANDS[Hash] = hash_commands
def set_commands(key: bytes, value: Set) -> Iterator[list[bytes]]:
    """A set as SADDs of 64 members each (Redis's rewrite batch)."""
    members = value.members()
    for at in range(0, len(members), 64):
        yield [b"SADD", key, *members[at:at + 64]]


VALUE_COMMANDS[Set] = set_commands


def zset_commands(key: bytes, value: ZSet) -> Iterator[list[bytes]]:
    """A sorted set as ZADDs of 64 score-member pairs each (Redis's rewrite
    batch), scores in the shortest form that reads back the same double."""
    flat: list[bytes] = []
    for member, score in value.items():
        flat.append(format_double(score))
        flat.append(member)
    for at in range(0, len(flat), 128):
        yield [b"ZADD", key, *flat[at:at + 128]]


VALUE_COMMANDS[ZSet] = zset_commands


def array_commands(key: bytes, value: Array) -> Iterator[list[bytes]]:
    """An array as ARMSET index value ..., 64 pairs to a command, then the
    insert cursor as ``ARSEEK key <next index>`` (2**64 - 1 for a cursor
    at the last index) when ARINSERT / ARRING had set one."""
    flat: list[bytes] = []
    for idx, item in value.items():
        flat.append(b"%d" % idx)
        flat.append(item)
        if len(flat) == 2 * ITEMS_PER_COMMAND:
            yield [b"ARMSET", key, *flat]
            flat = []
    if flat:
        yield [b"ARMSET", key, *flat]
    cursor = value.insert_idx
    if cursor is not None:
        yield [b"ARSEEK", key, b"%d" % (cursor + 1 if cursor < INDEX_MAX else (1 << 64) - 1)]


VALUE_COMMANDS[Array] = array_commands


def dataset_commands(engine: Engine) -> Iterator[list[bytes]]:
    """The whole dataset as commands: the function libraries, then database by database."""
    for library in engine.scripts.libraries.values():
        yield [b"FUNCTION", b"LOAD", library.code]
    defaults = (engine.config["stream-idmp-duration"], engine.config["stream-idmp-maxsize"])
    now = engine.clock.now_ms()
    for db in engine.dbs:
        if not db.data and not db.staged:
            continue
        yield [b"SELECT", b"%d" % db.index]
        # TIDELOG.STAGE copies still open: their BEGIN and chunks, so the
        # APPENDs written after the rewrite find them.
        yield from staging.rewrite_commands(db.staged)
        for key, value in list(db.data.items()):
            when = db.expires.get(key)
            if when is not None and when <= now:
                continue
            if type(value) is bytes:
                if when is not None:
                    yield [b"SET", key, value, b"PXAT", b"%d" % when]
                else:
                    yield [b"SET", key, value]
                continue
            if type(value) is Stream:
                yield from stream_commands(key, value, defaults)
            else:
                yield from VALUE_COMMANDS[type(value)](key, value)
            if when is not None:
                yield [b"PEXPIREAT", key, b"%d" % when]


def write_commands_file(engine: Engine, path: str) -> int:
    """Write the dataset as commands to ``path`` (fsynced); returns its size."""
    size = 0
    with open(path, "wb") as fh:
        batch: list[bytes] = []
        for argv in dataset_commands(engine):
            batch.append(encode_command(argv))
            if len(batch) >= 1024:
                data = b"".join(batch)
                fh.write(data)
                size += len(data)
                batch = []
        data = b"".join(batch)
        fh.write(data)
        size += len(data)
        fh.flush()
        os.fsync(fh.fileno())
    return size


def rdb_can_hold(engine: Engine) -> bool:
    """Can an RDB base keep everything?  Not unowned (XNACK'd) pending entries
    or IDMP state, which RDB 10-12 cannot encode, nor TIDELOG.STAGE copies.
    Cost: O(streams + groups)."""
    if any(db.staged for db in engine.dbs):
        return False
    for db in engine.dbs:
        for value in db.data.values():
            if isinstance(value, Stream):
                if value.idmp is not None and (value.idmp.producers or
                                               (value.idmp.duration, value.idmp.maxsize) !=
                                               (engine.config["stream-idmp-duration"],
                                                engine.config["stream-idmp-maxsize"])):
                    return False
                if any(group._nacked for group in value.groups.values()):
                    return False
    return True
