"""The consumer-group benchmarks: latency, consumption rate, and PEL scale.

These cannot be expressed as one redis-benchmark command line (a consumer has
to read a reply and act on it), so each is a ``Scenario``: a function that is
given every running server and measures them all with the same Python client
code (forked client processes with ``aresp``'s asyncio connections or plain
sockets for the load, ``resp`` for set-up and the pipelined timings), plus a
function that renders its results as markdown.  ``run.py`` selects them with ``--workloads`` like the
redis-benchmark workloads.

``group-latency``
    Producers XADD at a fixed total rate, each message carrying its send time
    (``time.monotonic_ns()``, one clock for every process on Linux); ten
    consumers in one group, each on its own connection, loop ``XREADGROUP
    GROUP g c<i> COUNT 10 BLOCK 1000 STREAMS s >`` and XACK what they got.
    Latency is the receive time minus the send time of every message.
``group-drain``
    N messages are preloaded; four consumers in one group read ``COUNT 100``
    batches and XACK each batch in the same write as their next read, until
    the stream is drained: messages per second and server CPU per message.
``group-pel``
    One group with a PEL of a million entries (``--pel-size``), one with a
    thousand, on the same stream; per-operation time of XPENDING - + 10, XACK
    of 10 random pending IDs and XAUTOCLAIM COUNT 10 from a random start, for
    both sizes: the time should follow the work asked, not the PEL's size.

Every load loop is bounded in count and in time, client processes are
forked with a deadline and killed if they overrun it, and the keys are
deleted afterwards.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import multiprocessing
import random
import resource
import select
import socket
import statistics
import time
import traceback
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aresp
import resp
import servers
from workloads import ENTRY, Target

SERVER_NAMES = {"redis": "Redis", "tidelog": "Tidelog"}
Log = Callable[[str], None]


class ScenarioError(RuntimeError):
    """This server could not complete the scenario (the message says why)."""


@dataclass(frozen=True)
class Scenario:
    id: str
    label: str
    summary: str                                            # one line, for --list
    run: Callable[[Any, list[Target], Log], dict]           # (args, targets, log) -> result
    render: Callable[[dict], str]                           # result -> markdown
    driver: str = "Python clients"                          # what sends the load, for --list


# -- shared helpers -----------------------------------------------------------

_MP = multiprocessing.get_context("fork")


def _child_main(fn, pipe, fn_args) -> None:
    aresp.child_setup()
    try:
        result = fn(*fn_args)
        if inspect.iscoroutine(result):
            result = aresp.run(result)
        ru = resource.getrusage(resource.RUSAGE_SELF)
        result["cpu_s"] = ru.ru_utime + ru.ru_stime
        pipe.send(("ok", result))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        pipe.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()))
    finally:
        pipe.close()


class Workers:
    """Client processes (forked), each running one function or coroutine; always reaped."""

    def __init__(self) -> None:
        self.procs: list[tuple[Any, Any]] = []

    def start(self, fn, *fn_args) -> int:
        recv_end, send_end = _MP.Pipe(duplex=False)
        proc = _MP.Process(target=_child_main, args=(fn, send_end, fn_args), daemon=True)
        proc.start()
        send_end.close()
        self.procs.append((proc, recv_end))
        return len(self.procs) - 1

    def collect(self, index: int, deadline: float) -> dict:
        """The result of one worker (waiting until the monotonic deadline)."""
        proc, pipe = self.procs[index]
        if not pipe.poll(max(0.0, deadline - time.monotonic())):
            self._kill(proc)
            raise ScenarioError(f"client process {index} did not finish in time")
        try:
            msg = pipe.recv()
        except EOFError:
            proc.join(5)
            raise ScenarioError(f"client process {index} died "
                                f"(exit status {proc.exitcode})") from None
        proc.join(5)
        if msg[0] != "ok":
            raise ScenarioError(f"client process {index} failed: {msg[1]}\n{msg[2]}")
        return msg[1]

    def collect_all(self, deadline: float) -> list[dict]:
        return [self.collect(i, deadline) for i in range(len(self.procs))]

    @staticmethod
    def _kill(proc) -> None:
        if proc.is_alive():
            proc.terminate()
            proc.join(2)
        if proc.is_alive():
            proc.kill()
            proc.join(2)

    def close(self) -> None:
        for proc, pipe in self.procs:
            self._kill(proc)
            pipe.close()
        self.procs = []


def _each_server(args, targets: list[Target], log: Log, sid: str,
                 fn: Callable[[Any, Target, Log], dict]) -> dict[str, dict]:
    """Run fn on every server in turn; a failure is recorded, not raised."""
    out: dict[str, dict] = {}
    for t in targets:
        rec: dict = {}
        t0 = time.monotonic()
        try:
            if not t.server.alive():
                raise ScenarioError("server is not running")
            rec.update(fn(args, t, log))
        except Exception as exc:  # noqa: BLE001 - one server's failure must not stop the run
            rec["error"] = f"{type(exc).__name__}: {exc}".strip()
            if not isinstance(exc, (ScenarioError, resp.RespError, OSError)):
                rec["traceback"] = traceback.format_exc()
            if not t.server.alive():
                rec["error"] += f"\nserver exited; its log ends with:\n{t.server.log_tail()}"
            log(f"  {t.name:8s} {sid:20s} FAILED {rec['error']}")
            t.client.close()  # it may be out of step with its replies
            if t.server.alive():
                try:
                    t.client = t.server.client(timeout=120)
                except OSError as exc2:
                    rec["reconnect_error"] = str(exc2)
        rec["elapsed_s"] = round(time.monotonic() - t0, 2)
        out[t.name] = rec
    return out


def _delete(target: Target, *keys: str) -> None:
    if target.server.alive():
        try:
            target.client.call("DEL", *keys)
        except (resp.RespError, OSError):
            pass


def _int(reply, what: str) -> int:
    if not isinstance(reply, int):
        raise ScenarioError(f"{what} replied {reply!r}, not an integer")
    return reply


def _pending_count(target: Target, key: str, group: str) -> int:
    summary = target.client.call("XPENDING", key, group)
    return _int(summary[0], "XPENDING (summary)")


def _fill(target: Target, key: str, n: int, explicit_ids: bool, deadline: float,
          batch: int = 1000) -> None:
    """XADD n entries (ENTRY's fields), pipelined; IDs 1-0 .. n-0 or '*'."""
    c = target.client
    c.call("DEL", key)
    for first in range(1, n + 1, batch):
        if time.monotonic() > deadline:
            raise ScenarioError(f"preload of {n:,} entries stopped at the time limit "
                                f"after {first - 1:,}")
        ids = range(first, min(first + batch, n + 1))
        cmds = [("XADD", key, f"{i}-0" if explicit_ids else "*") + ENTRY for i in ids]
        for reply in c.pipeline(cmds):
            if isinstance(reply, resp.RespError):
                raise ScenarioError(f"preload: XADD replied -{reply}")
    length = _int(c.call("XLEN", key), "XLEN")
    if length != n:
        raise ScenarioError(f"preload: XLEN is {length}, expected {n}")


MARK = "bench-batch-end"
MARK_REPLY = resp.encode([MARK])[4:]  # the bulk string ECHO answers with


def _exchange(client: resp.Client, payload: bytes) -> bytes:
    """Send pre-encoded commands ending with ``ECHO MARK``; return every reply
    byte, read until the marker's reply ends the data.  Nothing is parsed
    here, so a timed batch costs the client a write and a few reads."""
    if client.pos != len(client.buf):
        raise ScenarioError("the set-up connection has unread replies")
    sock = client.sock
    sock.sendall(payload)
    chunks = []
    tail = b""
    size = len(MARK_REPLY)
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        chunks.append(chunk)
        tail = (tail + chunk)[-size:]
        if tail == MARK_REPLY:
            return b"".join(chunks)


def _replies(raw: bytes) -> list:
    out, pos = [], 0
    while pos < len(raw):
        value, pos = resp.parse(raw, pos)
        out.append(value)
    return out


def _percentile(sorted_values, q: float):
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _ms(ns) -> float | None:
    return None if ns is None else round(ns / 1e6, 3)


def _fmt(x, digits: int = 0, suffix: str = "") -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}{suffix}"


def _ratio(a, b, digits: int = 2) -> str:
    if a is None or b is None or not b:
        return "-"
    return f"{a / b:.{digits}f}"


def _machine_note(ncpu: int) -> str:
    return (f"The clients and the server share this machine's {ncpu} "
            f"CPU{'s' if ncpu != 1 else ''}, so client work competes with the server's.")


def _header(result: dict) -> list[str]:
    return [f"### {result['label']} (`{result['id']}`)", "", result["setup"], ""]


def _failed_lines(result: dict) -> list[str]:
    lines = []
    for name, rec in result["servers"].items():
        if "error" in rec:
            first = rec["error"].strip().splitlines()[0][:300]
            lines.append(f"- {SERVER_NAMES[name]} could not run this benchmark: {first}")
        errors = rec.get("consumer_errors") or rec.get("errors")
        if errors:
            lines.append(f"- {SERVER_NAMES[name]}: {len(errors)} consumer(s) stopped early, "
                         f"e.g. {errors[0][:300]}")
        if rec.get("produce_errors"):
            lines.append(f"- {SERVER_NAMES[name]}: {rec['produce_errors']:,} XADDs failed, "
                         f"e.g. {rec['first_produce_error']}")
    return lines


def _names(result: dict) -> list[str]:
    return [n for n in ("redis", "tidelog") if n in result["servers"]]


# -- 1. latency at a fixed rate ----------------------------------------------

def _produce(port: int, key: str, rate: float, total: int, nconn: int,
             start_ns: int, stop_ns: int, max_outstanding: int) -> dict:
    """The producer: message i is due at start + i / rate and is sent then
    (open loop: whatever the replies), stamped with its send time just before
    its write.  A plain blocking loop, because an event loop cannot wait less
    than a millisecond (it would send bursts of ten); time.sleep waits to the
    tens of microseconds.  Replies are drained without blocking between sends."""
    socks = []
    for _ in range(nconn):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Blocking mode: with a timeout, Python would wait for data before
        # every recv, even one asked not to wait.
        sock.settimeout(None)
        socks.append(sock)
    readers = [aresp.make_reader() for _ in socks]
    outstanding = [0] * nconn
    state = {"ok": 0, "errors": 0, "first_error": None}

    def drain(k: int, wait: float = 0.0) -> None:
        """Read the replies that have arrived on connection k, waiting at most
        ``wait`` seconds for the first byte."""
        if wait > 0 and not select.select([socks[k]], [], [], wait)[0]:
            return
        try:
            data = socks[k].recv(1 << 16, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        if not data:
            raise ConnectionError("server closed the connection")
        readers[k].feed(data)
        while (reply := readers[k].gets()) is not False:
            outstanding[k] -= 1
            if isinstance(reply, resp.RespError):
                state["errors"] += 1
                state["first_error"] = state["first_error"] or str(reply)
            else:
                state["ok"] += 1

    interval = 1e9 / rate
    late = array("q")
    key_b = key.encode()
    sent = stalls = 0
    last_send = start_ns
    while sent < total:
        due_ns = start_ns + round(sent * interval)
        now = time.monotonic_ns()
        if now >= stop_ns:
            break
        if due_ns > now:
            for k in range(nconn):
                if outstanding[k]:
                    drain(k)
            wait = due_ns - time.monotonic_ns()
            if wait > 0:
                time.sleep(wait / 1e9)
        k = sent % nconn
        while outstanding[k] >= max_outstanding and time.monotonic_ns() < stop_ns:
            stalls += 1  # too many unanswered XADDs: wait for the server
            drain(k, 0.01)
        t = time.monotonic_ns()
        socks[k].sendall(resp.encode((b"XADD", key_b, b"*", b"t", t, b"n", sent)))
        outstanding[k] += 1
        late.append(t - due_ns)
        last_send = t
        sent += 1
    # The last replies (bounded).
    limit = max(time.monotonic_ns(), stop_ns) + 30_000_000_000
    for k, sock in enumerate(socks):
        try:
            while outstanding[k] > 0 and time.monotonic_ns() < limit:
                drain(k, 0.1)
        except OSError:
            pass
        sock.close()
    return {"sent": sent, "ok": state["ok"], "errors": state["errors"],
            "first_error": state["first_error"], "unanswered": sum(outstanding),
            "stalls": stalls, "start_ns": start_ns, "last_send_ns": last_send,
            "late_ns": late.tobytes()}


async def _latency_consumer(conn: aresp.Connection, key: str, group: str, name: str,
                            stop_ns: int, max_reads: int, producers_done) -> dict:
    read = resp.encode(("XREADGROUP", "GROUP", group, name, "COUNT", "10", "BLOCK", "1000",
                        "STREAMS", key, ">"))
    ack = (b"XACK", key.encode(), group.encode())
    lat = array("q")
    seqs = array("q")
    reads = empty = acked = 0
    errors: list[str] = []
    f_ack = None
    f_read = conn.send_raw(read, 1)[0]
    # Each read returns at least one message, or nothing after a whole second:
    # max_reads and stop_ns both bound the loop.
    while reads < max_reads:
        reply = await f_read
        now = time.monotonic_ns()
        reads += 1
        if f_ack is not None:  # answered before the read that followed it
            n = f_ack.result()
            if isinstance(n, resp.RespError):
                errors.append(f"XACK: {n}")
                break
            acked += n
            f_ack = None
        if isinstance(reply, resp.RespError):
            errors.append(f"XREADGROUP: {reply}")
            break
        if reply is None:
            empty += 1
            if producers_done.is_set() or now >= stop_ns:
                break  # nothing new for a whole BLOCK after the producers finished
            f_read = conn.send_raw(read, 1)[0]
            continue
        ids = []
        for entry_id, fields in reply[0][1]:
            # fields: [b"t", send time, b"n", sequence number]
            lat.append(now - int(fields[1]))
            seqs.append(int(fields[3]))
            ids.append(entry_id)
        payload = resp.encode(ack + tuple(ids))
        if now >= stop_ns:
            n = await conn.send_raw(payload, 1)[0]
            acked += n if isinstance(n, int) else 0
            errors.append("stopped at the time limit")
            break
        # The XACK of these IDs and the next read, in one write.
        f_ack, f_read = conn.send_raw(payload + read, 2)
    conn.close()
    return {"name": name, "reads": reads, "empty_reads": empty, "acked": acked,
            "errors": errors, "lat_ns": lat.tobytes(), "seqs": seqs.tobytes()}


async def _latency_consumers(port: int, key: str, group: str, names: list[str],
                             stop_ns: int, max_reads: int, ready, producers_done) -> dict:
    conns = [await aresp.connect(port) for _ in names]
    ready.set()
    results = await asyncio.gather(*(_latency_consumer(c, key, group, n, stop_ns, max_reads,
                                                       producers_done)
                                     for c, n in zip(conns, names)))
    return {"consumers": list(results)}


def _split(items: list, parts: int) -> list[list]:
    parts = max(1, min(parts, len(items)))
    return [items[i::parts] for i in range(parts)]


def _latency_one(args, target: Target, log: Log) -> dict:
    key, group = "bench:group-latency", "g"
    c = target.client
    c.call("DEL", key)
    c.call("XGROUP", "CREATE", key, group, "$", "MKSTREAM")
    try:
        return _latency_measure(args, target, log, key, group)
    finally:
        _delete(target, key)


def _latency_measure(args, target: Target, log: Log, key: str, group: str) -> dict:
    c = target.client
    rate, seconds = args.latency_rate, args.latency_seconds
    total = round(rate * seconds)
    names = [f"c{i}" for i in range(args.latency_consumers)]
    start_ns = time.monotonic_ns() + 1_500_000_000
    produce_stop_ns = start_ns + int((2 * seconds + 5) * 1e9)
    consume_stop_ns = produce_stop_ns + int(args.latency_drain_s * 1e9)
    workers = Workers()
    producers_done = _MP.Event()
    try:
        readies = []
        for part in _split(names, args.latency_procs):
            ready = _MP.Event()
            readies.append(ready)
            workers.start(_latency_consumers, target.server.port, key, group, part,
                          consume_stop_ns, total + int(consume_stop_ns - start_ns) // 10**9 + 100,
                          ready, producers_done)
        for ready in readies:
            if not ready.wait(max(0.0, (start_ns - time.monotonic_ns()) / 1e9 - 0.2)):
                raise ScenarioError("the consumer processes did not connect in time")
        producer = workers.start(_produce, target.server.port, key, rate, total,
                                 args.latency_producers, start_ns, produce_stop_ns,
                                 max(100, int(rate)))
        wait = (start_ns - time.monotonic_ns()) / 1e9
        if wait > 0:
            time.sleep(wait)
        busy0 = servers.machine_busy_seconds()
        cpu0 = target.server.precise_cpu_seconds()
        deadline = time.monotonic() + (consume_stop_ns - time.monotonic_ns()) / 1e9 + 40
        prod = workers.collect(producer, deadline)
        producers_done.set()
        cons = [workers.collect(i, deadline) for i in range(len(workers.procs))
                if i != producer]
        end_ns = time.monotonic_ns()
        cpu1 = target.server.precise_cpu_seconds()
        busy1 = servers.machine_busy_seconds()
    finally:
        workers.close()
    pending = _pending_count(target, key, group)
    xlen = _int(c.call("XLEN", key), "XLEN")

    # -- what arrived ------------------------------------------------------
    lat = array("q")
    seqs = array("q")
    errors = []
    acked = reads = empty = 0
    for proc in cons:
        for r in proc["consumers"]:
            lat.frombytes(r["lat_ns"])
            seqs.frombytes(r["seqs"])
            acked += r["acked"]
            reads += r["reads"]
            empty += r["empty_reads"]
            errors += [f"{r['name']}: {e}" for e in r["errors"]]
    seen = bytearray(prod["sent"])
    duplicates = unknown = 0
    for s in seqs:
        if not 0 <= s < len(seen):
            unknown += 1
        elif seen[s]:
            duplicates += 1
        else:
            seen[s] = 1
    missing = prod["ok"] - (len(seqs) - duplicates - unknown)
    exactly_once = (duplicates == 0 and unknown == 0 and missing == 0 and pending == 0
                    and acked == len(seqs) and xlen == prod["ok"] and not errors
                    and prod["errors"] == 0 and prod["unanswered"] == 0)

    # p99 latency of the messages due in each second of the schedule: does it
    # stay put, or grow (the server falling behind)?
    by_second: dict[int, list[int]] = {}
    for v, n in zip(lat, seqs):
        by_second.setdefault(int(n // rate), []).append(v)
    p99_by_second = [_ms(_percentile(sorted(by_second[k]), 0.99)) for k in sorted(by_second)]
    ordered = sorted(lat)
    hist: dict[int, int] = {}
    for v in ordered:
        b = max(0, v) // 1_000_000
        hist[b] = hist.get(b, 0) + 1
    late = sorted(array("q", prod["late_ns"]))
    produced = prod["ok"]
    span_s = (prod["last_send_ns"] - prod["start_ns"]) / 1e9 + 1 / rate
    wall = (end_ns - start_ns) / 1e9
    server_cpu = cpu1 - cpu0
    client_cpu = prod["cpu_s"] + sum(p["cpu_s"] for p in cons)
    other = None
    if busy0 is not None and busy1 is not None:
        other = max(0.0, (busy1 - busy0) - server_cpu - client_cpu) / (wall * servers.NCPU)
    rec = {
        "target_rate": rate, "seconds": seconds, "producers": args.latency_producers,
        "consumers": len(names), "consumer_processes": len(cons),
        "sent": prod["sent"], "produced": produced, "produce_errors": prod["errors"],
        "first_produce_error": prod["first_error"], "unanswered_xadds": prod["unanswered"],
        "producer_stalls": prod["stalls"],
        "consumed": len(seqs), "acked": acked, "duplicates": duplicates,
        "missing": missing, "unknown": unknown, "pending_at_end": pending, "xlen_at_end": xlen,
        "consumer_errors": errors[:10], "reads": reads, "empty_reads": empty,
        "exactly_once": exactly_once,
        "achieved_rate": produced / span_s if produced else 0.0,
        "schedule_late_ms": {"p50": _ms(_percentile(late, 0.5)),
                             "p99": _ms(_percentile(late, 0.99)),
                             "max": _ms(late[-1] if late else None)},
        "latency_ms": {"p50": _ms(_percentile(ordered, 0.5)),
                       "p99": _ms(_percentile(ordered, 0.99)),
                       "p99.9": _ms(_percentile(ordered, 0.999)),
                       "max": _ms(ordered[-1] if ordered else None),
                       "mean": _ms(sum(ordered) / len(ordered)) if ordered else None},
        "histogram_1ms": {str(k): hist[k] for k in sorted(hist)},
        "p99_ms_by_second": p99_by_second,
        "wall_s": round(wall, 3),
        "server_cpu_s": round(server_cpu, 3),
        "server_cpu_s_per_1000": round(1000 * server_cpu / len(seqs), 5) if seqs else None,
        "client_cpu_s": round(client_cpu, 3),
        "producer_cpu_s": round(prod["cpu_s"], 3),
        "consumer_cpu_s": [round(p["cpu_s"], 3) for p in cons],
        "other_cpu_share": None if other is None else round(other, 3),
    }
    if not seqs:
        raise ScenarioError("no message consumed: "
                            + (errors[0] if errors else prod["first_error"] or "?"))
    log(f"  {target.name:8s} group-latency        produced {produced:,} at "
        f"{rec['achieved_rate']:,.0f}/s, consumed {len(seqs):,}, "
        f"p50 {rec['latency_ms']['p50']} ms, p99 {rec['latency_ms']['p99']} ms, "
        f"max {rec['latency_ms']['max']} ms; exactly once: {exactly_once}")
    return rec


def run_latency(args, targets: list[Target], log: Log) -> dict:
    return {
        "id": "group-latency", "label": "Consumer-group latency at a fixed rate",
        "buckets": args.latency_buckets, "rate": args.latency_rate,
        "setup": (f"Producers XADD {args.latency_rate:,.0f} messages/s in total for "
                  f"{args.latency_seconds:g} s over {args.latency_producers} connections "
                  f"in turn, from one client process (open loop: message i is sent at "
                  f"start + i/rate whatever the replies), each message carrying its send time "
                  f"(`time.monotonic_ns()`); {args.latency_consumers} consumers of one group, "
                  f"each on its own connection, in {min(args.latency_procs, args.latency_consumers)} "
                  f"client processes, loop `XREADGROUP GROUP g c<i> COUNT 10 BLOCK 1000 "
                  f"STREAMS s >` then `XACK s g <the IDs received>` (sent in one write with "
                  f"the next XREADGROUP). Latency = receive time - send time, per message. "
                  f"Clients: Python, the consumers on asyncio ({aresp.client_stack()}). "
                  + _machine_note(servers.NCPU)),
        "servers": _each_server(args, targets, log, "group-latency", _latency_one),
    }


def render_latency(result: dict) -> str:
    names = _names(result)
    recs = [result["servers"][n] for n in names]
    ok = [r if "error" not in r else None for r in recs]
    both = len(names) == 2 and all(ok)
    lines = _header(result)
    head = ["", *(SERVER_NAMES[n] for n in names)] + (["Tidelog/Redis"] if both else [])
    lines += ["| " + " | ".join(head) + " |",
              "|---|" + "|".join("---:" for _ in head[1:]) + "|"]

    def row(label, get, ratio=False, digits=2):
        vals = [get(r) if r else None for r in ok]
        cells = [("failed" if r is None else (v if isinstance(v, str) else _fmt(v, digits)))
                 for r, v in zip(ok, vals)]
        if both:
            cells.append(_ratio(vals[1], vals[0]) if ratio else "")
        lines.append("| " + " | ".join([label, *cells]) + " |")

    row("messages produced / consumed",
        lambda r: f"{r['produced']:,} / {r['consumed']:,}")
    row("every message consumed exactly once",
        lambda r: "yes" if r["exactly_once"] else
        (f"NO (duplicates {r['duplicates']:,}, missing {r['missing']:,}, "
         f"pending {r['pending_at_end']:,})"))
    row(f"achieved rate, messages/s (target {result['rate']:,.0f})",
        lambda r: r["achieved_rate"], True, 0)
    row("schedule lateness p99 / max, ms",
        lambda r: f"{r['schedule_late_ms']['p99']:.3f} / {r['schedule_late_ms']['max']:.3f}")
    for q in ("p50", "p99", "p99.9", "max"):
        row(f"latency {q}, ms", lambda r, q=q: r["latency_ms"][q], True, 3)
    row("server CPU s per 1,000 messages", lambda r: r["server_cpu_s_per_1000"], True, 4)
    row("client CPU s / server CPU s / wall s",
        lambda r: f"{r['client_cpu_s']:.1f} / {r['server_cpu_s']:.1f} / {r['wall_s']:.1f}")
    row("other processes' share of the machine",
        lambda r: "?" if r["other_cpu_share"] is None else f"{100 * r['other_cpu_share']:.0f}%")

    good = [(n, r) for n, r in zip(names, ok) if r]
    if good:
        lines.append("")
        for n, r in good:
            lines.append(f"{SERVER_NAMES[n]}: p99 latency of the messages sent in each second, "
                         "ms: " + ", ".join(f"{v:g}" for v in r["p99_ms_by_second"]) + ".")

    # The distribution in 1 ms buckets.
    buckets = result.get("buckets", 20)
    if good:
        lines += ["", "Latency distribution, messages per 1 ms bucket "
                  "(bucket k holds latencies from k ms to just under k+1 ms):", ""]
        lines += ["| ms | " + " | ".join(SERVER_NAMES[n] for n, _ in good) + " |",
                  "|---:|" + "|".join("---:" for _ in good) + "|"]
        for b in range(buckets + 1):
            cells = []
            for _, r in good:
                h = {int(k): v for k, v in r["histogram_1ms"].items()}
                n = (sum(v for k, v in h.items() if k >= buckets) if b == buckets
                     else h.get(b, 0))
                share = 100 * n / r["consumed"] if r["consumed"] else 0
                cells.append(f"{n:,} ({share:.2f}%)")
            label = f">= {buckets}" if b == buckets else str(b)
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    fails = _failed_lines(result)
    if fails:
        lines += [""] + fails
    return "\n".join(lines)


# -- 2. consumption rate ---------------------------------------------------------

async def _drain_consumer(conn: aresp.Connection, key: str, group: str, name: str,
                          max_batches: int, stop_ns: int) -> dict:
    read = resp.encode(("XREADGROUP", "GROUP", group, name, "COUNT", "100",
                        "STREAMS", key, ">"))
    ack = (b"XACK", key.encode(), group.encode())
    ids_all: list[bytes] = []
    acked = batches = 0
    errors: list[str] = []
    pending = conn.send_raw(read, 1)[0]
    while batches < max_batches:
        reply = await pending
        if isinstance(reply, resp.RespError):
            errors.append(f"XREADGROUP: {reply}")
            break
        if reply is None:
            break  # drained
        batches += 1
        ids = [entry[0] for entry in reply[0][1]]
        ids_all += ids
        if time.monotonic_ns() >= stop_ns:
            errors.append("stopped at the time limit")
            f_ack = conn.send(ack + tuple(ids))[0]
            pending = None
        else:  # the XACK of this batch and the next read, in one write
            f_ack, pending = conn.send_raw(resp.encode(ack + tuple(ids)) + read, 2)
        n = await f_ack
        if isinstance(n, resp.RespError):
            errors.append(f"XACK: {n}")
            break
        acked += n
        if pending is None:
            break
    end_ns = time.monotonic_ns()
    conn.close()
    return {"name": name, "batches": batches, "acked": acked, "errors": errors,
            "end_ns": end_ns, "ids": b" ".join(ids_all)}


async def _drain_consumers(port: int, key: str, group: str, names: list[str],
                           max_batches: int, stop_ns: int, ready, go) -> dict:
    conns = [await aresp.connect(port) for _ in names]
    ready.set()
    if not go.wait(60):
        raise ScenarioError("no start signal")
    results = await asyncio.gather(*(_drain_consumer(c, key, group, n, max_batches, stop_ns)
                                     for c, n in zip(conns, names)))
    return {"consumers": list(results)}


def _drain_one(args, target: Target, log: Log) -> dict:
    key = "bench:group-drain"
    try:
        return _drain_measure(args, target, log, key, "g")
    finally:
        _delete(target, key)


def _drain_measure(args, target: Target, log: Log, key: str, group: str) -> dict:
    c = target.client
    n = args.drain_messages
    t0 = time.monotonic()
    cpu0 = target.server.precise_cpu_seconds()
    _fill(target, key, n, explicit_ids=False, deadline=t0 + args.group_timeout)
    preload_s = time.monotonic() - t0
    preload_cpu = target.server.precise_cpu_seconds() - cpu0
    c.call("XGROUP", "CREATE", key, group, "0")
    names = [f"c{i}" for i in range(args.drain_consumers)]
    workers = Workers()
    go = _MP.Event()
    limit_s = args.group_timeout
    try:
        readies = []
        stop_ns = time.monotonic_ns() + int((limit_s + 5) * 1e9)
        for part in _split(names, args.drain_procs):
            ready = _MP.Event()
            readies.append(ready)
            workers.start(_drain_consumers, target.server.port, key, group, part,
                          n // 100 + 10, stop_ns, ready, go)
        for ready in readies:
            if not ready.wait(30):
                raise ScenarioError("the consumer processes did not connect in time")
        busy0 = servers.machine_busy_seconds()
        cpu0 = target.server.precise_cpu_seconds()
        start_ns = time.monotonic_ns()
        go.set()
        procs = workers.collect_all(time.monotonic() + limit_s + 40)
        cpu1 = target.server.precise_cpu_seconds()
        busy1 = servers.machine_busy_seconds()
    finally:
        workers.close()
    pending = _pending_count(target, key, group)

    consumers = [r for p in procs for r in p["consumers"]]
    ids = [i for r in consumers if r["ids"] for i in r["ids"].split(b" ")]
    unique = len(set(ids))
    acked = sum(r["acked"] for r in consumers)
    errors = [f"{r['name']}: {e}" for r in consumers for e in r["errors"]]
    end_ns = max(r["end_ns"] for r in consumers)
    wall = (end_ns - start_ns) / 1e9
    server_cpu = cpu1 - cpu0
    client_cpu = sum(p["cpu_s"] for p in procs)
    other = None
    if busy0 is not None and busy1 is not None:
        other = max(0.0, (busy1 - busy0) - server_cpu - client_cpu) / (wall * servers.NCPU)
    exactly_once = (len(ids) == n and unique == n and acked == n and pending == 0
                    and not errors)
    rec = {
        "messages": n, "consumers": len(names), "consumer_processes": len(procs),
        "preload_s": round(preload_s, 3), "preload_server_cpu_s": round(preload_cpu, 3),
        "consumed": len(ids), "unique": unique, "acked": acked, "pending_at_end": pending,
        "errors": errors[:10], "exactly_once": exactly_once,
        "batches": [r["batches"] for r in consumers],
        "wall_s": round(wall, 4),
        "messages_per_s": len(ids) / wall if wall > 0 else None,
        "server_cpu_s": round(server_cpu, 4),
        "server_cpu_s_per_1000": 1000 * server_cpu / len(ids) if ids else None,
        "client_cpu_s": round(client_cpu, 3),
        "client_cpu_s_per_1000": 1000 * client_cpu / len(ids) if ids else None,
        "other_cpu_share": None if other is None else round(other, 3),
    }
    if errors and not ids:
        raise ScenarioError(f"no message consumed: {errors[0]}")
    log(f"  {target.name:8s} group-drain          {rec['messages_per_s']:,.0f} msg/s, "
        f"{rec['server_cpu_s_per_1000']:.4f} server CPU s per 1,000 "
        f"(preload {preload_s:.1f} s); exactly once: {exactly_once}")
    return rec


def run_drain(args, targets: list[Target], log: Log) -> dict:
    return {
        "id": "group-drain", "label": "Consumer-group consumption rate",
        "setup": (f"{args.drain_messages:,} messages (XADD * {' '.join(ENTRY)}) are "
                  f"preloaded, pipelined; then {args.drain_consumers} consumers of one "
                  f"group (one connection each, in {min(args.drain_procs, args.drain_consumers)} "
                  f"client processes) read `XREADGROUP GROUP g c<i> COUNT 100 STREAMS s >` "
                  f"and send the `XACK` of each batch in the same write as their next read, "
                  f"until the stream is drained. Client: Python asyncio "
                  f"({aresp.client_stack()}). " + _machine_note(servers.NCPU)),
        "servers": _each_server(args, targets, log, "group-drain", _drain_one),
    }


def render_drain(result: dict) -> str:
    names = _names(result)
    ok = [result["servers"][n] if "error" not in result["servers"][n] else None
          for n in names]
    both = len(names) == 2 and all(ok)
    lines = _header(result)
    head = ["", *(SERVER_NAMES[n] for n in names)] + (["Tidelog/Redis"] if both else [])
    lines += ["| " + " | ".join(head) + " |",
              "|---|" + "|".join("---:" for _ in head[1:]) + "|"]

    def row(label, get, ratio=False, digits=0):
        vals = [get(r) if r else None for r in ok]
        cells = [("failed" if r is None else (v if isinstance(v, str) else _fmt(v, digits)))
                 for r, v in zip(ok, vals)]
        if both:
            cells.append(_ratio(vals[1], vals[0], 3) if ratio else "")
        lines.append("| " + " | ".join([label, *cells]) + " |")

    row("messages consumed (exactly once?)",
        lambda r: f"{r['consumed']:,} ({'yes' if r['exactly_once'] else 'NO'})")
    row("messages/s", lambda r: r["messages_per_s"], True)
    row("server CPU s per 1,000 messages", lambda r: r["server_cpu_s_per_1000"], True, 4)
    row("client CPU s per 1,000 messages", lambda r: r["client_cpu_s_per_1000"], True, 4)
    row("wall s (drain)", lambda r: r["wall_s"], False, 2)
    row("preload s (pipelined XADD)", lambda r: r["preload_s"], True, 2)
    row("other processes' share of the machine",
        lambda r: "?" if r["other_cpu_share"] is None else f"{100 * r['other_cpu_share']:.0f}%")
    fails = _failed_lines(result)
    if fails:
        lines += [""] + fails
    return "\n".join(lines)


# -- 3. PEL scale -------------------------------------------------------------------

PEL_KEY = "bench:group-pel"
PEL_BLOCK = 10  # timed batches per block (after one warm-up batch)
PEL_OPS = (("xpending", "XPENDING s g - + 10"),
           ("xack", "XACK s g <10 random pending IDs>"),
           ("xautoclaim", "XAUTOCLAIM s g other 0 <random start> COUNT 10"))


def _pel_prepare(args, target: Target, log: Log) -> dict:
    """Fill the stream and both groups on one server (bounded by --pel-timeout)."""
    key, c, size = PEL_KEY, target.client, args.pel_size
    small = min(args.pel_small, size)
    deadline = time.monotonic() + args.pel_timeout
    rec: dict = {"pel_size": size, "small_size": small}
    t0 = time.monotonic()
    cpu0 = target.server.precise_cpu_seconds()
    try:
        _fill(target, key, size, explicit_ids=True, deadline=deadline)
        rec["xadd_s"] = round(time.monotonic() - t0, 2)
        # The big PEL: one consumer reads everything, COUNT 10000 at a time, no ACK.
        t1 = time.monotonic()
        c.call("XGROUP", "CREATE", key, "big", "0")
        read = resp.encode(("XREADGROUP", "GROUP", "big", "c1", "COUNT", "10000",
                            "STREAMS", key, ">"))
        mark = resp.encode(("ECHO", MARK))
        reads = 0
        for _ in range(1, size // 10000 + 3):
            if time.monotonic() > deadline:
                got = _pending_count(target, key, "big")
                raise ScenarioError(f"filling the PEL stopped at the time limit "
                                    f"({args.pel_timeout:.0f} s) with {got:,} entries, "
                                    f"{time.monotonic() - t0:.0f} s after the start")
            raw = _exchange(c, read + mark)
            if raw.startswith(b"-"):
                raise ScenarioError(f"XREADGROUP replied {raw[:200]!r}")
            if raw.startswith(b"*-1\r\n"):
                break  # nothing new: the stream is read to its end
        rec["pel_fill_s"] = round(time.monotonic() - t1, 2)
        rec["pel_fill_reads"] = reads
        got = _pending_count(target, key, "big")
        if got != size:
            raise ScenarioError(f"the PEL holds {got:,} entries after the fill, "
                                f"expected {size:,}")
        # The small PEL: IDs 1-0 .. small-0 of the same stream.
        c.call("XGROUP", "CREATE", key, "small", "0")
        reply = c.call("XREADGROUP", "GROUP", "small", "c1", "COUNT", small,
                       "STREAMS", key, ">")
        if len(reply[0][1]) != small or _pending_count(target, key, "small") != small:
            raise ScenarioError("the small PEL was not filled as expected")
    except BaseException:
        _delete(target, key)
        raise
    rec["preload_s"] = round(time.monotonic() - t0, 2)
    rec["preload_server_cpu_s"] = round(target.server.precise_cpu_seconds() - cpu0, 2)
    rec["rss_after_preload_bytes"] = target.server.rss_bytes()
    log(f"  {target.name:8s} group-pel            preload: {size:,} XADDs in "
        f"{rec['xadd_s']} s, PEL filled in {rec['pel_fill_s']} s")
    return rec


@dataclass
class _Cell:
    """One (server, PEL size) pair being timed for one operation."""
    target: Target
    group: str | None
    size: int | None
    batches: list[bytes]
    restores: list[list[str]] | None = None
    walls: list[float] = field(default_factory=list)
    cpu: float = 0.0
    raws: list[bytes] = field(default_factory=list)


def _pel_batches(op: str, size: int, depth: int, nb: int) -> tuple[list[bytes], list | None]:
    """The pre-encoded batches of one operation for one PEL size (the same on
    every server: the random generator is seeded by the operation and size)."""
    enc = resp.encode
    rng = random.Random(f"{op}-{size}")
    key = PEL_KEY
    if op == "xpending":
        return [enc(("XPENDING", key, "{g}", "-", "+", "10")) * depth] * nb, None
    if op == "xautoclaim":
        # Starts 1 .. size-9, so each call claims exactly ten entries (the PEL
        # holds 1-0 .. size-0); they move to `other`, the PEL keeps its size.
        return [b"".join(enc(("XAUTOCLAIM", key, "{g}", "other", "0",
                              f"{rng.randint(1, size - 9)}-0", "COUNT", "10"))
                         for _ in range(depth)) for _ in range(nb)], None
    # xack: each batch acks depth x 10 distinct pending IDs; after it
    # (untimed) XCLAIM ... FORCE puts them back, so every batch starts from
    # the full PEL.
    batches, picked = [], []
    for _ in range(nb):
        ids = [f"{i}-0" for i in rng.sample(range(1, size + 1), depth * 10)]
        picked.append(ids)
        batches.append(b"".join(enc(("XACK", key, "{g}", *ids[j:j + 10]))
                                for j in range(0, len(ids), 10)))
    return batches, picked


def _with_group(payload: bytes, group: str) -> bytes:
    # "{g}" was encoded as a 3-byte bulk string; put the group's name in its place.
    return payload.replace(b"$3\r\n{g}\r\n", resp.encode([group])[4:])


REPLY_OK = {
    "ping": lambda r: r == b"PONG",
    "xpending": lambda r: isinstance(r, list) and len(r) == 10,
    "xack": lambda r: r == 10,
    "xautoclaim": lambda r: (isinstance(r, list) and len(r) >= 2 and isinstance(r[1], list)
                             and len(r[1]) == 10),
}


def _pel_time_all(args, targets: list[Target], recs: dict[str, dict], log: Log) -> dict:
    """Time every operation on every server and PEL size, interleaved in blocks
    (server A small, A big, B small, B big, then the next block, rotating the
    order), so a burst of background load lands on all alike.  Each block is
    one untimed warm-up batch (the previous block ran on other data, so the
    caches are cold) then PEL_BLOCK timed batches.  Results go into
    recs[server]; returns facts about the machine meanwhile."""
    depth = args.pel_depth
    nblocks = max(1, math.ceil(args.pel_ops / depth / PEL_BLOCK))
    nb = nblocks * (PEL_BLOCK + 1)  # batches sent per cell, warm-ups included
    mark = resp.encode(("ECHO", MARK))
    sizes = sorted({(recs[t.name]["small_size"]) for t in targets}
                   | {recs[t.name]["pel_size"] for t in targets})
    failed: dict[str, str] = {}
    busy0 = servers.machine_busy_seconds()
    cpus0 = {t.name: t.server.precise_cpu_seconds() for t in targets}
    self0 = time.process_time()
    t_start = time.monotonic()
    for op in ("ping",) + tuple(op for op, _ in PEL_OPS):
        cells: list[_Cell] = []
        for size in ([None] if op == "ping" else sizes):
            if op == "ping":
                batches, restores = [resp.encode(("PING",)) * depth] * nb, None
            else:
                batches, restores = _pel_batches(op, size, depth, nb)
            for t in targets:
                if size is None:
                    cells.append(_Cell(t, None, None, batches))
                else:
                    group = "small" if size == recs[t.name]["small_size"] else "big"
                    cells.append(_Cell(t, group, size,
                                       [_with_group(b, group) for b in batches], restores))
        for b in range(nblocks):
            shift = b % len(cells)
            for cell, i in ((c, i) for c in cells[shift:] + cells[:shift]
                            for i in range(b * (PEL_BLOCK + 1), (b + 1) * (PEL_BLOCK + 1))):
                t = cell.target
                if t.name in failed:
                    continue
                try:
                    cpu0 = t.server.precise_cpu_seconds()
                    t0 = time.perf_counter()
                    raw = _exchange(t.client, cell.batches[i] + mark)
                    t1 = time.perf_counter()
                    if i % (PEL_BLOCK + 1):  # not the block's warm-up batch
                        cell.cpu += t.server.precise_cpu_seconds() - cpu0
                        cell.walls.append(t1 - t0)
                    cell.raws.append(raw)
                    if cell.restores is not None:
                        ids = cell.restores[i]
                        back = t.client.call("XCLAIM", PEL_KEY, cell.group, "c1", "0", *ids,
                                             "FORCE", "JUSTID")
                        if not isinstance(back, list) or len(back) != len(ids):
                            raise ScenarioError(f"XCLAIM ... FORCE JUSTID put back "
                                                f"{len(back)} of {len(ids)} IDs")
                except Exception as exc:  # noqa: BLE001 - this server stops, the others go on
                    failed[t.name] = f"{op}: {type(exc).__name__}: {exc}"
                    log(f"  {t.name:8s} group-pel            FAILED {failed[t.name]}")
        for cell in cells:
            name = cell.target.name
            if name in failed:
                continue
            replies = []
            for raw in cell.raws:
                got = _replies(raw)
                if len(got) != depth + 1 or got[-1] != MARK.encode():
                    failed[name] = (f"{op}: expected {depth} replies and the marker, "
                                    f"got {len(got)}: {got[:2]!r:.300}")
                    break
                replies += got[:-1]
            bad = [r for r in replies if not REPLY_OK[op](r)]
            errors = [r for r in bad if isinstance(r, resp.RespError)]
            rec = recs[name]
            where = f"{op}" + (f" (PEL {cell.size:,})" if cell.size else "")
            ops = len(cell.walls) * depth
            if errors:  # the timings would be those of an error reply: no figure
                res = {"ops": ops, "error": f"{len(errors)} of {len(replies)} replies were "
                       f"errors, e.g. -{errors[0]}"}
                rec.setdefault("problems", []).append(f"{where}: {res['error']}")
            else:
                res = {"ops": ops,
                       "us_per_op": 1e6 * statistics.median(cell.walls) / depth,
                       "mean_us_per_op": 1e6 * sum(cell.walls) / ops,
                       "server_cpu_us_per_op": 1e6 * cell.cpu / ops}
                if bad:
                    res["problem"] = (f"{len(bad)} of {len(replies)} replies unexpected, "
                                      f"e.g. {bad[0]!r:.200}")
                    rec.setdefault("problems", []).append(f"{where}: {res['problem']}")
            if op == "ping":
                rec["ping"] = res
            else:
                rec.setdefault("sizes", {}).setdefault(str(cell.size), {})[op] = res
    busy1 = servers.machine_busy_seconds()
    wall = time.monotonic() - t_start
    used = time.process_time() - self0 + sum(
        t.server.precise_cpu_seconds() - cpus0[t.name] for t in targets if t.server.alive())
    for t in targets:
        rec = recs[t.name]
        if t.name in failed:
            rec["error"] = f"ScenarioError: timing failed: {failed[t.name]}"
            continue
        for group, size in (("small", rec["small_size"]), ("big", rec["pel_size"])):
            still = _pending_count(t, PEL_KEY, group)
            if still != size:
                rec.setdefault("problems", []).append(
                    f"after the timings the PEL of {size:,} holds {still:,} entries")
        ops = rec["sizes"]
        small, big = str(rec["small_size"]), str(rec["pel_size"])
        log(f"  {t.name:8s} group-pel            µs/op at {int(small):,} / {int(big):,}: "
            + ", ".join(f"{op} {ops[small][op].get('us_per_op', float('nan')):.1f} / "
                        f"{ops[big][op].get('us_per_op', float('nan')):.1f}"
                        for op, _ in PEL_OPS)
            + (f"  PROBLEMS: {rec['problems']}" if rec.get("problems") else ""))
    other = None
    if busy0 is not None and busy1 is not None and wall > 0:
        other = round(max(0.0, busy1 - busy0 - used) / (wall * servers.NCPU), 3)
    return {"timing_wall_s": round(wall, 2), "other_cpu_share": other}


def run_pel(args, targets: list[Target], log: Log) -> dict:
    depth, small = args.pel_depth, min(args.pel_small, args.pel_size)
    nblocks = max(1, math.ceil(args.pel_ops / depth / PEL_BLOCK))
    ops = nblocks * PEL_BLOCK * depth
    result = {
        "id": "group-pel", "label": "PEL scale",
        "pel_size": args.pel_size, "small_size": small, "depth": depth, "ops": ops,
        "setup": (f"One stream of {args.pel_size:,} entries (IDs 1-0 .. {args.pel_size}-0, "
                  f"XADD pipelined from Python) with two groups: `big`, whose consumer c1 has "
                  f"read every entry without acknowledging it (`XREADGROUP ... COUNT 10000` "
                  f"repeatedly), so its PEL holds {args.pel_size:,} entries, and `small` with "
                  f"{small:,} pending entries (IDs 1-0 .. {small}-0). Each operation is timed "
                  f"{ops:,} times, in pipelined batches of {depth} commands (then `ECHO` as an "
                  f"end marker) sent by a plain socket client that parses nothing while "
                  f"timing. Both servers hold their data at once, and the cells (server x PEL "
                  f"size) take turns in blocks of {PEL_BLOCK} timed batches, each block after "
                  f"one untimed warm-up batch (the block before ran on other data), so bursts "
                  f"of background load hit every cell alike; both servers get the same "
                  f"commands. µs/op is the median wall time of a batch divided by {depth} (the "
                  f"median, because a burst of other load stalls a few batches); server CPU "
                  f"µs/op is the server process's CPU time (its kernel CPU clock, to the "
                  f"nanosecond) over all the timed batches divided by the operations. XACK "
                  f"batches ack {depth * 10} distinct random pending IDs; after each batch "
                  f"(untimed) `XCLAIM ... FORCE JUSTID` puts them back. XAUTOCLAIM starts are "
                  f"random IDs with exactly 10 entries at or after them, which move to consumer "
                  f"`other`, so the PEL keeps its size. PING in the same batches shows the "
                  f"floor of the method. " + _machine_note(servers.NCPU)),
        "servers": {},
    }
    recs = _each_server(args, targets, log, "group-pel", _pel_prepare)
    result["servers"] = recs
    ready = [t for t in targets if "error" not in recs[t.name]]
    try:
        if ready:
            result.update(_pel_time_all(args, ready, recs, log))
    except Exception as exc:  # noqa: BLE001 - recorded with the results
        for t in ready:
            recs[t.name].setdefault("error", f"{type(exc).__name__}: {exc}")
            recs[t.name]["traceback"] = traceback.format_exc()
        log(f"  group-pel FAILED: {exc!r}")
    finally:
        for t in ready:
            t0 = time.monotonic()
            try:
                if t.server.alive():
                    t.client.close()  # start afresh: a failure may have left replies unread
                    t.client = t.server.client(timeout=120)
                    t.client.call("DEL", PEL_KEY)
            except (OSError, resp.RespError) as exc:
                recs[t.name]["del_error"] = str(exc)
            recs[t.name]["del_s"] = round(time.monotonic() - t0, 2)
    return result


def render_pel(result: dict) -> str:
    names = _names(result)
    ok = [result["servers"][n] if "error" not in result["servers"][n] else None
          for n in names]
    both = len(names) == 2 and all(ok)
    small, big = result["small_size"], result["pel_size"]
    lines = _header(result)
    head = ["Operation", "PEL size"]
    for metric in ("µs/op", "server CPU µs/op"):
        head += [f"{SERVER_NAMES[n]} {metric}" for n in names]
        if both:
            head.append("Tidelog/Redis")
    lines += ["| " + " | ".join(head) + " |",
              "|---|" + "|".join("---:" for _ in head[1:]) + "|"]

    def cells(get) -> list[str]:
        """get(rec) is the result of one operation on one server (or None)."""
        out = []
        for key in ("us_per_op", "server_cpu_us_per_op"):
            res = [get(r) or {} if r else None for r in ok]
            vals = [x.get(key) if x else None for x in res]
            for x, v in zip(res, vals):
                if x is None:
                    out.append("failed")
                elif "error" in x:
                    out.append("error")
                else:
                    out.append(_fmt(v, 1) + (" (!)" if x.get("problem") else ""))
            if both:
                out.append(_ratio(vals[1], vals[0]))
        return out

    def op_result(r, op, n) -> dict | None:
        try:
            return r["sizes"][str(n)][op]
        except (KeyError, TypeError):
            return None

    def op_value(r, op, n, key):
        return (op_result(r, op, n) or {}).get(key)

    lines.append("| " + " | ".join(["PING (floor of the method)", "-"]
                                   + cells(lambda r: r.get("ping"))) + " |")
    for op, label in PEL_OPS:
        for n in (small, big):
            lines.append("| " + " | ".join(
                [f"`{label}`", f"{n:,}"]
                + cells(lambda r, op=op, n=n: op_result(r, op, n))) + " |")

    # Growth from the small to the big PEL, per server.
    good = [(n, r) for n, r in zip(names, ok) if r]
    if good:
        lines += ["", f"Time per operation with {big:,} pending entries divided by the time "
                  f"with {small:,} (1.00 = independent of the PEL's size):", ""]
        head = ["Operation"] + [f"{SERVER_NAMES[n]} µs/op" for n, _ in good] + \
               [f"{SERVER_NAMES[n]} CPU µs/op" for n, _ in good]
        lines += ["| " + " | ".join(head) + " |",
                  "|---|" + "|".join("---:" for _ in head[1:]) + "|"]
        for op, label in PEL_OPS:
            row = [f"`{label}`"]
            for key in ("us_per_op", "server_cpu_us_per_op"):
                row += [_ratio(op_value(r, op, big, key), op_value(r, op, small, key))
                        for _, r in good]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
        for n, r in good:
            rss = r.get("rss_after_preload_bytes")
            lines.append(
                f"{SERVER_NAMES[n]}: {big:,} XADDs in {r['xadd_s']:.1f} s, PEL of {big:,} "
                f"filled in {r['pel_fill_s']:.1f} s ({r['pel_fill_reads']} XREADGROUP COUNT "
                f"10000); preload {r['preload_s']:.1f} s in all, server CPU "
                f"{r['preload_server_cpu_s']:.1f} s"
                + (f", RSS after it {rss / 2**20:,.0f} MiB" if rss else "")
                + f"; DEL of the stream {r['del_s']:.2f} s.")
            if r.get("problems"):
                lines.append(f"{SERVER_NAMES[n]} PROBLEMS: " + "; ".join(r["problems"]))
        if result.get("other_cpu_share") is not None:
            lines.append(f"Other processes used {100 * result['other_cpu_share']:.0f}% of the "
                         f"machine's CPU during the {result['timing_wall_s']:.0f} s of timings.")
    fails = _failed_lines(result)
    if fails:
        lines += [""] + fails
    return "\n".join(lines)


SCENARIOS: list[Scenario] = [
    Scenario("group-latency", "Consumer-group latency at a fixed rate",
             "XADD at a fixed rate, 10 consumers XREADGROUP BLOCK + XACK; latency per message",
             run_latency, render_latency),
    Scenario("group-drain", "Consumer-group consumption rate",
             "drain a preloaded stream with 4 consumers, XREADGROUP COUNT 100 + XACK",
             run_drain, render_drain),
    Scenario("group-pel", "PEL scale",
             "XPENDING / XACK / XAUTOCLAIM with 1,000 and 1,000,000 pending entries",
             run_pel, render_pel),
]
