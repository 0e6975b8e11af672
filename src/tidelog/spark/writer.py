"""Writes: each row becomes one ``XADD``, sent in pipelines of ``batchSize``.

Rows to entries:

* the key is option ``stream``, or else each row's ``stream`` column;
* the fields are the ``fields`` map column when there is one, or else every
  other column (all but ``stream`` and ``id``), named after the column;
  a null value leaves its field out;
* the ID is ``*`` (the server's clock), or the row's ``id`` with ``keepIds=true``;
* ``maxLen``/``minId`` add ``MAXLEN ~ n``/``MINID ~ id`` (``=`` with
  ``approximateTrim=false``) to every XADD.

Values become text the way Spark casts them to string (``true``, ``12``,
``2.5``, ISO dates and times); binary values are sent as they are.

Idempotence (``idempotent=true``, Redis 8.6's ``XADD ... IDMP``): every row is
sent with a producer ID and an idempotent ID derived from where it stands in
the job: ``IDMP <producer>:<batch>:<partition>:<chunk> <row>``, where
``producer`` is the streaming query's ID (kept in its checkpoint; ``producerId``
overrides it, and a batch job uses a new UUID unless ``producerId`` is given),
``batch`` the micro-batch ID (0 for a batch job), ``partition`` the Spark
partition and ``chunk`` the row's index divided by the stream's
``IDMP-MAXSIZE``, so that no producer ever holds more IDs than the stream
remembers.  A retried task or a replayed micro-batch sends the same pairs, and
the server answers them with the entries already added instead of adding them
again, provided that (1) the retry comes within the stream's ``IDMP-DURATION``
seconds of the first attempt (XCFGSET sets it, at most 86400), (2) the rows of
a partition come in the same order each time (true for reads of the tidelog
format and of files; sort within partitions after a shuffle), and (3) no
XCFGSET changes the stream's settings in between (a change clears what it
remembers).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import MapType, StructType

from . import connection
from .options import WriteOptions

DEFAULT_IDMP_MAXSIZE = 100


@dataclass
class WriteReport(WriterCommitMessage):
    """What one task wrote: its XADD count and the first and last IDs the server gave."""

    rows: int
    first_id: str | None
    last_id: str | None


def text_of(value) -> bytes | None:
    """A column value as a field value: Spark's cast-to-string forms; None for null."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, (int, Decimal)):
        return str(value).encode()
    if isinstance(value, float):
        return repr(value).encode()
    if isinstance(value, datetime):
        return value.isoformat().encode()
    if isinstance(value, date):
        return value.isoformat().encode()
    return json.dumps(value, default=str, separators=(",", ":")).encode()


class EntryWriter:
    """The executor side shared by batch and streaming writes."""

    def __init__(self, options: WriteOptions, schema: StructType, producer: str | None,
                 idmp_chunk: int):
        self.options = options
        names = schema.fieldNames()
        if options.key is None and "stream" not in names:
            raise ValueError("set option 'stream' or give the rows a 'stream' column")
        if options.keep_ids and "id" not in names:
            raise ValueError("keepIds=true needs an 'id' column")
        self.map_column = "fields" if "fields" in names and isinstance(
            schema["fields"].dataType, MapType) else None
        skip = {"id"} | ({"stream"} if options.key is None else set())
        self.field_columns = [n for n in names if n not in skip] if self.map_column is None \
            else []
        if self.map_column is None and not self.field_columns:
            raise ValueError("the rows have no column to write as a field")
        # Only these become Python values (a timestamp column nobody writes costs
        # a datetime per row otherwise).
        self.used_columns = ([self.map_column] if self.map_column else self.field_columns) \
            + (["stream"] if options.key is None else []) + (["id"] if options.keep_ids else [])
        self.producer = producer
        self.idmp_chunk = idmp_chunk

    def _trim_args(self) -> list:
        o = self.options
        op = "~" if o.approximate_trim else "="
        if o.max_len is not None:
            return ["MAXLEN", op, o.max_len]
        if o.min_id is not None:
            return ["MINID", op, o.min_id]
        return []

    def write(self, batches: Iterator[pa.RecordBatch], batch_label: str) -> WriteReport:
        o = self.options
        conn = connection.client(o.url, o.cluster)
        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx is not None else 0
        producer = self.producer
        if o.idempotent and producer is None and ctx is not None:
            producer = ctx.getLocalProperty("sql.streaming.queryId")
        if o.idempotent and producer is None:
            raise ValueError("idempotent writes need option 'producerId' here")
        trim = self._trim_args()
        pipe = conn.pipeline(transaction=False)
        queued = rows = 0
        first = last = None
        for batch in batches:
            columns = {name: batch.column(name).to_pylist() for name in self.used_columns}
            for i in range(batch.num_rows):
                key = o.key if o.key is not None else columns["stream"][i]
                if key is None:
                    raise ValueError("a row has a null 'stream' and no option 'stream' is set")
                args: list = ["XADD", key]
                args += trim
                if o.idempotent:
                    chunk, index = divmod(rows, self.idmp_chunk)
                    args += ["IDMP", f"{producer}:{batch_label}:{partition}:{chunk}", index]
                args.append(columns["id"][i] if o.keep_ids and columns["id"][i] else "*")
                n_before = len(args)
                if self.map_column is not None:
                    for name, value in columns[self.map_column][i] or ():
                        if (raw := text_of(value)) is not None:
                            args += [name, raw]
                else:
                    for name in self.field_columns:
                        if (raw := text_of(columns[name][i])) is not None:
                            args += [name, raw]
                if len(args) == n_before:
                    raise ValueError(f"row {rows} of partition {partition} has no non-null field")
                pipe.execute_command(*args)
                rows += 1
                queued += 1
                if queued >= o.batch_size:
                    first, last = _flush(pipe, first, last)
                    queued = 0
        if queued:
            first, last = _flush(pipe, first, last)
        return WriteReport(rows, first, last)


def _flush(pipe, first, last):
    replies = pipe.execute()
    if replies:
        if first is None:
            first = replies[0].decode()
        last = replies[-1].decode()
    return first, last


def idmp_chunk_size(url: str, key: str | None, cluster: bool | None = None) -> int:
    """How many idempotent IDs one producer may hold on ``key``: its IDMP-MAXSIZE."""
    conn = connection.client(url, cluster)
    if not connection.has_command(conn, "XCFGSET"):
        raise ValueError("idempotent=true needs XADD ... IDMP: Tidelog or Redis 8.6 or later")
    if key is not None:
        try:
            info = conn.execute_command("XINFO", "STREAM", key)
            pairs = {info[i]: info[i + 1] for i in range(0, len(info) - 1, 2)}
            if b"idmp-maxsize" in pairs:
                return int(pairs[b"idmp-maxsize"])
        except Exception:  # no such key yet: the server's default applies
            pass
    try:
        if isinstance(conn, connection.RedisCluster):
            conn = conn.get_redis_connection(conn.get_random_node())
        reply = conn.config_get("stream-idmp-maxsize")
        return int(next(iter(reply.values())))
    except Exception:
        return DEFAULT_IDMP_MAXSIZE


class TidelogWriter(DataSourceArrowWriter):
    """``df.write.format("tidelog")``: one pipeline of XADDs per task."""

    def __init__(self, options: WriteOptions, schema: StructType):
        chunk = idmp_chunk_size(options.url, options.key, options.cluster) if options.idempotent else 1
        producer = options.producer_id or (str(uuid.uuid4()) if options.idempotent else None)
        self.entries = EntryWriter(options, schema, producer, chunk)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:
        return self.entries.write(iterator, "0")


class TidelogStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("tidelog")``: like the batch writer, per micro-batch."""

    def __init__(self, options: WriteOptions, schema: StructType):
        chunk = idmp_chunk_size(options.url, options.key, options.cluster) if options.idempotent else 1
        self.entries = EntryWriter(options, schema, options.producer_id, chunk)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteReport:
        ctx = TaskContext.get()
        batch = ctx.getLocalProperty("streaming.sql.batchId") if ctx is not None else None
        return self.entries.write(iterator, batch if batch is not None else "0")

    def commit(self, messages, batchId: int) -> None:
        pass

    def abort(self, messages, batchId: int) -> None:
        pass
