"""Streaming reads: offsets are each stream's last ID read, batches are XRANGE ranges.

An offset is a JSON object ``{key: "ms-seq", ...}`` with the keys sorted (Spark
compares offsets by their JSON text): the ID of the last entry a batch
includes, ``"0-0"`` before any.  A micro-batch from offset ``s`` to ``e`` reads,
per key, the entries with ``s[key] < id <= e[key]`` by XRANGE.  Nothing on the
server changes when Spark reads, so a batch replayed after a failure reads the
same entries (unless they were trimmed or deleted in between), and the
checkpoint alone decides what has been processed.  Consumer groups are never
used to read: XREADGROUP moves state on every read and cannot replay.

``latestOffset`` (driver, once per trigger): with no limit, each stream's last
entry ID (one pipelined ``XREVRANGE key + - COUNT 1`` for all keys, O(log N)
each); with ``maxEntriesPerTrigger`` the budget is shared round-robin between
the streams that have entries, and each stream's end is the last ID of an
``XRANGE (start + COUNT share`` (O(log N + share)).

With ``group=<name>`` the source keeps that consumer group of every stream at
the offset Spark committed (``XGROUP SETID``, creating the group the first time),
so ``XINFO GROUPS`` shows the job's lag and ``XTRIM ... ACKED`` or ``KEEPREF``
keep what the job has not processed.  Spark plans a micro-batch only after the
previous one is committed, so the ``start`` of each ``latestOffset`` call is a
committed offset: the group moves there, and never past what the sink holds.
It therefore trails the sink by the last batch until Spark next looks for
data (the next trigger, or the next run of an AvailableNow query).  With no
checkpoint yet, a query with a group and no ``startingOffsets`` starts at the
group's last-delivered ID.
"""

from __future__ import annotations

import json
import time

import redis
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType
from redis.cluster import RedisCluster

from . import connection
from .ids import MAX_ID, MIN_ID, StreamId, format_id, next_id, parse_id, split_ms
from .options import ReadOptions
from .reader import RangePartition, read_batches

Offset = dict[str, str]

# How often a ``pattern`` source looks for new stream keys (SCAN is O(keyspace)).
KEY_REFRESH_SECONDS = 5.0
# XGROUP SETID ... ENTRIESREAD is computed when the group's lag is at most this
# many entries (counting it reads them); beyond, Redis reports the lag as unknown.
LAG_COUNT_LIMIT = 10_000


def _offset_json(offset: Offset) -> Offset:
    return {key: offset[key] for key in sorted(offset)}


class TidelogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming side of the ``tidelog`` format (see the module docstring)."""

    def __init__(self, options: ReadOptions, schema: StructType):
        self.options = options
        self.schema = schema
        self._keys: list[str] = []
        self._keys_at = 0.0
        self._target: Offset | None = None      # Trigger.AvailableNow's end
        self._latest: Offset | None = None      # for reportLatestOffset
        self._group_at: Offset | None = None    # where the group was last moved to

    # -- driver-side state that must not be pickled -------------------------------

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_keys"], state["_keys_at"] = [], 0.0
        return state

    @property
    def _conn(self) -> redis.Redis | RedisCluster:
        return connection.client(self.options.url, self.options.cluster)

    def _current_keys(self, known: Offset | None = None) -> list[str]:
        o = self.options
        if not o.pattern:
            return sorted(set(o.keys))
        now = time.monotonic()
        if not self._keys or now - self._keys_at >= KEY_REFRESH_SECONDS:
            self._keys = connection.resolve_keys(self._conn, (), o.pattern)
            self._keys_at = now
        return sorted(set(self._keys) | set(known or ()))

    # -- offsets --------------------------------------------------------------------

    def initialOffset(self) -> Offset:
        o = self.options
        keys = self._current_keys()
        if o.group and o.starting_offsets is None:
            positions = self._group_positions(keys)
            return _offset_json({k: positions.get(k) or format_id(_floor(o.start)) for k in keys})
        text = (o.starting_offsets or "earliest").strip()
        lower = text.lower()
        if lower == "earliest":
            return _offset_json({k: format_id(_floor(o.start)) for k in keys})
        if lower == "latest":
            last = connection.last_ids(self._conn, keys)
            return _offset_json({k: format_id(last[k] or _floor(o.start)) for k in keys})
        try:
            given = json.loads(text)
        except ValueError:
            raise ValueError("option 'startingOffsets' must be earliest, latest or a JSON "
                             f"object of stream IDs, not {text!r}") from None
        if not isinstance(given, dict):
            raise ValueError("option 'startingOffsets' JSON must be an object {key: id}")
        last = None
        out = {}
        for key in sorted(set(keys) | set(given)):
            value = str(given.get(key, "-"))
            if value == "-":
                out[key] = format_id(_floor(o.start))
            elif value == "$":
                last = last or connection.last_ids(self._conn, sorted(set(keys) | set(given)))
                out[key] = format_id(last[key] or _floor(o.start))
            else:
                out[key] = format_id(parse_id(value))
        return out

    def getDefaultReadLimit(self) -> ReadLimit:
        n = self.options.max_entries_per_trigger
        return ReadAllAvailable() if n is None else ReadMaxRows(n)

    def prepareForTriggerAvailableNow(self) -> None:
        """Fix the end of an AvailableNow run at what the streams hold now."""
        keys = self._current_keys()
        last = connection.last_ids(self._conn, keys)
        self._target = _offset_json({k: format_id(last[k] or MIN_ID) for k in keys})

    def latestOffset(self, start: Offset, limit: ReadLimit) -> Offset:
        # Spark plans a batch only once the previous one is committed, so ``start``
        # is committed: the group can move there now (commit() comes a batch later).
        self._follow(start)
        keys = self._current_keys(start)
        begin = {k: parse_id(start.get(k, format_id(_floor(self.options.start)))) for k in keys}
        last = connection.last_ids(self._conn, keys)
        ceiling = {k: min(last[k] or MIN_ID, self.options.end) for k in keys}
        if self._target is not None:
            ceiling = {k: min(v, parse_id(self._target.get(k, "0-0"))) for k, v in ceiling.items()}
        self._latest = _offset_json({k: format_id(max(begin[k], last[k] or MIN_ID)) for k in keys})
        if isinstance(limit, ReadMaxRows):
            end = self._limited_end(begin, ceiling, limit.max_rows)
        else:
            end = {k: max(begin[k], ceiling[k]) for k in keys}
        return _offset_json({k: format_id(v) for k, v in end.items()})

    def _limited_end(self, begin: dict[str, StreamId], ceiling: dict[str, StreamId],
                     budget: int) -> dict[str, StreamId]:
        """Ends that admit at most ``budget`` entries, shared round-robin between streams."""
        end = dict(begin)
        active = [k for k in sorted(begin) if ceiling[k] > begin[k]]
        while budget > 0 and active:
            share = max(1, budget // len(active))
            pipe = self._conn.pipeline(transaction=False)
            for k in active:
                pipe.execute_command("XRANGE", k, format_id(next_id(end[k])),
                                     format_id(ceiling[k]), "COUNT", share)
            still = []
            for k, entries in zip(active, pipe.execute()):
                if entries:
                    end[k] = parse_id(entries[-1][0])
                    budget -= len(entries)
                if len(entries) == share and end[k] < ceiling[k]:
                    still.append(k)
                if budget <= 0:
                    break
            active = still
        return end

    def reportLatestOffset(self) -> Offset | None:
        return self._latest

    # -- planning and reading ---------------------------------------------------------

    def partitions(self, start: Offset, end: Offset) -> list[RangePartition]:
        ranges = []
        for key in sorted(end):
            lo = next_id(parse_id(start.get(key, "0-0")))
            hi = parse_id(end[key])
            if lo <= hi:
                ranges.append((key, lo, hi))
        if not ranges:
            return []
        n = self.options.num_partitions
        if n is None:                       # one partition per stream
            return [RangePartition([r]) for r in ranges]
        if n == 1:
            return [RangePartition(ranges)]
        # First IDs make the ms split useful when a range starts at 0-0.
        firsts = connection.entry_bounds(self._conn, [k for k, _, _ in ranges],
                                         MIN_ID, MAX_ID)
        parts: list[RangePartition] = []
        share = max(1, n // len(ranges))
        for key, lo, hi in ranges:
            b = firsts.get(key)
            lo2 = max(lo, b[0]) if b else lo
            parts.extend(RangePartition([(key, a, z)]) for a, z in split_ms(lo2, hi, share))
        return parts

    def read(self, partition: RangePartition):
        o = self.options
        # Always the primaries: a replica may not hold yet the entries up to the
        # end the driver read from the primary, and the batch would miss them.
        return read_batches(o.url, partition.ranges, self.schema, o.failfast,
                            o.page_size, o.pipeline_depth, o.cluster)

    # -- commit: the consumer group follows Spark ---------------------------------------

    def commit(self, end: Offset) -> None:
        self._follow(end)

    def _follow(self, committed: Offset) -> None:
        """Move the consumer group (if any) to a committed offset; O(keys) round trips,
        none when the offset is the one the group was last moved to."""
        if not self.options.group or committed == self._group_at:
            return
        for key in sorted(committed):
            self._set_group(key, committed[key])
        self._group_at = dict(committed)

    def _group_positions(self, keys: list[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        name = self.options.group.encode()
        for key in keys:
            try:
                groups = self._conn.execute_command("XINFO", "GROUPS", key)
            except redis.ResponseError:
                groups = []
            out[key] = None
            for g in groups:
                info = _pairs(g)
                if info.get(b"name") == name:
                    out[key] = info[b"last-delivered-id"].decode()
        return out

    def _set_group(self, key: str, last: str) -> None:
        """Move (or create) the group of ``key`` to ``last``, with the entries it has read
        counted when the rest of the stream is short enough to count."""
        conn = self._conn
        group = self.options.group
        # One key, so one node: a MULTI works on a cluster as well.
        pipe = conn.pipeline(transaction=True)
        pipe.execute_command("XINFO", "STREAM", key)
        pipe.execute_command("XRANGE", key, f"({last}" if last != "0-0" else "-", "+",
                             "COUNT", LAG_COUNT_LIMIT + 1)
        try:
            info, after = pipe.execute()
        except redis.ResponseError:
            return  # the stream is gone: nothing to keep
        entries_read = None
        added = _pairs(info).get(b"entries-added")
        if added is not None and len(after) <= LAG_COUNT_LIMIT:
            entries_read = max(0, int(added) - len(after))
        args = ["ENTRIESREAD", entries_read] if entries_read is not None else []
        try:
            conn.execute_command("XGROUP", "SETID", key, group, last, *args)
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            conn.execute_command("XGROUP", "CREATE", key, group, last, *args)

    def stop(self) -> None:
        pass


def _floor(start: StreamId) -> StreamId:
    """The offset just before ``start``: a batch reads IDs greater than its start."""
    if start == MIN_ID:
        return MIN_ID
    ms, seq = start
    return (ms, seq - 1) if seq else (ms - 1, MAX_ID[1])


def _pairs(reply) -> dict:
    if isinstance(reply, dict):
        return reply
    return {reply[i]: reply[i + 1] for i in range(0, len(reply) - 1, 2)}

