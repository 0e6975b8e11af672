"""A streaming query in its own driver process, for tests that kill it with SIGKILL.

    python stream_job.py URL STREAM CHECKPOINT OUT (run|once)

Reads STREAM with the tidelog format and appends the rows to Parquet at OUT.
``run`` keeps going (200 entries per micro-batch, processingTime 50 ms) until
killed; ``once`` processes what is there (Trigger.AvailableNow, 2000 entries per
micro-batch) and exits.

It does not call ``tidelog.spark.register``: Spark finds the format through the
``pyspark_tidelog`` module, as it does for any user.
"""

import os
import sys

from pyspark.sql import SparkSession


def main(url: str, stream: str, checkpoint: str, out: str, mode: str) -> None:
    spark = (SparkSession.builder.master("local[2]")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = (spark.readStream.format("tidelog").option("url", url).option("stream", stream)
          .option("maxEntriesPerTrigger", 2000 if mode == "once" else 200)
          .option("numPartitions", 2).load())
    writer = (df.select("stream", "id", "ms", "seq", "fields").writeStream.format("parquet")
              .option("checkpointLocation", checkpoint).option("path", out))
    if mode == "once":
        writer.trigger(availableNow=True).start().awaitTermination(600)
    else:
        print("started", flush=True)
        writer.trigger(processingTime="50 milliseconds").start().awaitTermination(600)
    spark.stop()


if __name__ == "__main__":
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    main(*sys.argv[1:6])
