"""The operator's state: MONITOR, SLOWLOG, LATENCY, CLIENT PAUSE, HOTKEYS,
INFO's instantaneous metrics and the command statistics' reset.
"""

from __future__ import annotations

import time
from typing import Any

from ..callstats import HIST_BUCKETS, now_ns
from ..commands.contract import ClientState, Reply
from ..commands.replies import repr_arg
from ..resp.replies import RawReply
from ..types.latency import LatencyEvent, SlowlogEntry, slowlog_args
from .base import NEVER_NS, EngineCore, Metrics
from .entry import Entry
from .outcomes import ABORTED, BLOCKED, PARKED, POSTPONED

# CONFIG SET's values Redis redacts (its sensitive options).
_SENSITIVE_CONFIG = frozenset({b"requirepass", b"masterauth", b"masteruser",
                               b"tls-key-file-pass", b"tls-client-key-file-pass"})


def monitor_args(argv: list[bytes]) -> list[bytes]:
    """The arguments MONITOR and SLOWLOG show: the credentials of AUTH,
    HELLO, ACL SETUSER and MIGRATE's AUTH/AUTH2, and CONFIG SET's sensitive
    values, redacted, as Redis does.  O(N) in the arguments for those
    commands, O(1) for the others."""
    name = argv[0].lower()
    if name == b"migrate":
        shown = list(argv)
        i = 6
        while i < len(argv):
            option = argv[i].upper()
            if option == b"KEYS":
                break
            count = 1 if option == b"AUTH" else 2 if option == b"AUTH2" else 0
            for j in range(i + 1, min(i + 1 + count, len(argv))):
                shown[j] = b"(redacted)"
            i += 1 + count
        return shown
    if name == b"config" and len(argv) > 3 and argv[1].lower() == b"set":
        shown = list(argv)
        for i in range(2, len(argv) - 1, 2):
            if argv[i].lower() in _SENSITIVE_CONFIG:
                shown[i + 1] = b"(redacted)"
        return shown
    if name == b"auth":
        return [argv[0]] + [b"(redacted)"] * (len(argv) - 1)
    if name == b"acl" and len(argv) > 2 and argv[1].lower() == b"setuser":
        return argv[:2] + [b"(redacted)"] * (len(argv) - 2)
    if name == b"hello":
        shown = list(argv)
        for i in range(2, len(argv) - 2):
            if argv[i].upper() == b"AUTH":
                shown[i + 1] = shown[i + 2] = b"(redacted)"
                break
        return shown
    return argv


# -- CLIENT PAUSE ---------------------------------------------------------------
def pause(self: EngineCore, ms: int, mode: str) -> None:
    """CLIENT PAUSE: hold back the commands of clients ("all") or the
    writes ("write") for ``ms`` milliseconds.  A pause in force is
    extended, never shortened, and ALL wins over WRITE."""
    end = self.clock.monotonic() + ms / 1000
    if self.ops.pause_mode is None:
        self.ops.pause_mode, self.ops.pause_end = mode, end
        self._bypass_dispatch()
        for db in self.dbs:  # expiry is a write: it waits (both modes, as Redis)
            db.expiry_held = True
    else:
        if mode == "all":
            self.ops.pause_mode = "all"
        self.ops.pause_end = max(self.ops.pause_end, end)
    self._schedule_unpause()


def _schedule_unpause(self: EngineCore) -> None:
    if self.ops.pause_timer is not None:
        self.ops.pause_timer.cancel()
        self.ops.pause_timer = None
    if self.schedule is not None:
        delay = max(0.0, self.ops.pause_end - self.clock.monotonic())
        self.ops.pause_timer = self.schedule(delay, self._pause_timeout)


def _pause_timeout(self: EngineCore) -> None:
    self.ops.pause_timer = None
    if self.ops.pause_mode is None:
        return
    if self.clock.monotonic() < self.ops.pause_end:  # an early timer
        self._schedule_unpause()
    else:
        self.unpause()


def unpause(self: EngineCore) -> None:
    """End the pause: the postponed clients run their commands, in the
    order they were held back."""
    if self.ops.pause_mode is None:
        return
    self.ops.pause_mode = None
    if self.ops.pause_timer is not None:
        self.ops.pause_timer.cancel()
        self.ops.pause_timer = None
    for db in self.dbs:
        db.expiry_held = False
    self._bypass_dispatch()
    held, self.ops.postponed = self.ops.postponed, []
    for client in held:
        client.postponed = False
        if client.resume is not None:
            client.resume()


def _bypass_dispatch(self: EngineCore) -> None:
    """Keep the dispatch cache empty while a pause, a monitor or a
    recording HOTKEYS session exists (every command then takes
    _execute_checked); it fills again after."""
    self.ops.bypass = self.ops.pause_mode is not None or bool(self.ops.monitors) or \
        self.ops.hotkeys is not None
    if self.ops.bypass:
        self._forget_dispatch()


# -- HOTKEYS --------------------------------------------------------------------
def hotkeys_changed(self: EngineCore) -> None:
    """HOTKEYS started, stopped or dropped a session: while one records,
    every command takes the checked path, which measures it
    (:meth:`_hotkeys_record`); otherwise nothing is measured."""
    session = self.hotkeys
    self.ops.hotkeys = session if session is not None and session.active else None
    self._bypass_dispatch()


def _hotkeys_record(self: EngineCore, session: Any, client: ClientState, entry: Entry,
                    argv: list[bytes], reply: Reply, started_ns: int) -> None:
    """Count one command for the recording HOTKEYS session: its time
    since ``started_ns`` and its bytes (a blocked or held command: its
    request's only).  Stops the session first when its DURATION is over.
    O(len(argv) + the reply's size)."""
    elapsed_us = (now_ns() - started_ns) // 1000
    if session.deadline_ms and session.expire(self.clock.now_ms()):
        self.hotkeys_changed()
        return
    if reply is BLOCKED or reply is POSTPONED or reply is ABORTED or reply is PARKED:
        reply = RawReply(b"")
    session.record(entry.spec, argv, elapsed_us, reply, client.protocol)


# -- MONITOR --------------------------------------------------------------------
def add_monitor(self: EngineCore, client: ClientState) -> None:
    """MONITOR: show this client every command run from now on."""
    if not client.monitor:
        client.monitor = True
        self.ops.monitors.append(client)
        self._bypass_dispatch()


def remove_monitor(self: EngineCore, client: ClientState) -> None:
    """RESET, or the connection closed: stop showing it commands."""
    if client.monitor:
        client.monitor = False
        self.ops.monitors.remove(client)
        self._bypass_dispatch()


def feed_monitors(self: EngineCore, client: ClientState | None, db_index: int, argv: list[bytes],
                  from_script: bool = False) -> None:
    """Show one command to every monitor, in Redis's MONITOR line format:
    ``+<unix time.usec> [<db> <addr>] "arg" ...``; ``lua`` in place of the
    address for a command a script ran (``from_script``)."""
    if self.ops.monitors:
        line = self._monitor_line(client, db_index, argv, from_script)
        for monitor in list(self.ops.monitors):
            monitor.send(line)


def _monitor_line(self: EngineCore, client: ClientState | None, db_index: int, argv: list[bytes],
                  from_script: bool) -> RawReply:
    if from_script or client is None:
        where = "lua"
    elif client.addr.startswith("/"):  # a Unix socket: "unix:<path>"
        where = "unix:" + client.addr.rpartition(":")[0]
    else:
        where = client.addr
    sec, usec = divmod(time.time_ns() // 1000, 1_000_000)
    line = RawReply(b"+%d.%06d [%d %s] %s\r\n" % (
        sec, usec, db_index, where.encode(),
        b" ".join([repr_arg(a) for a in monitor_args(argv)])))
    return line


# -- SLOWLOG, LATENCY -----------------------------------------------------------
def refresh_thresholds(self: EngineCore) -> None:
    """Read the slowlog and latency options again (after CONFIG SET): the
    command path compares each duration with one cached number."""
    config = self.config
    slower = config["slowlog-log-slower-than"]
    self.ops.slowlog_ns = NEVER_NS if slower < 0 else slower * 1000
    self.ops.latency_threshold_ms = config["latency-monitor-threshold"]
    latency_ns = self.ops.latency_threshold_ms * 1_000_000 if self.ops.latency_threshold_ms else NEVER_NS
    self._watch_ns = min(self.ops.slowlog_ns, latency_ns)
    tracking = config["latency-tracking"]
    if tracking and not self.ops.tracking:  # turned on: from nothing, as Redis
        for entry in self._entries.values():
            entry.hist = [0] * HIST_BUCKETS
    self.ops.tracking = tracking
    max_len = config["slowlog-max-len"]
    while len(self.ops.slowlog) > max_len:
        self.ops.slowlog.pop()


def slowlog_push(self: EngineCore, client: ClientState | None, argv: list[bytes], micros: int) -> None:
    """Record one slow command, its arguments trimmed as Redis trims them."""
    max_len = self.config["slowlog-max-len"]
    if not max_len:
        return
    self.ops.slowlog.appendleft(SlowlogEntry(
        self.ops.slowlog_next_id, int(time.time()), micros, slowlog_args(monitor_args(argv)),
        client.addr.encode() if client is not None else b"",
        client.name if client is not None else b""))
    self.ops.slowlog_next_id += 1
    while len(self.ops.slowlog) > max_len:
        self.ops.slowlog.pop()


def latency_sample(self: EngineCore, event: str, ms: int) -> None:
    """LATENCY: record ``ms`` for an event when it reaches
    latency-monitor-threshold (the caller may skip timing when it is 0)."""
    threshold = self.ops.latency_threshold_ms
    if not threshold or ms < threshold:
        return
    record = self.ops.latency_events.get(event)
    if record is None:
        record = self.ops.latency_events[event] = LatencyEvent()
    record.add(int(time.time()), ms)


def command_stats(self: EngineCore) -> list[tuple[str, int, int, int, int]]:
    """INFO commandstats: ``(name, calls, usec, rejected, failed)`` for each
    command called, refused or failed at least once, in the order of first
    use."""
    return [(name, e.calls, e.ns // 1000, e.rejected, e.failed)
            for name, e in self._entries.items() if e.calls or e.rejected or e.failed]


def latency_histograms(self: EngineCore) -> list[tuple[str, int, list[int]]]:
    """``(name, calls, histogram)`` of each command with tracked calls, in
    the order of first use (INFO latencystats, LATENCY HISTOGRAM)."""
    if not self.ops.tracking:
        return []
    return [(name, sum(e.hist), e.hist) for name, e in self._entries.items() if any(e.hist)]


def reset_stats(self: EngineCore) -> None:
    """CONFIG RESETSTAT: the counters of INFO stats, commandstats and CLUSTER
    SLOT-STATS go to zero."""
    for name in self.stats:
        self.stats[name] = 0
    self.lazyfreed_objects = 0
    self.metrics = Metrics()
    for entry in self._entries.values():
        entry.calls = entry.ns = entry.failed = entry.rejected = 0
        entry.hist = [0] * HIST_BUCKETS
    self.error_counts.clear()
    self.slot_stats.reset()
