"""The streaming Spark jobs: per-minute averages to Parquet, alerts back into a stream.

Both read the ``sensors`` stream with a user schema: ``id`` and ``ts`` come from
the entry ID, ``sensor-id`` and ``temperature`` from the entry's fields (converted
to double).  Each query has its own checkpoint; run again, it carries on from
the offsets there (``Trigger.AvailableNow``: everything there is now, then stop).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

READINGS = "id string, ts timestamp, `sensor-id` string, temperature double"
# What the averages query writes: given when reading it back, because Spark cannot
# infer a schema from a sink that has not written a file yet.
AVERAGES = ("minute timestamp, sensor_id string, avg_temperature double, "
            "max_temperature double, readings long")


def readings(spark: SparkSession, url: str, stream: str) -> DataFrame:
    return (spark.readStream.format("tidelog")
            .option("url", url)
            .option("stream", stream)
            .schema(READINGS)
            .load())


def start_averages(spark: SparkSession, url: str, stream: str, path: str,
                   checkpoint: str) -> StreamingQuery:
    """Per sensor and minute: average, maximum and count, appended to Parquet once the
    watermark (newest reading - 1 minute) has passed the minute's end."""
    averages = (readings(spark, url, stream)
                .withWatermark("ts", "1 minute")
                .groupBy(F.window("ts", "1 minute"), F.col("sensor-id"))
                .agg(F.avg("temperature").alias("avg_temperature"),
                     F.max("temperature").alias("max_temperature"),
                     F.count("*").alias("readings"))
                .select(F.col("window.start").alias("minute"),
                        F.col("sensor-id").alias("sensor_id"),
                        "avg_temperature", "max_temperature", "readings"))
    return (averages.writeStream.format("parquet")
            .outputMode("append")
            .option("path", path)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start())


def start_alerts(spark: SparkSession, url: str, stream: str, alerts: str, threshold: float,
                 checkpoint: str, idempotent: bool) -> StreamingQuery:
    """Every reading above ``threshold`` as an entry of stream ``alerts``: fields
    ``sensor-id``, ``temperature`` and ``reading-id`` (the reading's entry ID)."""
    hot = (readings(spark, url, stream)
           .where(F.col("temperature") > threshold)
           .select("sensor-id", "temperature", F.col("id").alias("reading-id")))
    return (hot.writeStream.format("tidelog")
            .option("url", url)
            .option("stream", alerts)
            .option("idempotent", str(idempotent).lower())   # XADD ... IDMP
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start())


def run_jobs(spark: SparkSession, url: str, workdir: str, *, stream: str = "sensors",
             alerts: str = "alerts", threshold: float = 30.0,
             idempotent: bool = True) -> dict[str, int]:
    """Run both queries to the end of what the stream holds; the rows each one read."""
    queries = {
        "averages": start_averages(spark, url, stream, f"{workdir}/averages",
                                   f"{workdir}/checkpoints/averages"),
        "alerts": start_alerts(spark, url, stream, alerts, threshold,
                               f"{workdir}/checkpoints/alerts", idempotent),
    }
    rows = {}
    for name, query in queries.items():
        query.awaitTermination()
        rows[name] = sum(p["numInputRows"] for p in query.recentProgress)
    return rows
