"""What a client's acknowledged writes say a crashed server must hold.

The durability tests run a write load (XADD on several keys, XREADGROUP, XACK,
XCLAIM, XGROUP CREATECONSUMER/DELCONSUMER) against a server they kill with
SIGKILL.  ``Model`` records every write whose reply the client got; after the
restart ``disagreements(model, observe(r), ...)`` lists where the server's
data and the model differ, allowing for exactly what may be lost:

* the one write in flight at the kill (``model.in_flight``, its key): it may
  or may not have happened, so on that key entries may hold one extra ID at the
  end, and its group state is not compared (the model then takes the server's
  word for it, ``Model.resync``);
* with ``appendfsync everysec``, the XADDs of the last second (``lost_ok``,
  on any key, the in-flight key included), and then group state is not
  compared anywhere (``strict=False``).

The checker is a pure function so that its allowances are tested themselves
(``tests/unit/test_crash_model.py``).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Set
from dataclasses import dataclass, field

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

KEYS = [f"k{i}" for i in range(4)]
CONSUMERS = ["c1", "c2", "c3"]


@dataclass
class KeyState:
    """One stream key as the server shows it (or as the model expects it)."""

    entries: list[str] = field(default_factory=list)        # IDs, in order
    pending: dict[str, str] = field(default_factory=dict)   # ID -> owner in group g
    last: str = "0-0"                                       # g's last-delivered-id
    consumers: set[str] = field(default_factory=set)        # g's consumers


class Model:
    """What the acknowledged writes say the server holds."""

    def __init__(self, keys: list[str] = KEYS) -> None:
        self.keys = {k: KeyState() for k in keys}
        self.acked_at: list[tuple[float, str, str]] = []  # (time, key, id) of XADDs
        self.in_flight: str | None = None                # key of the unanswered write

    def resync(self, key: str, seen: KeyState) -> None:
        """Take the server's word for the key the write in flight touched."""
        self.keys[key] = seen
        self.in_flight = None


def observe(r: redis.Redis, keys: list[str] = KEYS) -> dict[str, KeyState]:
    """The server's view of each key (a ``decode_responses`` client)."""
    seen = {}
    for key in keys:
        groups = r.xinfo_groups(key)
        seen[key] = KeyState(
            entries=[id for id, _ in r.xrange(key)],
            pending={p["message_id"]: p["consumer"]
                     for p in r.xpending_range(key, "g", "-", "+", 100000)},
            last=next(g["last-delivered-id"] for g in groups if g["name"] == "g"),
            consumers={c["name"] for c in r.xinfo_consumers(key, "g")})
        r.xinfo_stream(key, full=True)  # readable
    return seen


def disagreements(model: Model, seen: dict[str, KeyState],
                  lost_ok: Set[tuple[str, str]] = frozenset(),
                  strict: bool = True) -> list[str]:
    """Where the restarted server differs from the model beyond what may be lost
    (see the module docstring); empty when they agree."""
    problems = []
    for key, expected in model.keys.items():
        got = seen[key]
        kept = [id for id in expected.entries if (key, id) not in lost_ok]
        if key == model.in_flight:
            # The XADD in flight may have been applied: one extra ID, after the others.
            extra = [id for id in got.entries if id not in expected.entries]
            if len(extra) > 1 or (extra and got.entries[-1] != extra[0]):
                problems.append(f"{key}: entries nobody wrote: {extra}")
            without_extra = [id for id in got.entries if id in expected.entries]
            if [id for id in without_extra if id in kept] != kept:
                problems.append(f"{key}: acknowledged entries missing or out of order: "
                                f"expected {kept}, got {got.entries}")
            continue
        if got.entries != kept:
            problems.append(f"{key}: entries {got.entries}, expected {kept}")
        if strict:
            if got.pending != expected.pending:
                problems.append(f"{key}: pending {got.pending}, expected {expected.pending}")
            if got.last != expected.last:
                problems.append(f"{key}: last-delivered-id {got.last}, expected {expected.last}")
            if not expected.consumers <= got.consumers:
                problems.append(f"{key}: consumers {got.consumers}, expected at least "
                                f"{expected.consumers}")
    return problems


def check(r: redis.Redis, model: Model, lost_ok: Set[tuple[str, str]] = frozenset(),
          strict: bool = True) -> None:
    """The restarted server agrees with the model; then the model takes the
    server's word for the key of the write in flight."""
    seen = observe(r, list(model.keys))
    problems = disagreements(model, seen, lost_ok, strict)
    assert not problems, "\n".join(problems)
    if model.in_flight is not None:
        model.resync(model.in_flight, seen[model.in_flight])


def setup_keys(r: redis.Redis, model: Model) -> None:
    for key in model.keys:
        r.xgroup_create(key, "g", "0", mkstream=True)


def one_write(r: redis.Redis, model: Model, rng: random.Random, n: int) -> None:
    """One random write; the model is updated only once its reply arrived."""
    key = rng.choice(list(model.keys))
    state = model.keys[key]
    model.in_flight = key
    op = rng.random()
    pending = state.pending
    if op < 0.5:
        id = r.xadd(key, {"n": str(n), "pad": "x" * rng.randrange(40)})
        state.entries.append(id)
        model.acked_at.append((time.monotonic(), key, id))
    elif op < 0.7:
        consumer = rng.choice(CONSUMERS)
        reply = r.xreadgroup("g", consumer, {key: ">"}, count=3)
        for _, items in reply or []:
            for id, _ in items:
                pending[id] = consumer
                state.last = id
                state.consumers.add(consumer)
    elif op < 0.8 and pending:
        id = rng.choice(sorted(pending))
        assert r.xack(key, "g", id) == 1
        del pending[id]
    elif op < 0.9 and pending:
        id = rng.choice(sorted(pending))
        consumer = rng.choice(CONSUMERS)
        assert r.xclaim(key, "g", consumer, 0, [id], justid=True) == [id]
        pending[id] = consumer
        state.consumers.add(consumer)
    elif op < 0.95:
        consumer = rng.choice(CONSUMERS)
        r.xgroup_createconsumer(key, "g", consumer)
        state.consumers.add(consumer)
    else:
        consumer = rng.choice(CONSUMERS)
        r.xgroup_delconsumer(key, "g", consumer)
        state.consumers.discard(consumer)
        for id in [i for i, c in pending.items() if c == consumer]:
            del pending[id]
    model.in_flight = None


def load_until_killed(port: int, model: Model, seed: int, stop: threading.Event,
                      max_writes: int = 200_000) -> None:
    """Writes until the server goes away, ``stop`` is set or ``max_writes`` is reached."""
    rng = random.Random(seed)
    # No retries: a write must be sent once, and a dead server noticed at once.
    r = redis.Redis(port=port, socket_timeout=10, decode_responses=True,
                    retry=Retry(NoBackoff(), 0))
    try:
        for n in range(max_writes):
            if stop.is_set():
                break
            one_write(r, model, rng, n)
    except (redis.ConnectionError, redis.TimeoutError):
        pass  # the server went away: model.in_flight says which key is unsure
    finally:
        r.close()
