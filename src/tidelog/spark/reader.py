"""Batch reads: plan ID-range partitions on the driver, read them with XRANGE on executors.

Planning (``partitions()``, once per query, on the driver) asks the server for
each stream's first and last entry inside the requested range (two O(log N)
lookups per stream, one pipeline for all), then cuts the ``[first, last]``
millisecond span of each stream into ranges.  ``numPartitions`` is the total
number of Spark partitions: streams share it in proportion to their time
spans, each getting at least one range, and a partition holds several streams'
ranges when there are more streams than partitions.  Everything ``read()``
needs travels in the :class:`RangePartition`.

Reading a partition pages through each range with ``XRANGE key lo hi COUNT n``
(O(log N + n) on the server per page).  The first pages of up to
``pipelineDepth`` ranges go out in one pipeline, so a partition of many small
ranges costs few round trips; a dense range pages sequentially.  A thread
fetches up to two pages ahead while the last one becomes an Arrow batch.  Rows
come out in ID order within each range.

On a Redis Cluster (option ``cluster``, by default when the server says it is
one) the planner also asks CLUSTER SHARDS which shard owns each stream's slot
and never puts streams of two shards in one partition: a partition is a
(primary, streams) pair, cut by ID range as above, and carries the address of
the node it expects to read from (the primary, or with ``readReplicas=true``
one of its replicas).  The executor reads through a cluster client, which
follows MOVED and ASK: a range whose slot moved since planning is read from
its new owner, whole and once.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from queue import Full, Queue

from pyspark.sql.datasource import (
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StructType

from . import connection
from .ids import MAX_ID, MIN_ID, StreamId, format_id, id_of_time, next_id, parse_id, split_ms
from .options import ReadOptions
from .schema import BatchBuilder

Range = tuple[str, StreamId, StreamId]  # (key, first ID, last ID), inclusive


@dataclass
class RangePartition(InputPartition):
    """A Spark partition: stream ranges read in order, each ``(key, lo, hi)`` inclusive."""

    ranges: list[Range]
    node: str | None                   # the cluster node expected to serve it, if any

    def __init__(self, ranges: list[Range], node: str | None = None):
        self.ranges = ranges
        self.node = node


def plan_ranges(bounds: dict[str, tuple[StreamId, StreamId] | None],
                num_partitions: int | None,
                node_of: dict[str, str] | None = None) -> list[list[Range]]:
    """Cut each stream's ``[first, last]`` into ranges and group them into partitions.

    ``num_partitions`` None gives one partition per non-empty stream.  Streams
    share the partitions in proportion to their millisecond spans (at least one
    each); with more streams than partitions, consecutive streams share one.
    With ``node_of`` (key -> owning node), streams are ordered by node and no
    partition holds streams of two nodes: the nodes share the partitions in
    proportion to their stream counts (at least one each).
    O(K log K + P) for K streams and P partitions.
    """
    live = [(key, b) for key, b in sorted(bounds.items()) if b is not None]
    if not live:
        return []
    if num_partitions is None:
        return [[(key, lo, hi)] for key, (lo, hi) in live]
    if node_of is not None:
        nodes = sorted({node_of.get(key, "") for key, _ in live})
        if len(nodes) > 1:
            per_node = {n: {k: b for k, b in live if node_of.get(k, "") == n} for n in nodes}
            counts = [len(per_node[n]) for n in nodes]
            extra = max(0, num_partitions - len(nodes))
            shares = [1 + (extra * c) // len(live) for c in counts]
            for i in sorted(range(len(nodes)), key=lambda i: -counts[i])[
                    : max(0, num_partitions - sum(shares))]:
                shares[i] += 1
            return [group for n, share in zip(nodes, shares)
                    for group in plan_ranges(per_node[n], share)]
    if len(live) >= num_partitions:
        groups: list[list[Range]] = [[] for _ in range(num_partitions)]
        for i, (key, (lo, hi)) in enumerate(live):
            groups[i * num_partitions // len(live)].append((key, lo, hi))
        return groups
    spans = [hi[0] - lo[0] + 1 for _, (lo, hi) in live]
    extra = num_partitions - len(live)
    total = sum(spans)
    shares = [1 + (extra * s) // total for s in spans]
    # hand out what rounding left over, widest spans first
    for i in sorted(range(len(live)), key=lambda i: -spans[i])[: num_partitions - sum(shares)]:
        shares[i] += 1
    out = []
    for (key, (lo, hi)), share in zip(live, shares):
        out.extend([(key, a, b)] for a, b in split_ms(lo, hi, share))
    return out


def read_ranges(conn, ranges: Sequence[Range], page_size: int,
                depth: int) -> Iterator[tuple[str, list]]:
    """Yield ``(key, entries)`` pages covering ``ranges`` in order.

    Holds at most ``depth`` pages: the pages of the head range and the first
    pages of the next ``depth - 1`` ranges, fetched together in one pipeline.
    A range that vanished or changed type mid-read raises the server's error.
    """
    todo = deque([key, lo, hi, None] for key, lo, hi in ranges)
    while todo:
        unfetched = [r for r in list(todo)[:depth] if r[3] is None]
        if unfetched:
            pipe = conn.pipeline(transaction=False)
            for key, lo, hi, _ in unfetched:
                pipe.execute_command("XRANGE", key, format_id(lo), format_id(hi),
                                     "COUNT", page_size)
            for r, reply in zip(unfetched, pipe.execute()):
                r[3] = reply
        head = todo[0]
        key, _, hi, entries = head
        if entries:
            yield key, entries
        if len(entries) < page_size:
            todo.popleft()
            continue
        last = parse_id(entries[-1][0])
        if last >= hi:
            todo.popleft()
            continue
        head[1], head[3] = next_id(last), None


def prefetched(pages: Iterator, ahead: int = 2) -> Iterator:
    """``pages`` read by a thread at most ``ahead`` items in front of the consumer, so
    the server produces the next page while this one becomes Arrow.  An error in
    the thread is raised here; closing the iterator stops the thread.
    """
    done = object()
    queue: Queue = Queue(maxsize=ahead)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                queue.put(item, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def pull() -> None:
        try:
            for item in pages:
                if not put((item, None)):
                    return
            put((done, None))
        except BaseException as exc:  # handed to the consumer
            put((done, exc))

    thread = threading.Thread(target=pull, name="tidelog-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item, error = queue.get()
            if item is done:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()


def read_batches(url: str, ranges: Sequence[Range], schema: StructType, failfast: bool,
                 page_size: int, depth: int, cluster: bool | None = None,
                 replicas: bool = False):
    """``read_ranges`` as Arrow record batches of about ``page_size`` rows or more."""
    conn = connection.client(url, cluster, replicas)
    builder = BatchBuilder(schema, failfast)
    pending: list[tuple[str, list]] = []
    rows = 0
    for key, entries in prefetched(read_ranges(conn, ranges, page_size, depth)):
        pending.append((key, entries))
        rows += len(entries)
        if rows >= page_size:
            yield builder.build(pending)
            pending, rows = [], 0
    if pending:
        yield builder.build(pending)


def node_map(conn, keys: Sequence[str], replicas: bool = False) -> dict[str, str] | None:
    """On a cluster, per key the address of the node to read it from: the owning
    shard's primary, or its first online replica with ``replicas`` (the primary when it
    has none).  None when ``conn`` is not a cluster client.  One CLUSTER SHARDS."""
    if not isinstance(conn, connection.RedisCluster):
        return None
    owner = connection.owners(connection.shards(conn), keys)
    return {key: (s.replicas[0] if replicas and s.replicas else s.primary)
            for key, s in owner.items()}


# -- filter pushdown --------------------------------------------------------------------

EMPTY = (MAX_ID, MIN_ID)  # start > end: nothing to read
_LOWER = (GreaterThan, GreaterThanOrEqual)
_UPPER = (LessThan, LessThanOrEqual)


def _ms_bound(value, column: str) -> tuple[int, bool] | None:
    """A filter value on ``ms`` or ``ts`` as (milliseconds, exact).  ``ts`` values
    carry microseconds: a bound between two milliseconds is not exact."""
    if column == "ms" and isinstance(value, int) and not isinstance(value, bool):
        return value, True
    if column == "ts" and isinstance(value, datetime):
        ms = id_of_time(value)
        return ms, value.microsecond % 1000 == 0
    return None


def narrow(f: Filter, start: StreamId, end: StreamId,
           keys: tuple[str, ...] | None) -> tuple[StreamId, StreamId, tuple[str, ...] | None] | None:
    """Apply filter ``f`` to the read's range and key set.

    Returns the new ``(start, end, keys)`` when the filter is one the range
    expresses exactly (Spark then need not evaluate it), or None to leave it to
    Spark.  Comparisons on ``ms``/``ts``, equality on ``id``, equality and IN on
    ``stream`` are pushed; ``id`` ranges are not (as text, '9-0' > '10-0').
    """
    column = f.attribute[0] if len(f.attribute) == 1 else None
    if column in ("ms", "ts") and isinstance(f, (*_LOWER, *_UPPER, EqualTo)):
        bound = _ms_bound(f.value, column)
        if bound is None:
            return None
        ms, exact = bound
        if ms < 0:
            return None
        if isinstance(f, EqualTo):
            if not exact:
                return EMPTY + (keys,)
            return max(start, (ms, 0)), min(end, (ms, MAX_ID[1])), keys
        if isinstance(f, GreaterThan) or (isinstance(f, GreaterThanOrEqual) and not exact):
            return max(start, (ms + 1, 0)), end, keys
        if isinstance(f, GreaterThanOrEqual):
            return max(start, (ms, 0)), end, keys
        if isinstance(f, LessThan) and exact:
            return (start, min(end, (ms - 1, MAX_ID[1])), keys) if ms > 0 else EMPTY + (keys,)
        return start, min(end, (ms, MAX_ID[1])), keys
    if column == "id" and isinstance(f, EqualTo) and isinstance(f.value, str):
        try:
            sid = parse_id(f.value)
        except ValueError:
            return None
        if format_id(sid) != f.value:
            return None
        return max(start, sid), min(end, sid), keys
    if column == "stream" and isinstance(f, (EqualTo, In)):
        wanted = (f.value,) if isinstance(f, EqualTo) else tuple(f.value)
        wanted_set = {w for w in wanted if isinstance(w, str)}
        chosen = tuple(sorted(wanted_set if keys is None else wanted_set & set(keys)))
        return start, end, chosen
    return None


class TidelogReader(DataSourceReader):
    """Batch reader without filter pushdown (the Spark conf for it is off by default)."""

    def __init__(self, options: ReadOptions, schema: StructType):
        self.options = options
        self.schema = schema
        self.only_keys: tuple[str, ...] | None = None   # narrowed by stream filters

    def partitions(self) -> list[RangePartition]:
        o = self.options
        conn = connection.client(o.url, o.cluster)
        keys = connection.resolve_keys(conn, o.keys, o.pattern)
        if self.only_keys is not None:
            keys = [k for k in keys if k in self.only_keys]
        if o.start > o.end or not keys:
            return []
        bounds = connection.entry_bounds(conn, keys, o.start, o.end)
        node_of = node_map(conn, keys, o.read_replicas)
        groups = plan_ranges(bounds, o.num_partitions, node_of)
        return [RangePartition(group, node_of.get(group[0][0]) if node_of else None)
                for group in groups]

    def read(self, partition: RangePartition):
        o = self.options
        if partition is None or getattr(partition, "ranges", None) is None:
            return iter(())
        return read_batches(o.url, partition.ranges, self.schema, o.failfast,
                            o.page_size, o.pipeline_depth, o.cluster, o.read_replicas)


class TidelogPushdownReader(TidelogReader):
    """Batch reader that narrows the ID range and key set with the query's filters."""

    def pushFilters(self, filters: list[Filter]) -> list[Filter]:
        """Narrow the read with each filter the range expresses exactly; return the rest."""
        start, end, keys = self.options.start, self.options.end, self.only_keys
        left = []
        for f in filters:
            narrowed = narrow(f, start, end, keys)
            if narrowed is None:
                left.append(f)
            else:
                start, end, keys = narrowed
        self.options = replace(self.options, start=start, end=end)
        self.only_keys = keys
        return left
