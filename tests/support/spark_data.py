"""Test data for the Spark tests: streams to read, and what a checkpoint holds."""

from __future__ import annotations

import random
from pathlib import Path


def fill(client, key: str, n: int, seed: int = 1, start_ms: int = 1_000_000) -> None:
    """``n`` entries with gaps in time and several entries per millisecond."""
    rng = random.Random(seed)
    ms, seq = start_ms, 0
    pipe = client.pipeline(transaction=False)
    for i in range(n):
        step = rng.choice((0, 0, 1, 1, 2, 50, 5000))
        ms, seq = (ms, seq + 1) if step == 0 else (ms + step, 0)
        pipe.xadd(key, {"n": str(i), "sensor": f"s{i % 7}", "temp": f"{rng.uniform(-5, 40):.2f}"},
                  id=f"{ms}-{seq}")
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()


def checkpoint_state(ck: Path) -> tuple[int, int]:
    """The last micro-batch IDs in a checkpoint's offsets and commits logs (-1: none)."""
    def last(sub):
        d = ck / sub
        names = [int(p.name) for p in d.iterdir() if p.name.isdigit()] if d.exists() else []
        return max(names, default=-1)
    return last("offsets"), last("commits")
