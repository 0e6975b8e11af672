"""Memory per stream entry, Tidelog beside Redis.

Each server starts fresh (``save ""``, no AOF); one stream gets N sensor
entries (``XADD s * sensor 17 temp 21.5``, pipelined 1,000 to a write), then
the script reports, per entry, the growth of the server's resident set (RSS,
from /proc, the server and its children) and what ``MEMORY USAGE s SAMPLES 0``
says.  RSS is what the machine pays; MEMORY USAGE is each server's own account
(Tidelog's is an estimate modelled on Redis's layout).

    .venv/bin/python bench/memory_per_entry.py [--entries N] [--tidelog-cmd CMD]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import servers

ENTRY = ("sensor", "17", "temp", "21.5")
BATCH = 1000


def measure(name: str, argv: list[str], env: dict[str, str] | None, entries: int) -> dict:
    with servers.Server(name, servers.with_port_and_dir(argv), env=env) as server:
        client = server.client()
        before = server.rss_bytes() or 0
        for _ in range(0, entries, BATCH):
            client.pipeline([("XADD", "s", "*", *ENTRY)] * BATCH)
        length = client.call("XLEN", "s")
        if length != entries // BATCH * BATCH:
            raise SystemExit(f"{name}: XLEN is {length}, expected {entries}")
        usage = client.call("MEMORY", "USAGE", "s", "SAMPLES", "0")
        grown = (server.rss_bytes() or 0) - before
    return {"entries": length, "rss_growth": grown, "memory_usage": usage}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--tidelog-cmd", help="command that starts Tidelog (default: this checkout's)")
    ap.add_argument("--redis-server", default="redis-server")
    args = ap.parse_args()
    repo = Path(__file__).resolve().parent.parent
    tidelog_argv, env = servers.tidelog_command(repo, args.tidelog_cmd)
    tidelog_argv += ["--save", "", "--appendonly", "no"]
    result = {
        "redis": measure("redis", servers.redis_argv(args.redis_server), None, args.entries),
        "tidelog": measure("tidelog", tidelog_argv, env, args.entries),
    }
    r, t = result["redis"], result["tidelog"]
    n = r["entries"]
    print(f"{n:,} entries")
    print(f"RSS growth per entry:   Redis {r['rss_growth'] / n:.1f} B, "
          f"Tidelog {t['rss_growth'] / n:.1f} B, ratio {t['rss_growth'] / r['rss_growth']:.3f}")
    print(f"MEMORY USAGE per entry: Redis {r['memory_usage'] / n:.1f} B, "
          f"Tidelog {t['memory_usage'] / n:.1f} B, ratio {t['memory_usage'] / r['memory_usage']:.3f}")


if __name__ == "__main__":
    sys.exit(main())
