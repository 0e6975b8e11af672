"""The connection's own commands: PING, ECHO, SELECT, HELLO, AUTH, QUIT, RESET.

These act on the calling connection (its protocol, database, ACL user),
never on keys.  A connection starts as the ``default`` ACL user
(:mod:`tidelog.acl`), authenticated when that user needs no password; AUTH
and HELLO ... AUTH switch it to the user whose password they give."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import REDIS_VERSION
from ...acl.selectors import DENIED_AUTH
from ...errors import (
    BAD_CLIENT_NAME,
    HELLO_BAD_PROTOVER,
    HELLO_NOAUTH,
    INVALID_DB_INDEX,
    NOAUTH_HELLO,
    NOPROTO,
    SELECT_CLUSTER,
    WRONGPASS,
    CommandError,
    hello_syntax,
    wrong_arity,
)
from ...resp.replies import OK, PONG, Map, Push, SimpleString
from ..args import ArgReader, parse_int
from ..key_specs import ALL_SHARDS
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


DEFAULT_USER = b"default"


# -- PING, ECHO, SELECT ------------------------------------------------------------
@command("ping", arity=-1, flags="fast", group="connection", since="1.0.0",
         complexity="O(1)", summary="Ping the server",
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def ping(ctx: Ctx, argv: list[bytes]) -> object:
    """PING [message]"""
    if len(argv) == 1 and ctx.client.pubsub is None:  # the common form first
        return PONG
    if len(argv) > 2:
        raise wrong_arity(argv[0])
    if ctx.client.pubsub is not None and ctx.client.protocol == 2:
        # RESP2 subscribed mode: the answer must look like a message.
        return Push([b"pong", b"" if len(argv) == 1 else argv[1]])
    return PONG if len(argv) == 1 else argv[1]


@command("echo", arity=2, flags="loading stale fast", group="connection", since="1.0.0",
         complexity="O(1)", summary="Echo the given string")
def echo(ctx: Ctx, argv: list[bytes]) -> object:
    """ECHO message"""
    return argv[1]


@command("select", arity=2, flags="loading stale fast", group="connection", since="1.0.0",
         complexity="O(1)", summary="Change the selected database for the current connection")
def select(ctx: Ctx, argv: list[bytes]) -> object:
    """SELECT index"""
    index = parse_int(argv[1])
    if index != 0 and ctx.engine.config["cluster-enabled"]:
        raise CommandError(SELECT_CLUSTER)
    if not 0 <= index < len(ctx.engine.dbs):
        raise CommandError(INVALID_DB_INDEX)
    ctx.client.db = index
    return OK


def valid_name(name: bytes) -> bytes:
    """Client names (and lib names) are printable ASCII without spaces."""
    if any(c < 0x21 or c > 0x7E for c in name):
        raise CommandError(BAD_CLIENT_NAME)
    return name



# -- HELLO, AUTH -------------------------------------------------------------------
def _check_credentials(ctx: Ctx, username: bytes, password: bytes) -> None:
    """Log the client in as ``username``: the user must exist, be on, and
    take this password (any, with nopass).  A failure is -WRONGPASS, logged
    in ACL LOG (reason auth) and counted in INFO stats."""
    user = ctx.engine.acl.users.get(username)
    if user is None or not user.password_ok(password):
        context = b"multi" if ctx.engine.in_transaction() else b"toplevel"
        ctx.engine.acl_denied(ctx.client, DENIED_AUTH, None, ctx.argv, 0, context,
                              username=username)
        raise CommandError(WRONGPASS)
    ctx.engine.set_client_user(ctx.client, user)


@command("hello", arity=-1, flags="noscript loading stale fast no_auth allow_busy",
         group="connection", since="6.0.0", complexity="O(1)",
         summary="Handshake with Redis")
def hello(ctx: Ctx, argv: list[bytes]) -> object:
    """HELLO [protover [AUTH username password] [SETNAME clientname]]"""
    client = ctx.client
    protocol = client.protocol
    r = ArgReader(argv)
    if r.more():
        protocol = r.next_int(HELLO_BAD_PROTOVER)
        if protocol not in (2, 3):
            raise CommandError(NOPROTO)
    credentials = name = None
    while r.more():
        option = r.next_bytes()
        upper = option.upper()
        if upper == b"AUTH" and r.remaining() >= 2:
            credentials = (r.next_bytes(), r.next_bytes())
        elif upper == b"SETNAME" and r.more():
            name = r.next_bytes()
        else:
            raise hello_syntax(option)
    r.finish()
    if credentials is not None:
        _check_credentials(ctx, *credentials)
    elif not client.authenticated:
        raise CommandError(HELLO_NOAUTH)
    if name is not None:
        client.name = valid_name(name)
    client.protocol = protocol
    return Map([
        (b"server", b"redis"),
        (b"version", REDIS_VERSION.encode()),
        (b"proto", protocol),
        (b"id", client.id),
        (b"mode", b"cluster" if ctx.config["cluster-enabled"] else b"standalone"),
        (b"role", b"replica" if ctx.engine.replication.is_replica else b"master"),
        (b"modules", []),
    ])


@command("auth", arity=-2, flags="noscript loading stale fast no_auth allow_busy",
         group="connection", since="1.0.0",
         complexity="O(N) where N is the number of passwords defined for the user",
         summary="Authenticate to the server")
def auth(ctx: Ctx, argv: list[bytes]) -> object:
    """AUTH [username] password"""
    r = ArgReader(argv)
    username = r.next_bytes()
    if not r.more():  # AUTH password: the default user's
        if ctx.engine.acl.default.nopass:
            raise CommandError(NOAUTH_HELLO)
        username, password = DEFAULT_USER, username
    else:
        password = r.next_bytes()
    r.finish()
    _check_credentials(ctx, username, password)
    return OK


# -- QUIT, RESET -------------------------------------------------------------------
@command("quit", arity=-1, flags="noscript loading stale fast no_auth allow_busy",
         group="connection", since="1.0.0", complexity="O(1)",
         summary="Close the connection")
def quit_(ctx: Ctx, argv: list[bytes]) -> object:
    """QUIT"""
    ctx.client.close_after_reply = True
    return OK


@command("reset", arity=1, flags="noscript loading stale fast no_auth allow_busy",
         group="connection", since="6.2.0", complexity="O(1)",
         summary="Reset the connection")
def reset(ctx: Ctx, argv: list[bytes]) -> object:
    """RESET"""
    client = ctx.client
    client.multi, client.multi_error = None, False
    ctx.engine.unwatch_all(client)
    ctx.engine.drop_subscriptions(client)
    ctx.engine.remove_monitor(client)
    ctx.engine.tracking.disable(client)  # CLIENT TRACKING OFF
    client.db = 0
    client.protocol = 2
    client.name = b""
    client.no_evict = client.no_touch = False
    client.mute = 0  # CLIENT REPLY ON
    client.himport = None  # HIMPORT DISCARDALL
    client.cluster_asking, client.cluster_readonly = 0, False  # ASKING, READONLY
    ctx.engine.set_client_user(client, None)  # the default user, as at connect
    return SimpleString(b"RESET")
