"""Tidelog: a stream server that speaks the Redis protocol.

Layout (imports point down only):

    server/     sockets, config files, start-up: the only place with I/O
    engine      execute(client, argv) -> reply | Blocked; transactions; blocking; effects
    commands/   one module per command family, and the command table
    keyspace    databases: key -> value, expiry, watched keys, keys made ready
    types/      pure data types (the stream: listpack macro nodes + node index)
    resp/       sans-IO RESP2/RESP3 request parser and reply encoder
    ids, errors, clock, config   leaves used by everything above

    spark/      the PySpark data source and archive job: a client of the server
                (redis-py only), importing nothing of the above
"""

__version__ = "0.1.0"
# The Redis version we report to clients (HELLO, INFO): the grammar we follow.
REDIS_VERSION = "7.0.15"

# The typed kernels (parser, encoder, listpack, IDs): compiled or pure twin.
from . import kernels as _kernels  # noqa: E402

_kernels.install()
