"""The replication commands, registered from this side of the layers:
REPLCONF, PSYNC, SYNC (a replica's), WAIT, ROLE (anybody's) and FAILOVER.

They act on the engine's :class:`~tidelog.replication.primary.Primary`
(:func:`~tidelog.replication.primary.attach`); INFO replication reaches it
through the engine's declared ``replication``.
"""

from __future__ import annotations

from .. import errors
from ..commands.args import parse_int
from ..commands.contract import Ctx, Reply, Wait
from ..commands.table import command
from ..errors import CommandError
from ..persistence.durability import attach as durability
from ..resp.replies import OK, RawReply, SimpleString
from .primary import ACK_KEY, Primary, attach

NO_REPLY = RawReply(b"")
ALREADY_CONNECTED = SimpleString(b"OK Already connected to specified master")


@command("replconf", arity=-1, flags="admin noscript loading stale allow_busy", group="server",
         since="3.0.0", complexity="O(1)",
         summary="An internal command for configuring the replication stream")
def replconf(ctx: Ctx, argv: list[bytes]) -> Reply:
    """REPLCONF <option> <value> [<option> <value> ...]"""
    if len(argv) % 2 == 0:
        raise CommandError(errors.SYNTAX)
    primary = attach(ctx.engine)
    client = ctx.client
    for i in range(1, len(argv), 2):
        option, value = argv[i].lower(), argv[i + 1]
        if option == b"listening-port":
            primary.link_for(client).listening_port = parse_int(value)
        elif option == b"ip-address":
            primary.link_for(client).ip = value.decode("latin-1")
        elif option == b"capa":
            primary.link_for(client).capa.add(value.lower())
        elif option == b"ack":
            # A replica's offset (and, Redis 7.2+, "FACK <offset>" its AOF's);
            # never answered (nor from a non-replica).
            try:
                offset = int(value)
                fack = int(argv[i + 3]) if len(argv) > i + 3 and \
                    argv[i + 2].lower() == b"fack" else None
            except ValueError:
                return NO_REPLY
            primary.acked(client, offset, fack)
            return NO_REPLY
        elif option == b"getack":
            return NO_REPLY  # only a replica answers GETACK
        elif option in (b"rdb-only", b"rdb-filter-only", b"version"):
            pass  # accepted and ignored: a full snapshot is always sent
        else:
            raise errors.replconf_unknown(argv[i])
    return OK


def _sync_source(ctx: Ctx) -> Primary | None:
    """The primary a PSYNC/SYNC is served from; None for a client that is a
    replica already.  A replica whose own link is down refuses."""
    if ctx.client.kind == "replica":
        return None
    primary = attach(ctx.engine)
    if primary.failover is not None:
        raise CommandError(errors.NO_SYNC_FAILING_OVER)
    if primary.upstream is not None and not primary.upstream.link_up:
        raise CommandError(errors.NO_MASTER_LINK)
    return primary


@command("psync", arity=-3, flags="admin noscript no_async_loading no_multi", group="server",
         since="2.8.0", complexity="O(N) for a full sync, N the size of the data set; "
         "O(M) for a partial one, M the bytes sent from the backlog",
         summary="An internal command used in replication")
def psync(ctx: Ctx, argv: list[bytes]) -> Reply:
    """PSYNC replicationid offset [FAILOVER]

    With FAILOVER (sent by a primary handing its role over, see
    :mod:`.primary`): when the ID is ours, that is, our primary's, stop
    following it and serve the PSYNC as a primary."""
    if ctx.client.kind != "replica" and len(argv) > 3 and argv[3].lower() == b"failover":
        primary = attach(ctx.engine)
        if primary.upstream is None:
            raise CommandError(errors.PSYNC_FAILOVER_TO_PRIMARY)
        if argv[1].decode("latin-1") != primary.replid:
            raise CommandError(errors.PSYNC_FAILOVER_REPLID)
        primary.become_primary(f"id={ctx.client.id} addr={ctx.client.addr}",
                               why="failover request")
    primary = _sync_source(ctx)
    if primary is None:
        return NO_REPLY  # already a replica: Redis ignores the request
    return primary.psync(ctx.client, argv[1], argv[2])


@command("sync", arity=1, flags="admin noscript no_async_loading no_multi", group="server",
         since="1.0.0", complexity="O(N), N the size of the data set",
         summary="An internal command used in replication")
def sync(ctx: Ctx, argv: list[bytes]) -> Reply:
    """SYNC"""
    primary = _sync_source(ctx)
    if primary is None:
        return NO_REPLY
    return primary.psync(ctx.client, b"?", b"-1", legacy_sync=True)


@command("wait", arity=3, flags="blocking", group="generic", since="3.0.0",
         complexity="O(1)", categories=("-@keyspace", "@connection"),
         summary="Blocks until the asynchronous replication of all preceding write "
                 "commands sent by the connection is completed")
def wait(ctx: Ctx, argv: list[bytes]) -> Reply:
    """WAIT numreplicas timeout"""
    wanted = parse_int(argv[1])
    timeout_ms = parse_int(argv[2], errors.TIMEOUT_NOT_INTEGER)
    if timeout_ms < 0:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    primary = attach(ctx.engine)
    if primary.is_replica:
        raise CommandError(errors.WAIT_ON_REPLICA)
    woff = ctx.client.woff
    acked = primary.count_acked(woff)
    if acked >= wanted:
        return acked

    def retry(retry_ctx: Ctx) -> Reply:
        n = primary.count_acked(woff)
        return n if n >= wanted else None

    if ctx.may_block:  # inside EXEC a command never blocks: the count at once
        primary.request_acks()
    return Wait([ACK_KEY], timeout_ms, retry, on_timeout=lambda: primary.count_acked(woff))


def _replicaof(ctx: Ctx, argv: list[bytes]) -> Reply:
    if ctx.client.kind == "replica":
        raise CommandError(errors.REPLICAOF_FROM_REPLICA)
    primary = attach(ctx.engine)
    if primary.failover is not None:
        raise CommandError(errors.REPLICAOF_FAILING_OVER)
    by = f"id={ctx.client.id} addr={ctx.client.addr}"
    if argv[1].lower() == b"no" and argv[2].lower() == b"one":
        if primary.upstream is not None:
            primary.become_primary(by)
        return OK
    try:
        port = parse_int(argv[2])
    except CommandError:
        port = -1
    if not 0 <= port <= 65535:  # a number from 0 to 65535, as Redis reads it
        raise CommandError(errors.REPLICAOF_BAD_PORT)
    host = argv[1].decode("latin-1")
    upstream = primary.upstream
    if upstream is not None and upstream.host == host and upstream.port == port:
        return ALREADY_CONNECTED
    primary.become_replica(host, port, by)
    return OK


@command("replicaof", arity=3, flags="admin noscript stale no_async_loading", group="server",
         since="5.0.0", complexity="O(1)",
         summary="Configure a server as replica of another, or promote it to a master")
def replicaof(ctx: Ctx, argv: list[bytes]) -> Reply:
    """REPLICAOF <host port | NO ONE>"""
    return _replicaof(ctx, argv)


@command("slaveof", arity=3, flags="admin noscript stale no_async_loading", group="server",
         since="1.0.0", complexity="O(1)",
         summary="Sets a Redis server as a replica of another, or promotes it to being a master")
def slaveof(ctx: Ctx, argv: list[bytes]) -> Reply:
    """SLAVEOF <host port | NO ONE>"""
    return _replicaof(ctx, argv)


@command("waitaof", arity=4, flags="blocking", group="generic", since="7.2.0",
         complexity="O(1)", categories=("-@keyspace", "@connection"),
         summary="Blocks until all of the preceding write commands sent by the connection "
                 "are written to the append-only file of the master and/or replicas")
def waitaof(ctx: Ctx, argv: list[bytes]) -> Reply:
    """WAITAOF numlocal numreplicas timeout"""
    primary = attach(ctx.engine)
    if primary.is_replica:
        raise CommandError(errors.WAITAOF_ON_REPLICA)
    numlocal = parse_int(argv[1], errors.POSITIVE_OUT_OF_RANGE)
    numreplicas = parse_int(argv[2], errors.POSITIVE_OUT_OF_RANGE)
    if numlocal < 0 or numreplicas < 0:
        raise CommandError(errors.POSITIVE_OUT_OF_RANGE)
    timeout_ms = parse_int(argv[3], errors.TIMEOUT_NOT_INTEGER)
    if timeout_ms < 0:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    aof = durability(ctx.engine).aof
    if numlocal and aof is None:
        raise CommandError(errors.WAITAOF_NO_AOF)
    woff = ctx.client.woff

    def counts() -> list[int]:
        local = int(aof is not None and aof.fsynced_offset >= woff)
        return [local, primary.count_aof_acked(woff)]

    now = counts()
    if now[0] >= numlocal and now[1] >= numreplicas:
        return now

    def retry(retry_ctx: Ctx) -> Reply:
        got = counts()
        return got if got[0] >= numlocal and got[1] >= numreplicas else None

    if ctx.may_block and numreplicas:
        primary.request_acks()
    return Wait([ACK_KEY], timeout_ms, retry, on_timeout=counts)


@command("role", arity=1, flags="noscript loading stale fast", group="server", since="2.8.12",
         complexity="O(1)", categories=("@admin", "@dangerous"),
         summary="Returns the replication role")
def role(ctx: Ctx, argv: list[bytes]) -> Reply:
    """ROLE"""
    return ctx.engine.replication.role()


@command("failover", arity=-1, flags="admin noscript stale", group="server", since="6.2.0",
         complexity="O(1)",
         summary="Start a coordinated failover between this server and one of its replicas.")
def failover(ctx: Ctx, argv: list[bytes]) -> Reply:
    """FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]

    Checks in Redis's order; the failover itself goes on after the reply
    (:meth:`~tidelog.replication.primary.Primary.start_failover`).
    Cost: O(replicas)."""
    primary = attach(ctx.engine)
    if len(argv) == 2 and argv[1].lower() == b"abort":
        if primary.failover is None:
            raise CommandError(errors.FAILOVER_NONE)
        primary.abort_failover("Failover manually aborted")
        return OK
    timeout_ms = port = 0
    force = False
    host: str | None = None
    i, argc = 1, len(argv)
    while i < argc:
        option = argv[i].lower()
        if option == b"timeout" and i + 1 < argc and timeout_ms == 0:
            timeout_ms = parse_int(argv[i + 1])
            if timeout_ms <= 0:
                raise CommandError(errors.FAILOVER_TIMEOUT)
            i += 2
        elif option == b"to" and i + 2 < argc and host is None:
            port = parse_int(argv[i + 2])
            host = argv[i + 1].decode("latin-1")
            i += 3
        elif option == b"force" and not force:
            force = True
            i += 1
        else:
            raise CommandError(errors.SYNTAX)
    if primary.failover is not None:
        raise CommandError(errors.FAILOVER_IN_PROGRESS)
    if primary.is_replica:
        raise CommandError(errors.FAILOVER_ON_REPLICA)
    if not primary.links:
        raise CommandError(errors.FAILOVER_NO_REPLICAS)
    if force and (not timeout_ms or host is None):
        raise CommandError(errors.FAILOVER_FORCE_ARGS)
    if host is not None:
        link = primary.find_replica(host, port)
        if link is None:
            raise CommandError(errors.FAILOVER_NOT_A_REPLICA)
        if link.state != "online":
            raise CommandError(errors.FAILOVER_TARGET_OFFLINE)
    primary.start_failover(host, port, timeout_ms, force)
    return OK
