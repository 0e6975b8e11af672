"""The README's consumer-group examples, run as written (bounded)."""

from __future__ import annotations

import time


def test_consumer_loop_reads_history_then_new_entries(r):
    for n in range(5):
        r.xadd("orders", {"n": n})
    r.xgroup_create("orders", "shipping", id="0")
    # A first run of "alice" receives three entries and crashes before acking.
    r.xreadgroup("shipping", "alice", {"orders": ">"}, count=3)
    handled = []

    def handle(fields):
        handled.append(fields[b"n"])

    last = "0"
    for _ in range(10):  # the README's loop, bounded
        reply = r.xreadgroup("shipping", "alice", {"orders": last}, count=2, block=200)
        entries = reply[0][1] if reply else []
        if last != ">" and not entries:
            last = ">"
            continue
        if last == ">" and not entries:
            break
        for entry_id, fields in entries:
            handle(fields)
            r.xack("orders", "shipping", entry_id)
        if last != ">":
            last = entries[-1][0]
    assert handled == [b"0", b"1", b"2", b"3", b"4"]
    assert r.xpending("orders", "shipping")["pending"] == 0


def test_dead_letter_pattern(r):
    r.xadd("orders", {"item": "book"}, id="1-1")
    r.xadd("orders", {"item": "pen"}, id="1-2")
    r.xgroup_create("orders", "shipping", id="0")
    for _ in range(5):  # the poison entry 1-1 is delivered five times
        r.xreadgroup("shipping", "alice", {"orders": "0"})
        r.xreadgroup("shipping", "alice", {"orders": ">"})
    r.xack("orders", "shipping", "1-2")
    time.sleep(0.02)
    for entry_id, _owner, _idle_ms, deliveries in [
            (p["message_id"], p["consumer"], p["time_since_delivered"], p["times_delivered"])
            for p in r.xpending_range("orders", "shipping", min="-", max="+", count=100, idle=10)]:
        if deliveries >= 5:
            for _, fields in r.xrange("orders", entry_id, entry_id):
                r.xadd("orders:dead", {**fields, "from-id": entry_id})
            r.xack("orders", "shipping", entry_id)
    dead = r.xrange("orders:dead")
    assert [fields for _, fields in dead] == [{b"item": b"book", b"from-id": b"1-1"}]
    assert r.xpending("orders", "shipping")["pending"] == 0
