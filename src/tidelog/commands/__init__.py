"""Command handlers, one sub-package per family (Redis's ``t_*.c`` grouping).

The command table (:data:`tidelog.commands.table.COMMANDS`) is filled by the
``@command`` decorators of the modules listed here, in one place, and in
this order: the order ``COMMAND`` lists the commands in.  Importing this
package builds the whole table; no other import adds to it.  The commands
whose work is done above the engine (SAVE, BGSAVE, WAIT, REPLICAOF ...) are
here too: they read their arguments and ask the engine's ``persistence``
or ``replication`` interface for the work.

A new module that registers commands is added to both lists below
(``tests/unit/test_command_table.py`` fails otherwise)."""

# The imports below are in the table's order, not sorted.
# isort: off
from .acl import acl
from .keys import keys
from .keys import expire
from .keys import objects
from .array import arrays
from .array import query
from .array import cursor
from .array import arinfo
from .bitmap import bitmaps
from .server import cluster
from .server import command_docs
from .server import config
from .session import handshake
from .session import client
from .keys import db_ops
from .server import debug
from .keys import dump
from .zset import zsets
from .zset import ranges
from .zset import pops as zset_pops
from .zset import setops
from .zset import scan
from .zset import geo
from .hash import hash_ttl
from .hash import hashes
from .hash import himport
from .server import hotkeys
from .hyperloglog import hyperloglog
from .stream import idmp
from .server import info
from .list import push
from .list import pops as list_pops
from .list import moves
from .list import lists
from .server import lolwut
from .server import memory
from .keys import migrate
from .server import module
from .server import monitoring
from .stream import pel
from .server import persistence
from .pubsub import pubsub
from .server import replication
from .scripting import scripting
from .server import server
from .set import sets
from .keys import sort
from .stream import streams
from .stream import edits
from .stream import xread
from .string import string_conditions
from .string import strings
from .string import string_increx
from .string import string_ranges
from .keys import stage
from .session import tracking
from .transactions import transactions
from .stream import xgroup
from .stream import xinfo
from .stream import xreadgroup
from .session import cluster_mode
# isort: on

# Every module that registers commands, in the table's order.
MODULES = (
    acl,
    keys,
    expire,
    objects,
    arrays,
    query,
    cursor,
    arinfo,
    bitmaps,
    cluster,
    command_docs,
    config,
    handshake,
    client,
    db_ops,
    debug,
    dump,
    zsets,
    ranges,
    zset_pops,
    setops,
    scan,
    geo,
    hash_ttl,
    hashes,
    himport,
    hotkeys,
    hyperloglog,
    idmp,
    info,
    push,
    list_pops,
    moves,
    lists,
    lolwut,
    memory,
    migrate,
    module,
    monitoring,
    pel,
    persistence,
    pubsub,
    replication,
    scripting,
    server,
    sets,
    sort,
    streams,
    edits,
    xread,
    string_conditions,
    strings,
    string_increx,
    string_ranges,
    stage,
    tracking,
    transactions,
    xgroup,
    xinfo,
    xreadgroup,
    cluster_mode,
)
