"""The request parser: bytes from a client in, argument lists out (sans-IO).

    parser = RequestParser()
    parser.feed(data)                     # whatever the socket gave us
    while (argv := parser.next_command()) is not None:
        ...                               # argv: list[bytes], never empty

``next_command`` returns ``None`` when it needs more bytes.  A malformed
request raises :class:`ProtocolError`; its message is the text Redis 7.0
puts after ``-ERR Protocol error: ``.  The parser is dead afterwards (every
later call raises again): the server sends the error and closes.

The grammar is Redis 7.0.15's ``processMultibulkBuffer`` and
``processInlineBuffer``, rebuilt from its observable behaviour:

* A request whose first byte is ``*`` is a multibulk: ``*<count>\\r\\n``
  then ``count`` times ``$<len>\\r\\n<len bytes>\\r\\n``.  A header line ends
  at its first CR; the byte after that CR, and the two bytes after a bulk's
  data, are skipped without being looked at (Redis does the same).
  ``count <= 0`` is an empty request and is skipped silently.
* Numbers are canonical signed 64-bit decimals (Redis's ``string2ll``): no
  ``+``, no spaces, no leading zeros, no ``-0``.
* Any other first byte starts an inline request: a line ending at LF (a CR
  before the LF is dropped), split like ``sdssplitargs``.  An empty or blank
  line is skipped silently.
* A header line (or an inline line) must end within 64 KiB of its start
  (``PROTO_INLINE_MAX_SIZE``): once more than 65536 bytes are buffered from
  the start of the line without a terminator, it is an error.
* Limits: ``max_bulk_len`` (``proto-max-bulk-len``) and ``max_query_buffer``
  (``client-query-buffer-limit``, checked in :meth:`RequestParser.feed`; it
  counts the unparsed bytes plus the arguments already read of an
  incomplete command).
* A client that must still authenticate gets Redis's tighter limits
  (:meth:`RequestParser.limit_unauthenticated`): at most 10 arguments of
  16 KiB each ("unauthenticated multibulk/bulk length", Redis's fix of
  CVE-2021-32675) and 1 MiB buffered; its commands are handed over one at
  a time, so that the command after an AUTH is read with the limits of a
  client that has authenticated, as Redis reads it.

Deliberate differences from Redis 7.0.15, all in requests no client sends:

* Redis scans header and inline lines with ``strchr``, so a NUL byte before
  the terminator makes it wait forever (or until the 64 KiB limit).  Here
  NUL is an ordinary byte: ``*1\\x00\\r\\n`` is an invalid multibulk length,
  and NUL inside an inline line is part of an argument.
* Redis searches for a line's terminator in everything buffered, so a
  header line longer than 64 KiB that arrives in one read gets "invalid
  ... length" while the same bytes arriving slowly get "too big ...".
  Here the answer never depends on how the bytes were split: a terminator
  more than 65536 bytes after the start of the line is "too big".

Buffering, and why it is fast
-----------------------------
Fed chunks are queued (``feed`` is O(1)); parsing runs over one immutable
``bytes`` object with a read offset, so every argument is a single slice.
Two paths read it, and always agree (the tests check this on random input
against a plain reference model):

* The fast path splits a window (up to 64 KiB) of whole requests on
  ``b"\\r\\n"`` in one C call.  Requests whose arguments contain no CR LF
  come out as ``[b"*3", b"$3", b"SET", b"$1", b"k", ...]``: each argument
  is already a bytes object (copied once), and checking a command is a dict
  lookup per header and a ``len()`` per argument.  All the whole commands
  of the window are decoded in one loop and queued; ``next_command`` pops.
  Anything else (an argument containing CR LF, a length that does not
  match, an inline request, anything wrong) stops the batch at the start
  of that request; the exact parser takes that one request from its first
  byte, and the batch goes on from the part where the next request starts.
  If the fast path keeps missing (two resumed batches in a row that decode
  nothing), the exact parser gets half of what is left of the window
  before the next split, which bounds the wasted work: with every
  argument holding CR LF the parser runs about 10% below the exact
  parser alone; with 1% of them, at 90% of the clean speed.
* The exact parser walks headers with ``bytes.find`` and slices each bulk.
  When it runs out of bytes it records what it waits for: N more bytes (a
  bulk's data) or a line terminator.  Queued chunks are joined to the
  unread tail only once they can end that wait, so a 500 MB argument
  arriving in 64 KiB reads costs one join, not one per read; the arguments
  already read are kept and never parsed again.  A bulk of 32 KiB or more
  is assembled straight from the pieces, so its bytes are copied exactly
  once.  While waiting for a terminator, each new chunk is scanned once
  (h11's "only search what we have not looked at"), so a slow sender
  cannot make it quadratic.

Why not hiredis
---------------
Measured with ``_bench`` below (Python 3.11, hiredis 3.5.0, a busy 2-CPU
machine, CPU time, best of 25 interleaved runs; commands per second):

    case                                  this parser    hiredis.Reader
    128 x XADD s * f v, one feed             0.93 M         5.0 M       (5.4x)
    the same command, one feed each          0.41 M         2.7 M       (6.6x)
    128 x XADD, exact parser only            0.31 M         5.0 M       (16x)

hiredis is five times faster, and it is not used, because it cannot be
made to give Redis's answers (each point checked against hiredis 3.5.0):

* it parses *replies*: inside a request it accepts ``:1``, ``+x``, nested
  arrays and ``$-1`` (a None element), where Redis answers "expected '$',
  got ':'" or "invalid bulk length"; a ``+x`` element even comes back as
  bytes, indistinguishable from a bulk, so no check of its output can
  catch it; inline requests are an error to it;
* its errors are its own texts ("Bad multi-bulk length"), it has no
  ``proto-max-bulk-len`` (``$9999999999`` just waits for 10 GB), and it
  allocates the announced element count up front (``*200000000`` costs
  1.6 GB before a single element has arrived);
* it does not expose its read position, so after it stops (an error, an
  inline request) the rest of the buffer cannot be handed to a checking
  parser, and Redis's error, or the commands before it, cannot be
  recovered.

At 0.5-1 M commands/s the parser is a small share of a command's cost in
this server (dispatch, the stream append and the reply each cost more).
"""

from __future__ import annotations

from typing import NoReturn, cast

from .. import errors

try:
    import cython
except ImportError:  # the pure twin, without Cython installed
    from tidelog.kernels import PURE_CYTHON as cython

__all__ = ["ProtocolError", "QueryBufferLimit", "RequestParser"]

INLINE_MAX_SIZE = 64 * 1024  # Redis's PROTO_INLINE_MAX_SIZE
MAX_MULTIBULK_COUNT = 2**31 - 1  # INT_MAX
DEFAULT_MAX_BULK_LEN = 512 * 1024 * 1024  # proto-max-bulk-len
DEFAULT_MAX_QUERY_BUFFER = 1024**3  # client-query-buffer-limit
# What a client that must still authenticate may send (Redis's limits).
UNAUTH_MAX_ARGS = 10
UNAUTH_MAX_BULK = 16 * 1024
UNAUTH_MAX_QUERY_BUFFER = 1024 * 1024

_BIG_ARG = 32 * 1024  # bulks this long are assembled straight from the fed pieces
_SCAN_ALWAYS = 4096  # below this much unread tail, joining is cheaper than scanning

# Canonical spellings of small numbers, to skip int() and its checks.
_SMALL = {str(i).encode(): i for i in range(1024)}

_STAR, _DOLLAR = 0x2A, 0x24

_SPLIT_WINDOW = 64 * 1024
_MBULK_HEADER = {b"*%d" % i: i for i in range(1024)}
_BULK_HEADER = {b"$%d" % i: i for i in range(1024)}


class ProtocolError(Exception):
    """The client broke the protocol; the connection must be closed.

    ``str(exc)`` is the text Redis sends after ``-ERR Protocol error: ``.
    It can contain one byte the client sent ("expected '$', got 'X'"),
    decoded as Latin-1 so each character stands for one byte;
    ``message_bytes`` is that text as the bytes Redis would send (before
    the error-line CR/LF-to-space rule).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def message_bytes(self) -> bytes:
        return self.message.encode("latin-1")


class QueryBufferLimit(ProtocolError):
    """More than ``max_query_buffer`` bytes of unprocessed input."""

    def __init__(self, message: str = errors.PROTOCOL_QUERY_BUFFER_LIMIT) -> None:
        super().__init__(message)


def string2ll(s: bytes) -> int | None:
    """``s`` as a canonical signed 64-bit decimal, else ``None``.

    Canonical as in Redis's ``string2ll``: an optional ``-``, then ``0`` or a
    digit 1-9 followed by digits; nothing else, at most 20 bytes, and
    ``-0`` is not a number.
    """
    n = _SMALL.get(s)
    if n is not None:
        return n
    digits = s[1:] if s[:1] == b"-" else s
    # bytes.isdigit() is ASCII-only and False for b"".
    if not digits.isdigit() or len(s) > 20 or digits[0] == 0x30:
        return None
    n = int(s)
    if -(2**63) <= n < 2**63:
        return n
    return None


def _slow_count(header: bytes) -> int | None:
    """The count of a ``*<count>`` part beyond the small-number table, or
    None if the exact parser must look at it."""
    if header[:1] != b"*":
        return None
    count = string2ll(header[1:])
    if count is None or count > MAX_MULTIBULK_COUNT:
        return None
    return count


class RequestParser:
    """Incremental RESP request parser; see the module docstring.

    Runtime: O(bytes fed) overall, however the input is split.
    """

    def __init__(
        self,
        max_bulk_len: int = DEFAULT_MAX_BULK_LEN,
        max_query_buffer: int = DEFAULT_MAX_QUERY_BUFFER,
    ) -> None:
        self.max_bulk_len = max_bulk_len
        self.max_query_buffer = max_query_buffer
        self._max_query_buffer = max_query_buffer  # while authenticated
        self.unauth = False  # the limits of a client that must authenticate
        # The bytes being parsed and the read offset into them.
        self._buf = b""
        self._pos = 0
        # Chunks fed but not yet joined onto _buf.
        self._pending: list[bytes] = []
        self._pending_len = 0
        # What we wait for: at least _need bytes from _pos (0 = nothing,
        # parse now), and if _term is set, a line terminator too.
        self._need = 1
        self._term: bytes | None = None
        self._scanned = 0  # pending chunks already searched for _term
        # An incomplete multibulk: its arguments so far, how many are still
        # to come, and the current bulk's length (-1: header not read yet).
        self._args: list[bytes] | None = None
        self._remaining = 0
        self._bulk = -1
        self._args_bytes = 0  # len() total of _args[:_counted]
        self._counted = 0
        self._error: ProtocolError | None = None
        # Commands decoded ahead by the fast path, last first, and the
        # fast path's window (see _start_split).
        self._queue: list[list[bytes]] = []
        self._parts: list[bytes] | None = None
        self._part = 0
        self._part_pos = 0
        self._part_stop = 0
        self._misses = 0  # resumed runs in a row that queued nothing
        self._split_from = 0  # no new window starts before this offset

    # -- public API ---------------------------------------------------------
    def limit_unauthenticated(self, on: bool) -> None:
        """Apply (or lift) the limits of a client that has not authenticated
        yet.  O(1)."""
        self.unauth = on
        self.max_query_buffer = UNAUTH_MAX_QUERY_BUFFER if on else self._max_query_buffer

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes received from the client.  O(1) (plus a copy if
        ``data`` is not ``bytes``).  Raises :class:`QueryBufferLimit`."""
        if self._error is not None:
            self._raise_again()
        if not data:
            return
        if type(data) is not bytes:
            data = bytes(data)  # we keep it; a bytearray could change under us
        if self._pos >= len(self._buf) and self._args is None and not self._pending:
            # Everything before was parsed: parse this chunk as it is.
            self._buf = data
            self._pos = 0
            self._need = 0
            self._term = None
            self._split_from = 0
            self._parts = None
            if len(data) > self.max_query_buffer:
                self._fail(QueryBufferLimit())
            return
        self._pending.append(data)
        self._pending_len += len(data)
        if (
            len(self._buf) - self._pos + self._pending_len + self._args_bytes
            > self.max_query_buffer
        ):
            self._fail(QueryBufferLimit())

    @property
    def buffered(self) -> int:
        """Bytes held: unparsed input plus the arguments of an incomplete
        command (not counting commands already decoded and queued by the
        fast path: at most one 64 KiB window's worth)."""
        return len(self._buf) - self._pos + self._pending_len + self._args_bytes

    @property
    def empty(self) -> bool:
        """Nothing to hand over or to report: no byte held, no command decoded
        ahead, no protocol error waiting (so next_commands() answers ``[]``).
        O(1)."""
        return self._error is None and not self._queue and self.buffered == 0

    def next_command(self) -> list[bytes] | None:
        """The next complete command's arguments, or ``None`` (need more data).

        Raises :class:`ProtocolError`; the parser is then dead.
        """
        queue = self._queue
        if queue:  # decoded ahead by the fast path
            return queue.pop()
        if self._error is not None:
            self._raise_again()
        while True:
            if self._need:
                # We stopped for lack of bytes: go on only if what has been
                # fed since can change that.
                if not self._pending or not self._ready():
                    return None
                if self._pull():
                    if not self._remaining:
                        return self._finish_partial()

            buf = self._buf
            pos = self._pos
            end = len(buf)
            args = self._args
            if args is None:
                # -- a new request ----------------------------------------
                if pos >= end:
                    self._need = 1
                    self._term = None
                    continue
                if buf[pos] != _STAR:
                    argv = self._inline(buf, pos, end)
                    if argv is None:  # stalled, or an empty line skipped
                        continue
                    return argv
                if cython.compiled and not self.unauth:
                    # The compiled twin's fast path: the typed walk.
                    commands: list[list[bytes]] = []
                    stop = _walk(buf, pos, end, min(self.max_bulk_len, _WALK_MAX_BULK), commands)
                    if commands:
                        self._pos = stop
                        argv = commands[0]
                        if len(commands) > 1:
                            commands.reverse()  # served with pop()
                            commands.pop()
                            self._queue = commands
                        return argv
                elif self._parts is not None:
                    # The fast path stopped at a request the exact parser
                    # had to take; go on from the one after it.
                    if pos != self._part_pos:
                        self._resume_split(pos)
                        queue = self._queue
                        if queue:
                            return queue.pop()
                        continue
                elif pos >= self._split_from and self.max_bulk_len >= 1023 and not self.unauth:
                    self._start_split(buf, pos, end)
                    queue = self._queue
                    if queue:
                        return queue.pop()
                    continue
                nl = buf.find(b"\r", pos)
                if nl < 0 or nl - pos > INLINE_MAX_SIZE:
                    if nl >= 0 or end - pos > INLINE_MAX_SIZE:
                        self._fail(ProtocolError(errors.PROTOCOL_MBULK_TOO_BIG))
                    self._stall(pos, end - pos + 1, b"\r")
                    continue
                if nl + 1 >= end:  # the byte after CR has not arrived
                    self._stall(pos, nl - pos + 2)
                    continue
                count = _SMALL.get(buf[pos + 1 : nl])
                if count is None:
                    count = string2ll(buf[pos + 1 : nl])
                    if count is None or count > MAX_MULTIBULK_COUNT:
                        self._fail(ProtocolError(errors.PROTOCOL_MBULK_INVALID))
                if count > UNAUTH_MAX_ARGS and self.unauth:
                    self._fail(ProtocolError(errors.PROTOCOL_UNAUTH_MBULK))
                pos = nl + 2
                if count <= 0:  # *0, *-1: an empty request, skipped
                    self._pos = pos
                    continue
                args = []
                remaining = count
                bulk = -1
            else:
                remaining = self._remaining
                bulk = self._bulk

            # -- the bulks of a multibulk ---------------------------------
            max_bulk = self.max_bulk_len
            find = buf.find
            while remaining:
                if bulk < 0:
                    nl = find(b"\r", pos)
                    if nl < 0 or nl - pos > INLINE_MAX_SIZE or nl + 1 >= end:
                        if nl - pos > INLINE_MAX_SIZE or (nl < 0 and end - pos > INLINE_MAX_SIZE):
                            self._fail(ProtocolError(errors.PROTOCOL_BULK_TOO_BIG))
                        break  # stall below
                    if buf[pos] != _DOLLAR:
                        got = chr(buf[pos])
                        self._fail(ProtocolError(errors.protocol_expected_dollar(got)))
                    bulk = _SMALL.get(buf[pos + 1 : nl], -1)
                    if bulk < 0:
                        parsed = string2ll(buf[pos + 1 : nl])
                        bulk = -1 if parsed is None else parsed
                    if bulk < 0 or bulk > max_bulk:
                        self._fail(ProtocolError(errors.PROTOCOL_BULK_INVALID))
                    if bulk > UNAUTH_MAX_BULK and self.unauth:
                        self._fail(ProtocolError(errors.PROTOCOL_UNAUTH_BULK))
                    pos = nl + 2
                stop = pos + bulk
                if stop + 2 > end:
                    break  # stall below
                args.append(buf[pos:stop])
                pos = stop + 2
                bulk = -1
                remaining -= 1
            else:
                self._pos = pos
                if self._args is not None:
                    return self._finish_partial()
                return args

            # Out of bytes in the middle of a multibulk: keep what we have.
            self._args = args
            self._remaining = remaining
            self._bulk = bulk
            if len(args) > self._counted:
                self._args_bytes += sum(map(len, args[self._counted :]))
                self._counted = len(args)
            if bulk >= 0:
                self._stall(pos, bulk + 2)
            elif nl >= 0:  # a CR was found as the last byte
                self._stall(pos, nl - pos + 2)
            else:
                self._stall(pos, end - pos + 1, b"\r")

    def next_commands(self) -> list[list[bytes]]:
        """Every complete command buffered, in order (empty: need more data).

        A protocol error after some complete commands is raised by the next
        call, so those commands are answered first; one before any is raised
        now.  The parser is then dead.  O(bytes parsed).  While the client
        must authenticate, one command at a time (see the module docstring)."""
        if self.unauth:
            argv = self.next_command()
            return [] if argv is None else [argv]
        queue = self._queue
        if queue:  # decoded ahead by the fast path, kept last first
            commands = queue[::-1]
            queue.clear()
        else:
            commands = []
        try:
            while True:
                argv = self.next_command()
                if argv is None:
                    return commands
                commands.append(argv)
                queue = self._queue
                if queue:  # the rest of what the typed walk decoded: all at once
                    queue.reverse()  # (it is kept last first, for next_command's pop)
                    commands += queue
                    queue.clear()
        except ProtocolError:
            if not commands:
                raise
            return commands  # the error is kept: the next call raises it

    # -- the fast path: split a window on CRLF ---------------------------------
    # See the module docstring.  State: _parts (None: not in use), _part
    # (index of the next part to read), _part_pos (its offset in _buf),
    # _part_stop (the window's end in _buf).
    def _start_split(self, buf: bytes, pos: int, end: int) -> None:
        if end - pos <= _SPLIT_WINDOW:
            stop = end
            parts = (buf if pos == 0 else buf[pos:]).split(b"\r\n")
        else:
            stop = pos + _SPLIT_WINDOW
            parts = buf[pos:stop].split(b"\r\n")
        self._parts = parts
        self._part = 0
        self._part_pos = pos
        self._part_stop = stop
        self._misses = 0
        self._split_run()

    def _resume_split(self, pos: int) -> None:
        """Go on with the window at ``pos``, just after the request the
        exact parser took, if that is where a part starts."""
        parts = self._parts
        assert parts is not None
        i = self._part
        at = self._part_pos
        # The parts skipped are those the separators in between start.
        skipped = self._buf.count(b"\r\n", at, pos)
        j = i + skipped
        if j < len(parts) and at + sum(map(len, parts[i:j])) + 2 * skipped == pos:
            self._part = j
            self._part_pos = pos
            if self._split_run():
                self._misses = 0
                return
            if self._parts is None:  # the window is used up
                return
            self._misses += 1
            if self._misses < 2:
                return
        # That request did not end at a part, or the fast path keeps
        # missing (many arguments hold CR LF): let the exact parser have
        # half of what is left of the window before splitting again.
        self._parts = None
        self._misses = 0
        self._split_from = pos + max(1, (self._part_stop - pos) // 2)

    def _split_run(self) -> int:
        """Queue the whole commands from part ``_part`` on, up to the first
        request the fast path cannot take or the end of the window; return
        how many."""
        parts = self._parts
        assert parts is not None
        first = i = self._part
        last = len(parts) - 1  # the last part may be cut short
        commands = []
        count_of = _MBULK_HEADER.get
        length_of = _BULK_HEADER.get
        cut = True  # stopped by the end of the window (not by a request)
        while i < last:
            count = count_of(parts[i])
            if count is None:
                count = _slow_count(parts[i])
                if count is None:
                    cut = False
                    break
            if count <= 0:  # an empty request, skipped
                i += 1
                continue
            j = i + 1 + 2 * count
            if j > last:
                break
            argv = parts[i + 2 : j : 2]
            k = i + 1
            for arg in argv:
                if length_of(parts[k]) != len(arg) and not self._slow_bulk_ok(parts[k], arg):
                    break
                k += 2
            else:
                commands.append(argv)
                i = j
                continue
            cut = False
            break
        if not cut:
            # Part i starts a request for the exact parser; keep the window
            # to go on after it.
            pos = self._part_pos + sum(map(len, parts[first:i])) + 2 * (i - first)
            self._part = i
            self._part_pos = pos
        else:
            # The window is used up, but for a request cut at its end (which
            # starts at part i; counted from the end, few parts are left).
            if i == first:
                pos = self._part_pos
            else:
                pos = self._part_stop - sum(map(len, parts[i:])) - 2 * (last - i)
            self._parts = None
            self._split_from = pos + 1
            if pos == len(self._buf):
                self._need = 1  # all parsed (the usual end of a read)
                self._term = None
        self._pos = pos
        if commands:
            commands.reverse()  # served with pop()
            self._queue = commands
        return len(commands)

    def _slow_bulk_ok(self, header: bytes, arg: bytes) -> bool:
        """Is ``header`` the ``$<len>`` of ``arg`` (beyond the small-number table)?"""
        return (
            header[:1] == b"$"
            and string2ll(header[1:]) == len(arg)
            and len(arg) <= self.max_bulk_len
        )

    # -- inline requests ----------------------------------------------------
    def _inline(self, buf: bytes, pos: int, end: int) -> list[bytes] | None:
        nl = buf.find(b"\n", pos)
        if nl < 0 or nl - pos > INLINE_MAX_SIZE:
            if nl >= 0 or end - pos > INLINE_MAX_SIZE:
                self._fail(ProtocolError(errors.PROTOCOL_INLINE_TOO_BIG))
            self._stall(pos, end - pos + 1, b"\n")
            return None
        self._pos = nl + 1
        if nl > pos and buf[nl - 1] == 0x0D:
            nl -= 1
        line = buf[pos:nl]
        if (
            b'"' not in line
            and b"'" not in line
            and b"\x0b" not in line
            and b"\x0c" not in line
        ):
            # Without quotes, VT or FF, sdssplitargs == bytes.split().
            argv = line.split()
        else:
            split = split_inline(line)
            if split is None:
                self._fail(ProtocolError(errors.PROTOCOL_UNBALANCED_QUOTES))
            argv = split
        return argv or None  # an empty line is skipped

    # -- waiting for bytes ----------------------------------------------------
    def _stall(self, pos: int, need: int, term: bytes | None = None) -> None:
        """Out of bytes at ``pos``: wait for ``need`` bytes from there (and a
        ``term`` byte, when waiting for a line)."""
        self._pos = pos
        self._need = need
        self._term = term
        self._scanned = 0

    def _ready(self) -> bool:
        """Can the queued chunks end the current wait?"""
        avail = len(self._buf) - self._pos
        total = avail + self._pending_len
        if total < self._need:
            return False
        term = self._term
        if term is None or avail < _SCAN_ALWAYS or total > INLINE_MAX_SIZE:
            return True
        pending = self._pending
        for i in range(self._scanned, len(pending)):
            if term in pending[i]:
                return True
        self._scanned = len(pending)
        return False

    def _pull(self) -> bool:
        """Join the queued chunks onto the unread tail.

        Returns True if, instead, it completed a big bulk straight from the
        pieces (appended to ``_args``).
        """
        pending = self._pending
        self._need = 0
        self._term = None
        self._pending_len = 0
        if self._bulk >= _BIG_ARG and self._args is not None:
            self._take_big_bulk()
            return True
        rest = len(self._buf) - self._pos
        if rest == 0:
            self._buf = pending[0] if len(pending) == 1 else b"".join(pending)
        else:
            self._buf = b"".join([memoryview(self._buf)[self._pos :], *pending])
        self._pos = 0
        self._split_from = 0
        self._parts = None
        pending.clear()
        return False

    def _take_big_bulk(self) -> None:
        """Copy the awaited bulk out of the tail and the chunks, once."""
        n = self._bulk
        pieces: list[memoryview] = [memoryview(self._buf)[self._pos :]]
        pieces += map(memoryview, self._pending)
        self._pending.clear()
        parts = []
        i = 0
        while n:  # the bulk's n bytes
            piece = pieces[i]
            if len(piece) <= n:
                parts.append(piece)
                n -= len(piece)
                i += 1
            else:
                parts.append(piece[:n])
                pieces[i] = piece[n:]
                n = 0
        skip = 2  # then CR LF, not looked at (as Redis)
        while skip:
            piece = pieces[i]
            if len(piece) <= skip:
                skip -= len(piece)
                i += 1
            else:
                pieces[i] = piece[skip:]
                skip = 0
        arg = b"".join(parts)
        del parts
        rest = pieces[i:]
        if not rest:
            self._buf = b""
        elif rest[0].nbytes == len(cast(bytes, rest[0].obj)):
            self._buf = cast(bytes, rest[0].obj)  # a whole chunk: no copy
        else:
            self._buf = rest[0].tobytes()
        self._pos = 0
        self._split_from = 0
        self._parts = None
        for piece in rest[1:]:
            chunk = cast(bytes, piece.obj)  # untouched chunks: the original bytes objects
            self._pending.append(chunk)
            self._pending_len += len(chunk)
        self._args.append(arg)  # type: ignore[union-attr]
        self._remaining -= 1
        self._bulk = -1

    def _finish_partial(self) -> list[bytes]:
        args = self._args
        assert args is not None
        self._args = None
        self._remaining = 0
        self._bulk = -1
        self._args_bytes = 0
        self._counted = 0
        return args

    # -- errors ----------------------------------------------------------------
    def _fail(self, error: ProtocolError) -> NoReturn:
        self._error = error
        self._buf = b""
        self._pos = 0
        self._pending = []
        self._pending_len = 0
        self._args = None
        self._args_bytes = 0
        self._queue = []
        self._parts = None
        raise error

    def _raise_again(self) -> NoReturn:
        assert self._error is not None
        raise type(self._error)(self._error.message)


# -- the compiled twin's fast path: a typed walk over whole requests ---------------
_WALK_WINDOW = 64 * 1024  # requests starting this far from the first one wait
_WALK_MAX_BULK = 1 << 62


@cython.cfunc
def _walk(
    buf: bytes,
    pos: cython.Py_ssize_t,
    end: cython.Py_ssize_t,
    max_bulk: cython.longlong,
    commands: list[list[bytes]],
) -> cython.Py_ssize_t:
    """Append to ``commands`` the argument lists of the whole, plain multibulk
    requests from ``pos`` on; return the offset after the last one.

    Plain: canonical positive counts up to INT_MAX and canonical bulk
    lengths up to ``max_bulk``, each header ended by CR and one more byte
    (not looked at, as in the exact parser), each bulk followed by two bytes
    (not looked at either).  The walk stops, before it, at the first request
    that is anything else (an empty one, an inline one, one the exact parser
    must refuse) or is cut short; the exact parser takes that one, so errors
    and waiting are always its answers.  Byte by byte, typed: this is what
    the compiled twin runs instead of the split (in the pure twin, too slow;
    it reads the same as the exact parser all the same).
    """
    p: cython.p_const_uchar = buf
    limit: cython.Py_ssize_t = pos + _WALK_WINDOW
    q: cython.Py_ssize_t
    first: cython.Py_ssize_t
    count: cython.longlong
    n: cython.longlong
    c: cython.uchar
    # The command name of the request before: a pipeline repeats it, and the
    # same bytes object then serves again (its hash is computed once, for the
    # dispatch lookup, and nothing is allocated for it).
    name: bytes | None = None
    while pos < end and pos < limit and p[pos] == 0x2A:  # '*'
        q = pos + 1
        if q >= end:
            break
        c = p[q]
        if c < 0x31 or c > 0x39:  # not 1-9: *0, *-1, junk: the exact parser
            break
        count = 0
        while q < end and q - pos <= 11:
            c = p[q]
            if c < 0x30 or c > 0x39:
                break
            count = count * 10 + (c - 0x30)
            q += 1
        if q + 1 >= end or p[q] != 0x0D or count > 2147483647:
            break
        q += 2
        argv: list[bytes] = []
        while count:
            if q + 1 >= end or p[q] != 0x24:  # '$'
                break
            q += 1
            first = q
            c = p[q]
            if c < 0x30 or c > 0x39:
                break
            n = 0
            while q < end and q - first < 18:
                c = p[q]
                if c < 0x30 or c > 0x39:
                    break
                n = n * 10 + (c - 0x30)
                q += 1
            if q + 1 >= end or p[q] != 0x0D or n > max_bulk:
                break
            if p[first] == 0x30 and q - first > 1:  # a leading zero
                break
            q += 2
            if q + n + 2 > end:
                break
            if argv:
                # One copy of the argument, with no slice object made for it.
                argv.append(PyBytes_FromStringAndSize(  # type: ignore[name-defined]
                    cython.cast(cython.p_char, p) + q, n))
            elif (
                name is not None
                and PyBytes_GET_SIZE(name) == n  # type: ignore[name-defined]
                and memcmp(PyBytes_AS_STRING(name),  # type: ignore[name-defined]
                           cython.cast(cython.p_char, p) + q, n) == 0
            ):
                argv.append(name)  # the name of the request before, again
            else:
                name = PyBytes_FromStringAndSize(  # type: ignore[name-defined]
                    cython.cast(cython.p_char, p) + q, n)
                argv.append(name)
            q += n + 2
            count -= 1
        if count:
            break
        commands.append(argv)
        pos = q
    return pos


# -- inline argument splitting (sdssplitargs) ------------------------------------
# Blanks between arguments: C isspace().  An unquoted argument, though, ends
# only at space, tab, CR or LF (so VT and FF inside one are kept).
_BLANK = frozenset(b" \t\n\r\x0b\x0c")
_UNQUOTED_END = frozenset(b" \t\n\r")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = {ord("n"): 0x0A, ord("r"): 0x0D, ord("t"): 0x09, ord("b"): 0x08, ord("a"): 0x07}
_DQ, _SQ, _BACKSLASH = 0x22, 0x27, 0x5C


def split_inline(line: bytes) -> list[bytes] | None:
    """Split an inline request line into arguments, or ``None`` if its
    quotes are unbalanced.

    Blanks separate arguments.  In double quotes, ``\\n \\r \\t \\b \\a``,
    ``\\xHH`` and backslash + any other byte (that byte) are escapes; in
    single quotes only ``\\'`` is.  Quotes may start inside an argument
    (``a"b c"`` is ``ab c``), but a closing quote must be followed by a
    blank or the end of the line.
    """
    args: list[bytes] = []
    n = len(line)
    i = 0
    while True:
        while i < n and line[i] in _BLANK:
            i += 1
        if i >= n:
            return args
        arg = bytearray()
        quote = 0
        while True:
            if i >= n:
                if quote:
                    return None  # unterminated quotes
                break
            c = line[i]
            if quote == _DQ:
                if c == _BACKSLASH and i + 1 < n:
                    nxt = line[i + 1]
                    if nxt == 0x78 and i + 3 < n and line[i + 2] in _HEX and line[i + 3] in _HEX:
                        arg.append(int(line[i + 2 : i + 4], 16))
                        i += 4
                    else:
                        arg.append(_ESCAPES.get(nxt, nxt))
                        i += 2
                    continue
                if c == _DQ:
                    i += 1
                    if i < n and line[i] not in _BLANK:
                        return None
                    break
            elif quote == _SQ:
                if c == _BACKSLASH and i + 1 < n and line[i + 1] == _SQ:
                    arg.append(_SQ)
                    i += 2
                    continue
                if c == _SQ:
                    i += 1
                    if i < n and line[i] not in _BLANK:
                        return None
                    break
            elif c in _UNQUOTED_END:
                i += 1
                break
            elif c == _DQ or c == _SQ:
                quote = c
                i += 1
                continue
            arg.append(c)
            i += 1
        args.append(bytes(arg))


def _bench(rounds: int = 100, repeat: int = 25) -> None:  # pragma: no cover - manual
    """This parser against hiredis.Reader.

    ``python -c "from tidelog.resp.parser import _bench; _bench()"``

    Cases: a pipeline of 128 ``XADD s * f v`` fed at once; the same command
    fed 128 times, one per feed (a client that waits for each reply); and
    the pipeline again with the fast path off (``max_bulk_len`` below 1023
    disables it), i.e. the exact parser alone.  Runs interleave, CPU time
    is measured and the best of ``repeat`` counts, to resist a busy machine.
    """
    import time

    import hiredis

    cmd = b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nf\r\n$1\r\nv\r\n"
    pipeline = [cmd * 128]
    single = [cmd] * 128

    def ours(chunks: list[bytes], **limits: int) -> int:
        parser = RequestParser(**limits)
        n = 0
        for chunk in chunks:
            parser.feed(chunk)
            while parser.next_command() is not None:
                n += 1
        return n

    def theirs(chunks: list[bytes], **limits: int) -> int:
        reader = hiredis.Reader()
        n = 0
        for chunk in chunks:
            reader.feed(chunk)
            while reader.gets() is not False:
                n += 1
        return n

    cases = {
        "pipeline of 128": (pipeline, {}),
        "one per feed": (single, {}),
        "exact path only": (pipeline, {"max_bulk_len": 1000}),
    }
    runs = {(c, f.__name__): (f, *case) for c, case in cases.items() for f in (ours, theirs)}
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for key, (fn, chunks, limits) in runs.items():
            assert fn(chunks, **limits) == 128
            t0 = time.process_time()
            for _ in range(rounds):
                fn(chunks, **limits)
            best[key] = min(best[key], time.process_time() - t0)
    for case in cases:
        rate = {f: 128 * rounds / best[case, f] / 1e6 for f in ("ours", "theirs")}
        print(
            f"{case:16s}  RequestParser {rate['ours']:5.2f} M/s   hiredis.Reader "
            f"{rate['theirs']:5.2f} M/s   ({rate['theirs'] / rate['ours']:.1f}x)"
        )


if __name__ == "__main__":  # pragma: no cover
    _bench()
