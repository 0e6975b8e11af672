"""The archive: old stream entries moved to Parquet files, then trimmed from the stream.

``archive(spark, url, stream, older_than, path)`` (and the ``tidelog-archive``
command) moves every entry whose ID is below a cut (``now - older_than`` as
the ID ``<cut_ms>-0``, or an explicit ID or time) into Parquet, partitioned by
the UTC day of its time, and only then trims those entries from the stream.

The files and the manifest are laid out as :mod:`.manifest` describes.
A data file belongs to the archive if and only if the manifest lists it.
Each run goes through the steps of :data:`STEPS`:

1. ``recover``: delete staging directories, and data files the manifest does
   not list (what a crashed run left behind); if a committed run was not
   marked trimmed, trim it now.
2. ``plan``: the last entry below the cut, ``hi`` (one XREVRANGE).  The run
   archives ``[-, hi]``: after recovery the stream holds no archived entry.
3. ``read``: read the range through the ``tidelog`` data source for its
   fingerprint: the count, the first and last IDs, and an XOR of the IDs'
   halves (one Spark job).
4. ``write``: write the range again to ``_staging-<run>``, by ``day``
   (one Spark job).
5. ``verify``: the same figures from the staged files (one Spark job); any
   difference deletes the staging directory and fails the run, untrimmed.
6. ``move``: rename the staged files into place, fsync them and their
   directories.
7. ``commit``: add the run to the manifest (temporary file, fsync, rename:
   the commit point).
8. ``trim``: ``XTRIM key MINID = <the ID after the last archived one>``.
9. ``mark_trimmed``: record in the manifest that the trim is done, so that
   recovery trims only after a run whose trim may be missing (never, say, a
   stream deleted and created again since).

A crash before ``commit`` leaves files that the next run's recovery deletes,
and the entries are still in the stream; a crash after it leaves the entries
in both, and the next run's recovery trims them before planning.  Either way,
after a re-run every entry is exactly once in the archive or in the stream.
:func:`tidelog.spark.history.read_history` reads both without counting an
entry twice even before that re-run.

Two runs on the same stream and path exclude each other through the lock
file.  The archive reads with ``mode=FAILFAST``: an entry whose field names or
values are not UTF-8 fails the run (nothing is trimmed) rather than being
archived with a null in place of its value.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from . import connection
from .ids import MIN_ID, StreamId, format_id, id_of_time, next_id, parse_id, prev_id
from .manifest import (
    DAY_MS,
    DAY_PREFIX,
    LOCK,
    MANIFEST,
    STAGING_PREFIX,
    ArchivedRun,
    ArchiveError,
    Manifest,
    fsync_dir,
    stream_dir,
)
from .options import topic_keys
from .schema import default_schema
from .session import local_session

STEPS = ("recover", "plan", "read", "write", "verify", "move", "commit", "trim",
         "mark_trimmed")
# -- the job -----------------------------------------------------------------------------

@dataclass
class ArchiveSummary:
    """What one run did; ``rows == 0`` when nothing was due."""

    stream: str
    cut: str
    run_id: str | None = None
    rows: int = 0
    first_id: str | None = None
    last_id: str | None = None
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    trimmed: int = 0             # entries XTRIM removed, this run's and a recovered one's

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        if not self.rows:
            return (f"nothing to archive in {self.stream!r} below {self.cut} "
                    f"({self.seconds:.1f} s, {self.trimmed} entries trimmed)")
        rate = self.rows_per_second
        rate_text = f"{rate:,.0f}" if rate >= 100 else f"{rate:.1f}"
        return (f"archived {self.rows} entries of {self.stream!r}, {self.first_id} .. "
                f"{self.last_id} (below {self.cut}): {self.files} files, "
                f"{_human_bytes(self.bytes)}, {self.seconds:.1f} s, {rate_text} rows/s; "
                f"{self.trimmed} entries trimmed")


@dataclass(frozen=True)
class _Fingerprint:
    """Figures that tell two copies of an ID range apart: the row count, the first and
    last IDs, and the XOR of all ``ms`` and of all ``seq`` (a row lost and another
    doubled change them unless the two rows are the same entry)."""

    rows: int
    first: StreamId | None
    last: StreamId | None
    xor_ms: int
    xor_seq: int


def archive(spark, url: str, stream: str, older_than: timedelta | str | None,
            path: str | os.PathLike, *, cut: str | StreamId | datetime | int | None = None,
            now_ms: int | None = None, num_partitions: int | None = None,
            progress: Callable[[str], object] | None = print,
            before_step: Callable[[str], object] | None = None) -> ArchiveSummary:
    """Move the entries of ``stream`` older than ``older_than`` to Parquet under ``path``,
    then trim them from the stream.  See the module's text for the steps.

    ``older_than`` is a timedelta or a duration such as ``"7d"`` (see
    :func:`parse_duration`); the cut is ``now - older_than`` (``now_ms``
    overrides the clock).  ``cut`` instead gives the cut itself (see
    :func:`parse_cut`); entries with IDs below it are archived.
    ``num_partitions`` splits the read (default: Spark's default parallelism).
    ``progress`` receives one line per step; ``before_step(name)`` is called
    before each step of :data:`STEPS` (an exception there stops the run as a
    crash would, leaving the disk as it is).

    Cost: three Spark jobs over the archived range (read twice from the server,
    once from the staged files), O(files) renames and fsyncs, O(runs + files)
    for the manifest, and one XTRIM, O(entries removed) on the server.
    """
    started = time.monotonic()
    say = progress or (lambda _line: None)
    cut_id = resolve_cut(older_than, cut, now_ms)
    if "," in stream or stream != stream.strip():
        raise ValueError(f"the tidelog data source cannot read stream key {stream!r} "
                         f"(commas and surrounding spaces are not supported)")
    directory = stream_dir(path, stream)
    os.makedirs(directory, exist_ok=True)
    conn = connection.client(url)
    summary = ArchiveSummary(stream, format_id(cut_id))

    def step(name: str) -> None:
        if before_step is not None:
            before_step(name)

    with _locked(directory):
        step("recover")
        manifest = Manifest.load(directory, stream)
        summary.trimmed += _recover(conn, stream, directory, manifest, say)

        step("plan")
        hi = _last_below(conn, stream, cut_id)
        if hi is None:
            say(f"plan: no entry of {stream!r} below {format_id(cut_id)}")
            return _finish(summary, started)
        run_id = _new_run_id()
        say(f"plan: run {run_id} archives {stream!r} up to {format_id(hi)} "
            f"(entries below {format_id(cut_id)}{_cut_time(cut_id)})")

        step("read")
        parts = num_partitions or _default_parallelism(spark)
        source = (spark.read.format("tidelog").option("url", url).option("stream", stream)
                  .option("startingId", format_id(MIN_ID)).option("endingId", format_id(hi))
                  .option("mode", "FAILFAST")
                  .option("numPartitions", parts).load())
        expected = _fingerprint(source)
        if not expected.rows:
            say("read: the range is empty now (entries deleted meanwhile)")
            return _finish(summary, started)
        say(f"read: {expected.rows} entries, {format_id(expected.first)} .. "
            f"{format_id(expected.last)}, in {parts} partitions")

        step("write")
        staging = os.path.join(directory, STAGING_PREFIX + run_id)
        _write_parquet(spark, source, staging)
        say(f"write: {len(_staged_files(staging))} files staged in "
            f"{os.path.basename(staging)}")

        step("verify")
        staged = _staged_files(staging)      # what is on disk now
        found = (_fingerprint(spark.read.schema(default_schema()).parquet(
            *[os.path.join(staging, f) for f in staged])) if staged
            else _Fingerprint(0, None, None, 0, 0))
        if found != expected or expected.last > hi:
            shutil.rmtree(staging, ignore_errors=True)
            raise ArchiveError(
                f"verify: the staged files hold {found.rows} entries "
                f"({_range_text(found)}), the stream gave {expected.rows} "
                f"({_range_text(expected)}); nothing was archived or trimmed")
        say(f"verify: {found.rows} entries, {_range_text(found)}: as read")

        step("move")
        files = _move_into_place(staging, staged, directory, run_id)
        size = sum(os.path.getsize(os.path.join(directory, f)) for f in files)
        say(f"move: {len(files)} files, {_human_bytes(size)}, in place")

        step("commit")
        run = ArchivedRun(run_id=run_id, first_id=format_id(expected.first),
                          last_id=format_id(expected.last), rows=expected.rows,
                          files=files, bytes=size, cut=format_id(cut_id),
                          created=datetime.now(UTC).isoformat(timespec="seconds"))
        manifest.runs.append(run)
        manifest.save(directory)
        shutil.rmtree(staging, ignore_errors=True)
        say(f"commit: run {run_id} recorded in {MANIFEST}")

        step("trim")
        bound = next_id(expected.last)
        removed = _trim(conn, stream, bound)
        summary.trimmed += removed
        say(f"trim: XTRIM MINID {format_id(bound)} removed {removed} entries")

        step("mark_trimmed")
        run.trimmed = True
        manifest.save(directory)

        summary.run_id, summary.rows = run_id, expected.rows
        summary.first_id, summary.last_id = run.first_id, run.last_id
        summary.files, summary.bytes = len(files), size
        return _finish(summary, started)


def archive_all(spark, url: str, streams: list[str] | tuple[str, ...] = (),
                pattern: str | None = None, older_than: timedelta | str | None = None,
                path: str | os.PathLike = "", **kwargs) -> list[ArchiveSummary]:
    """:func:`archive` for each stream key of ``streams``, or of every stream key that
    matches ``pattern`` (SCAN on every primary of a cluster), one after the other,
    each under its own directory of ``path``; ``kwargs`` as :func:`archive` takes them.
    Stops at the first failure (the streams before it are archived, the rest untouched).
    Cost: :func:`archive`'s per stream, and the SCAN of the keyspace with ``pattern``.
    """
    if bool(streams) == bool(pattern):
        raise ValueError("give either streams or a pattern")
    conn = connection.client(url)
    keys = connection.resolve_keys(conn, streams, pattern)
    return [archive(spark, url, key, older_than, path, **kwargs) for key in keys]


def _finish(summary: ArchiveSummary, started: float) -> ArchiveSummary:
    summary.seconds = time.monotonic() - started
    return summary


def _recover(conn, stream: str, directory: str, manifest: Manifest,
             say: Callable[[str], object]) -> int:
    """Undo what a crashed run left and finish a committed run's trim.  O(files on
    disk); returns the number of entries trimmed."""
    listed = manifest.files()
    stale = 0
    for name in sorted(os.listdir(directory)):
        full = os.path.join(directory, name)
        if name.startswith(STAGING_PREFIX) and os.path.isdir(full):
            shutil.rmtree(full)
            say(f"recover: removed {name} (a crashed run's staging)")
        elif name == MANIFEST + ".tmp":
            os.remove(full)
        elif name.startswith(DAY_PREFIX) and os.path.isdir(full):
            for file in sorted(os.listdir(full)):
                if f"{name}/{file}" not in listed:
                    os.remove(os.path.join(full, file))
                    stale += 1
            if not os.listdir(full):
                os.rmdir(full)
    if stale:
        say(f"recover: removed {stale} files no committed run lists")
    pending = [run for run in manifest.runs if not run.trimmed]
    if not pending:
        return 0
    bound = next_id(max(parse_id(run.last_id) for run in pending))
    removed = _trim(conn, stream, bound)
    for run in pending:
        run.trimmed = True
    manifest.save(directory)
    say(f"recover: finished the trim of run {pending[-1].run_id}: "
        f"XTRIM MINID {format_id(bound)} removed {removed} entries")
    return removed


def _last_below(conn, stream: str, cut: StreamId) -> StreamId | None:
    """The ID of the last entry below ``cut`` (None: none).  O(log N)."""
    if cut == MIN_ID:
        return None
    reply = conn.execute_command("XREVRANGE", stream, format_id(prev_id(cut)), "-",
                                 "COUNT", 1)
    return parse_id(reply[0][0]) if reply else None


def _trim(conn, stream: str, bound: StreamId) -> int:
    """``XTRIM stream MINID = bound``: O(entries removed)."""
    return int(conn.execute_command("XTRIM", stream, "MINID", "=", format_id(bound)))


def _fingerprint(df) -> _Fingerprint:
    """One Spark job over ``df`` (columns ``ms``, ``seq``)."""
    from pyspark.sql import functions as F

    row = df.agg(F.count(F.lit(1)).alias("rows"),
                 F.min(F.struct("ms", "seq")).alias("first"),
                 F.max(F.struct("ms", "seq")).alias("last"),
                 F.bit_xor("ms").alias("xor_ms"),
                 F.bit_xor("seq").alias("xor_seq")).first()
    first = (row["first"]["ms"], row["first"]["seq"]) if row["first"] else None
    last = (row["last"]["ms"], row["last"]["seq"]) if row["last"] else None
    return _Fingerprint(row["rows"], first, last, row["xor_ms"] or 0, row["xor_seq"] or 0)


def _write_parquet(spark, source, staging: str) -> None:
    """Write ``source`` to ``staging`` partitioned by UTC ``day``, sorted by ID within
    each file (so Parquet's min/max statistics on ``ms`` prune well).  Timestamps
    are written as TIMESTAMP_MICROS (not Spark's legacy INT96) for other readers.
    """
    from pyspark.sql import functions as F

    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "TIMESTAMP_MICROS")
    try:
        day = F.date_from_unix_date(F.floor(F.col("ms") / DAY_MS).cast("int"))
        (source.withColumn("day", day)
         .sortWithinPartitions("day", "ms", "seq")
         .write.mode("errorifexists").partitionBy("day").parquet(staging))
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _staged_files(staging: str) -> list[str]:
    """The Parquet files Spark wrote under ``staging``, relative to it, sorted."""
    found = []
    for name in sorted(os.listdir(staging)):
        day_dir = os.path.join(staging, name)
        if name.startswith(DAY_PREFIX) and os.path.isdir(day_dir):
            found.extend(f"{name}/{file}" for file in sorted(os.listdir(day_dir))
                         if file.startswith("part-") and file.endswith(".parquet"))
    return found


def _move_into_place(staging: str, staged: list[str], directory: str,
                     run_id: str) -> list[str]:
    """Rename the staged files to ``day=.../part-<run>-NNNNN...`` in ``directory`` and
    make them durable (fsync of each file and directory).  Returns the new relative
    paths.  O(files)."""
    moved = []
    for n, relative in enumerate(staged):
        day_dir, name = relative.split("/", 1)
        suffix = name[name.index("."):] if "." in name else ".parquet"
        target = f"{day_dir}/part-{run_id}-{n:05d}{suffix}"
        os.makedirs(os.path.join(directory, day_dir), exist_ok=True)
        os.replace(os.path.join(staging, relative), os.path.join(directory, target))
        moved.append(target)
    for relative in moved:
        fd = os.open(os.path.join(directory, relative), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for day_dir in sorted({m.split("/", 1)[0] for m in moved}):
        fsync_dir(os.path.join(directory, day_dir))
    fsync_dir(directory)
    return moved


@contextmanager
def _locked(directory: str) -> Iterator[None]:
    """Hold the stream directory's lock file (released by the kernel if we die)."""
    with open(os.path.join(directory, LOCK), "a") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ArchiveError(f"{directory}: another archive run holds {LOCK}") from None
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _new_run_id() -> str:
    """Sortable by start time, unique by a random suffix."""
    now = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{uuid.uuid4().hex[:8]}"


def _default_parallelism(spark) -> int:
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:   # e.g. Spark Connect has no SparkContext
        return 1


def _range_text(fp: _Fingerprint) -> str:
    if not fp.rows:
        return "none"
    return f"{format_id(fp.first)} .. {format_id(fp.last)}"


def _cut_time(cut: StreamId) -> str:
    try:
        when = datetime.fromtimestamp(cut[0] / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return ""
    return f", {when.isoformat(timespec='seconds')}"


def _human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"


# -- cuts and durations -------------------------------------------------------------------

_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")


def parse_duration(text: str) -> timedelta:
    """``"30s"``, ``"15m"``, ``"12h"``, ``"7d"``, ``"2w"``, ``"500ms"`` or a sum such as
    ``"1d12h"`` -> timedelta.  Raises ValueError for anything else."""
    compact = text.strip().lower().replace(" ", "")
    pos, total = 0, 0.0
    for match in _DURATION.finditer(compact):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    if not compact or pos != len(compact):
        raise ValueError(f"not a duration: {text!r} (use e.g. 30s, 15m, 12h, 7d)")
    return timedelta(seconds=total)


def parse_cut(value: str | StreamId | datetime | int) -> StreamId:
    """The first ID not archived: ``"<ms>-<seq>"`` as it is, or a time (datetime,
    Unix milliseconds, or ISO 8601 text such as ``2024-05-01T00:00Z``) as ``<ms>-0``."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*\d+-\d+\s*", value):
        return parse_id(value)
    ms = id_of_time(value)
    if ms < 0:
        raise ValueError(f"cut before 1970: {value!r}")
    return ms, 0


def resolve_cut(older_than: timedelta | str | None, cut, now_ms: int | None) -> StreamId:
    """The cut of a run from exactly one of ``older_than`` (relative to ``now_ms``,
    default the clock) and ``cut``."""
    if (older_than is None) == (cut is None):
        raise ValueError("give exactly one of older_than and cut")
    if cut is not None:
        return parse_cut(cut)
    age = parse_duration(older_than) if isinstance(older_than, str) else older_than
    if age < timedelta(0):
        raise ValueError("older_than is negative")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return max(0, now - age // timedelta(milliseconds=1)), 0


# -- the command --------------------------------------------------------------------------

def _duration_argument(text: str) -> timedelta:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tidelog-archive",
        description="Move a stream's old entries to Parquet files (partitioned by day), "
                    "then trim them from the stream.  Safe to re-run after a crash.")
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0",
                        help="the server (default: %(default)s)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--stream", help="the stream key")
    which.add_argument("--pattern", help="every stream key matching this SCAN pattern "
                                         "(on every primary of a cluster)")
    which.add_argument("--topic", metavar="NAME:P",
                       help="every partition of a topic of P partitions (tidelog.client.topic)")
    when = parser.add_mutually_exclusive_group(required=True)
    when.add_argument("--older-than", type=_duration_argument, metavar="DURATION",
                      help="archive entries older than this: 30s, 15m, 12h, 7d")
    when.add_argument("--cut", metavar="ID_OR_TIME",
                      help="archive entries below this ID (ms-seq), Unix ms or ISO time")
    parser.add_argument("--to", required=True, metavar="PATH", help="the archive directory")
    parser.add_argument("--partitions", type=int, default=None, metavar="N",
                        help="Spark partitions of the read (default: Spark's parallelism)")
    parser.add_argument("--master", default="local[*]",
                        help="Spark master (default: %(default)s)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the session (repeatable)")
    args = parser.parse_args(argv)
    if args.cut is not None:
        try:
            parse_cut(args.cut)
        except ValueError as exc:
            parser.error(f"--cut: {exc}")
    if args.topic is not None:
        name, _, count = args.topic.rpartition(":")
        try:
            args.topic_keys = topic_keys(name, int(count))
        except ValueError as exc:
            parser.error(f"--topic {args.topic!r}: {exc} (use NAME:P, e.g. orders:8)")
    if args.partitions is not None and args.partitions < 1:
        parser.error("--partitions must be at least 1")
    for setting in args.conf:
        if "=" not in setting:
            parser.error(f"--conf {setting!r}: use KEY=VALUE")
    return args


def _session(master: str, settings: list[str]):
    conf = {}
    for setting in settings:
        key, _, value = setting.partition("=")
        conf[key.strip()] = value
    # Spark's stage progress bar, while its jobs run, on a terminal only
    return local_session("tidelog-archive", master, conf, progress=sys.stderr.isatty())


def main(argv: list[str] | None = None) -> int:
    """``tidelog-archive``: run :func:`archive` on a local Spark session, print each
    step and a summary.  Exit status 0 on success (also when nothing was due), 1 on
    failure."""
    args = _arguments(argv)

    def say(line: str) -> None:
        print(line, flush=True)

    spark = _session(args.master, args.conf)
    try:
        if args.topic is not None:
            summaries = archive_all(spark, args.url, streams=args.topic_keys,
                                    older_than=args.older_than, path=args.to, cut=args.cut,
                                    num_partitions=args.partitions, progress=say)
        elif args.pattern is not None:
            summaries = archive_all(spark, args.url, pattern=args.pattern,
                                    older_than=args.older_than, path=args.to, cut=args.cut,
                                    num_partitions=args.partitions, progress=say)
        else:
            summaries = [archive(spark, args.url, args.stream, args.older_than, args.to,
                                 cut=args.cut, num_partitions=args.partitions, progress=say)]
    except Exception as exc:   # the server's, Spark's, the filesystem's: one line each
        print(f"tidelog-archive: error: {type(exc).__name__}: {exc}", file=sys.stderr,
              flush=True)
        return 1
    finally:
        spark.stop()
    for summary in summaries:
        say(str(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
