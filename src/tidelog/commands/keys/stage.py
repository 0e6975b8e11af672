"""TIDELOG.STAGE: the target side of moving a big stream in chunks.

Tidelog only, for Tidelog nodes moving a stream to each other (MIGRATE's
chunked path; the format and the whole design: :mod:`tidelog.rdb.stream_chunks`).
Not for users: COMMAND DOCS flags it ``syscmd``.

    TIDELOG.STAGE HELLO                     -> :<chunk format version>, or :0
    TIDELOG.STAGE BEGIN <token> <key> <ttl-ms> <idle-ms> [REPLACE]   -> +OK
    TIDELOG.STAGE APPEND <token> <chunk> [PXAT <ms>]   -> +OK  (COMMIT installs the key)
    TIDELOG.STAGE ABORT <token>             -> :1 dropped, :0 unknown token

HELLO answers 0 while a connected replica did not announce the
``tidelog-stage`` capability (``REPLCONF capa``: Redis and Valkey replicas
never do), and BEGIN from a client is refused then: such a replica could
not apply the commands propagated below.

A staged copy (:class:`~tidelog.rdb.staging.StagedCopy`) lives in its
database's ``staged`` table, beside the keys: nothing but these commands
sees it.  On a normal connection its token belongs to that connection and
goes when it closes; from the replication stream or an AOF load a copy is
nobody's (its idle deadline only, not checked while this server follows a
primary; an AOF load ends by dropping what is still open).  BEGIN and
every APPEND are propagated as they ran, so a replica (and an AOF reload)
stages the same stream in the same short steps and commits with the same
COMMIT chunk; every drop is propagated as ``ABORT <token>``.  The COMMIT
chunk of a key with a TTL is propagated as ``APPEND <token> <chunk> PXAT
<deadline>``, so that replicas and the AOF keep the primary's absolute
deadline (as RESTORE's ABSTTL).  (Not a separate PEXPIREAT: two effects go
out wrapped in MULTI/EXEC, where TIDELOG.STAGE is refused.)

Memory: while a copy is open it holds the chunks it was fed besides the
stream built from them (an AOF rewrite writes them again), about twice the
stream's size; both count in ``used_memory``, and BEGIN and APPEND are
``denyoom``.

In cluster mode BEGIN acts as if ASKING had been sent (``asking``, as
RESTORE-ASKING): its key's slot must be served or imported here, else
the usual MOVED/ASK redirection.  APPEND and ABORT name no key.
"""

from __future__ import annotations

from ... import errors
from ...config import NOTIFY_GENERIC
from ...errors import CommandError
from ...rdb.staging import CAPA, STAGE, StagedCopy, abort_argv
from ...rdb.stream_chunks import VERSION, ChunkError
from ...resp.replies import OK
from ..args import ArgReader, parse_int
from ..contract import Ctx, Reply
from ..key_specs import ks
from ..replies import help_command
from ..table import command

_SYSCMD = ("syscmd",)
_CATEGORIES = ("@dangerous",)  # (not @keyspace: ACL CAT keyspace lists only what Redis has)


def can_stage(ctx: Ctx) -> bool:
    """No connected replica lacks the capability.  O(replicas)."""
    return ctx.engine.replication.replicas_lacking(CAPA) == 0


@command("tidelog.stage", arity=-2, group="server", since="8.0.0",
         complexity="Depends on subcommand.", container=True, doc_flags=_SYSCMD,
         summary="An internal command for moving a stream between Tidelog nodes in chunks",
         help=(
    "TIDELOG.STAGE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "HELLO",
    "    Return the chunk format version this node stages, 0 when it cannot.",
    "BEGIN <token> <key> <ttl-ms> <idle-ms> [REPLACE]",
    "    Open a staged copy of a stream that is to be installed at <key>.",
    "APPEND <token> <chunk> [PXAT <unix-time-milliseconds>]",
    "    Feed the next chunk; the COMMIT chunk installs the key (PXAT: its deadline).",
    "ABORT <token>",
    "    Drop a staged copy.",
    "HELP",
    "    Prints this help."))
def tidelog_stage(ctx: Ctx, argv: list[bytes]) -> Reply:
    """TIDELOG.STAGE <subcommand> [<arg> ...]"""


@command("tidelog.stage|hello", arity=2, flags="noscript no_multi loading stale fast",
         group="server", since="8.0.0", complexity="O(N) where N is the number of replicas",
         summary="Return the chunk format version this node stages (0: cannot)",
         doc_flags=_SYSCMD)
def stage_hello(ctx: Ctx, argv: list[bytes]) -> Reply:
    """TIDELOG.STAGE HELLO

    The chunk format version, or 0 while a connected replica did not
    announce the capability.  O(replicas)."""
    return VERSION if can_stage(ctx) else 0


@command("tidelog.stage|begin", arity=-6, flags="write denyoom noscript no_multi asking",
         keys=(3, 3, 1), group="server", since="8.0.0", complexity="O(1)",
         summary="Open a staged copy of a stream arriving in chunks",
         key_specs=[ks("OW update", 3)], categories=_CATEGORIES, doc_flags=_SYSCMD)
def stage_begin(ctx: Ctx, argv: list[bytes]) -> Reply:
    """TIDELOG.STAGE BEGIN token key ttl-ms idle-ms [REPLACE]

    Opens an empty staged copy (nothing is checked of the key until
    commit).  O(1)."""
    token, key = argv[2], argv[3]
    ttl = parse_int(argv[4])
    if ttl < 0:
        raise CommandError(errors.INVALID_TTL)
    idle = parse_int(argv[5])
    if idle <= 0:
        raise CommandError(errors.STAGE_BAD_IDLE)
    replace = False
    r = ArgReader(argv, start=6)
    while r.more():
        if r.next_upper() != b"REPLACE":
            raise CommandError(errors.SYNTAX)
        replace = True
    client = ctx.client
    normal = client.kind == "normal"
    if normal and not can_stage(ctx):
        raise CommandError(errors.STAGE_UNAVAILABLE)
    staged = ctx.db.staged
    if token in staged and normal:
        # (From the replication stream or an AOF, a BEGIN of a token still
        # open replaces it: its sender started over after a restart that
        # left no ABORT behind, as a kill -9 mid-move does.)
        raise CommandError(errors.STAGE_TOKEN_OPEN)
    now = ctx.engine.clock.monotonic()
    staged[token] = StagedCopy(token, key, ttl, idle, replace,
                               client.id if normal else None, now + idle / 1000)
    ctx.effect(staged[token].begin_argv())
    return OK


@command("tidelog.stage|append", arity=-4, flags="write denyoom noscript no_multi",
         group="server", since="8.0.0",
         complexity="O(N) where N is the size of the chunk; the COMMIT chunk O(M) where M is "
                    "the number of nodes of the stream",
         summary="Feed the next chunk of a staged stream; the last one installs the key",
         categories=_CATEGORIES, doc_flags=_SYSCMD)
def stage_append(ctx: Ctx, argv: list[bytes]) -> Reply:
    """TIDELOG.STAGE APPEND token chunk [PXAT unix-time-milliseconds]

    Feeds the stager; the COMMIT chunk installs the stream at the key
    (BUSYKEY unless REPLACE, checked now; the TTL applied; blocked readers
    woken; keyspace event ``restore``).  A bad chunk, or BUSYKEY, drops the
    staged copy (propagated as ABORT).  ``PXAT`` is the propagated form of
    a commit with a TTL (as RESTORE's ABSTTL): the key's absolute deadline,
    in place of BEGIN's relative TTL; other chunks ignore it.
    O(size of the chunk); the COMMIT chunk O(nodes) (header checks of each
    node, as a snapshot load)."""
    token, chunk = argv[2], argv[3]
    pxat = 0
    r = ArgReader(argv, start=4)
    while r.more():
        if r.next_upper() != b"PXAT" or not r.more():
            raise CommandError(errors.SYNTAX)
        pxat = r.next_int()
        if pxat <= 0:
            raise CommandError(errors.INVALID_EXPIRE % b"tidelog.stage")
    db = ctx.db
    copy = db.staged.get(token)
    if copy is None:
        raise CommandError(errors.STAGE_NO_SUCH)
    try:
        done = copy.stager.feed(chunk)
    except ChunkError as exc:
        del db.staged[token]
        ctx.effect(abort_argv(token))
        raise errors.stage_bad_chunk(str(exc)) from None
    if not done:
        copy.fed.append(chunk)
        copy.renew(ctx.engine.clock.monotonic())
        ctx.effect([STAGE, b"APPEND", token, chunk])
        return OK
    del db.staged[token]
    key = copy.key
    if not copy.replace and db.get(key) is not None:
        ctx.effect(abort_argv(token))
        raise CommandError(errors.BUSYKEY)
    stream = copy.stager.stream
    if copy.replace:
        db.delete(key)
    db.set(key, stream)
    when = pxat or (ctx.now_ms() + copy.ttl_ms if copy.ttl_ms else 0)
    if when:
        db.set_expire(key, when)  # (one already past: the key expires as any other)
    ctx.modified(key)
    ctx.ready(key)
    ctx.effect([STAGE, b"APPEND", token, chunk, b"PXAT", b"%d" % when] if when
               else [STAGE, b"APPEND", token, chunk])
    ctx.notify(NOTIFY_GENERIC, b"restore", key)
    return OK


@command("tidelog.stage|abort", arity=3, flags="write noscript no_multi", group="server",
         since="8.0.0", complexity="O(1)", summary="Drop a staged copy",
         categories=_CATEGORIES, doc_flags=_SYSCMD)
def stage_abort(ctx: Ctx, argv: list[bytes]) -> Reply:
    """TIDELOG.STAGE ABORT token

    1 when a staged copy was dropped, 0 for an unknown token.  O(1) (its
    memory is freed with it)."""
    token = argv[2]
    if ctx.db.staged.pop(token, None) is None:
        return 0
    ctx.effect(abort_argv(token))
    return 1


help_command("tidelog.stage", group="server", since="8.0.0",
             summary="Show helpful text about the different subcommands")
