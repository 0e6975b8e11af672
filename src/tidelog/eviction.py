"""Which key ``maxmemory`` evicts next, as Redis approximates it: a few keys
sampled at random (``maxmemory-samples``), the best victim among them.

Policies: ``allkeys-*`` sample every key, ``volatile-*`` only keys with a
time to live; ``-random`` takes the first sampled, ``-lru`` the one idle the
longest (the access time OBJECT IDLETIME shows), ``-lrm`` (Redis 8.6) the
one written the longest ago (the same marks, stamped by writes only),
``-lfu`` the one with the lowest decayed LFU counter (OBJECT FREQ), and
``volatile-ttl`` the one expiring soonest (the marks are the keyspace's:
:meth:`~tidelog.keyspace.Database.track`).  Sampling is O(samples)
expected: a random bucket of the key index holds 1 to 8 keys on average.
"""

from __future__ import annotations

import random
from typing import Any

_TRIES = 16  # random buckets looked at per wanted sample before giving up


def sample(db: Any, count: int, volatile: bool) -> list[bytes]:
    """Up to ``count`` random keys of ``db`` (only keys with a TTL when
    ``volatile``); fewer when they are hard to find, but at least one when
    there is one."""
    index = db.key_index
    found: list[bytes] = []
    if not db.data or (volatile and not db.expires):
        return found
    for _ in range(count * _TRIES):
        bucket = index.buckets.get(random.randrange(index.size))
        if bucket:
            key = random.choice(tuple(bucket))
            if not volatile or key in db.expires:
                found.append(key)
                if len(found) >= count:
                    break
    if not found and volatile:
        # Keys with a TTL are rare here: take the one that got its TTL
        # first rather than fail (the expiry dict keeps insertion order).
        found.append(next(iter(db.expires)))
    return found


def _score(db: Any, key: bytes, kind: str) -> int:
    """How good a victim the key is: higher is evicted first."""
    if kind == "ttl":
        return -db.expires[key]              # the soonest deadline
    if kind == "lfu":
        return -db.frequency(key)            # the lowest counter
    return db.idle_ms(key)                   # lru, lrm: the oldest mark


def choose(dbs: list[Any], policy: str, samples: int) -> tuple[Any, bytes] | None:
    """The (database, key) to evict next, or None when nothing can be."""
    volatile = policy.startswith("volatile-")
    kind = policy.partition("-")[2]
    best: tuple[Any, bytes] | None = None
    best_score = None
    for db in dbs:
        for key in sample(db, samples, volatile):
            if kind == "random":
                return db, key
            score = _score(db, key, kind)
            if best_score is None or score > best_score:
                best, best_score = (db, key), score
    return best
