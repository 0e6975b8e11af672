"""Client-side caching: CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO, and
the invalidation messages (Redis's ``tracking.c``, as its documentation and
redis-server 7.0.15 show it).

A client turns tracking on; from then on the server tells it when a key it
may have cached changes:

* default mode: the keys of the read commands it runs (``readonly`` in the
  command table; EVAL_RO, EVALSHA_RO and FCALL_RO themselves excepted, the
  read commands they run count) are remembered in the
  :class:`~tidelog.types.tracking.TrackingTable`; the first modification of
  such a key sends one invalidation and forgets the key.  OPTIN: only after
  ``CLIENT CACHING YES``; OPTOUT: except after ``CLIENT CACHING NO`` -- for
  the next command only (a MULTI ... EXEC counts as one; CLIENT subcommands
  in between keep it, as in Redis);
* BCAST: nothing is remembered; every modified key starting with one of the
  client's prefixes (none given: every key) is sent, gathered per prefix and
  sent once per event-loop turn (keys in byte order);
* NOLOOP: not the keys the client itself modified.

The message: in RESP3 a push ``>2 $10 invalidate <array of keys>``; after
FLUSHALL / FLUSHDB a null in place of the array (one per flush, the table
is dropped).  With ``REDIRECT id`` it goes to that client instead: a push
if that one speaks RESP3, else a Pub/Sub ``message`` on
``__redis__:invalidate`` if it has subscriptions (RESP2), else nothing.  If
the redirect client is gone, the tracking client gets a
``tracking-redir-broken`` push (RESP3) instead, at every invalidation, and
its TRACKINGINFO says ``broken_redirect``.  A RESP2 client without a
redirect is told nothing (its keys are still remembered, as in Redis).

When the client being told is the one running the command that changed the
key, the message follows the command's reply (the whole EXEC's, the whole
script's), as in Redis since 7.0; any other client gets it at once.

Where the engine calls in (:class:`Tracker`): every key modification reaches
:meth:`Tracker.touched` through the databases' ``on_touch`` hook (the place
WATCH is told, :meth:`tidelog.keyspace.Database.touch`), installed when the
first client turns tracking on; flushes call :meth:`Tracker.flushed`.  The
commands of a tracking client take the engine's checked path (its dispatch
is empty, as a restricted user's), where :meth:`Tracker.remember` and
:meth:`Tracker.finish` run: clients that do not track pay one ``None`` test
per key modification and nothing per command.

``tracking-table-max-keys`` (0: no limit): past it, the oldest remembered
keys are invalidated as if modified (Redis picks them at random), at most
100 more per attempt each time the table is found still over the limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import (
    CACHING_NO_NOT_OPTOUT,
    CACHING_NOT_TRACKING,
    CACHING_YES_NOT_OPTIN,
    SYNTAX,
    TRACKING_BCAST_SWITCH,
    TRACKING_NO_REDIRECT_CLIENT,
    TRACKING_ONE_REDIRECT,
    TRACKING_OPT_SWITCH,
    TRACKING_OPTIN_AND_OPTOUT,
    TRACKING_OPTIN_BCAST,
    TRACKING_PREFIX_EXISTING,
    TRACKING_PREFIX_NEEDS_BCAST,
    TRACKING_PREFIX_PROVIDED,
    CommandError,
)
from ...resp.replies import OK, Map, Push, RawReply, SetReply
from ...types.tracking import TrackingTable, overlapping
from ..args import ArgReader
from ..key_specs import acl_keys, fixed_key_ranges
from ..table import command

if TYPE_CHECKING:
    from ..contract import ClientState, Ctx, EngineAPI
    from ..table import CommandSpec

INVALIDATE = b"invalidate"
CHANNEL = b"__redis__:invalidate"  # RESP2 redirect clients get messages on it
REDIR_BROKEN = b"tracking-redir-broken"
# A flush's "every key" in place of the keys, in the tracking client's protocol.
_FLUSH_NULL = {2: RawReply(b"$-1\r\n"), 3: RawReply(b"_\r\n")}
# Read commands whose keys are not remembered (the commands they run are).
_NOT_REMEMBERED = frozenset({"eval_ro", "evalsha_ro", "fcall_ro"})


_UNKNOWN: Any = object()
_NEVER: Any = object()  # a command whose keys are never remembered


def _key_ranges(spec: CommandSpec) -> Any:
    """Where a read command's keys are, when its key specs are plain ranges
    (``(begin, lastkey, keystep)`` each, as COMMAND INFO shows them); None
    when they need more (a keyword, a count argument, XREAD's options):
    :func:`~.key_specs.acl_keys` then finds them, per call; ``_NEVER`` for
    a command that is not a read (or a Pub/Sub one, or EVAL_RO ...)."""
    if "readonly" not in spec.flags or "pubsub" in spec.flags or spec.name in _NOT_REMEMBERED:
        return _NEVER
    ranges = fixed_key_ranges(spec)
    return None if ranges is None else ranges or _NEVER


class ClientTracking:
    """One client's tracking options (``client.tracking``; None while off)."""

    __slots__ = ("redirect", "bcast", "optin", "optout", "noloop", "caching", "broken",
                 "prefixes")

    def __init__(self) -> None:
        self.redirect = 0           # the client id messages go to (0: this client)
        self.bcast = False
        self.optin = False
        self.optout = False
        self.noloop = False
        self.caching = False        # CLIENT CACHING YES (optin) / NO (optout) given
        self.broken = False         # the redirect client was found gone
        self.prefixes: dict[bytes, None] = {}  # BCAST prefixes (b"": every key)


class Tracker:
    """The server's tracking state and delivery (``engine.tracking``)."""

    def __init__(self, engine: EngineAPI) -> None:
        self.engine = engine
        self.table = TrackingTable()
        self.clients = 0            # clients with tracking on (INFO tracking_clients)
        # The tracking client whose command runs now (set by the engine
        # around a tracking client's command), and the keys (None: a flush)
        # whose message to it waits for the command's reply.
        self.current: ClientState | None = None
        self.pending: list[bytes | None] = []
        self.hooked = False         # the databases' on_touch hook is installed
        self.bcast_due = False      # a broadcast is scheduled
        self.limit_misses = 0       # tracking-table-max-keys: attempts that stayed over
        # Per command: where its keys are if it is a read (_key_ranges), found once.
        self._ranges: dict[str, Any] = {}
        self.grew = False           # keys were remembered since the size was checked
        self.left: ClientTracking | None = None  # the current client's, turned off meanwhile

    # -- turning it on and off ------------------------------------------------------
    def enable(self, client: ClientState, redirect: int, bcast: bool, optin: bool,
               optout: bool, noloop: bool, prefixes: list[bytes]) -> None:
        """CLIENT TRACKING ON (options checked).  Prefixes accumulate over
        calls; the other options replace those of an earlier call."""
        state = client.tracking
        if state is None:
            state = client.tracking = ClientTracking()
            self.clients += 1
        state.redirect = redirect
        state.broken = False
        state.bcast, state.optin, state.optout, state.noloop = bcast, optin, optout, noloop
        if bcast:
            for prefix in prefixes or [b""]:
                if self.table.add_prefix(client.id, prefix):
                    state.prefixes[prefix] = None
        self._hook(True)
        self.engine.refresh_access(client)

    def disable(self, client: ClientState) -> None:
        """CLIENT TRACKING OFF, RESET, or the connection closed."""
        state = client.tracking
        if state is None:
            return
        for prefix in state.prefixes:
            self.table.remove_prefix(client.id, prefix)
        client.tracking = None
        if client is self.current:  # what waits for its reply still goes out (as Redis)
            self.left = state
        self.clients -= 1
        self._unhook_if_idle()
        self.engine.refresh_access(client)

    def _hook(self, on: bool) -> None:
        if on != self.hooked:
            self.hooked = on
            for db in self.engine.dbs:
                db.on_touch = self.touched if on else None

    def _unhook_if_idle(self) -> None:
        table = self.table
        if not self.clients and not table.keys and not table.prefixes:
            self._hook(False)

    # -- what clients read ----------------------------------------------------------
    def remember(self, spec: CommandSpec, argv: list[bytes],
                 client: ClientState | None = None) -> None:
        """After a command the current tracking client (or ``client``) ran,
        itself or in its EXEC or script: the keys of a read command, in the
        default mode."""
        if client is None:
            client = self.current
        state = client.tracking if client is not None else None
        if state is None or state.bcast:
            return
        ranges = self._ranges.get(spec.name, _UNKNOWN)
        if ranges is _UNKNOWN:
            ranges = self._ranges[spec.name] = _key_ranges(spec)
        if ranges is _NEVER:
            return
        if (state.optin and not state.caching) or (state.optout and state.caching):
            return
        if ranges is None:
            keys = [argv[i] for i, _ in acl_keys(spec, argv)]
        else:
            argc = len(argv)
            keys = []
            for first, lastkey, step in ranges:
                last = first + lastkey if lastkey >= 0 else argc + lastkey
                keys += argv[first:min(last, argc - 1) + 1:step]
        if keys:
            self.table.remember(client.id, keys)  # type: ignore[union-attr]
            self.grew = True

    def finish(self, client: ClientState, name: str) -> list[Any]:
        """After a tracking client's top-level command (``name``; the client is
        still :attr:`current`): CLIENT
        CACHING lapses (but across CLIENT subcommands and inside MULTI), a
        full table gives keys up, and the messages for this client that
        waited go out: those it receives itself are returned, to follow the
        reply."""
        state = client.tracking
        if state is not None and state.caching and client.multi is None and \
                not name.startswith("client"):
            state.caching = False
        if self.grew:
            self.grew = False
            self.enforce_limit()
        if not self.pending:
            return []
        pending, self.pending = self.pending, []
        state = client.tracking if client.tracking is not None else self.left
        self.left = None
        tail: list[Any] = []
        if state is None:
            return tail
        for key in pending:
            self._send(client, _FLUSH_NULL[client.protocol] if key is None else [key], tail, state)
        return tail

    # -- what changes ---------------------------------------------------------------
    def touched(self, key: bytes) -> None:
        """A key was modified (the databases' ``on_touch``): the clients that
        may cache it are told, and BCAST prefixes note it."""
        table = self.table
        current = self.current
        if table.prefixes and table.modified(key, current.id if current is not None else None):
            self._schedule_broadcast()
        ids = table.invalidate(key)
        if ids is None:
            return
        clients = self.engine.clients
        for client_id in ids:
            target = clients.get(client_id)
            if target is None:
                continue
            state = target.tracking
            if state is None or state.bcast:
                continue
            if target is current:
                if not state.noloop:
                    self.pending.append(key)
            else:
                self._send(target, [key], None)
        if not self.clients:
            self._unhook_if_idle()

    def flushed(self) -> None:
        """Every key of one database or all changed at once (FLUSHDB,
        FLUSHALL, a snapshot loaded): every tracking client gets a null,
        whatever its mode, and the table is dropped."""
        if self.clients:
            for client in list(self.engine.clients.values()):
                if client.tracking is None:
                    continue
                if client is self.current:
                    self.pending.append(None)
                else:
                    self._send(client, _FLUSH_NULL[client.protocol], None)
        self.table.flush()

    def enforce_limit(self) -> None:
        """tracking-table-max-keys: over it, invalidate the oldest keys, at most
        100 per attempt more than the last attempt made (Redis's effort)."""
        limit = self.engine.config["tracking-table-max-keys"]
        keys = self.table.keys
        if not limit or len(keys) <= limit:
            self.limit_misses = 0
            return
        effort = 100 * (self.limit_misses + 1)
        while effort > 0 and keys:
            effort -= 1
            key = self.table.oldest()
            assert key is not None
            self._invalidate_only(key)
            if len(self.table.keys) <= limit:
                self.limit_misses = 0
                return
        self.limit_misses += 1

    def _invalidate_only(self, key: bytes) -> None:
        """Tell the key's clients as if it changed, BCAST prefixes aside."""
        prefixes, self.table.prefixes = self.table.prefixes, {}
        try:
            self.touched(key)
        finally:
            self.table.prefixes = prefixes

    # -- BCAST ----------------------------------------------------------------------
    def _schedule_broadcast(self) -> None:
        if self.bcast_due:
            return
        self.bcast_due = True
        schedule = self.engine.schedule
        if schedule is not None:
            schedule(0, self.broadcast)

    def broadcast(self) -> None:
        """Send the keys modified since the last broadcast to the clients of
        each prefix they match (once per event-loop turn; the cron too)."""
        self.bcast_due = False
        clients = self.engine.clients
        for _prefix, keys, ids in self.table.drain():
            common: list[bytes] | None = None
            for client_id in ids:
                client = clients.get(client_id)
                if client is None or client.tracking is None:
                    continue
                if client.tracking.noloop:
                    own = [key for key, by in keys if by != client_id]
                    if own:
                        self._send(client, own, None)
                    continue
                if common is None:
                    common = [key for key, _ in keys]
                self._send(client, common, None)

    # -- delivery -------------------------------------------------------------------
    def _send(self, client: ClientState, payload: Any, tail: list[Any] | None,
              state: ClientTracking | None = None) -> None:
        """One invalidation for a tracking client (``payload``: the array of
        keys, or a flush's null), where its options (or ``state``) say.  A
        message for the client whose command just finished goes into
        ``tail``."""
        if state is None:
            state = client.tracking
        target = client
        redirected = False
        if state is not None and state.redirect:
            found = self.engine.clients.get(state.redirect)
            if found is None:
                state.broken = True
                if client.protocol == 3:
                    self._deliver(client, Push([REDIR_BROKEN, state.redirect]), tail)
                return
            target, redirected = found, True
        if target.protocol == 3:
            message = Push([INVALIDATE, payload])
        elif redirected and target.pubsub is not None:
            message = Push([b"message", CHANNEL, payload])
        else:
            return
        self._deliver(target, message, tail)

    def _deliver(self, target: ClientState, message: Push, tail: list[Any] | None) -> None:
        if tail is not None and target is self.current:  # it follows the reply
            tail.append(message)
        else:
            target.send(message)

    # -- INFO ---------------------------------------------------------------------------
    def info_stats(self) -> list[str]:
        """INFO stats' lines (tracking_total_keys, _items, _prefixes)."""
        table = self.table
        return [f"tracking_total_keys:{len(table.keys)}",
                f"tracking_total_items:{table.items}",
                f"tracking_total_prefixes:{len(table.prefixes)}"]


# -- the commands ---------------------------------------------------------------------
def _tracker(ctx: Ctx) -> Tracker:
    return ctx.engine.tracking  # type: ignore[no-any-return]


def _error_text(text: bytes) -> bytes:
    """A user's bytes inside an error line: no CR or LF (Redis makes them spaces)."""
    return text.replace(b"\r", b" ").replace(b"\n", b" ")


def _check_prefixes(state: ClientTracking | None, prefixes: list[bytes]) -> None:
    """No prefix may overlap another of the client's or of this call (Redis's
    order of checks: each given prefix against the existing ones, in byte
    order, then against the ones after it)."""
    existing = sorted(state.prefixes) if state is not None else []
    for i, prefix in enumerate(prefixes):
        for old in existing:
            if overlapping(old, prefix):
                raise CommandError(TRACKING_PREFIX_EXISTING % (_error_text(prefix), _error_text(old)))
        for other in prefixes[i + 1:]:
            if overlapping(prefix, other):
                raise CommandError(TRACKING_PREFIX_PROVIDED % (_error_text(prefix),
                                                               _error_text(other)))


@command("client|tracking", arity=-3, flags="noscript loading stale", group="connection",
         since="6.0.0", complexity="O(1). Some options may introduce additional complexity.",
         summary="Enable or disable server assisted client side caching support")
def client_tracking(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT TRACKING <ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]"""  # noqa: E501 (the syntax line, whole)
    client = ctx.client
    redirect = 0
    bcast = optin = optout = noloop = False
    prefixes: list[bytes] = []
    r = ArgReader(argv, start=3)
    while r.more():
        option = r.next_bytes().lower()
        if option == b"redirect" and r.more():
            if redirect:
                raise CommandError(TRACKING_ONE_REDIRECT)
            redirect = r.next_int()
            if redirect not in ctx.engine.clients:
                raise CommandError(TRACKING_NO_REDIRECT_CLIENT)
        elif option == b"bcast":
            bcast = True
        elif option == b"optin":
            optin = True
        elif option == b"optout":
            optout = True
        elif option == b"noloop":
            noloop = True
        elif option == b"prefix" and r.more():
            prefixes.append(r.next_bytes())
        else:
            raise CommandError(SYNTAX)
    mode = argv[2].lower()
    tracker = _tracker(ctx)
    state = client.tracking
    if mode == b"on":
        if not bcast and prefixes:
            raise CommandError(TRACKING_PREFIX_NEEDS_BCAST)
        if state is not None and state.bcast != bcast:
            raise CommandError(TRACKING_BCAST_SWITCH)
        if bcast and (optin or optout):
            raise CommandError(TRACKING_OPTIN_BCAST)
        if optin and optout:
            raise CommandError(TRACKING_OPTIN_AND_OPTOUT)
        if state is not None and ((optin and state.optout) or (optout and state.optin)):
            raise CommandError(TRACKING_OPT_SWITCH)
        if bcast:
            _check_prefixes(state, prefixes)
        tracker.enable(client, redirect, bcast, optin, optout, noloop, prefixes)
    elif mode == b"off":
        tracker.disable(client)
    else:
        raise CommandError(SYNTAX)
    return OK


@command("client|caching", arity=3, flags="noscript loading stale", group="connection",
         since="6.0.0", complexity="O(1)",
         summary="Instruct the server about tracking or not keys in the next request")
def client_caching(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT CACHING <YES | NO>"""
    state = ctx.client.tracking
    if state is None:
        raise CommandError(CACHING_NOT_TRACKING)
    answer = argv[2].lower()
    if answer == b"yes":
        if not state.optin:
            raise CommandError(CACHING_YES_NOT_OPTIN)
    elif answer == b"no":
        if not state.optout:
            raise CommandError(CACHING_NO_NOT_OPTOUT)
    else:
        raise CommandError(SYNTAX)
    state.caching = True
    return OK


@command("client|getredir", arity=2, flags="noscript loading stale", group="connection",
         since="6.0.0", complexity="O(1)",
         summary="Get tracking notifications redirection client ID if any")
def client_getredir(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT GETREDIR"""
    state = ctx.client.tracking
    return -1 if state is None else state.redirect


@command("client|trackinginfo", arity=2, flags="noscript loading stale", group="connection",
         since="6.2.0", complexity="O(1)",
         summary="Return information about server assisted client side caching for the current "
                 "connection")
def client_trackinginfo(ctx: Ctx, argv: list[bytes]) -> object:
    """CLIENT TRACKINGINFO"""
    state = ctx.client.tracking
    if state is None:
        return Map([(b"flags", SetReply([b"off"])), (b"redirect", -1), (b"prefixes", [])])
    flags = [b"on"]
    if state.bcast:
        flags.append(b"bcast")
    if state.optin:
        flags.append(b"optin")
        if state.caching:
            flags.append(b"caching-yes")
    if state.optout:
        flags.append(b"optout")
        if state.caching:
            flags.append(b"caching-no")
    if state.noloop:
        flags.append(b"noloop")
    if state.broken:
        flags.append(b"broken_redirect")
    return Map([(b"flags", SetReply(flags)), (b"redirect", state.redirect),
                (b"prefixes", sorted(state.prefixes))])
