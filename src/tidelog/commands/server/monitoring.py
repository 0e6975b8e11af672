"""The operator's view of the server: MONITOR, SLOWLOG and LATENCY.

MONITOR makes the calling client a monitor: the engine shows it every
command run afterwards (``Engine.feed_monitors``), in Redis's line format.

SLOWLOG and LATENCY read what the engine recorded while running commands
(``Engine._slow_call``: one comparison of the duration it measures anyway
with the lower of the two thresholds) and the per-command histograms of
:mod:`tidelog.types.latency`.  LATENCY GRAPH draws its own chart (the
header lines are Redis's); LATENCY DOCTOR's texts are Redis's for a
disabled monitor and for no spikes, and a shorter report otherwise.
"""

from __future__ import annotations

from ...errors import (
    MONITOR_DENY_BLOCKING,
    SLOWLOG_COUNT,
    CommandError,
    no_latency_samples,
    subcommand_syntax,
)
from ...resp.replies import OK, Map, RawReply, Verbatim
from ...types.latency import LatencyEvent, cumulative
from ..args import parse_int
from ..contract import Ctx
from ..key_specs import ND
from ..replies import help_command
from ..table import command


# =====================================================================================
# MONITOR
# =====================================================================================
@command("monitor", arity=1, flags="admin noscript loading stale", group="server",
         since="1.0.0", complexity="O(1)",
         summary="Listen for all requests received by the server in real-time")
def monitor(ctx: Ctx, argv: list[bytes]) -> object:
    """MONITOR"""
    if not ctx.may_block:  # inside MULTI
        raise CommandError(MONITOR_DENY_BLOCKING)
    if ctx.client.monitor:  # a monitor already: Redis answers nothing
        return RawReply(b"")
    ctx.engine.add_monitor(ctx.client)
    return OK


# =====================================================================================
# SLOWLOG
# =====================================================================================
@command("slowlog", arity=-2, group="server", since="2.2.12", complexity="Depends on subcommand.",
         summary="A container for slow log commands", container=True, help=(
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
))
def slowlog(ctx: Ctx, argv: list[bytes]) -> object:
    """SLOWLOG subcommand [argument ...]"""


@command("slowlog|get", arity=-2, flags="admin loading stale", group="server", since="2.2.12",
         complexity="O(N) where N is the number of entries returned",
         summary="Get the slow log's entries",
         tips=("request_policy:all_nodes", ND))
def slowlog_get(ctx: Ctx, argv: list[bytes]) -> object:
    """SLOWLOG GET [count]"""
    if len(argv) > 3:
        raise subcommand_syntax(argv[1], argv[0])
    count = 10
    if len(argv) == 3:
        count = parse_int(argv[2], SLOWLOG_COUNT)
        if count < -1:
            raise CommandError(SLOWLOG_COUNT)
    entries = list(ctx.engine.slowlog)
    if count != -1:
        entries = entries[:count]
    return [[e.id, e.time, e.micros, list(e.argv), e.addr, e.name] for e in entries]


@command("slowlog|len", arity=2, flags="admin loading stale", group="server", since="2.2.12",
         complexity="O(1)", summary="Get the slow log's length",
         tips=("request_policy:all_nodes", "response_policy:agg_sum", ND))
def slowlog_len(ctx: Ctx, argv: list[bytes]) -> object:
    """SLOWLOG LEN"""
    return len(ctx.engine.slowlog)


@command("slowlog|reset", arity=2, flags="admin loading stale", group="server", since="2.2.12",
         complexity="O(N) where N is the number of entries in the slowlog",
         summary="Clear all entries from the slow log",
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"))
def slowlog_reset(ctx: Ctx, argv: list[bytes]) -> object:
    """SLOWLOG RESET"""
    ctx.engine.slowlog.clear()  # the ids go on counting, as in Redis
    return OK


help_command("slowlog", group="server", since="6.2.0",
             summary="Show helpful text about the different subcommands")


# =====================================================================================
# LATENCY
# =====================================================================================
@command("latency", arity=-2, group="server", since="2.8.13", complexity="Depends on subcommand.",
         summary="A container for latency diagnostics commands", container=True, help=(
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the "
    "specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
))
def latency(ctx: Ctx, argv: list[bytes]) -> object:
    """LATENCY subcommand [argument ...]"""


@command("latency|latest", arity=2, flags="admin noscript loading stale", group="server",
         since="2.8.13", complexity="O(1)",
         summary="Return the latest latency samples for all events.",
         tips=(ND, "request_policy:all_nodes", "response_policy:special"))
def latency_latest(ctx: Ctx, argv: list[bytes]) -> object:
    """LATENCY LATEST"""
    return [[name.encode(), event.samples[-1][0], event.samples[-1][1], event.max]
            for name, event in ctx.engine.latency_events.items() if event.samples]


@command("latency|history", arity=3, flags="admin noscript loading stale", group="server",
         since="2.8.13", complexity="O(1)",
         summary="Return timestamp-latency samples for the event.",
         tips=(ND, "request_policy:all_nodes", "response_policy:special"))
def latency_history(ctx: Ctx, argv: list[bytes]) -> object:
    """LATENCY HISTORY event"""
    event = ctx.engine.latency_events.get(argv[2].decode("latin-1"))
    return [] if event is None else [[t, ms] for t, ms in event.samples]


@command("latency|reset", arity=-2, flags="admin noscript loading stale", group="server",
         since="2.8.13", complexity="O(1)", summary="Reset latency data for one or more events.",
         tips=("request_policy:all_nodes", "response_policy:all_succeeded"))
def latency_reset(ctx: Ctx, argv: list[bytes]) -> object:
    """LATENCY RESET [event [event ...]]"""
    events = ctx.engine.latency_events
    if len(argv) == 2:
        count = len(events)
        events.clear()
        return count
    count = 0
    for name in dict.fromkeys(a.decode("latin-1") for a in argv[2:]):
        if events.pop(name, None) is not None:
            count += 1
    return count


def _graph(name: str, event: LatencyEvent, now: int) -> str:
    """An ASCII chart of an event's samples: a column per sample (oldest
    first), its height the latency between the low and the high, and
    under it how long ago it was (``10s``, ``3m``...), written downwards."""
    samples = event.samples[-GRAPH_COLUMNS:]
    values = [ms for _, ms in samples]
    high, low = max(values), min(values)
    lines = [f"{name} - high {high} ms, low {low} ms (all time high {event.max} ms)",
             "-" * GRAPH_COLUMNS]
    rows = GRAPH_ROWS
    heights = [rows if high == low else round((ms - low) * (rows - 1) / (high - low)) + 1
               for ms in values]
    for row in range(rows, 0, -1):
        lines.append("".join("#" if h == row else "|" if h > row else
                             "_" if row == 1 else " " for h in heights).rstrip())
    labels = [_ago(now - t) for t, _ in samples]
    width = max(len(label) for label in labels)
    for i in range(width):
        lines.append("".join(label[i] if i < len(label) else " " for label in labels).rstrip())
    return "\n".join(lines) + "\n"


def _ago(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


GRAPH_COLUMNS = 80
GRAPH_ROWS = 4


@command("latency|graph", arity=3, flags="admin noscript loading stale", group="server",
         since="2.8.13", complexity="O(1)", summary="Return a latency graph for the event.",
         tips=(ND, "request_policy:all_nodes", "response_policy:special"))
def latency_graph(ctx: Ctx, argv: list[bytes]) -> object:
    """LATENCY GRAPH event"""
    name = argv[2].decode("latin-1")
    event = ctx.engine.latency_events.get(name)
    if event is None or not event.samples:
        raise no_latency_samples(argv[2])
    return Verbatim(_graph(name, event, int(ctx.engine.clock.now_ms() // 1000)).encode())


_DOCTOR_DISABLED = (
    "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
    "You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. "
    "If we weren't in a deep space mission I'd suggest to take a look at "
    "https://redis.io/topics/latency-monitor.\n")
_DOCTOR_CALM = (
    "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
    "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think "
    "things over.\n")
_DOCTOR_SPIKES = ("Dave, I have observed latency spikes in this Redis instance. "
                  "You don't mind talking about it, do you Dave?\n\n")
_ADVICE_SLOWLOG = (
    "- Check your Slow Log to understand what are the commands you are running which are too "
    "slow to execute. Please check https://redis.io/commands/slowlog for more information.")
_ADVICE_BIG_DELETES = (
    "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking "
    "operation. If you have very large objects that are often deleted, expired, or evicted, try "
    "to fragment those objects into multiple smaller objects.")
_ADVICE_FSYNC = (
    "- Your fsync policy is set to 'always'. It is very hard to get good performances with such "
    "a setup, if possible try to relax the fsync policy to 'everysec'.")
_ADVICE_DISK = (
    "- The AOF is written and synced by the same thread that serves clients: a slow disk "
    "delays every client. Consider a faster disk, or appendfsync everysec.")


def _doctor(ctx: Ctx) -> str:
    engine = ctx.engine
    if not engine.latency_threshold_ms:
        return _DOCTOR_DISABLED
    events = [(n, e) for n, e in engine.latency_events.items() if e.samples]
    if not events:
        return _DOCTOR_CALM
    out = [_DOCTOR_SPIKES]
    advice: list[str] = []
    for number, (name, event) in enumerate(events, start=1):
        values = [ms for _, ms in event.samples]
        average = sum(values) // len(values)
        deviation = sum(abs(v - average) for v in values) // len(values)
        span = event.samples[-1][0] - event.samples[0][0]
        period = span / len(values)
        out.append(f"{number}. {name}: {len(values)} latency spikes (average {average}ms, "
                   f"mean deviation {deviation}ms, period {period:.2f} sec). "
                   f"Worst all time event {event.max}ms.\n")
        if name in ("command", "fast-command"):
            advice += [_ADVICE_SLOWLOG, _ADVICE_BIG_DELETES]
        elif name.startswith("aof-fsync"):
            advice += [_ADVICE_FSYNC if ctx.config["appendfsync"] == "always" else _ADVICE_DISK]
        elif name.startswith("aof"):
            advice.append(_ADVICE_DISK)
        elif name == "expire-cycle":
            advice.append(_ADVICE_BIG_DELETES)
    out.append("\nI have a few advices for you:\n\n")
    out.extend(line + "\n" for line in dict.fromkeys(advice))
    return "".join(out)


@command("latency|doctor", arity=2, flags="admin noscript loading stale", group="server",
         since="2.8.13", complexity="O(1)",
         summary="Return a human readable latency analysis report.",
         tips=(ND, "request_policy:all_nodes", "response_policy:special"))
def latency_doctor(ctx: Ctx, argv: list[bytes]) -> object:
    """LATENCY DOCTOR"""
    return Verbatim(_doctor(ctx).encode())


@command("latency|histogram", arity=-2, flags="admin noscript loading stale", group="server",
         since="7.0.0",
         complexity="O(N) where N is the number of commands with latency information being "
                    "retrieved.",
         summary="Return the cumulative distribution of latencies of a subset of commands or all.",
         tips=(ND, "request_policy:all_nodes", "response_policy:special"))
def latency_histogram(ctx: Ctx, argv: list[bytes]) -> object:
    """LATENCY HISTOGRAM [command [command ...]]"""
    tracked = {name: (calls, hist) for name, calls, hist in ctx.engine.latency_histograms()}
    if len(argv) == 2:
        names = list(tracked)
    else:
        names = [a.decode("latin-1").lower() for a in argv[2:]]
    out = []
    for name in names:  # a name asked twice is answered twice, as Redis does
        # a container (CLIENT) stands for its subcommands that were called
        found = [name] if name in tracked else [n for n in tracked if n.startswith(name + "|")]
        for each in found:
            calls, hist = tracked[each]
            out.append((each.encode(), Map([
                (b"calls", calls),
                (b"histogram_usec", Map(cumulative(hist))),
            ])))
    return Map(out)


help_command("latency", group="server", since="2.8.13",
             summary="Show helpful text about the different subcommands.")
