"""The replication commands: REPLCONF, PSYNC, SYNC, WAIT, WAITAOF, REPLICAOF,
SLAVEOF, ROLE, FAILOVER.

They read their arguments here, in Redis's order, and ask the engine's
``replication`` (the :class:`~tidelog.commands.contract.Replication`
interface) for the work: the replication layer's primary, which the server
attaches at start; a bare engine has none and refuses them (ROLE answers a
primary without replicas).
"""

from __future__ import annotations

from typing import Any

from ... import errors
from ...errors import CommandError
from ...resp.replies import OK, RawReply
from ..args import ArgReader, parse_int
from ..contract import Ctx
from ..key_specs import ALL_SHARDS
from ..table import command

NO_REPLY = RawReply(b"")


@command("replconf", arity=-1, flags="admin noscript loading stale allow_busy", group="server",
         since="3.0.0", complexity="O(1)",
         summary="An internal command for configuring the replication stream")
def replconf(ctx: Ctx, argv: list[bytes]) -> Any:
    """REPLCONF <option> <value> [<option> <value> ...]

    O(options)."""
    if len(argv) % 2 == 0:
        raise CommandError(errors.SYNTAX)
    replication = ctx.engine.replication
    client = ctx.client
    r = ArgReader(argv)
    while r.more():
        name, value = r.next_bytes(), r.next_bytes()
        option = name.lower()
        if option == b"listening-port":
            replication.replica_info(client, listening_port=parse_int(value))
        elif option == b"ip-address":
            replication.replica_info(client, ip=value.decode("latin-1"))
        elif option == b"capa":
            replication.replica_info(client, capa=value.lower())
        elif option == b"ack":
            # A replica's offset (and, Redis 7.2+, "FACK <offset>" its AOF's);
            # never answered (nor from a non-replica).
            try:
                offset = int(value)
                fack = int(r.argv[r.pos + 1]) if r.remaining() >= 2 and \
                    r.argv[r.pos].lower() == b"fack" else None
            except ValueError:
                return NO_REPLY
            replication.acked(client, offset, fack)
            return NO_REPLY
        elif option == b"getack":
            return NO_REPLY  # only a replica answers GETACK
        elif option in (b"rdb-only", b"rdb-filter-only", b"version"):
            pass  # accepted and ignored: a full snapshot is always sent
        else:
            raise errors.replconf_unknown(name)
    return OK


@command("psync", arity=-3, flags="admin noscript no_async_loading no_multi", group="server",
         since="2.8.0", complexity="O(N) for a full sync, N the size of the data set; "
         "O(M) for a partial one, M the bytes sent from the backlog",
         summary="An internal command used in replication")
def psync(ctx: Ctx, argv: list[bytes]) -> Any:
    """PSYNC replicationid offset [FAILOVER]

    With FAILOVER (sent by a primary handing its role over): when the ID is
    ours, that is, our primary's, stop following it and serve the PSYNC as
    a primary.  O(N) for a full sync."""
    failover = len(argv) > 3 and argv[3].lower() == b"failover"
    return ctx.engine.replication.serve_sync(ctx.client, argv[1], argv[2], failover=failover)


@command("sync", arity=1, flags="admin noscript no_async_loading no_multi", group="server",
         since="1.0.0", complexity="O(N), N the size of the data set",
         summary="An internal command used in replication")
def sync(ctx: Ctx, argv: list[bytes]) -> Any:
    """SYNC

    O(N): always a full sync."""
    return ctx.engine.replication.serve_sync(ctx.client, b"?", b"-1", legacy_sync=True)


@command("wait", arity=3, flags="blocking", group="generic", since="3.0.0",
         complexity="O(1)", categories=("-@keyspace", "@connection"),
         summary="Blocks until the asynchronous replication of all preceding write "
                 "commands sent by the connection is completed",
         tips=(ALL_SHARDS, "response_policy:agg_min"))
def wait(ctx: Ctx, argv: list[bytes]) -> Any:
    """WAIT numreplicas timeout

    O(replicas)."""
    wanted = parse_int(argv[1])
    timeout_ms = parse_int(argv[2], errors.TIMEOUT_NOT_INTEGER)
    if timeout_ms < 0:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    return ctx.engine.replication.wait(ctx.client.woff, wanted, timeout_ms, ctx.may_block)


def _replicaof(ctx: Ctx, argv: list[bytes]) -> Any:
    if ctx.config["cluster-enabled"]:  # the cluster bus picks the master (Redis checks this first)
        raise CommandError(errors.REPLICAOF_CLUSTER)
    if ctx.client.kind == "replica":
        raise CommandError(errors.REPLICAOF_FROM_REPLICA)
    replication = ctx.engine.replication
    if replication.failover_running:
        raise CommandError(errors.REPLICAOF_FAILING_OVER)
    by = f"id={ctx.client.id} addr={ctx.client.addr}"
    if argv[1].lower() == b"no" and argv[2].lower() == b"one":
        return replication.replicaof(None, 0, by)
    try:
        port = parse_int(argv[2])
    except CommandError:
        port = -1
    if not 0 <= port <= 65535:  # a number from 0 to 65535, as Redis reads it
        raise CommandError(errors.REPLICAOF_BAD_PORT)
    return replication.replicaof(argv[1].decode("latin-1"), port, by)


@command("replicaof", arity=3, flags="admin noscript stale no_async_loading", group="server",
         since="5.0.0", complexity="O(1)",
         summary="Configure a server as replica of another, or promote it to a master")
def replicaof(ctx: Ctx, argv: list[bytes]) -> Any:
    """REPLICAOF <host port | NO ONE>

    O(1); the link connects afterwards."""
    return _replicaof(ctx, argv)


@command("slaveof", arity=3, flags="admin noscript stale no_async_loading", group="server",
         since="1.0.0", complexity="O(1)",
         summary="Sets a Redis server as a replica of another, or promotes it to being a master")
def slaveof(ctx: Ctx, argv: list[bytes]) -> Any:
    """SLAVEOF <host port | NO ONE>

    O(1); the link connects afterwards."""
    return _replicaof(ctx, argv)


@command("waitaof", arity=4, flags="blocking", group="generic", since="7.2.0",
         complexity="O(1)", categories=("-@keyspace", "@connection"),
         summary="Blocks until all of the preceding write commands sent by the connection "
                 "are written to the append-only file of the master and/or replicas")
def waitaof(ctx: Ctx, argv: list[bytes]) -> Any:
    """WAITAOF numlocal numreplicas timeout

    O(replicas)."""
    replication = ctx.engine.replication
    if replication.is_replica:
        raise CommandError(errors.WAITAOF_ON_REPLICA)
    numlocal = parse_int(argv[1], errors.POSITIVE_OUT_OF_RANGE)
    numreplicas = parse_int(argv[2], errors.POSITIVE_OUT_OF_RANGE)
    if numlocal < 0 or numreplicas < 0:
        raise CommandError(errors.POSITIVE_OUT_OF_RANGE)
    timeout_ms = parse_int(argv[3], errors.TIMEOUT_NOT_INTEGER)
    if timeout_ms < 0:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    return replication.wait_aof(ctx.client.woff, numlocal, numreplicas, timeout_ms,
                                ctx.may_block)


@command("role", arity=1, flags="noscript loading stale fast", group="server", since="2.8.12",
         complexity="O(1)", categories=("@admin", "@dangerous"),
         summary="Returns the replication role")
def role(ctx: Ctx, argv: list[bytes]) -> Any:
    """ROLE

    O(replicas)."""
    return ctx.engine.replication.role()


@command("failover", arity=-1, flags="admin noscript stale", group="server", since="6.2.0",
         complexity="O(1)",
         summary="Start a coordinated failover between this server and one of its replicas.")
def failover(ctx: Ctx, argv: list[bytes]) -> Any:
    """FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]

    The arguments first, then the checks of the state, in Redis's order; the
    failover itself goes on after the reply.  Cost: O(replicas)."""
    replication = ctx.engine.replication
    if len(argv) == 2 and argv[1].lower() == b"abort":
        replication.failover_abort()
        return OK
    timeout_ms = port = 0
    force = False
    host: str | None = None
    r = ArgReader(argv)
    while r.more():
        option = r.next_bytes().lower()
        if option == b"timeout" and r.remaining() >= 1 and timeout_ms == 0:
            timeout_ms = r.next_int()
            if timeout_ms <= 0:
                raise CommandError(errors.FAILOVER_TIMEOUT)
        elif option == b"to" and r.remaining() >= 2 and host is None:
            host_arg = r.next_bytes()
            port = r.next_int()
            host = host_arg.decode("latin-1")
        elif option == b"force" and not force:
            force = True
        else:
            raise CommandError(errors.SYNTAX)
    replication.failover_command(host, port, timeout_ms, force)
    return OK
