"""Client-side helpers for applications of a Tidelog (or Redis) cluster.

* :mod:`.partitions` -- the names of a topic's partition streams and the slot
  each is in: pure functions, no I/O, nothing but the standard library and
  :mod:`tidelog.keyslot` (what a planner, e.g. Spark's, needs without a client);
* :mod:`.topic` -- ``Topic`` (produce by key hash, consumer groups on every
  partition) and ``Consumer`` (read across partitions, ack, claim) on top of
  redis-py's ``RedisCluster``: ``pip install "tidelog[client]"``;
* :mod:`.aio` -- the same on asyncio (``redis.asyncio.cluster.RedisCluster``).

Like :mod:`tidelog.spark`, this package talks to servers as a client only and
imports nothing of the server (an import-linter contract in ``pyproject.toml``);
importing it does not import redis-py, only :mod:`.topic` and :mod:`.aio` do.
"""
