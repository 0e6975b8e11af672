"""The producers: sensors that XADD ``sensor-id`` and ``temperature`` to a stream.

Each reading is one entry, as in ``XADD sensors <id> sensor-id 1001 temperature 21.4``.
The entries get explicit IDs whose millisecond part is the reading's time, from
``minutes`` ago up to now, so the stream holds a bounded, past-to-present history
that a Spark job can window by event time (the ``ts`` column is the ID's time).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import redis


@dataclass(frozen=True)
class Reading:
    id: str             # the entry ID the server gave
    ms: int             # its millisecond part: the reading's time
    sensor_id: str
    temperature: float


def produce(r: redis.Redis, stream: str = "sensors", *, sensors: int = 4, minutes: int = 10,
            interval_s: int = 10, spike_rate: float = 0.05, seed: int = 7,
            end_ms: int | None = None) -> list[Reading]:
    """Every ``interval_s`` seconds over the last ``minutes``, each of ``sensors`` sensors
    adds one reading.  About ``spike_rate`` of the readings are 10-15 degrees too hot.

    Readings of one round are 1 ms apart, so every entry has its own millisecond.
    If the stream already holds newer entries (a second run on the same server),
    the readings start just after its last entry instead.
    """
    rng = random.Random(seed)
    end_ms = int(time.time() * 1000) if end_ms is None else end_ms
    start_ms = end_ms - minutes * 60_000
    last = r.xrevrange(stream, "+", "-", count=1)
    if last:
        start_ms = max(start_ms, int(last[0][0].split(b"-")[0]) + 1)
    base = {f"{1001 + i}": rng.uniform(18.0, 24.0) for i in range(sensors)}
    plan = []
    for step in range(minutes * 60 // interval_s):
        for i, (sensor_id, normal) in enumerate(base.items()):
            temperature = normal + rng.gauss(0, 0.8)
            if rng.random() < spike_rate:
                temperature += rng.uniform(10, 15)
            plan.append((start_ms + step * interval_s * 1000 + i, sensor_id,
                         round(temperature, 2)))
    pipe = r.pipeline(transaction=False)
    for ms, sensor_id, temperature in plan:
        pipe.xadd(stream, {"sensor-id": sensor_id, "temperature": temperature}, id=f"{ms}-0")
    ids = pipe.execute()
    return [Reading(i.decode(), ms, sensor_id, temperature)
            for i, (ms, sensor_id, temperature) in zip(ids, plan)]
