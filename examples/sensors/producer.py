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
    """Every ``interval_s`` seconds from ``minutes`` before ``end_ms`` (default now) up to
    ``end_ms``, each of ``sensors`` sensors adds one reading; none is ever later than
    ``end_ms``.  About ``spike_rate`` of the readings are 10-15 degrees too hot.

    The readings lie on one fixed grid, the multiples of ``interval_s`` in Unix time:
    a round at ``ms`` is the entries ``<ms>-0``, ``<ms>-1``, ... (one per sensor).
    Only the rounds after the stream's last entry are added, so a second run on the
    same stream continues the series with the rounds whose time has come since
    (possibly none) instead of writing ahead of the clock.  Returns what was added.
    """
    if interval_s <= 0:
        raise ValueError("interval_s must be positive")
    step = interval_s * 1000
    end_ms = int(time.time() * 1000) if end_ms is None else end_ms
    after = end_ms - minutes * 60_000              # exclusive: the span is (after, end_ms]
    rng = random.Random(seed)
    base = {f"{1001 + i}": rng.uniform(18.0, 24.0) for i in range(sensors)}
    last = r.xrevrange(stream, "+", "-", count=1)
    if last:
        last_ms = int(last[0][0].split(b"-")[0])
        after = max(after, last_ms)
        # The same sensors, but not the same noise as the run before: seeded by
        # where this run starts, so a re-run does not replay the first readings.
        rng.seed(f"{seed}:{last_ms}")
    plan = []
    for ms in range((after // step + 1) * step, end_ms + 1, step):
        for i, (sensor_id, normal) in enumerate(base.items()):
            temperature = normal + rng.gauss(0, 0.8)
            if rng.random() < spike_rate:
                temperature += rng.uniform(10, 15)
            plan.append((f"{ms}-{i}", ms, sensor_id, round(temperature, 2)))
    if not plan:
        return []
    pipe = r.pipeline(transaction=False)
    for entry_id, _ms, sensor_id, temperature in plan:
        pipe.xadd(stream, {"sensor-id": sensor_id, "temperature": temperature}, id=entry_id)
    ids = pipe.execute()
    return [Reading(i.decode(), ms, sensor_id, temperature)
            for i, (_id, ms, sensor_id, temperature) in zip(ids, plan)]
