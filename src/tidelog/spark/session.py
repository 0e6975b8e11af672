"""A SparkSession for one machine, ready for the ``tidelog`` format.

``local_session()`` is what the archive command, the example and the
benchmarks start: Spark's web UI off, the session's time zone UTC (stream IDs
are UTC milliseconds), logs at ERROR, the format registered with filter
pushdown.  With a ``local`` master it keeps Spark on the loopback interface
(``SPARK_LOCAL_IP=127.0.0.1`` unless set) and runs the Python workers with
this interpreter (``PYSPARK_PYTHON`` unless set).  On a cluster, build the
session as usual and call :func:`tidelog.spark.register`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from .source import register


def local_session(app_name: str = "tidelog", master: str = "local[2]",
                  conf: Mapping[str, str] | None = None, *, progress: bool = False):
    """Start (or join) a SparkSession on ``master`` with ``conf`` on top of the defaults.

    ``progress`` shows Spark's stage progress bar on standard error.
    Cost: the first call starts a JVM (about 5 s); later calls return the same session.
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", str(progress).lower())
               .config("spark.sql.session.timeZone", "UTC"))
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if os.environ.get("SPARK_LOCAL_IP"):
        builder = builder.config("spark.driver.host", os.environ["SPARK_LOCAL_IP"])
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark
