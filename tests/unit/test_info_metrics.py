"""INFO's counters without sockets: the instantaneous rates (Redis's way: a
sample every 100 ms, the mean of the last 16) under a fake clock, and the
bytes the network layer counts where it reads and writes."""

from __future__ import annotations

import asyncio

from tests.support.engine_harness import Harness
from tests.support.fake_transport import cmd, connect
from tidelog.config import Config
from tidelog.engine import Engine, Rate
from tidelog.server.net import Server


def stats_field(h: Harness, name: str) -> str:
    text = h.ok("INFO", "stats").text.decode()  # a Verbatim reply
    return next(line.split(":", 1)[1] for line in text.split("\r\n")
                if line.startswith(name + ":"))


def test_a_rate_is_the_mean_of_the_last_16_samples() -> None:
    rate = Rate()
    rate.track(0, 0)
    assert rate.value() == 0
    for i in range(1, 9):  # 8 samples of 100 per 100 ms: 1000/s
        rate.track(i * 100, i * 100)
    assert rate.value() == 8 * 1000 // 16
    for i in range(9, 30):  # the window is full of them
        rate.track(i * 100, i * 100)
    assert rate.value() == 1000
    rate.track(2_900 + 200, 2_900 + 100)  # 100 in 200 ms: 500/s, one sample in 16
    assert rate.value() == (15 * 1000 + 500) // 16


def test_ops_per_sec_from_the_cron() -> None:
    h = Harness()
    engine = h.engine
    engine.cron()  # the first sample: where counting starts
    for _ in range(16):
        h.clock.advance(100)
        for _ in range(10):
            h("PING")
        engine.cron()
        engine.cron()  # a cron turn less than 100 ms after the sample takes none
    assert engine.metrics.ops.value() == 100  # 10 commands every 100 ms
    assert stats_field(h, "instantaneous_ops_per_sec") == "100"
    h("CONFIG", "RESETSTAT")
    assert engine.metrics.ops.value() == 0


async def test_the_network_layer_counts_bytes() -> None:
    engine = Engine(Config())
    server = Server(engine)
    conn, transport = connect(server)
    request = cmd(b"SET", b"k", b"v" * 100) + cmd(b"GET", b"k")
    conn.data_received(request)
    stats = engine.stats
    assert stats["net_input_bytes"] == len(request)
    assert stats["net_output_bytes"] == sum(map(len, transport.writes)) == len(b"+OK\r\n$100\r\n") + 102
    assert stats["net_repl_input_bytes"] == stats["net_repl_output_bytes"] == 0
    await asyncio.sleep(0)


def test_expire_cycle_time_is_counted() -> None:
    h = Harness()
    h.ok("SET", "k", "v", "PX", "10")
    h.engine.cron()
    before = h.engine.stats["expire_cycle_ns"]
    h.clock.advance(20)
    h.engine.cron()  # expires k
    assert h.engine.dbs[0].get(b"k") is None
    assert h.engine.stats["expire_cycle_ns"] > before
    shown = int(stats_field(h, "expire_cycle_cpu_milliseconds"))
    assert shown == h.engine.stats["expire_cycle_ns"] // 1_000_000
