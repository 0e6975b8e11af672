"""A stream's whole history: its archived Parquet files and its live entries as one DataFrame.

``read_history(spark, url, stream, path)`` unions

* the Parquet files that the archive's manifest lists (see :mod:`.manifest`);
  files it does not list, left by a crashed run, are never read;
* the live entries whose IDs are above the last archived ID.  An entry that a
  run archived but has not trimmed yet (a crash between the manifest commit
  and the trim) is therefore read once, from Parquet.

Both sides have the default schema (``stream, id, ms, seq, ts, fields``; the
Parquet partition column ``day`` is not part of it), and the result is
ordered by ``ms, seq``.  ``start`` and ``end`` restrict it to a time range,
start inclusive and end exclusive.  A missing or empty archive reads the
stream alone.

The DataFrame is lazy: the manifest is read now, the files and the stream
when an action runs.  An archive run that commits and trims in between moves
entries to files this DataFrame does not know of; re-create the DataFrame
rather than keep it across archive runs.
"""

from __future__ import annotations

import os
from datetime import date, datetime

from .ids import MAX_ID, MIN_ID, U64_MAX, format_id, id_of_time, next_id
from .manifest import DAY_MS, Manifest, day_of_file, stream_dir
from .schema import META_COLUMNS, default_schema

_EPOCH_DAY = date(1970, 1, 1)


def read_history(spark, url: str, stream: str, path: str | os.PathLike, *,
                 start: datetime | str | int | None = None,
                 end: datetime | str | int | None = None,
                 num_partitions: int | None = None):
    """The entries of ``stream`` archived under ``path`` and still in the stream at
    ``url``, each once, ordered by ``ms, seq``.

    ``start`` (inclusive) and ``end`` (exclusive) are datetimes (naive means
    UTC), Unix milliseconds, or ISO 8601 text.  Files whose day lies outside
    the range are not read, and neither is the stream outside it.
    ``num_partitions`` splits the stream's read.

    Cost: O(runs + files) to read the manifest now; when an action runs, a
    scan of the chosen files, XRANGEs over the live part, and a sort of the
    union (a shuffle).
    """
    from pyspark.sql import functions as F

    lo_ms = None if start is None else id_of_time(start)
    hi_ms = None if end is None else id_of_time(end)      # exclusive
    manifest = Manifest.load(stream_dir(path, stream), stream)
    schema = default_schema()
    parts = []

    files = _files_in_range(manifest, stream_dir(path, stream), lo_ms, hi_ms)
    if files:
        archived = spark.read.schema(schema).parquet(*files).select(*META_COLUMNS)
        if lo_ms is not None:
            archived = archived.where(F.col("ms") >= lo_ms)
        if hi_ms is not None:
            archived = archived.where(F.col("ms") < hi_ms)
        parts.append(archived)

    live_lo = MIN_ID if manifest.last_id is None else next_id(manifest.last_id)
    if manifest.last_id is not None and live_lo == manifest.last_id:
        live_lo = MAX_ID    # the largest ID is archived: nothing can be above it
    if lo_ms is not None:
        live_lo = max(live_lo, (max(lo_ms, 0), 0))
    live_hi = MAX_ID
    if hi_ms is not None:
        live_hi = (hi_ms - 1, U64_MAX) if hi_ms > 0 else None
    if live_hi is not None and live_lo <= live_hi:
        reader = (spark.read.format("tidelog").option("url", url).option("stream", stream)
                  .option("startingId", format_id(live_lo))
                  .option("endingId", format_id(live_hi)))
        if num_partitions is not None:
            reader = reader.option("numPartitions", num_partitions)
        parts.append(reader.load().select(*META_COLUMNS))

    if not parts:
        return spark.createDataFrame([], schema)
    union = parts[0]
    for part in parts[1:]:
        union = union.unionByName(part)
    return union.orderBy("ms", "seq")


def _files_in_range(manifest: Manifest, directory: str, lo_ms: int | None,
                    hi_ms: int | None) -> list[str]:
    """The absolute paths of the listed files whose day meets ``[lo_ms, hi_ms)``."""
    chosen = []
    for run in manifest.runs:
        for relative in run.files:
            day = day_of_file(relative)
            if day is not None and (lo_ms is not None or hi_ms is not None):
                day_start = (date.fromisoformat(day) - _EPOCH_DAY).days * DAY_MS
                if lo_ms is not None and day_start + DAY_MS <= lo_ms:
                    continue
                if hi_ms is not None and day_start >= hi_ms:
                    continue
            chosen.append(os.path.join(directory, relative))
    return chosen
