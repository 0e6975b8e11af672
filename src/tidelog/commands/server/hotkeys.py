"""HOTKEYS (Redis 8.6): which keys cost the server the most CPU time and
network bytes over a tracking session.

``HOTKEYS START`` opens a session (:class:`Session`), ``STOP`` ends it and
keeps its results, ``GET`` reports them, ``RESET`` drops them, ``HELP``
(8.6.1) lists the subcommands.  Pages:
https://redis.io/docs/latest/commands/hotkeys/ and its hotkeys-start,
-stop, -get, -reset and -help pages.

While a session is active the engine sends every command through its
checked path and, after each one that names keys (the keys of its key
specs, as ACL finds them: EVAL's declared keys, every command inside an
EXEC on its own; commands a script runs are not counted, EXEC itself names
none), calls :meth:`Session.record` with the microseconds the command took
and its network bytes (its request as RESP and its encoded reply).  As in
Redis, a command's cost is shared among its keys: each gets ``cost // n``
and the remainder goes one unit each to keys from a random one on, so the
shares add up to the cost.  With ``SAMPLE ratio`` a command is counted
with probability ``1/ratio``; the all-commands totals count every command.
Without a session the engine pays nothing: the fast dispatch is untouched.

The counts are kept in :class:`~tidelog.types.topk.TopK` (Space-Saving,
ten places per key of ``COUNT``, as Redis sizes its own structure), so a
session's memory is bounded whatever the keys.

``DURATION`` stops a session by itself: the engine checks the deadline
before each command it records and in its cron, and every HOTKEYS
subcommand checks it first.
"""

from __future__ import annotations

import random
import resource
from dataclasses import dataclass
from typing import Any

from ...errors import (
    HOTKEYS_COUNT_RANGE,
    HOTKEYS_DURATION_RANGE,
    HOTKEYS_IN_PROGRESS,
    HOTKEYS_METRICS_COUNT,
    HOTKEYS_METRICS_MISMATCH,
    HOTKEYS_METRICS_NONE_VALID,
    HOTKEYS_METRICS_REQUIRED,
    HOTKEYS_METRICS_TWICE,
    HOTKEYS_RESET_ACTIVE,
    HOTKEYS_SAMPLE_RANGE,
    HOTKEYS_SLOT_DUPLICATE,
    HOTKEYS_SLOT_INVALID,
    HOTKEYS_SLOTS_COUNT,
    HOTKEYS_SLOTS_MISSING,
    HOTKEYS_SLOTS_NOT_CLUSTER,
    HOTKEYS_SLOTS_TWICE,
    SYNTAX,
    CommandError,
)
from ...resp import encode
from ...resp.replies import OK, Map, Replies
from ...types.topk import TopK
from ..args import ArgReader, parse_int
from ..contract import Ctx, Reply
from ..key_specs import acl_keys, fixed_key_ranges
from ..replies import help_command
from ..table import CommandSpec, command

METRICS_MAX = 2          # the metric types there are: CPU and NET
COUNT_DEFAULT = 10       # K when COUNT is not given
COUNT_MAX = 64
DURATION_MAX = 1_000_000  # seconds
INT_MAX = 2**31 - 1       # SAMPLE's bound
CLUSTER_SLOTS = 16384
PLACES_PER_KEY = 10       # TopK places per reported key (Redis tracks count * 10)


@dataclass(frozen=True)
class StartArgs:
    """HOTKEYS START's arguments, checked."""

    cpu: bool
    net: bool
    count: int = COUNT_DEFAULT
    duration_ms: int = 0            # 0: until HOTKEYS STOP
    sample_ratio: int = 1
    slots: tuple[int, ...] = ()     # sorted, distinct; empty: every slot


def _ranged(arg: bytes, low: int, high: int, error: bytes) -> int:
    """An integer in [low, high], else ``error`` (also for a non-number,
    as Redis's getRangeLongFromObjectOrReply with a message)."""
    value = parse_int(arg, error)
    if not low <= value <= high:
        raise CommandError(error)
    return value


def parse_start(argv: list[bytes], cluster_enabled: bool) -> StartArgs:
    """``HOTKEYS START ...`` -> :class:`StartArgs`, with Redis's errors in
    Redis's order.  The ``count`` arguments after METRICS are taken as
    metric names whatever they say: unknown names are skipped (Redis keeps
    them for names to come), at least one must be CPU or NET.  O(len(argv)
    + slots log slots)."""
    argc = len(argv)
    if argc < 4 or argv[2].upper() != b"METRICS":
        raise CommandError(HOTKEYS_METRICS_REQUIRED)
    metrics = _ranged(argv[3], 1, METRICS_MAX, HOTKEYS_METRICS_COUNT % METRICS_MAX)
    cpu = net = False
    r = ArgReader(argv, start=4)
    taken = 0
    while r.more() and taken < metrics:
        name = r.next_upper()
        if name == b"CPU":
            if cpu:
                raise CommandError(HOTKEYS_METRICS_TWICE % b"CPU")
            cpu = True
        elif name == b"NET":
            if net:
                raise CommandError(HOTKEYS_METRICS_TWICE % b"NET")
            net = True
        taken += 1
    if taken != metrics:
        raise CommandError(HOTKEYS_METRICS_MISMATCH)
    if not (cpu or net):
        raise CommandError(HOTKEYS_METRICS_NONE_VALID)
    count, duration_ms, ratio = COUNT_DEFAULT, 0, 1
    slots: tuple[int, ...] | None = None
    while r.more():
        option = r.next_upper()
        more = r.more()
        if more and option == b"COUNT":
            count = _ranged(r.next_bytes(), 1, COUNT_MAX, HOTKEYS_COUNT_RANGE)
        elif more and option == b"DURATION":
            duration_ms = _ranged(r.next_bytes(), 1, DURATION_MAX, HOTKEYS_DURATION_RANGE) * 1000
        elif more and option == b"SAMPLE":
            ratio = _ranged(r.next_bytes(), 1, INT_MAX, HOTKEYS_SAMPLE_RANGE)
        elif more and option == b"SLOTS":
            if not cluster_enabled:
                raise CommandError(HOTKEYS_SLOTS_NOT_CLUSTER)
            if slots is not None:
                raise CommandError(HOTKEYS_SLOTS_TWICE)
            n = _ranged(r.next_bytes(), 1, CLUSTER_SLOTS, HOTKEYS_SLOTS_COUNT)
            if r.remaining() < n:
                raise CommandError(HOTKEYS_SLOTS_MISSING)
            chosen = sorted(_ranged(arg, 0, CLUSTER_SLOTS - 1, HOTKEYS_SLOT_INVALID)
                            for arg in r.take(n))
            if any(a == b for a, b in zip(chosen, chosen[1:])):
                raise CommandError(HOTKEYS_SLOT_DUPLICATE)
            slots = tuple(chosen)
        else:
            raise CommandError(SYNTAX)
    return StartArgs(cpu, net, count, duration_ms, ratio, slots or ())


def slot_ranges(slots: tuple[int, ...]) -> list[list[int]]:
    """Sorted distinct slots as GET's ``selected-slots``: ``[slot]`` for a
    lone slot, ``[first, last]`` for a run.  O(len(slots))."""
    ranges: list[list[int]] = []
    for slot in slots:
        if ranges and ranges[-1][-1] == slot - 1:
            ranges[-1][1:] = [slot]
        else:
            ranges.append([slot])
    return ranges


def key_slot(key: bytes) -> int:
    """Redis Cluster's hash slot of a key: CRC16 (XMODEM) of the key, or of
    its ``{tag}`` when it has a non-empty one, modulo 16384.  O(len(key))."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    crc = 0
    for byte in key:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
        crc &= 0xFFFF
    return crc % CLUSTER_SLOTS


# Per command: where its keys are when its key specs are plain ranges
# ((begin, lastkey, keystep) each), else None (acl_keys finds them).
_RANGES: dict[str, list[tuple[int, int, int]] | None] = {}


def command_keys(spec: CommandSpec, argv: list[bytes]) -> list[bytes]:
    """The keys ``argv`` names, as :func:`~.key_specs.acl_keys` finds them
    (shard channels are not keys), by the key specs' ranges when they are
    plain ones (found once per command).  O(len(argv))."""
    try:
        ranges = _RANGES[spec.name]
    except KeyError:
        ranges = _RANGES[spec.name] = fixed_key_ranges(spec)
    if ranges is None:
        return [argv[i] for i, _ in acl_keys(spec, argv)]
    argc = len(argv)
    keys: list[bytes] = []
    for first, lastkey, step in ranges:
        last = first + lastkey if lastkey >= 0 else argc + lastkey
        stop = min(last, argc - 1) + 1
        if stop > first:
            keys += argv[first:stop:step]
    return keys


def request_size(argv: list[bytes]) -> int:
    """The bytes of ``argv`` sent as a RESP array of bulk strings (what
    clients send).  O(len(argv))."""
    size = len(str(len(argv))) + 3
    for arg in argv:
        n = len(arg)
        size += len(str(n)) + n + 5
    return size


def reply_size(reply: Any, protocol: int) -> int:
    """The bytes ``reply`` is written as (several replies: their sum).
    O(the reply's size)."""
    if reply.__class__ is Replies:
        return sum(len(encode(item, protocol)) for item in reply.items)
    return len(encode(reply, protocol))


def _rusage_ms() -> tuple[int, int]:
    """This process's (user, system) CPU time, in milliseconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int(usage.ru_utime * 1000), int(usage.ru_stime * 1000)


class Session:
    """One tracking session: its options, its counters and top-Ks.

    ``active`` while it records; ``stopped_ms`` is its length once stopped
    (by STOP or by its DURATION).  ``rng`` decides sampling and where a
    command's remainder starts (injectable, for tests)."""

    def __init__(self, args: StartArgs, now_ms: int, rng: random.Random | None = None) -> None:
        self.args = args
        self.active = True
        self.start_ms = now_ms
        self.deadline_ms = now_ms + args.duration_ms if args.duration_ms else 0
        self.stopped_ms = 0
        self.rng = rng or random.Random()
        places = args.count * PLACES_PER_KEY
        self.cpu = TopK(places) if args.cpu else None
        self.net = TopK(places) if args.net else None
        self.slots = frozenset(args.slots)
        self.cpu_all_us = 0              # every command with keys, every slot
        self.net_all = 0
        self.cpu_selected_us = 0         # ... in the selected slots
        self.net_selected = 0
        self.cpu_sampled_us = 0          # ... sampled, in the selected slots
        self.net_sampled = 0
        self.rusage_start = _rusage_ms()
        self.rusage_used = (0, 0)        # fixed at the stop

    def record(self, spec: CommandSpec, argv: list[bytes], cpu_us: int, reply: Any,
               protocol: int) -> None:
        """One command ran for ``cpu_us`` microseconds and answered ``reply``
        (``RawReply(b"")`` when none: a blocked command) in RESP ``protocol``: count
        its cost for its keys (none: nothing is counted, as in Redis).
        O(len(argv) + the reply's size + keys log capacity)."""
        keys = command_keys(spec, argv)
        if not keys:
            return
        net_bytes = request_size(argv) + reply_size(reply, protocol)
        self.cpu_all_us += cpu_us
        self.net_all += net_bytes
        slots = self.slots
        if slots and key_slot(keys[0]) not in slots:
            return
        self.cpu_selected_us += cpu_us
        self.net_selected += net_bytes
        ratio = self.args.sample_ratio
        if ratio > 1:
            if self.rng.random() >= 1.0 / ratio:
                return
            self.cpu_sampled_us += cpu_us
            self.net_sampled += net_bytes
        if self.cpu is not None:
            self._share(self.cpu, keys, cpu_us)
        if self.net is not None:
            self._share(self.net, keys, net_bytes)

    def _share(self, top: TopK, keys: list[bytes], cost: int) -> None:
        """Give each key ``cost // n``, and one unit more to ``cost % n`` of
        them, from a random one on (so the shares add up to ``cost``)."""
        n = len(keys)
        if n == 1:
            top.add(keys[0], cost)
            return
        each, extra = divmod(cost, n)
        first = self.rng.randrange(n) if extra else 0
        for i, key in enumerate(keys):
            top.add(key, each + (1 if (i - first) % n < extra else 0))

    def expire(self, now_ms: int) -> bool:
        """Stop the session when its DURATION is over; True if it stopped now."""
        if self.active and self.deadline_ms and now_ms >= self.deadline_ms:
            self.stop(self.deadline_ms)
            return True
        return False

    def stop(self, now_ms: int) -> None:
        """End recording; the results stay for GET."""
        self.active = False
        self.stopped_ms = now_ms - self.start_ms
        user, system = _rusage_ms()
        self.rusage_used = (user - self.rusage_start[0], system - self.rusage_start[1])

    def report(self, now_ms: int) -> Map:
        """GET's map, fields in Redis's order (the metric ones only for the
        metrics tracked, the selected-slots ones only with SLOTS, the
        sampled ones only with SAMPLE above 1 too).  O(capacity log capacity)."""
        args = self.args
        if self.active:
            duration = now_ms - self.start_ms
            user, system = _rusage_ms()
            user, system = user - self.rusage_start[0], system - self.rusage_start[1]
        else:
            duration = self.stopped_ms
            user, system = self.rusage_used
        selected = bool(args.slots)
        sampled = selected and args.sample_ratio > 1
        items: list[tuple[bytes, Any]] = [
            (b"tracking-active", 1 if self.active else 0),
            (b"sample-ratio", args.sample_ratio),
            (b"selected-slots", slot_ranges(args.slots) if selected else [[0, CLUSTER_SLOTS - 1]]),
        ]
        if sampled:
            items.append((b"sampled-commands-selected-slots-us", self.cpu_sampled_us))
        if selected:
            items.append((b"all-commands-selected-slots-us", self.cpu_selected_us))
        items.append((b"all-commands-all-slots-us", self.cpu_all_us))
        if sampled:
            items.append((b"net-bytes-sampled-commands-selected-slots", self.net_sampled))
        if selected:
            items.append((b"net-bytes-all-commands-selected-slots", self.net_selected))
        items += [
            (b"net-bytes-all-commands-all-slots", self.net_all),
            (b"collection-start-time-unix-ms", self.start_ms),
            (b"collection-duration-ms", duration),
        ]
        if self.cpu is not None:
            items += [(b"total-cpu-time-user-ms", user), (b"total-cpu-time-sys-ms", system)]
        if self.net is not None:
            items.append((b"total-net-bytes", self.net.total))
        if self.cpu is not None:
            items.append((b"by-cpu-time-us", _pairs(self.cpu.top(args.count))))
        if self.net is not None:
            items.append((b"by-net-bytes", _pairs(self.net.top(args.count))))
        return Map(items)


def _pairs(top: list[tuple[bytes, int]]) -> list[Any]:
    """``[key, value, key, value ...]``."""
    return [x for pair in top for x in pair]


def _session(ctx: Ctx) -> Session | None:
    """The latest session, stopped first if its DURATION is over."""
    session: Session | None = ctx.engine.hotkeys
    if session is not None and session.expire(ctx.now_ms()):
        ctx.engine.hotkeys_changed()
    return session


# =====================================================================================
# HOTKEYS
# =====================================================================================
_SUB = "admin noscript"


@command("hotkeys", arity=-2, group="server", since="8.6.0",
         complexity="Depends on subcommand.",
         summary="A container for hotkeys tracking commands.", container=True, help=(
    "HOTKEYS <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "START <METRICS count [CPU] [NET]> [COUNT k] [DURATION duration] [SAMPLE ratio] "
    "[SLOTS count slot...]",
    "    Starts hotkeys tracking with specified metrics.",
    "    * METRICS count [CPU] [NET]",
    "        Specify count of metrics and choose amongst:",
    "        - CPU: Track hotkeys by CPU time percentage",
    "        - NET: Track hotkeys by network bytes percentage",
    "    * COUNT k",
    "        Specifies the value of K for the top-K hotkeys tracking. Default: 10",
    "    * DURATION duration",
    "        Specifies tracking duration in seconds. 0 means tracking will continue until "
    "manually stopped. Default: 0",
    "    * SAMPLE ratio",
    "        Keys are tracked with probability 1/ratio. Default: 1 (tracks every key)",
    "    * SLOTS count slot...",
    "        Specify which slots to track keys from. Only available in cluster mode. "
    "Default: empty (track all slots)",
    "STOP",
    "    Stop hotkeys tracking. Results are still available via GET",
    "GET",
    "    Get results from hotkeys tracking.",
    "RESET",
    "    Reset memory used for hotkeys tracking. Tracking must have been stopped.",
    "    Results will no longer be available after this command.",
    "HELP",
    "    Prints this help.",
))
def hotkeys(ctx: Ctx, argv: list[bytes]) -> Reply:
    """HOTKEYS subcommand [argument ...]"""


@command("hotkeys|start", arity=-2, flags=_SUB, group="server", since="8.6.0",
         complexity="O(1)", summary="Starts hotkeys tracking.")
def hotkeys_start(ctx: Ctx, argv: list[bytes]) -> Reply:
    """HOTKEYS START METRICS count [CPU] [NET] [COUNT k] [DURATION seconds] [SAMPLE ratio] [SLOTS count slot [slot ...]]

    Replaces a stopped session's results.  Cost: O(1), O(slots log slots)
    with SLOTS."""  # noqa: E501 (the syntax line, whole)
    session = _session(ctx)
    if session is not None and session.active:
        raise CommandError(HOTKEYS_IN_PROGRESS)
    args = parse_start(argv, ctx.config["cluster-enabled"])
    ctx.engine.hotkeys = Session(args, ctx.now_ms())
    ctx.engine.hotkeys_changed()
    return OK


@command("hotkeys|stop", arity=2, flags=_SUB, group="server", since="8.6.0",
         complexity="O(1)", summary="Stops hotkeys tracking.")
def hotkeys_stop(ctx: Ctx, argv: list[bytes]) -> Reply:
    """HOTKEYS STOP

    OK, or a null reply when no session is active (as Redis 8.6 answers).
    Cost: O(1)."""
    session = _session(ctx)
    if session is None or not session.active:
        return None
    session.stop(ctx.now_ms())
    ctx.engine.hotkeys_changed()
    return OK


@command("hotkeys|get", arity=2, flags=_SUB, group="server", since="8.6.0",
         complexity="O(K) where K is the number of hotkeys returned.",
         summary="Returns lists of top K hotkeys depending on metrics chosen in HOTKEYS START "
                 "command.")
def hotkeys_get(ctx: Ctx, argv: list[bytes]) -> Reply:
    """HOTKEYS GET

    A one-element array holding the session's map (RESP2: a flat array),
    or a null reply when there is no session.  Cost: O(K log K) for the
    top-Ks' places."""
    session = _session(ctx)
    if session is None:
        return None
    return [session.report(ctx.now_ms())]


@command("hotkeys|reset", arity=2, flags=_SUB, group="server", since="8.6.0",
         complexity="O(1)", summary="Release the resources used for hotkey tracking.")
def hotkeys_reset(ctx: Ctx, argv: list[bytes]) -> Reply:
    """HOTKEYS RESET

    Drops a stopped session's results (OK also when there are none).
    Cost: O(1)."""
    session = _session(ctx)
    if session is not None and session.active:
        raise CommandError(HOTKEYS_RESET_ACTIVE)
    ctx.engine.hotkeys = None
    return OK


help_command("hotkeys", group="server", since="8.6.1",
             summary="Return helpful text about HOTKEYS command parameters.")
