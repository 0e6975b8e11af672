"""MIGRATE: move keys to another server, as DUMP there and RESTORE.

As in Redis the command is synchronous: the server waits for the target
(up to ``timeout`` milliseconds for the connection, the write and each
reply line) and serves nobody meanwhile, which is what makes a move atomic
for clients of both servers (https://redis.io/docs/latest/commands/migrate/).
It opens a connection of its own (a blocking socket, as Redis's is), and
needs nothing above the command layer: the payload is :mod:`tidelog.rdb`'s.

What is sent is ``AUTH`` (with AUTH or AUTH2), ``SELECT db``, then one
``RESTORE key ttl payload [REPLACE]`` per key that exists (the TTL relative
in milliseconds, 0 for none; ``RESTORE-ASKING`` in cluster mode, which a
node importing the slot serves), all in one write; the replies are read as
lines in that order.  A key whose RESTORE answered ``+OK`` is deleted here
(not with COPY), sends ``del`` and is propagated as ``DEL``; the first error
from the target (AUTH's or SELECT's first, which then counts for every key)
becomes ``ERR Target instance replied with error: ...``.  Checked against
redis-server 7.0.15 (tests/differential/test_migrate_diff.py).  Redis keeps
the connection for the next MIGRATE for a while; Tidelog opens one per call.
"""

from __future__ import annotations

import socket

from ... import errors
from ...config import NOTIFY_GENERIC
from ...errors import CommandError
from ...rdb import values as rdb
from ...resp.replies import OK, SimpleString
from ..args import ArgReader, parse_int
from ..contract import Ctx, Reply
from ..key_specs import ND, ks
from ..lookup import lookup_read
from ..table import command

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




def _atoi(arg: bytes) -> int:
    """The port as C's atoi reads it: leading digits (after a sign), else 0."""
    text = arg.strip()
    sign = -1 if text[:1] == b"-" else 1
    if text[:1] in (b"-", b"+"):
        text = text[1:]
    digits = b""
    for byte in text:
        if not 48 <= byte <= 57:
            break
        digits += bytes([byte])
    return sign * int(digits) if digits else 0


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


class _Lines:
    """Reply lines from the target, each within the timeout."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def read(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("connection closed by the target")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line


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
    version = _dump_version(ctx)
    compress = bool(ctx.config["rdbcompression"])
    out = []
    if auth is not None:
        out.append(_resp([b"AUTH", *auth]))
    out.append(_resp([b"SELECT", b"%d" % dbid]))
    # in cluster mode the target may be importing the slot: RESTORE-ASKING
    restore = b"RESTORE-ASKING" if ctx.config["cluster-enabled"] else b"RESTORE"
    for key, value in found:
        ttl = ctx.db.ttl_ms(key)
        payload = rdb.value_payload(value, version=version, compress=compress)
        ttl_arg = b"0" if ttl is None else b"%d" % max(ttl, 1)
        out.append(_resp([restore, key, ttl_arg, payload,
                          *([b"REPLACE"] if replace else [])]))
    expected = (auth is not None) + 1 + len(found)
    replies, complete = _exchange(argv[1].decode("latin-1"), _atoi(argv[2]), timeout_ms,
                                  b"".join(out), expected)
    # AUTH's or SELECT's error counts for every key (their RESTOREs ran, but
    # maybe not as that user or in that database): nothing is deleted then.
    header = replies[:expected - len(found)]
    header_error = next((r for r in header if r[:1] == b"-"), None)
    first_error = header_error
    moved = []
    for (key, _), reply in zip(found, replies[len(header):]):
        if header_error is not None or reply[:1] == b"-":
            if first_error is None:
                first_error = reply
            continue
        if not copy:
            ctx.db.delete(key)
            ctx.modified(key)
            ctx.ready(key)
            ctx.notify(NOTIFY_GENERIC, b"del", key)
            moved.append(key)
    if moved:
        ctx.effect([b"DEL", *moved])
    else:
        ctx.no_propagation()
    if not complete:
        raise CommandError(errors.MIGRATE_IOERR_READ)
    if first_error is not None:
        raise CommandError(errors.MIGRATE_TARGET_ERROR + first_error[1:])
    return OK


def _exchange(host: str, port: int, timeout_ms: int, request: bytes,
              expected: int) -> tuple[list[bytes], bool]:
    """Send the request and read ``expected`` reply lines: (the lines read,
    whether all came).  Each step waits ``timeout_ms`` at most."""
    timeout = timeout_ms / 1000
    if not host or port < 0:  # no address to look up (Redis's resolver refuses them)
        raise CommandError(errors.MIGRATE_IOERR_CONNECT)
    try:
        sock = socket.create_connection((host, port & 0xFFFF), timeout=timeout)
    except (socket.gaierror, TimeoutError):
        raise CommandError(errors.MIGRATE_IOERR_CONNECT) from None
    except OSError:  # refused: Redis's non-blocking connect sees it at the write
        raise CommandError(errors.MIGRATE_IOERR_WRITE) from None
    with sock:
        try:
            sock.sendall(request)
        except OSError:
            raise CommandError(errors.MIGRATE_IOERR_WRITE) from None
        lines = _Lines(sock)
        replies: list[bytes] = []
        try:
            while len(replies) < expected:
                replies.append(lines.read())
        except OSError:
            return replies, False
    return replies, True
