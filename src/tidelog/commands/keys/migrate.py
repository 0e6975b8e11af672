"""MIGRATE: move keys to another server, as DUMP there and RESTORE.

As in Redis the command is synchronous: the server waits for the target
(up to ``timeout`` milliseconds for the connection, the write and each
reply line) and serves nobody meanwhile, which is what makes a move atomic
for clients of both servers (https://redis.io/docs/latest/commands/migrate/).
The connection is a blocking socket, as Redis's is, kept for the next
MIGRATE to the same ``host:port`` (:mod:`.migrate_sockets`: at most 64,
closed by the cron after 10 idle seconds, TLS with ``tls-cluster yes``);
nothing above the command layer is needed: the payload is
:mod:`tidelog.rdb`'s.

What is sent is ``AUTH`` (with AUTH or AUTH2, every time), ``SELECT db``
(only when the connection last selected another database, or never did),
then one ``RESTORE key ttl payload [REPLACE]`` per key that exists (the TTL
relative in milliseconds, 0 for none; ``RESTORE-ASKING`` in cluster mode,
which a node importing the slot serves), all in one write; the replies are
read as lines in that order.  A key whose RESTORE answered ``+OK`` is
deleted here (not with COPY), sends ``del`` and is propagated as ``DEL``;
the first error from the target (AUTH's or SELECT's first, which then
counts for every key) becomes ``ERR Target instance replied with error:
...``.  An I/O error closes the connection, and unless it was a timeout
the whole exchange is tried once more on a new connection when nothing of
it can have been applied yet (a target restarted, or one that closed the
idle connection, between two MIGRATEs).  Checked against redis-server
7.0.15 (tests/differential/test_migrate_diff.py).

A stream of at least ``migrate-stream-chunk-threshold`` entries going to a
Tidelog target goes another way: in chunks, the server serving everybody
between them, the client parked until the move ends (:mod:`.migrate_chunked`).
"""

from __future__ import annotations

from ... import errors
from ...errors import CommandError
from ...rdb import values as rdb
from ...resp.replies import OK, SimpleString
from ..args import ArgReader, parse_int
from ..contract import Ctx, Reply
from ..key_specs import ND, ks
from ..lookup import lookup_read
from ..table import command
from .migrate_chunked import delete_moved, try_park

NOKEY = SimpleString(b"NOKEY")



def migrate_keys(argv: list[bytes]) -> list[int]:
    """MIGRATE's keys as Redis's key finder reads them: the key argument, or
    with KEYS (AUTH's and AUTH2's arguments skipped on the way) what follows
    it (the key argument when nothing does); none when KEYS comes with a
    non-empty key argument."""
    i = 6
    while i < len(argv):
        word = argv[i].lower()
        if word == b"auth":
            i += 1
        elif word == b"auth2":
            i += 2
        elif word == b"keys":
            if argv[3]:
                return []
            return list(range(i + 1, len(argv))) or [3]  # KEYS alone: the key argument
        i += 1
    return [3] if len(argv) > 3 else []




def _parse(argv: list[bytes]) -> tuple[bool, bool, list[bytes] | None, list[bytes]]:
    """The options after ``timeout``: (COPY, REPLACE, AUTH's arguments,
    keys), read as Redis reads them (KEYS ends the options)."""
    copy = replace = False
    auth: list[bytes] | None = None
    keys = [argv[3]]
    r = ArgReader(argv, start=6)
    while r.more():
        word = r.next_bytes().lower()
        if word == b"copy":
            copy = True
        elif word == b"replace":
            replace = True
        elif word == b"auth":
            auth = [r.next_bytes()]
        elif word == b"auth2":
            if r.remaining() < 2:
                raise CommandError(errors.SYNTAX)
            auth = r.take(2)
        elif word == b"keys":
            if argv[3]:
                raise CommandError(errors.MIGRATE_KEYS_NOT_EMPTY)
            keys = r.take(r.remaining())
            break
        else:
            raise CommandError(errors.SYNTAX)
    return copy, replace, auth, keys


def _resp(args: list[bytes]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def _dump_version(ctx: Ctx) -> int:
    try:
        return int(ctx.config["rdb-version"])
    except KeyError:
        return rdb.DEFAULT_VERSION


@command("migrate", arity=-6, flags="write movablekeys", keys=(3, 3, 1), group="generic",
         since="2.6.0", categories=("@dangerous",),
         complexity="This command actually executes a DUMP+DEL in the source instance, and a "
                    "RESTORE in the target instance. See the pages of these commands for time "
                    "complexity. Also an O(N) data transfer between the two instances is "
                    "performed.",
         summary="Atomically transfer a key from a Redis instance to another one.",
         tips=(ND,),
         # the key argument, and the keys after KEYS (searched from the end)
         key_specs=[ks("RW access delete", 3),
                    ks("RW access delete incomplete", "KEYS", -1, startfrom=-2)],
         key_finder=migrate_keys)
def migrate(ctx: Ctx, argv: list[bytes]) -> Reply:
    """MIGRATE host port <key | ""> destination-db timeout [COPY] [REPLACE]
    [AUTH password | AUTH2 username password] [KEYS key [key ...]]

    Cost: O(N) in the size of the values moved, plus the round trip."""
    copy, replace, auth, wanted = _parse(argv)
    timeout_ms = parse_int(argv[5])
    dbid = parse_int(argv[4])
    if timeout_ms <= 0:
        timeout_ms = 1000
    found = []
    for key in wanted:
        value = lookup_read(ctx, key)
        if value is not None:
            found.append((key, value))
    if not found:
        return NOKEY
    # a big stream to a Tidelog target: in chunks, the client parked meanwhile
    parked = try_park(ctx, argv, found, dbid, timeout_ms, auth, copy, replace)
    if parked is not None:
        return parked
    version = _dump_version(ctx)
    compress = bool(ctx.config["rdbcompression"])
    # in cluster mode the target may be importing the slot: RESTORE-ASKING
    restore = b"RESTORE-ASKING" if ctx.config["cluster-enabled"] else b"RESTORE"
    body = []
    for key, value in found:
        ttl = ctx.db.ttl_ms(key)
        payload = rdb.value_payload(value, version=version, compress=compress)
        ttl_arg = b"0" if ttl is None else b"%d" % max(ttl, 1)
        body.append(_resp([restore, key, ttl_arg, payload,
                           *([b"REPLACE"] if replace else [])]))
    restores = b"".join(body)
    auth_cmd = _resp([b"AUTH", *auth]) if auth is not None else b""
    header_error, replies, complete = _exchange(
        ctx, argv[1], argv[2], dbid, timeout_ms / 1000, auth_cmd, restores, len(found))
    # AUTH's or SELECT's error counts for every key (their RESTOREs ran, but
    # maybe not as that user or in that database): nothing is deleted then.
    first_error = header_error
    moved = []
    for (key, _), reply in zip(found, replies):
        if header_error is not None or reply[:1] == b"-":
            if first_error is None:
                first_error = reply
            continue
        if not copy:
            moved.append(key)
    delete_moved(ctx, moved)
    # the target's error wins over a connection lost after it (as in Redis)
    if first_error is not None:
        raise CommandError(errors.MIGRATE_TARGET_ERROR + first_error[1:])
    if not complete:
        raise CommandError(errors.MIGRATE_IOERR_READ)
    return OK


def _exchange(ctx: Ctx, host: bytes, port: bytes, dbid: int, timeout_s: float,
              auth_cmd: bytes, restores: bytes, nkeys: int
              ) -> tuple[bytes | None, list[bytes], bool]:
    """Send AUTH (when given), SELECT (when the cached connection last
    selected another database) and the RESTOREs, and read the replies:
    (AUTH's or SELECT's error line, None if neither failed or no RESTORE
    reply came; the RESTOREs' reply lines read; whether all came).  Each
    step waits ``timeout_s`` at most.  An I/O error closes the connection;
    unless it was a timeout, the exchange is tried once more on a new one
    when nothing of it can have been applied (the write failed, or no
    RESTORE reply came), as Redis's MIGRATE does for a cached connection
    the target closed meanwhile."""
    cache = ctx.engine.migrate_sockets
    now = ctx.engine.clock.monotonic()
    may_retry = True
    while True:
        try:
            target = cache.get(host, port, timeout_s, now, ctx.config)
            select = target.last_dbid != dbid
            head = auth_cmd + (_resp([b"SELECT", b"%d" % dbid]) if select else b"")
            target.send(head + restores, timeout_s)
        except OSError as exc:
            cache.close(host, port)
            if may_retry and not isinstance(exc, TimeoutError):
                may_retry = False
                continue
            raise CommandError(errors.MIGRATE_IOERR_WRITE) from None
        replies: list[bytes] = []
        try:
            auth_reply = target.read_line() if auth_cmd else b"+"
            select_reply = target.read_line() if select else b"+"
            while len(replies) < nkeys:
                replies.append(target.read_line())
        except OSError as exc:
            cache.close(host, port)
            if not replies and may_retry and not isinstance(exc, TimeoutError):
                may_retry = False
                continue
            if not replies:
                return None, [], False
            complete = False
        else:
            complete = True
        header_error = next((r for r in (auth_reply, select_reply) if r[:1] == b"-"), None)
        if complete:
            failed = header_error is not None or any(r[:1] == b"-" for r in replies)
            # a failure leaves the selected database unsure: SELECT next time
            target.last_dbid = -1 if failed else dbid
        return header_error, replies, complete
