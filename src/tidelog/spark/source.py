"""The ``tidelog`` data source: what ``spark.read.format("tidelog")`` and friends build.

Registration: ``tidelog.spark.register(spark)`` registers it on a session and
turns on Spark's Python filter pushdown (``spark.sql.python.filterPushdown.enabled``)
so time and ID filters narrow the XRANGEs.  Without that call, Spark finds the
format by itself through the ``pyspark_tidelog`` module (any module named
``pyspark_*`` with a ``DefaultSource`` is registered when the first Python data
source is looked up); that one pushes filters only with ``pushFilters=true``,
because Spark refuses a reader that pushes filters while the conf is off.
"""

from __future__ import annotations

from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from .options import ReadOptions, WriteOptions
from .reader import TidelogPushdownReader, TidelogReader
from .schema import BINARY_DDL, DEFAULT_DDL, check_schema
from .stream_reader import TidelogStreamReader
from .writer import TidelogStreamWriter, TidelogWriter


class TidelogDataSource(DataSource):
    """Redis streams as rows: batch and streaming reads and writes (format ``tidelog``)."""

    push_filters_by_default = False

    @classmethod
    def name(cls) -> str:
        return "tidelog"

    def schema(self) -> str:
        binary = ReadOptions.parse_binary(self.options)
        return BINARY_DDL if binary else DEFAULT_DDL

    def reader(self, schema: StructType):
        options = ReadOptions.parse(self.options)
        check_schema(schema)
        push = options.push_filters
        if push is None:
            push = self.push_filters_by_default
        cls = TidelogPushdownReader if push else TidelogReader
        return cls(options, schema)

    def streamReader(self, schema: StructType):
        options = ReadOptions.parse(self.options)
        check_schema(schema)
        return TidelogStreamReader(options, schema)

    def writer(self, schema: StructType, overwrite: bool):
        return TidelogWriter(WriteOptions.parse(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool):
        return TidelogStreamWriter(WriteOptions.parse(self.options), schema)


class RegisteredTidelogDataSource(TidelogDataSource):
    """The source :func:`register` installs: it pushes filters unless ``pushFilters=false``."""

    push_filters_by_default = True


def register(spark) -> None:
    """Register the ``tidelog`` format on ``spark``, with filter pushdown turned on."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(RegisteredTidelogDataSource)
