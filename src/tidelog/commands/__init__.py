"""Command handlers, one module per family; importing this package fills
:data:`tidelog.commands.table.COMMANDS`.  The persistence commands (SAVE,
BGSAVE, BGREWRITEAOF, DEBUG RELOAD ...) are registered by
:mod:`tidelog.persistence.commands`, from the layer above the engine."""

from . import (  # noqa: F401
    command_docs,
    config,
    connection,
    db_ops,
    debug,
    hash_ttl,
    hashes,
    idmp,
    info,
    keys,
    lists,
    memory,
    pel,
    pubsub,
    scripting,
    server,
    sets,
    sort,
    streams,
    string_conditions,
    string_ranges,
    strings,
    transactions,
    xgroup,
    xinfo,
    xreadgroup,
    zsets,
)
