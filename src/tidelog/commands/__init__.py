"""Command handlers, one module per family; importing this package fills
:data:`tidelog.commands.table.COMMANDS`."""

from . import (  # noqa: F401
    aof, connection, groups, idmp, keys, persistence, server, streams, strings, transactions,
)
