"""Tidelog: a stream server that speaks the Redis protocol.

Layout (imports point down only):

    server/       sockets, config files, start-up, embedding: the only place with I/O
    replication/  a primary's side: replicas, the backlog, the stream of effects, WAIT;
                  the primary is what the engine holds as ``engine.replication``
    persistence/  RDB snapshots and the AOF; ``durability`` is what the engine holds
                  as ``engine.persistence`` (SAVE, BGSAVE, ... ask it for the work)
    engine        execute(client, argv) -> reply | BLOCKED; transactions; blocking;
                  effects to the AOF and to replicas
    commands/     ``contract`` (Ctx, Wait: what a handler gets and returns), ``table``,
                  ``args`` (ArgReader); shared pieces ``lookup``, ``scan_args``,
                  ``encoding``, ``replies``, ``key_specs`` (where a command's keys are
                  and whether it reads or writes them); then one sub-package per
                  command family, after Redis's t_*.c files (``stream/``, ``string/``,
                  ``hash/``, ``zset/``, ``keys/``, ``server/``, ``session/``, ``acl/``
                  ...), none importing another; ``__init__`` lists the modules that
                  fill the command table
    acl/          ACL users, their rules and checks, the ACL LOG and file (beside
                  commands/: it reads the command table)
    keyspace      databases: key -> value, expiry, watched keys, keys made ready
    rdb/          Redis's RDB encoding of one value (snapshots, DUMP, FUNCTION DUMP)
    types/        pure data types (the stream: listpack macro nodes + node index)
    resp/         sans-IO RESP2/RESP3 request parser and reply encoder
    ids, errors, clock, config     leaves used by everything above
    tls           the TLS contexts of tls-port and of a replica's link (Python's ssl)
    heap          the bytes the process has allocated (maxmemory, INFO used_memory)
    glob          Redis's glob patterns (KEYS, SCAN, PSUBSCRIBE, ACL patterns)
    lfu           Redis's LFU counter and the 24-bit per-key field it shares with the
                  LRU clock (maxmemory-policy; the keyspace keeps the field)
    callstats     a command's counters and the clock that times it (INFO commandstats)
    kernels       picks the compiled twin of resp, listpack, ids and callstats, or the pure one

    spark/        the PySpark data source and archive job: a client of the server
                  (redis-py only), importing nothing of the above
    client/       topics: one logical stream as partition streams spread over a
                  cluster's primaries, on redis-py's RedisCluster; a client too,
                  importing nothing of the above but keyslot

The layers are import-linter contracts in ``pyproject.toml``, checked by ``make test``.
"""

__version__ = "0.1.0"
# The Redis version we report to clients (HELLO, INFO, an RDB's redis-ver): the
# newest whose behaviour we follow (docs/compatibility.md lists what differs).
REDIS_VERSION = "8.10.0"

# The typed kernels (parser, encoder, listpack, IDs, call statistics): compiled or pure twin.
from . import kernels as _kernels  # noqa: E402

_kernels.install()
