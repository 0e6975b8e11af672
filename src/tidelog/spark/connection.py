"""Connections to the server and the few questions the planner asks it.

Clients are made from a ``redis://host:port/db`` URL (``rediss://`` and a
password in the URL work as redis-py reads them) and cached per process and
URL: Spark reuses its Python workers, so a task finds the connection the last
one opened.  Nothing here may be pickled; data source objects keep the URL and
call :func:`client` where they run.

Redis Cluster: ``cluster`` (the options' ``cluster``) True gives a redis-py
``RedisCluster`` for the URL's node, False a plain client, None asks the
server once per process (``INFO cluster``: ``cluster_enabled:1``).  The cluster
client routes every command by its key's slot and follows MOVED and ASK, so a
reshard or a failover between planning and reading changes where a range is
read, not what it holds.  ``replicas=True`` sends reads to the replicas of the
owning shard (redis-py sends them READONLY first).  :func:`shards` is the
topology as CLUSTER SHARDS gives it, for planning.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import redis
from redis.backoff import ExponentialBackoff
from redis.cluster import LoadBalancingStrategy, RedisCluster
from redis.crc import key_slot
from redis.retry import Retry

from .ids import MAX_ID, MIN_ID, StreamId, format_id, parse_id

_clients: dict[tuple, redis.Redis | RedisCluster] = {}
_modes: dict[tuple[int, str], bool] = {}
_lock = threading.Lock()


Conn = redis.Redis | RedisCluster
"""A client of one server or of a cluster (both answer what these functions ask)."""


def client(url: str, cluster: bool | None = None,
           replicas: bool = False) -> Conn:
    """A client for ``url``, shared by this process (a forked child gets its own):
    a cluster client when ``cluster`` (None: when the server is a cluster node),
    reading from replicas when ``replicas`` as well."""
    if cluster is None:
        cluster = is_cluster(url)
    key = (os.getpid(), url, cluster, cluster and replicas)
    with _lock:
        found = _clients.get(key)
        if found is None:
            if cluster:
                extra = {"load_balancing_strategy":
                         LoadBalancingStrategy.ROUND_ROBIN_REPLICAS} if replicas else {}
                found = RedisCluster.from_url(
                    url, decode_responses=False, socket_keepalive=True,
                    retry=Retry(ExponentialBackoff(cap=1.0, base=0.01), 20), **extra)
                _raw_nodes(found)
            else:
                found = redis.Redis.from_url(
                    url, decode_responses=False, socket_keepalive=True,
                    health_check_interval=30)
            # Raw replies: redis-py would turn entries into dicts, losing repeated
            # field names and their order, which streams keep.
            for name in RAW_REPLIES:
                found.set_response_callback(name, _raw)
            _clients[key] = found
        return found


def _raw_nodes(conn: RedisCluster) -> None:
    """Raw replies from the per-node clients as well: a command redirected by MOVED or
    ASK, and any single command, is parsed by the node's client, not the cluster's."""
    manager = conn.nodes_manager
    create = manager.create_redis_node

    def create_raw(host, port, **kwargs):
        node = create(host, port, **kwargs)
        for name in RAW_REPLIES:
            node.set_response_callback(name, _raw)
        return node

    # redis-py has no hook for the node clients it makes: wrap its factory
    manager.create_redis_node = create_raw  # type: ignore[method-assign]
    for node in manager.nodes_cache.values():
        if node.redis_connection is not None:
            for name in RAW_REPLIES:
                node.redis_connection.set_response_callback(name, _raw)


def is_cluster(url: str) -> bool:
    """Whether the server at ``url`` runs in cluster mode (``INFO cluster``), asked
    once per process."""
    key = (os.getpid(), url)
    found = _modes.get(key)
    if found is None:
        conn = client(url, cluster=False)
        found = _modes[key] = bool(conn.info("cluster").get("cluster_enabled"))
    return found


@dataclass(frozen=True)
class Shard:
    """One shard of a cluster: its primary's and replicas' ``host:port`` and its slots."""

    primary: str
    replicas: tuple[str, ...]
    slots: tuple[tuple[int, int], ...]    # inclusive ranges


def shards(conn: RedisCluster) -> list[Shard]:
    """The cluster's shards as a primary of it answers CLUSTER SHARDS (O(nodes)),
    online replicas only, sorted by primary address."""
    reply = conn.execute_command("CLUSTER", "SHARDS", target_nodes=RedisCluster.RANDOM)
    out = []
    for shard in reply:
        info = _pairs(shard)
        slots = info[b"slots"]
        primary, replicas = None, []
        for node in info[b"nodes"]:
            n = _pairs(node)
            host = n.get(b"ip") or n.get(b"endpoint") or n.get(b"hostname")
            port = n.get(b"port") or n.get(b"tls-port")
            if host is None or port is None:  # a node not reachable by clients
                continue
            address = f"{_text(host)}:{int(port)}"
            if _text(n.get(b"role")) == "master":
                primary = address
            elif _text(n.get(b"health")) == "online":
                replicas.append(address)
        if primary is None or not slots:
            continue
        ranges = tuple((int(slots[i]), int(slots[i + 1])) for i in range(0, len(slots) - 1, 2))
        out.append(Shard(primary, tuple(sorted(replicas)), ranges))
    return sorted(out, key=lambda s: s.primary)


def owners(shards_: Sequence[Shard], keys: Iterable[str]) -> dict[str, Shard]:
    """Per key, the shard whose slots hold it (keys of slots no shard serves are left
    out).  O(keys * log ranges)."""
    table = sorted((lo, hi, s) for s in shards_ for lo, hi in s.slots)
    starts = [lo for lo, _, _ in table]
    out = {}
    for key in keys:
        slot = key_slot(key.encode())
        i = bisect.bisect_right(starts, slot) - 1
        if i >= 0 and table[i][1] >= slot:
            out[key] = table[i][2]
    return out


def _pairs(reply) -> dict:
    if isinstance(reply, dict):
        return reply
    return {reply[i]: reply[i + 1] for i in range(0, len(reply) - 1, 2)}


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


RAW_REPLIES = ("XRANGE", "XREVRANGE", "XINFO STREAM", "XINFO GROUPS", "COMMAND")


def _raw(reply, **_options):
    return reply


def resolve_keys(conn: Conn, keys: Sequence[str], pattern: str | None) -> list[str]:
    """The stream keys to read, sorted: ``keys`` as given, or every stream key that
    matches ``pattern`` (SCAN MATCH ... TYPE stream: O(N) in the keyspace size).
    """
    if not pattern:
        return sorted(set(keys))
    if isinstance(conn, RedisCluster):   # every primary holds some of the keys
        nodes = [conn.get_redis_connection(n) for n in conn.get_primaries()]
    else:
        nodes = [conn]
    found = {k.decode() for node in nodes
             for k in node.scan_iter(match=pattern, count=1000, _type="stream")}
    return sorted(found)


def entry_bounds(conn: Conn, keys: Sequence[str], lo: StreamId = MIN_ID,
                 hi: StreamId = MAX_ID) -> dict[str, tuple[StreamId, StreamId] | None]:
    """Per key, the first and last entry ID within ``[lo, hi]``, or None when there is
    none.  One pipeline of two O(log N) range lookups per key.
    """
    pipe = conn.pipeline(transaction=False)
    for key in keys:
        pipe.execute_command("XRANGE", key, format_id(lo), format_id(hi), "COUNT", 1)
        pipe.execute_command("XREVRANGE", key, format_id(hi), format_id(lo), "COUNT", 1)
    replies = pipe.execute(raise_on_error=False)
    bounds: dict[str, tuple[StreamId, StreamId] | None] = {}
    for i, key in enumerate(keys):
        first, last = replies[2 * i], replies[2 * i + 1]
        for reply in (first, last):
            if isinstance(reply, Exception):
                raise reply
        bounds[key] = (parse_id(first[0][0]), parse_id(last[0][0])) if first and last else None
    return bounds


def last_ids(conn: Conn, keys: Iterable[str]) -> dict[str, StreamId | None]:
    """Per key, the ID of its last entry (None: empty or missing).  O(log N) each."""
    keys = list(keys)
    pipe = conn.pipeline(transaction=False)
    for key in keys:
        pipe.execute_command("XREVRANGE", key, "+", "-", "COUNT", 1)
    out: dict[str, StreamId | None] = {}
    for key, reply in zip(keys, pipe.execute()):
        out[key] = parse_id(reply[0][0]) if reply else None
    return out


def has_command(conn: Conn, name: str) -> bool:
    """Whether the server knows command ``name`` (COMMAND INFO); Tidelog has the Redis 8
    stream commands while reporting the 7.0 grammar version, so features are probed."""
    if isinstance(conn, RedisCluster):     # any node: they run the same server
        conn = conn.get_redis_connection(conn.get_random_node())
    reply = conn.execute_command("COMMAND", "INFO", name)
    if isinstance(reply, dict):             # a node's client parses the reply
        return any(v is not None for v in reply.values())
    return bool(reply) and reply[0] is not None
