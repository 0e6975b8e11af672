"""CLIENT and its subcommands: the calling connection's name, info and reply
mode, and the other connections (CLIENT LIST, KILL, UNBLOCK, PAUSE ...).

``CLIENT LIST`` / ``CLIENT INFO`` lines use the Redis 7.2 layout (7.0's
fields plus ``lib-name`` and ``lib-ver``).  Fields about buffers we do not
own (the query buffer lives in the parser, the output buffer in the
transport) are reported as 0 rather than invented."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import (
    CLIENT_ID_POSITIVE,
    INVALID_CLIENT_ID,
    NO_SUCH_CLIENT,
    PAUSE_MODE,
    SYNTAX,
    TIMEOUT_NEGATIVE,
    TIMEOUT_NOT_INTEGER,
    UNBLOCK_REASON,
    UNBLOCKED,
    CommandError,
    bad_setinfo_value,
    no_such_user,
    subcommand_syntax,
    unknown_client_type,
    unknown_setinfo_option,
)
from ...resp.replies import OK, ErrorReply, Verbatim
from ..args import ArgReader, parse_int
from ..key_specs import ND
from ..replies import help_command
from ..table import command
from .handshake import valid_name

if TYPE_CHECKING:
    from ..contract import ClientState, Ctx, EngineAPI


# -- CLIENT ------------------------------------------------------------------------
@command("client", arity=-2, group="connection", since="2.4.0", complexity="Depends on subcommand.",
         summary="A container for client connection commands", container=True, help=(
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "HELP",
    "    Prints this help.",
))
def client_(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT subcommand [argument ...]"""


@command("client|id", arity=2, flags="noscript loading stale", group="connection",
         since="5.0.0", complexity="O(1)", summary="Returns the client ID for the current connection")
def client_id(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT ID"""
    return ctx.client.id


@command("client|setname", arity=3, flags="noscript loading stale", group="connection",
         since="2.6.9", complexity="O(1)", summary="Set the current connection name")
def client_setname(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT SETNAME connection-name"""
    ctx.client.name = valid_name(argv[2])
    return OK


@command("client|getname", arity=2, flags="noscript loading stale", group="connection",
         since="2.6.9", complexity="O(1)", summary="Get the current connection name")
def client_getname(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT GETNAME"""
    return ctx.client.name or None


@command("client|setinfo", arity=4, flags="noscript loading stale", group="connection",
         since="7.2.0", complexity="O(1)", summary="Set client or connection specific info")
def client_setinfo(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT SETINFO <LIB-NAME libname | LIB-VER libver>"""
    option, value = argv[2], argv[3]
    which = option.lower()
    if which not in (b"lib-name", b"lib-ver"):
        raise unknown_setinfo_option(option)
    if any(c < 0x21 or c > 0x7E for c in value):
        raise bad_setinfo_value(option)
    if which == b"lib-name":
        ctx.client.lib_name = value
    else:
        ctx.client.lib_ver = value
    return OK


def _client_flags(client: ClientState) -> str:
    flags = "O" if client.monitor else ""
    if client.kind == "master":
        flags += "M"
    elif client.kind == "replica":
        flags += "S"
    if client.pubsub is not None:
        flags += "P"
    if client.multi is not None:
        flags += "x"
    if client.blocked is not None or client.postponed:
        flags += "b"
    if client.tracking is not None:
        flags += "t"
        if client.tracking.broken:
            flags += "R"
        if client.tracking.bcast:
            flags += "B"
    if client.dirty_cas:
        flags += "d"
    if client.close_after_reply:
        flags += "c"
    if client.addr.startswith("/"):
        flags += "U"
    if client.cluster_readonly:  # READONLY (cluster mode)
        flags += "r"
    if client.no_evict:
        flags += "e"
    if client.no_touch:
        flags += "T"
    return flags or "N"


def client_line(ctx: Ctx, client: ClientState) -> bytes:
    """One CLIENT LIST line (without the trailing newline), Redis 7.2's layout."""
    return client_info_line(ctx.engine, client, ctx.argv if client is ctx.client else None)


def client_info_line(engine: EngineAPI, client: ClientState,
                     argv: list[bytes] | None = None) -> bytes:
    """A client described as CLIENT LIST does (and as Redis logs a client it
    closes); ``argv``: the command it is running, if any."""
    now = engine.clock.monotonic()
    argv_mem = sum(len(a) for a in argv) if argv else 0
    omem = client.output_bytes()
    multi_mem = sum(len(a) for cmd in client.multi for a in cmd) if client.multi else 0
    multi = len(client.multi) if client.multi is not None else -1
    fieldsets = client.himport.memory if client.himport is not None else 0  # HIMPORT PREPARE's
    subs = client.pubsub
    sub, psub, ssub = (0, 0, 0) if subs is None else map(len, subs.kinds)
    head = f"id={client.id} addr={client.addr} laddr={client.laddr} fd={client.fd} name="
    return head.encode() + client.name + (
        f" age={int(now - client.created)} idle={int(now - client.last_interaction)}"
        f" flags={_client_flags(client)} db={client.db} sub={sub} psub={psub} ssub={ssub}"
        f" multi={multi}"
        f" qbuf={client.query_bytes} qbuf-free=0 argv-mem={argv_mem} multi-mem={multi_mem}"
        f" rbs=0 rbp=0 obl=0 oll=0 omem={omem}"
        f" tot-mem={argv_mem + multi_mem + omem + fieldsets} events=r"
        f" cmd={client.last_command}"
    ).encode() + b" user=" + (client.user.name if client.user is not None else b"(superuser)") + (
        f" redir={client.tracking.redirect if client.tracking is not None else -1}"
        f" resp={client.protocol}"
    ).encode() + b" lib-name=" + client.lib_name + b" lib-ver=" + client.lib_ver


_CLIENT_TYPES = {b"normal": "normal", b"master": "master", b"replica": "replica",
                 b"slave": "replica", b"pubsub": "pubsub"}


def _kind_of(client: ClientState) -> str:
    """The client's type for CLIENT LIST / KILL TYPE: as Redis, a client
    with subscriptions is of type pubsub (in RESP3 too)."""
    if client.kind == "normal" and client.pubsub is not None:
        return "pubsub"
    return client.kind


def _client_type(name: bytes) -> str:
    kind = _CLIENT_TYPES.get(name.lower())
    if kind is None:
        raise unknown_client_type(name)
    return kind


@command("client|info", arity=2, flags="noscript loading stale", group="connection",
         since="6.2.0", complexity="O(1)",
         summary="Returns information about the current client connection.",
         tips=(ND,))
def client_info(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT INFO"""
    return Verbatim(client_line(ctx, ctx.client) + b"\n")


@command("client|list", arity=-2, flags="admin noscript loading stale", group="connection",
         since="2.4.0", complexity="O(N) where N is the number of client connections",
         summary="Get the list of client connections",
         tips=(ND,))
def client_list(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT LIST [TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]"""
    clients = list(ctx.engine.clients.values())
    r = ArgReader(argv, 2)
    if r.more():
        option = r.next_upper()
        if option == b"TYPE" and r.remaining() == 1:
            kind = _client_type(r.next_bytes())
            clients = [c for c in clients if _kind_of(c) == kind]
        elif option == b"ID" and r.more():
            wanted: list[int] = []
            while r.more():
                wanted.append(r.next_int(INVALID_CLIENT_ID))
            clients = [ctx.engine.clients[i] for i in dict.fromkeys(wanted)
                       if i in ctx.engine.clients]
        else:
            raise CommandError(SYNTAX)
    r.finish()
    return Verbatim(b"".join(client_line(ctx, c) + b"\n" for c in clients))


@command("client|kill", arity=-3, flags="admin noscript loading stale", group="connection",
         since="2.4.0", complexity="O(N) where N is the number of client connections",
         summary="Kill the connection of a client")
def client_kill(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT KILL <ip:port | <[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME <YES | NO>] | [MAXAGE maxage]> [...]>"""  # noqa: E501 (the syntax line, whole)
    r = ArgReader(argv, 2)
    old_style = r.remaining() == 1  # CLIENT KILL ip:port
    addr = laddr = kind = user = None
    client_id = max_age = None
    skipme = not old_style
    if old_style:
        addr = r.next_bytes()
    else:
        while r.more():
            option = r.next_upper()
            value = r.next_bytes()  # a missing value is a syntax error
            if option == b"ID":
                client_id = parse_int(value, CLIENT_ID_POSITIVE)
                if client_id < 1:
                    raise CommandError(CLIENT_ID_POSITIVE)
            elif option == b"TYPE":
                kind = _client_type(value)
            elif option == b"ADDR":
                addr = value
            elif option == b"LADDR":
                laddr = value
            elif option == b"USER":
                user = ctx.engine.acl.users.get(value)
                if user is None:
                    raise no_such_user(value)
            elif option == b"MAXAGE":  # Redis 7.4: connections older than this (seconds)
                max_age = parse_int(value, SYNTAX)
            elif option == b"SKIPME":
                if value.lower() == b"yes":
                    skipme = True
                elif value.lower() == b"no":
                    skipme = False
                else:
                    raise CommandError(SYNTAX)
            else:
                raise CommandError(SYNTAX)
    r.finish()
    killed = 0
    now = ctx.engine.clock.monotonic()
    for client in list(ctx.engine.clients.values()):
        if addr is not None and client.addr.encode() != addr:
            continue
        if laddr is not None and client.laddr.encode() != laddr:
            continue
        if kind is not None and _kind_of(client) != kind:
            continue
        if client_id is not None and client.id != client_id:
            continue
        if user is not None and client.user is not user:
            continue
        if max_age is not None and now - client.created <= max_age:
            continue
        if client is ctx.client:
            if skipme:
                continue
            client.close_after_reply = True
        elif client.kill is not None:
            client.kill()
        killed += 1
    if old_style:
        if not killed:
            raise CommandError(NO_SUCH_CLIENT)
        return OK
    return killed


@command("client|unblock", arity=-3, flags="admin noscript loading stale", group="connection",
         since="5.0.0", complexity="O(log N) where N is the number of client connections",
         summary="Unblock a client blocked in a blocking command from a different connection")
def client_unblock(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT UNBLOCK client-id [TIMEOUT | ERROR]"""
    r = ArgReader(argv, 2)
    if r.remaining() > 2:  # Redis refuses this before reading the id
        raise subcommand_syntax(argv[1], argv[0])
    target_id = r.next_int()
    as_error = False
    if r.more():
        reason = r.next_upper()
        if reason == b"ERROR":
            as_error = True
        elif reason != b"TIMEOUT":
            raise CommandError(UNBLOCK_REASON)
    r.finish()
    target = ctx.engine.clients.get(target_id)
    if target is None:
        return 0
    return 1 if ctx.engine.unblock_client(target, ErrorReply(UNBLOCKED) if as_error else None) else 0


def _on_off(ctx: Ctx, argv: list[bytes]) -> bool:
    value = argv[2].lower()
    if value == b"on":
        return True
    if value == b"off":
        return False
    raise CommandError(SYNTAX)


@command("client|no-evict", arity=3, flags="admin noscript loading stale", group="connection",
         since="7.0.0", complexity="O(1)", summary="Set client eviction mode for the current connection")
def client_no_evict(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT NO-EVICT <ON | OFF>"""
    ctx.client.no_evict = _on_off(ctx, argv)
    return OK


@command("client|no-touch", arity=3, flags="noscript loading stale", group="connection",
         since="7.2.0", complexity="O(1)",
         summary="Controls whether commands sent by the client will alter the LRU/LFU of the "
                 "keys they access.")
def client_no_touch(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT NO-TOUCH <ON | OFF>"""
    ctx.client.no_touch = _on_off(ctx, argv)
    return OK


@command("client|pause", arity=-3, flags="admin noscript loading stale", group="connection",
         since="3.0.0", complexity="O(1)",
         summary="Stop processing commands from clients for some time")
def client_pause(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT PAUSE timeout [WRITE | ALL]"""
    if len(argv) > 4:
        raise subcommand_syntax(argv[1], argv[0])
    timeout = parse_int(argv[2], TIMEOUT_NOT_INTEGER)
    if timeout < 0:
        raise CommandError(TIMEOUT_NEGATIVE)
    mode = "all"
    if len(argv) == 4:
        mode = argv[3].decode("latin-1").lower()
        if mode not in ("write", "all"):
            raise CommandError(PAUSE_MODE)
    ctx.engine.pause(timeout, mode)
    return OK


@command("client|unpause", arity=2, flags="admin noscript loading stale", group="connection",
         since="6.2.0", complexity="O(N) Where N is the number of paused clients",
         summary="Resume processing of clients that were paused")
def client_unpause(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT UNPAUSE"""
    ctx.engine.unpause()
    return OK


@command("client|reply", arity=3, flags="noscript loading stale", group="connection",
         since="3.2.0", complexity="O(1)",
         summary="Instruct the server whether to reply to commands")
def client_reply(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT REPLY <ON | OFF | SKIP>"""
    mode = argv[2].lower()
    client = ctx.client
    if mode == b"on":
        client.mute = 0
    elif mode == b"off":
        client.mute = -1
    elif mode == b"skip":
        if client.mute >= 0:
            client.mute = 2  # this reply and the next command's
    else:
        raise CommandError(SYNTAX)
    return OK


help_command("client", group="connection", since="5.0.0",
             summary="Show helpful text about the different subcommands")
