"""Tidelog's data pipeline on Apache Spark (PySpark 4, Python Data Source API).

* ``spark.read.format("tidelog")`` / ``spark.readStream.format("tidelog")``: streams
  as rows, split into partitions by ID range (:mod:`.reader`, :mod:`.stream_reader`);
* ``df.write.format("tidelog")`` / ``df.writeStream.format("tidelog")``: rows as
  XADDs, idempotent with ``XADD ... IDMP`` on request (:mod:`.writer`);
* :func:`archive` / ``tidelog-archive``: old entries to Parquet, then trimmed
  (:mod:`.archive_job`; :func:`archive_all` for many keys or a pattern, on every
  primary of a cluster); :func:`read_history`: archive and live stream as one DataFrame.

This package talks to the server as a client only (redis-py); it works with
Tidelog and with Redis itself (features of Redis 8 need Tidelog or Redis 8).
"""

from .archive_job import ArchiveSummary, archive, archive_all
from .history import read_history
from .session import local_session
from .source import RegisteredTidelogDataSource, TidelogDataSource, register

__all__ = ["TidelogDataSource", "RegisteredTidelogDataSource", "register", "archive",
           "archive_all", "ArchiveSummary", "read_history", "local_session"]
