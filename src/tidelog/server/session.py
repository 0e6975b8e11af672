"""One client's protocol state, with no I/O (sans-IO, as h11 is for HTTP).

A :class:`Session` holds what a connection needs between reads: the request
parser (the bytes of commands not complete yet), the commands parsed but not
run yet (behind a blocked or postponed one), CLIENT REPLY's muting, HELLO's
protocol switch.  The connection hands it bytes (:meth:`receive`), lets it
run what is complete (:meth:`run`, or :meth:`run_busy` while a script is
busy), and takes the reply bytes out (:meth:`drain`, which also says whether
the connection must close once they are written).  A reply that arrives
later (a blocked command answered, a timeout) goes in by :meth:`deliver`.

The hot path: the complete commands of one read go to
``Engine.execute_many``, which runs them in order until one needs more (then
that one goes to ``Engine.execute``; consecutive ones that can run as one, a
producer's ``XADD key * ...`` burst, to ``Engine.execute_run``); every reply
of the read is encoded into one buffer, in one call.

After a protocol error the session answers ``-ERR Protocol error: ...`` and
asks to close; after a cross-protocol request (POST, Host:) it is
``aborted``: nothing more is sent, the connection drops at once.
"""

from __future__ import annotations

import logging
from typing import Any

from .. import errors
from ..engine import ABORTED, BLOCKED, CROSS_PROTOCOL_NAMES, NOT_RUN, PARKED, POSTPONED, ClientState, Engine
from ..resp import ProtocolError, QueryBufferLimit, RequestParser, encode_all, encode_into
from ..resp.replies import Push, Replies

log = logging.getLogger("tidelog")

# Most commands one run gathers (Engine.execute_run): bounds what one
# handler call holds at once (its replies, the entries of one append).
MAX_RUN = 1024


class Session:
    """The protocol state of one client, driven with bytes alone."""

    def __init__(self, engine: Engine, client: ClientState, parser: RequestParser) -> None:
        self.engine = engine
        self.client = client
        self.parser = parser
        # Commands parsed but not run yet, because one before them blocked.
        self.pending: list[list[bytes]] = []
        # While run() runs: the replies gathered so far, where a reply sent to
        # this client meanwhile (a message it published to itself) goes, so it
        # keeps its place before the command's own reply.
        self.batch: list[Any] | None = None
        # Nothing more is read or run: the one closing flag.  Set here
        # (drain() after QUIT or a protocol error, a cross-protocol abort)
        # and by the connection (CLIENT KILL, output limits, the peer gone),
        # which reads it as Connection.closing.
        self.closing = False
        # A cross-protocol request (POST, Host:): close at once, send nothing.
        self.aborted = False
        # A protocol error was answered (its reply is in the output).
        self.failed = False
        self._out = bytearray()
        self._close = False

    # -- input -----------------------------------------------------------------------
    def receive(self, data: bytes) -> None:
        """Bytes read from the client (run() runs the complete commands)."""
        if self.closing or self.failed:
            return
        if not self.engine.admission_settled(self.client):
            self.auth_limits()
        try:
            self.parser.feed(data)
        except ProtocolError as exc:
            self._protocol_error(exc)

    @property
    def waiting(self) -> bool:
        """Commands (or bytes of them) wait to run."""
        return bool(self.pending) or not self.parser.empty

    # -- output ----------------------------------------------------------------------
    def drain(self) -> tuple[bytearray, bool]:
        """The reply bytes ready to send, and whether to close once they are sent."""
        out, close = self._out, self._close
        self._out = bytearray()
        self._close = False
        if close:
            self.closing = True  # read nothing more from this client
        return out, close

    def take(self, reply: Any) -> bool:
        """A reply sent to this client from elsewhere: True when it needs
        nothing more (CLIENT REPLY OFF drops it, or it joins the replies of
        the commands running now, keeping its place among them)."""
        if self.client.mute < 0 and reply.__class__ is not Push:  # CLIENT REPLY OFF:
            return True                                            # nothing but Pub/Sub's
        if self.batch is not None:
            self.batch.append(reply)
            return True
        return False

    def deliver(self, reply: Any) -> None:
        """A reply that arrives later (a blocked command's, served or timed
        out), encoded after what is ready; drain() takes it out."""
        if reply.__class__ is Replies:
            encode_all(self._out, reply.items, self.client.protocol)
        else:
            encode_into(self._out, reply, self.client.protocol)

    # -- running -----------------------------------------------------------------------
    def run(self) -> None:
        """Run every complete command buffered, unless the client is blocked.

        The parser hands over all complete commands at once; those a
        blocked command leaves wait in ``pending``.  Consecutive commands
        the engine can run as one (a producer's pipelined ``XADD key * ...``
        burst: :meth:`Engine.run_key`) are handed over together.  Replies
        are encoded a group at a time, a new group whenever the protocol
        changes (HELLO)."""
        if self.closing or self.failed:
            return
        client, parser, engine = self.client, self.parser, self.engine
        clock = engine.clock
        client.last_interaction = clock.monotonic()
        runnable, execute, execute_many = engine.runnable, engine.execute, engine.execute_many
        out = self._out
        replies: list[Any] = []
        self.batch = replies
        proto = client.protocol
        clock.begin_turn()  # the commands of this batch read the wall clock once
        try:
            while client.blocked is None and not client.postponed and client.parked is None \
                    and not self.closing:
                commands = self.pending
                if commands:
                    self.pending = []
                else:
                    if parser.unauth:  # after an AUTH, the next command has the usual limits
                        self.auth_limits()
                    client.query_bytes = parser.buffered  # (qbuf while these run)
                    try:
                        commands = parser.next_commands()
                    except ProtocolError as exc:
                        encode_all(out, replies, proto)
                        replies = []
                        self._protocol_error(exc)
                        return
                    if not commands:
                        break
                i, n = 0, len(commands)
                while i < n:
                    # Plain commands run in the engine's loop; it stops at one
                    # it did not run, or after one whose reply is looked at below.
                    i, reply = execute_many(client, commands, i, replies)
                    if reply is NOT_RUN:
                        if i == n:
                            break
                        argv = commands[i]
                        i += 1
                        if argv[0] in runnable:
                            j = self._run_end(commands, i - 1)
                            if j > i:
                                run_replies = engine.execute_run(client, commands[i - 1:j])
                                if client.mute:
                                    run_replies = self._muted(run_replies)
                                replies += run_replies
                                i = j
                                continue
                        reply = execute(client, argv)
                        if reply is ABORTED:  # POST or Host: (Engine.cross_protocol)
                            self._abort()
                            replies = []
                            return
                    if reply is BLOCKED or reply is PARKED:  # answered later (deliver)
                        self.pending = commands[i:]
                        break
                    if reply is POSTPONED:  # CLIENT PAUSE: this command waits too
                        self.pending = commands[i - 1:]
                        break
                    if client.mute:  # CLIENT REPLY OFF / SKIP: the reply is dropped
                        if client.mute > 0:
                            client.mute -= 1
                        replies += _pushes(reply)  # but not Pub/Sub's, as in Redis
                        if client.close_after_reply:
                            encode_all(out, replies, proto)
                            replies = []
                            self._close = True
                            return
                        if self.closing:
                            self.pending = commands[i:]
                            break
                        continue
                    if client.protocol != proto:  # HELLO: its reply in the new protocol
                        encode_all(out, replies, proto)
                        replies = self.batch = []
                        proto = client.protocol
                    if reply.__class__ is Replies:  # SUBSCRIBE a b: a reply per channel
                        replies += reply.items
                    else:
                        replies.append(reply)
                    if client.close_after_reply:
                        encode_all(out, replies, proto)
                        replies = []
                        self._close = True
                        return
                    if client.blocked is not None or self.closing:
                        self.pending = commands[i:]
                        break
        finally:
            self.batch = None
            clock.end_turn()
            client.query_bytes = parser.buffered
            if replies:
                encode_all(out, replies, proto)

    def run_busy(self) -> None:
        """A script runs past busy-reply-threshold: every command but Redis's
        allow_busy ones is answered -BUSY (POST and Host: abort)."""
        if self.closing or self.failed:
            return
        client, parser, engine = self.client, self.parser, self.engine
        out = self._out
        replies: list[Any] = []
        commands, self.pending = self.pending, []
        while True:
            if not commands:
                try:
                    commands = parser.next_commands()
                except ProtocolError as exc:
                    encode_all(out, replies, client.protocol)
                    self._protocol_error(exc)
                    return
                if not commands:
                    break
            for argv in commands:
                reply = busy_execute(engine, client, argv)
                if reply is ABORTED:
                    self._abort()
                    return
                replies.append(reply)
            commands = []
        encode_all(out, replies, client.protocol)
        if client.close_after_reply:
            self._close = True

    def auth_limits(self) -> None:
        """The parser's limits for a client that must still authenticate
        (Redis's: RequestParser.limit_unauthenticated), on or off."""
        on = not self.client.authenticated and self.engine.acl.auth_required()
        if on != self.parser.unauth:
            self.parser.limit_unauthenticated(on)

    # -- internals ---------------------------------------------------------------------
    def _muted(self, replies: list[Any]) -> list[Any]:
        """A run's replies under CLIENT REPLY OFF (none) or SKIP (the first ones)."""
        client = self.client
        if client.mute < 0:
            return []
        dropped = min(client.mute, len(replies))
        client.mute -= dropped
        return replies[dropped:]

    def _run_end(self, commands: list[list[bytes]], first: int) -> int:
        """Where the run that ``commands[first]`` starts ends: the index after
        the last of the commands right after it with the same run key (at
        most MAX_RUN in all); ``first + 1`` when it has none or nothing
        joins it."""
        engine = self.engine
        key = engine.run_key(commands[first])
        end = first + 1
        if key is None:
            return end
        runnable = engine.runnable
        stop = min(len(commands), first + MAX_RUN)
        while end < stop:
            argv = commands[end]
            if argv[0] not in runnable or engine.run_key(argv) != key:
                break
            end += 1
        return end

    def _protocol_error(self, exc: ProtocolError) -> None:
        if isinstance(exc, QueryBufferLimit):
            self.engine.stats["client_query_buffer_limit_disconnections"] += 1
        message = exc.message_bytes.replace(b"\r", b" ").replace(b"\n", b" ")
        self._out += b"-" + errors.PROTOCOL_PREFIX + message + b"\r\n"
        log.info("Protocol error (%s) from client: %s", exc, self.client.addr)
        self.failed = True
        self._close = True

    def _abort(self) -> None:
        """Close at once, as Redis frees a client: the replies of this read
        are dropped, nothing more is read."""
        self.aborted = True
        self.closing = True
        self.pending = []
        self._out = bytearray()
        self._close = False


def _pushes(reply: Any) -> list[Any]:
    """The Pub/Sub pushes in a reply (SUBSCRIBE's confirmations), which Redis
    sends even under CLIENT REPLY OFF or SKIP, in RESP2 as in RESP3."""
    if reply.__class__ is Push:
        return [reply]
    if reply.__class__ is Replies:
        return [item for item in reply.items if item.__class__ is Push]
    return []


def busy_execute(engine: Engine, client: ClientState, argv: list[bytes]) -> Any:
    """One command while a script is busy: -BUSY, unless allowed (POST and
    Host: close the connection, as at any time)."""
    if argv[0].lower() in CROSS_PROTOCOL_NAMES and client.kind == "normal":
        return engine.cross_protocol()
    if not allowed_while_busy(argv):
        return engine.busy_reply(client, argv[0].lower())
    reply = engine.execute(client, argv)
    if argv[0].lower() == b"shutdown" and client.close_after_reply:
        engine.scripts.abandon()  # the server stops: the script with it
    return reply


def allowed_while_busy(argv: list[bytes]) -> bool:
    """Redis's ``allow_busy`` commands (SHUTDOWN with NOSAVE only)."""
    name = argv[0].lower()
    if name in _ALLOWED_WHILE_BUSY:
        return True
    if name in (b"script", b"function") and len(argv) == 2:
        return argv[1].lower() in (b"kill", b"stats")
    if name == b"shutdown":
        return any(arg.lower() == b"nosave" for arg in argv[1:])
    return False


_ALLOWED_WHILE_BUSY = frozenset({b"auth", b"hello", b"reset", b"quit", b"multi", b"discard",
                                 b"watch", b"unwatch"})
