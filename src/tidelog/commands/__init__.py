"""Command handlers, one module per family; importing this package fills
:data:`tidelog.commands.table.COMMANDS`."""

from . import connection, groups, idmp, keys, server, streams, strings, transactions  # noqa: F401
