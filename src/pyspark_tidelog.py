"""Lets Spark find the ``tidelog`` format with no registration call.

When a session first looks up a Python data source, PySpark imports every
top-level module named ``pyspark_*`` and registers its ``DefaultSource``.
"""

from tidelog.spark.source import TidelogDataSource as DefaultSource

__all__ = ["DefaultSource"]
