"""INFO: the sections Redis has, with what Tidelog measures.

Fields are Redis 8's, in its order, where Tidelog knows their value;
counters Tidelog does not keep are left out rather than invented.  Network
bytes are counted where the network layer reads and writes; the
instantaneous rates are sampled by the engine's cron as Redis samples them.
The persistence section comes from the engine's persistence.
"""

from __future__ import annotations

import logging
import os
import resource
import sys
import time
from collections.abc import Callable

from ... import REDIS_VERSION, __version__, heap, kernels
from ...config import show_percentile
from ...resp.replies import Verbatim
from ...types.latency import percentile_us
from ..args import ArgReader
from ..contract import Ctx
from ..key_specs import ALL_SHARDS, ND
from ..table import command

log = logging.getLogger("tidelog")


# =====================================================================================
# INFO
# =====================================================================================
def bytes_to_human(n: int) -> str:
    """Redis's bytesToHuman: 1023B, 1.00K, 1.50M ..."""
    if n < 1024:
        return f"{n}B"
    for unit in "KMGTP":
        n_units = n / 1024
        if n_units < 1024 or unit == "P":
            return f"{n_units:.2f}{unit}"
        n = n_units  # type: ignore[assignment]
    raise AssertionError  # pragma: no cover


def _total_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def _section_server(ctx: Ctx) -> list[str]:
    engine = ctx.engine
    import platform  # here, not at start-up: only INFO reads it

    uptime = int(engine.clock.monotonic() - engine.started)
    uname = platform.uname()
    return [
        f"redis_version:{REDIS_VERSION}",
        "redis_git_sha1:00000000",
        "redis_git_dirty:0",
        "redis_build_id:0",
        "redis_mode:standalone",
        f"tidelog_version:{__version__}",
        f"tidelog_kernels:{kernels.status()}",
        f"os:{uname.system} {uname.release} {uname.machine}",
        f"arch_bits:{64 if sys.maxsize > 2**32 else 32}",
        *_clock_and_poller(),
        f"python_version:{platform.python_version()}",
        f"process_id:{os.getpid()}",
        f"process_supervised:{ctx.config.supervised_by or 'no'}",
        f"run_id:{engine.run_id}",
        f"tcp_port:{ctx.config['port']}",
        f"server_time_usec:{engine.clock.now_us()}",
        f"uptime_in_seconds:{uptime}",
        f"uptime_in_days:{uptime // 86400}",
        f"hz:{ctx.config['hz']}",
        f"configured_hz:{ctx.config['hz']}",
        f"lru_clock:{(engine.clock.now_ms() // 1000) & ((1 << 24) - 1)}",
        f"executable:{os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ''}",
        f"config_file:{ctx.config.config_file or ''}",
        "io_threads_active:0",
        *_listeners(ctx),
    ]


def _clock_and_poller() -> list[str]:
    """monotonic_clock and multiplexing_api: what time.monotonic() reads,
    and what the event loop (uvloop, on libuv) polls with."""
    lines = []
    if time.get_clock_info("monotonic").implementation.startswith("clock_gettime"):
        lines.append("monotonic_clock:POSIX clock_gettime")
    poller = "epoll" if sys.platform.startswith("linux") else \
        "kqueue" if sys.platform == "darwin" or "bsd" in sys.platform else None
    if poller:
        lines.append(f"multiplexing_api:{poller}")
    return lines


def _listeners(ctx: Ctx) -> list[str]:
    """Redis 7.2's listener lines: one per kind of listening socket, numbered
    by kind as Redis numbers them (0 tcp, 1 unix, 2 tls)."""
    config = ctx.config
    binds = "".join(f",bind={address}" for address in config["bind"].split())
    lines = []
    if config["port"]:
        lines.append(f"listener0:name=tcp{binds},port={config['port']}")
    if config["unixsocket"]:
        lines.append(f"listener1:name=unix,bind={config['unixsocket']}")
    if config["tls-port"]:
        lines.append(f"listener2:name=tls{binds},port={config['tls-port']}")
    return lines


def _section_clients(ctx: Ctx) -> list[str]:
    engine = ctx.engine
    clients = engine.clients.values()
    watching, watched_keys = engine.watched_keys()
    blocking_keys, blocking_keys_on_nokey = engine.blocking_keys()
    return [
        # Replicas are not counted, as Redis does not count them.
        f"connected_clients:{sum(1 for c in clients if c.kind != 'replica')}",
        "cluster_connections:0",
        f"maxclients:{ctx.config['maxclients']}",
        f"blocked_clients:{engine.blocked_clients}",
        f"tracking_clients:{engine.tracking.clients}",
        # Redis 7.4: clients subscribed to anything, clients with WATCHed keys.
        f"pubsub_clients:{sum(1 for c in clients if c.pubsub is not None)}",
        f"watching_clients:{watching}",
        f"clients_in_timeout_table:{engine.blocked_with_timeout()}",
        f"total_watched_keys:{watched_keys}",  # Redis 7.4, as the two below
        f"total_blocking_keys:{blocking_keys}",
        f"total_blocking_keys_on_nokey:{blocking_keys_on_nokey}",
    ]


def _section_memory(ctx: Ctx) -> list[str]:
    rss = heap.rss()
    used = heap.used()
    peak = max(rss, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    total = _total_memory()
    maxmemory = ctx.config["maxmemory"]
    return [
        f"used_memory:{used}",
        f"used_memory_human:{bytes_to_human(used)}",
        f"used_memory_rss:{rss}",
        f"used_memory_rss_human:{bytes_to_human(rss)}",
        f"used_memory_peak:{peak}",
        f"used_memory_peak_human:{bytes_to_human(peak)}",
        f"used_memory_peak_perc:{used * 100 / peak if peak else 0:.2f}%",
        f"total_system_memory:{total}",
        f"total_system_memory_human:{bytes_to_human(total)}",
        *_script_memory(ctx),
        f"maxmemory:{maxmemory}",
        f"maxmemory_human:{bytes_to_human(maxmemory)}",
        f"maxmemory_policy:{ctx.config['maxmemory-policy']}",
        # Redis leaves its replication and AOF buffers out of the memory it
        # weighs against maxmemory; Tidelog weighs all of used_memory.
        "mem_not_counted_for_evict:0",
        "mem_allocator:pymalloc",
        "active_defrag_running:0",
        # UNLINK (and DEL under lazyfree-lazy-user-del) leaves a large value
        # to be freed after the reply (Engine.free_later); FLUSHALL ASYNC frees
        # at once.
        f"lazyfree_pending_objects:{len(ctx.engine.lazyfree_pending)}",
        f"lazyfreed_objects:{ctx.engine.lazyfreed_objects}",
    ]


def _script_memory(ctx: Ctx) -> list[str]:
    """The scripting lines Redis 7 shows: the scripts' and functions' sizes
    (the bytes of their code) and counts."""
    scripts = ctx.engine.scripts
    eval_bytes = scripts.memory()
    function_bytes = sum(len(lib.code) for lib in scripts.libraries.values())
    return [
        f"used_memory_scripts_eval:{eval_bytes}",
        f"number_of_cached_scripts:{len(scripts.cache)}",
        f"number_of_functions:{len(scripts.functions)}",
        f"number_of_libraries:{len(scripts.libraries)}",
        f"used_memory_functions:{function_bytes}",
        f"used_memory_scripts:{eval_bytes + function_bytes}",
        f"used_memory_scripts_human:{bytes_to_human(eval_bytes + function_bytes)}",
    ]


def _section_persistence(ctx: Ctx) -> list[str]:
    return [
        "loading:0",
        "async_loading:0",
        *ctx.engine.persistence.info_lines(),
    ]


def _section_stats(ctx: Ctx) -> list[str]:
    stats = ctx.engine.stats
    metrics = ctx.engine.metrics
    repl_in, repl_out = stats["net_repl_input_bytes"], stats["net_repl_output_bytes"]
    return [
        f"total_connections_received:{stats['total_connections_received']}",
        f"total_commands_processed:{ctx.engine.total_commands_processed}",
        f"instantaneous_ops_per_sec:{metrics.ops.value()}",
        # Redis's totals include the replication link's bytes (7.0+).
        f"total_net_input_bytes:{stats['net_input_bytes'] + repl_in}",
        f"total_net_output_bytes:{stats['net_output_bytes'] + repl_out}",
        f"total_net_repl_input_bytes:{repl_in}",
        f"total_net_repl_output_bytes:{repl_out}",
        f"instantaneous_input_kbps:{metrics.net_input.value() / 1024:.2f}",
        f"instantaneous_output_kbps:{metrics.net_output.value() / 1024:.2f}",
        f"instantaneous_input_repl_kbps:{metrics.net_repl_input.value() / 1024:.2f}",
        f"instantaneous_output_repl_kbps:{metrics.net_repl_output.value() / 1024:.2f}",
        f"rejected_connections:{stats['rejected_connections']}",
        f"sync_full:{stats['sync_full']}",
        f"sync_partial_ok:{stats['sync_partial_ok']}",
        f"sync_partial_err:{stats['sync_partial_err']}",
        f"expired_keys:{stats['expired_keys']}",
        f"expired_subkeys:{stats['expired_subkeys']}",  # Redis 7.4: hash fields
        f"expire_cycle_cpu_milliseconds:{stats['expire_cycle_ns'] // 1_000_000}",
        f"evicted_keys:{stats['evicted_keys']}",
        "evicted_clients:0",  # no maxmemory-clients: no client is ever evicted
        f"keyspace_hits:{stats['keyspace_hits']}",
        f"keyspace_misses:{stats['keyspace_misses']}",
        f"pubsub_channels:{len(ctx.engine.pubsub.channels)}",
        f"pubsub_patterns:{ctx.engine.pubsub.numpat()}",
        f"pubsubshard_channels:{len(ctx.engine.pubsub.shard_channels)}",
        f"latest_fork_usec:{stats['latest_fork_usec']}",
        f"total_forks:{stats['total_forks']}",
        f"migrate_cached_sockets:{len(ctx.engine.migrate_sockets)}",
        # No active defragmentation.
        "active_defrag_hits:0",
        "active_defrag_misses:0",
        "active_defrag_key_hits:0",
        "active_defrag_key_misses:0",
        *ctx.engine.tracking.info_stats(),
        f"unexpected_error_replies:{stats['unexpected_error_replies']}",
        f"total_error_replies:{stats['total_error_replies']}",
        "io_threaded_reads_processed:0",  # one thread does all the network's work
        "io_threaded_writes_processed:0",
        "client_query_buffer_limit_disconnections:"
        f"{stats['client_query_buffer_limit_disconnections']}",
        # Redis 7.4: clients closed for passing client-output-buffer-limit.
        "client_output_buffer_limit_disconnections:"
        f"{stats['client_output_buffer_limit_disconnections']}",
        *(f"{k}:{v}" for k, v in stats.items() if k not in _STATS_SHOWN),
    ]


_STATS_SHOWN = {
    "total_connections_received", "total_commands_processed", "rejected_connections",
    "expired_keys", "expired_subkeys", "keyspace_hits", "keyspace_misses", "unexpected_error_replies",
    "total_error_replies", "sync_full", "sync_partial_ok", "sync_partial_err",
    "client_output_buffer_limit_disconnections", "evicted_keys",
    "net_input_bytes", "net_output_bytes",
    "net_repl_input_bytes", "net_repl_output_bytes", "client_query_buffer_limit_disconnections",
    "total_forks", "latest_fork_usec", "expire_cycle_ns",
}


def _section_replication(ctx: Ctx) -> list[str]:
    return ctx.engine.replication.info_lines()


def _section_cpu(ctx: Ctx) -> list[str]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    thread = getattr(resource, "RUSAGE_THREAD", None)
    main = resource.getrusage(thread) if thread is not None else me
    return [
        f"used_cpu_sys:{me.ru_stime:.6f}",
        f"used_cpu_user:{me.ru_utime:.6f}",
        f"used_cpu_sys_children:{children.ru_stime:.6f}",
        f"used_cpu_user_children:{children.ru_utime:.6f}",
        f"used_cpu_sys_main_thread:{main.ru_stime:.6f}",
        f"used_cpu_user_main_thread:{main.ru_utime:.6f}",
    ]


def _section_commandstats(ctx: Ctx) -> list[str]:
    # usec is the time in the command's handler (a blocked command's wait is
    # not in it); rejected calls never ran (arity, refused in MULTI), failed
    # ones answered an error.
    return [f"cmdstat_{name}:calls={calls},usec={usec},"
            f"usec_per_call={usec / calls if calls else 0:.2f},rejected_calls={rejected},"
            f"failed_calls={failed}"
            for name, calls, usec, rejected, failed in ctx.engine.command_stats()]


def _section_errorstats(ctx: Ctx) -> list[str]:
    # in byte order of the codes, as Redis lists them (a radix tree)
    return [f"errorstat_{code}:count={count}"
            for code, count in sorted(ctx.engine.error_counts.items())]


def _section_cluster(ctx: Ctx) -> list[str]:
    return [f"cluster_enabled:{1 if ctx.config['cluster-enabled'] else 0}"]


def _section_keyspace(ctx: Ctx) -> list[str]:
    lines = []
    now = ctx.now_ms()
    for db in ctx.engine.dbs:
        if not len(db):
            continue
        expires = db.expires
        avg_ttl = sum(max(0, w - now) for w in expires.values()) // len(expires) if expires else 0
        lines.append(f"db{db.index}:keys={len(db)},expires={len(expires)},avg_ttl={avg_ttl}")
    return lines


def _section_latencystats(ctx: Ctx) -> list[str]:
    percentiles = ctx.config["latency-tracking-info-percentiles"]
    lines = []
    for name, _calls, hist in ctx.engine.latency_histograms():
        values = ",".join(f"p{show_percentile(p)}={percentile_us(hist, p):.3f}"
                          for p in percentiles)
        lines.append(f"latency_percentiles_usec_{name}:{values}")
    return lines


def _section_hotkeys(ctx: Ctx) -> list[str] | None:
    """HOTKEYS (8.6): present while a session exists, recording (1) or stopped
    (0); gone before the first HOTKEYS START and after HOTKEYS RESET (as the
    Jedis and Lettuce tests of Redis 8.6 read it).  O(1)."""
    session = ctx.engine.hotkeys
    if session is None:
        return None
    if session.expire(ctx.now_ms()):  # its DURATION ran out: stopped now
        ctx.engine.hotkeys_changed()
    return [f"hotkeys-tracking-active:{1 if session.active else 0}"]


def _empty(ctx: Ctx) -> list[str]:
    return []


# (name as asked, header, generator, in "default")
_SECTIONS: list[tuple[str, str, Callable[[Ctx], list[str] | None], bool]] = [
    ("server", "Server", _section_server, True),
    ("clients", "Clients", _section_clients, True),
    ("memory", "Memory", _section_memory, True),
    ("persistence", "Persistence", _section_persistence, True),
    ("stats", "Stats", _section_stats, True),
    ("replication", "Replication", _section_replication, True),
    ("cpu", "CPU", _section_cpu, True),
    ("modules", "Modules", _empty, True),
    ("commandstats", "Commandstats", _section_commandstats, False),
    ("errorstats", "Errorstats", _section_errorstats, True),
    ("latencystats", "Latencystats", _section_latencystats, False),
    ("cluster", "Cluster", _section_cluster, True),
    ("keyspace", "Keyspace", _section_keyspace, True),
    ("hotkeys", "Hotkeys", _section_hotkeys, True),  # only while a HOTKEYS session exists
]


def info_text(ctx: Ctx, wanted: list[bytes]) -> bytes:
    """The INFO report for the requested sections (Redis's selection rules)."""
    names = {w.decode("latin-1").lower() for w in wanted} or {"default"}
    everything = bool(names & {"all", "everything"})
    default = "default" in names
    parts = []
    for name, header, generate, in_default in _SECTIONS:
        if everything or name in names or (default and in_default):
            lines = generate(ctx)
            if lines is not None:  # None: a section absent for now (Hotkeys)
                parts.append("".join(f"{line}\r\n" for line in [f"# {header}", *lines]))
    return "\r\n".join(parts).encode()


@command("info", arity=-1, flags="loading stale", group="server", since="1.0.0",
         complexity="O(1)", summary="Get information and statistics about the server",
         categories=("@dangerous",),
         tips=(ND, ALL_SHARDS, "response_policy:special"))
def info(ctx: Ctx, argv: list[bytes]) -> object:
    """INFO [section [section ...]]"""
    r = ArgReader(argv)
    sections = r.take(r.remaining())
    r.finish()
    return Verbatim(info_text(ctx, sections))
