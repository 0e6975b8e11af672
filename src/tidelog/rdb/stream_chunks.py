"""A stream cut into bounded chunks and put back together: the wire format of
moving a big stream between Tidelog nodes without stopping either.

Why (redis/redis #6999, #13122, #3396): MIGRATE serialises a key with DUMP in
the event loop and the target RESTOREs it in its own; a multi-million-entry
stream blocks both nodes for seconds, their cluster-bus PONGs go unanswered,
peers mark them PFAIL, then FAIL, and a replica takes over mid-migration.
Between two Tidelog nodes the stream can travel in pieces, each small enough
that one event-loop turn stays short on both sides.

This module is the pure part: :func:`chunks` (stream -> chunks, a generator
the sender resumes once per loop turn) and :class:`StreamStager` (chunks ->
a staged stream, committed into a :class:`~tidelog.types.stream.Stream` at
the end).  No sockets, no engine, no keyspace.  The rest of the design, to be
built on top of it, is below ("The whole move").

Chunk format
============

Every chunk is one bytes string (it travels as one RESP bulk argument)::

    +---------+------+-----+------+---------------------------+
    | version | kind | seq | body | CRC-64 (8 bytes, LE)       |
    +---------+------+-----+------+---------------------------+
    version  1 byte, :data:`VERSION`; a stager refuses any other
    kind     1 byte: NODES, GROUP, PEL or COMMIT
    seq      RDB length: 0, 1, 2 ... in sending order; a stager refuses a gap,
             a repeat or a reordering (a lost chunk can never commit)
    CRC-64   Redis's CRC-64 (the one of DUMP payloads) of everything before it

Integers use the RDB encodings of :mod:`.format` (``length_bytes``: unsigned,
variable size; ``int64``: 8 bytes LE; an ID: 16 bytes, ms then seq, big-endian
as a snapshot's node key); strings are RDB strings, never compressed (LZF
costs the sender's loop more than the bytes cost the link).

``NODES``: ``<count> (<node key: 16 bytes> <listpack as an RDB string>)*``.
  The stream's macro nodes exactly as a snapshot writes them, oldest first.
  Whole nodes, not (ID, fields) pairs: no entry is decoded or re-encoded on
  either side (a chunk costs a copy, the target adopts the blobs as a
  snapshot loader does), and the target ends with the *same* nodes, so
  everything that depends on node layout - XINFO STREAM's
  ``radix-tree-keys``/``radix-tree-nodes``, which entries an ``XTRIM ~``
  removes, the DUMP payload - is identical after the move.  A chunk holds at
  least one node and stops before ``max_bytes`` of listpack would be passed
  (one node above it travels alone: nodes are bounded by
  ``stream-node-max-bytes``/``-entries``, 4 KB/100 entries by default).

``GROUP``: ``<name> <last ID> <entries-read: int64, -1 unknown> <consumers>
  (<consumer name> <seen-time: int64> <active-time: int64>)*``.  One per
  group, in the stream's group order, after every NODES chunk; consumers in
  their group's order.  The group's pending entries follow in PEL chunks.

``PEL``: ``<count> (<ID> <delivery-time: int64> <delivery-count> <owner>)*``
  for the last GROUP sent; ``owner`` is 1 + the consumer's index in that
  GROUP chunk, or 0 for an unowned entry (XNACK, Redis 8.8: something the RDB
  format of Redis 7 cannot carry, so DUMP drops it, and this format keeps it).
  Owned entries come first in ID order, then the unowned ones in the order of
  the group's NACK zone (which XAUTOCLAIM and XREADGROUP CLAIM follow).  At
  most ``max_pending`` entries a chunk.

``COMMIT``: ``<chunks before this one> <length> <last ID> <first ID>
  <max-deleted ID> <entries-added>``: the stream's counters, sent last; the
  chunk count makes a stream whose tail went missing fail to commit.

Not carried: the IDMP state (XADD IDMP, Redis 8.6), as DUMP does not carry
it either; :func:`chunkable` says no for a stream with IDMP producers so the
sender keeps to DUMP/RESTORE for it (a later format version can add an IDMP
chunk kind).

Costs: :func:`chunks` does O(nodes + pending entries + consumers) work in
total, and per resumption O(max_bytes) copying or O(max_pending) records.
:meth:`StreamStager.feed` is O(size of the chunk); :meth:`StreamStager.commit`
is O(nodes) (header checks of each blob, as a snapshot load; no entry is
decoded).  Measured with the pure-Python twins on a 1,000,000-entry stream
(10,000 nodes) with two groups of 100,000 pending entries each, garbage
collection off: the longest :func:`chunks` step 4 ms, the longest PEL feed
12.8 ms (1,000 claims), COMMIT 25 ms; the same stream's DUMP took 0.8 s and
decoding its payload 2.8 s, each in one turn.  (With the collector on, a
full collection can land in any step: that is the process's pause, not this
format's, and the target may want ``gc.freeze()`` after a commit.)  The
COMMIT step could shrink further by checking each NODES chunk's blobs as it
arrives and only concatenating at commit.

The whole move (to build on this module, in this order)
=======================================================

1. Target side, engine level (built: :mod:`tidelog.commands.keys.stage`,
   :mod:`.staging`): ``TIDELOG.STAGE HELLO`` (:data:`VERSION`, or 0 while a
   connected replica did not announce ``REPLCONF capa tidelog-stage``),
   ``BEGIN <token> <key> <ttl-ms> <idle-ms> [REPLACE]``, ``APPEND <token>
   <chunk>``, ``ABORT <token>``; the COMMIT chunk, appended like the others,
   installs the key.  ``token`` is chosen by the sender (random 20 bytes,
   hex).  A staged stream lives in its database's ``staged`` table (token ->
   :class:`~.staging.StagedCopy`) beside the keyspace, never in it: KEYS,
   SCAN, DBSIZE, COUNTKEYSINSLOT, GETKEYSINSLOT, reads and writes do not see
   it.  Commit checks the key as RESTORE does (BUSYKEY unless REPLACE),
   installs the stream, marks the key ready for blocked readers, and sends
   keyspace notification ``restore``; in cluster mode BEGIN acts as if
   ASKING was sent (flag ``asking``, as RESTORE-ASKING): the key's slot must
   be IMPORTING or owned.  ABORT, a bad chunk, BUSYKEY at commit, the idle
   deadline (checked by the cron, renewed by each APPEND), FLUSHALL /
   FLUSHDB, or the sender's connection closing drop the staged copy (the
   sender's connection owns its tokens, as a client owns its MULTI queue);
   whatever the reason, dropping a staged copy propagates ``ABORT <token>``.
   The commands are flagged ``write``, ``noscript``, ``no_multi`` (BEGIN and
   APPEND ``denyoom`` too); COMMAND DOCS lists them with ``doc_flags:
   syscmd`` so tools know they are not for users.

2. Target side, propagation (built): each staging command is propagated
   as it is run (BEGIN, every APPEND with its chunk, ABORT), to the AOF and
   to replicas, so a replica stages the same stream in the same short steps
   and the COMMIT chunk installs the key there atomically too (with a TTL,
   the COMMIT goes out as ``APPEND <token> <chunk> PXAT <deadline>``: one
   effect, since two would be wrapped in MULTI/EXEC, where the command is
   refused).  Rejected alternatives: propagating one RESTORE of the final
   stream at commit (every replica, and every AOF reload, would pay the
   whole pause the chunks avoided on the target), or re-encoding the staged
   stream into chunks at commit (the target itself would pay O(size) in
   one turn).  A staged copy orphaned on a replica (the primary failed over
   mid-move) is invisible and is dropped by its deadline once the replica
   is promoted (or by the new primary's full resync); the deadline runs on
   the replica's own clock from the last APPEND it applied, is not checked
   while the replica follows a primary (which may go on feeding the copy
   after a link outage and a partial resync), and never during an AOF load (the
   loader runs the commands in order, so a staged copy there either commits
   or is dropped by a later ABORT, or at the end of the load; a later BEGIN
   of the same token from the AOF or a primary replaces it).  A full resync
   of a replica drops every staged copy first (the snapshot cannot carry
   them): the sender's next APPEND fails and its MIGRATE keeps the key.  An
   AOF rewrite writes installed keys plus, for each staged copy still open,
   its BEGIN and the chunks it was fed (kept raw: memory doubles while a
   move is open), so the APPENDs that follow in the new AOF find their
   token.  A Redis or Valkey replica of a Tidelog primary cannot run
   TIDELOG.STAGE: while one is connected HELLO answers 0 and BEGIN is
   refused, so the sender keeps to DUMP/RESTORE.

3. Source side (built: :mod:`tidelog.commands.keys.migrate_chunked`, the
   options ``migrate-stream-chunk-threshold`` and ``-bytes``): MIGRATE
   (commands/keys/migrate.py) keeps its DUMP path for
   every key except a stream at or above ``migrate-stream-chunk-threshold``
   entries (a Tidelog-only config option, default 10000; 0 disables
   chunking; documented in docs/compatibility.md) going to a target that
   speaks the staging protocol.  The capability is probed once per cached
   connection (migrate_sockets.py): ``TIDELOG.STAGE HELLO`` answers the
   format version on Tidelog and ``-ERR unknown command`` on Redis/Valkey; the
   answer is cached with the socket and forgotten when the socket is.
   Towards a Redis or Valkey target the single DUMP payload stays, and
   docs/compatibility.md states its cost (the pause grows with the stream,
   about as Redis's own).

4. Source side, parking (built: :mod:`tidelog.engine.parking`, the mover
   :mod:`tidelog.server.mover` on a connection of its own, opened per move
   and closed after it; the cached blocking socket only answers the
   probe): MIGRATE today is synchronous: it talks to the
   target over a *blocking* socket (migrate_sockets.py) and serves nobody
   until the last reply, which is exactly the pause to avoid, so the chunked
   path cannot run inside the handler.  The engine has two ways to hold a
   client back: BLOCKED (a ``Wait`` on keys, engine/blocking.py, re-run when
   a key is marked ready) and POSTPONED (CLIENT PAUSE: the session keeps the
   command until ``client.resume()``).  The chunked MIGRATE wants a third,
   PARKED: the handler validates everything as now (arguments, AUTH/SELECT
   replies are still read synchronously on first contact), then asks a
   Protocol on the engine (``ctx.engine.mover``, implemented in server/, the
   only layer with I/O; the bare engine's implementation answers "not
   available" and the handler keeps to DUMP) to start a move, and returns
   PARKED; the session answers the client only when the mover calls
   ``client.resume(reply)``.  A MIGRATE inside MULTI/EXEC, a script or a
   module-like context cannot park (``ctx.may_block`` is False there) and
   keeps the DUMP path, as a blocking XREAD inside MULTI answers at once.
   The mover is an asyncio task with its *own* non-blocking connection to
   the target (opened with the same AUTH/SELECT/TLS settings; the cached
   blocking socket stays for DUMP).  Per turn it takes the next chunk from
   :func:`chunks`, writes ``TIDELOG.STAGE APPEND``, awaits the reply (a
   small window of pipelined chunks is a later optimisation), and yields,
   so the bus, PINGs and every other client are served between chunks.
   The stream is written to by nobody meanwhile: a write command to a key
   being moved gets ``-TRYAGAIN Multiple keys request during rehashing of
   slot`` (errors.py) in cluster mode and the same error outside it, decided
   in admission (engine/slots.py has the MIGRATING rules; the set of keys
   being moved is one more input there); reads are served from the source;
   other keys of the slot follow Redis's MIGRATING rules unchanged.  The
   generator also checks between resumptions that the stream's counters did
   not change (:class:`StreamChanged`), as a guard against a write path the
   admission missed (expiry is such a path: an expiring key is not deleted
   while it is being moved; the cron skips it, lazy expiry on read does not
   delete it either, and it expires on the target after the move).
   After COMMIT's ``+OK`` the source deletes the key (propagating DEL, or
   nothing with COPY) and MIGRATE answers ``+OK`` (or ``+NOKEY`` rules as now).
   On any failure - a connection error, a timeout (MIGRATE's ``timeout`` per
   chunk round trip), an error reply, the client disconnecting, StreamChanged
   - the sender sends ABORT if the socket is still usable, closes it, the
   source keeps its key untouched, and MIGRATE answers
   Redis's texts (errors.py: ``MIGRATE_IOERR_CONNECT``, ``_WRITE``,
   ``_READ``; a target's error reply as ``MIGRATE_TARGET_ERROR`` + its text).
   A client that disconnects while parked does not stop the move half-way
   in an unknown state: the mover finishes or aborts it as above, and the
   reply goes nowhere.  Outside cluster mode the TRYAGAIN for writes to the
   key being moved is Tidelog's own (Redis never moves a key that slowly):
   docs/compatibility.md must say so.  Nothing is lost: the
   key exists on exactly one node at any time in which a client can see it,
   as with RESTORE-then-DEL today.
   MIGRATE's other keys (KEYS ...) are sent with DUMP as now, in the same
   pipeline order; the chunked ones are committed in the order of the keys.

5. Test of the goal (issue 25; tests/integration/test_cluster_stream_move.py,
   make test-long): two Tidelog cluster nodes, a 1,000,000-entry
   stream with two groups and PELs, a load of XADDs on other keys and XRANGE
   on this one during the move; assert no node is ever flagged PFAIL in
   CLUSTER NODES, and XINFO STREAM FULL (and DUMP) is byte-identical before
   and after.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from itertools import islice

from ..ids import StreamID
from ..types.groups import ConsumerGroup, PendingEntry
from ..types.stream import CorruptStream, Stream
from .format import _I64, _ID, _U64, RdbError, Reader, crc64, length_bytes, string_bytes

VERSION = 1
NODES = 1
GROUP = 2
PEL = 3
COMMIT = 4
_KINDS = (NODES, GROUP, PEL, COMMIT)

MAX_BYTES = 1 << 18     # listpack bytes in a NODES chunk (one bigger node travels alone)
MAX_PENDING = 1000      # pending entries in a PEL chunk (about 40 bytes each)
_SCAN = 256             # IDs taken from a PEL (or NACK zone) scan at a time


class ChunkError(ValueError):
    """A chunk that does not fit: corrupt, out of order, or after COMMIT."""


class StreamChanged(RuntimeError):
    """The stream being cut into chunks was written to between chunks."""


def chunkable(stream: Stream) -> bool:
    """Whether :func:`chunks` carries all of ``stream`` (not its IDMP state). O(1)."""
    return stream.idmp is None or not stream.idmp.producers


def _fingerprint(stream: Stream) -> tuple:
    return (stream.length, stream.last_id, stream.entries_added, stream.max_deleted_entry_id,
            stream.node_count, len(stream.groups),
            sum(len(g.pel) + len(g.consumers) for g in stream.groups.values()))


def _seal(kind: int, seq: int, body: list[bytes]) -> bytes:
    data = b"".join([bytes((VERSION, kind)), length_bytes(seq), *body])
    return data + _U64.pack(crc64(data))


def _id(id: StreamID) -> bytes:
    return _ID.pack(id[0], id[1])


def chunks(stream: Stream, max_bytes: int = MAX_BYTES,
           max_pending: int = MAX_PENDING) -> Iterator[bytes]:
    """The chunks of ``stream``, in sending order, the COMMIT chunk last.

    Lazy: each ``next()`` does one chunk's work, so a sender resumes it once
    per event-loop turn.  Nothing may write to ``stream`` until the
    generator is exhausted; a change in its counters (length, IDs, nodes,
    groups, pending entries, consumers) between two chunks raises
    :class:`StreamChanged`.  Raises ValueError for a stream that is not
    :func:`chunkable`.

    Cost: O(max_bytes) or O(max_pending) per chunk, O(size) in total.
    """
    if not chunkable(stream):
        raise ValueError("stream has IDMP state, which chunks do not carry")
    seq = 0
    mark = _fingerprint(stream)

    def resumed() -> None:
        if _fingerprint(stream) != mark:
            raise StreamChanged("stream changed while it was being sent")

    body: list[bytes] = []
    count = size = 0
    for key, lp in stream.nodes():
        if count and size + len(lp) > max_bytes:
            yield _seal(NODES, seq, [length_bytes(count), *body])
            resumed()
            seq += 1
            body, count, size = [], 0, 0
        body.append(_id(key) + string_bytes(lp, False))
        count += 1
        size += len(lp)
    if count:
        yield _seal(NODES, seq, [length_bytes(count), *body])
        resumed()
        seq += 1
    for name, group in stream.groups.items():
        index: dict[bytes, int] = {}
        head = [string_bytes(name, False), length_bytes(group.last_id[0]),
                length_bytes(group.last_id[1]), _I64.pack(group.entries_read),
                length_bytes(len(group.consumers))]
        for cname, consumer in group.consumers.items():
            index[cname] = len(index) + 1
            head.append(string_bytes(cname, False) + _I64.pack(consumer.seen_time)
                        + _I64.pack(consumer.active_time))
        yield _seal(GROUP, seq, head)
        resumed()
        seq += 1
        for part in (_owned(group), _unowned(group)):
            body = []
            for entry in part:
                owner = 0 if entry.consumer is None else index[entry.consumer.name]
                body.append(_id(entry.id) + _I64.pack(entry.delivery_time)
                            + length_bytes(entry.delivery_count) + length_bytes(owner))
                if len(body) == max_pending:
                    yield _seal(PEL, seq, [length_bytes(len(body)), *body])
                    resumed()
                    seq += 1
                    body = []
            if body:
                yield _seal(PEL, seq, [length_bytes(len(body)), *body])
                resumed()
                seq += 1
    yield _seal(COMMIT, seq, [
        length_bytes(seq), length_bytes(stream.length),
        length_bytes(stream.last_id[0]), length_bytes(stream.last_id[1]),
        length_bytes(stream.first_id[0]), length_bytes(stream.first_id[1]),
        length_bytes(stream.max_deleted_entry_id[0]),
        length_bytes(stream.max_deleted_entry_id[1]),
        length_bytes(stream.entries_added)])


def _owned(group: ConsumerGroup) -> Iterator[PendingEntry]:
    """The group's owned pending entries in ID order, lazily: the scan is
    reopened after the last ID taken each time the generator resumes, so a
    resumption costs O(log n) plus the entries it takes, never a copy of
    the whole PEL (``SortedIndex.values`` is a new list)."""
    pel = group.pel
    after: StreamID | None = None
    while True:
        scan = pel.irange(after, None, (False, True)) if after is not None else pel.irange()
        ids = list(islice(scan, _SCAN))  # no live iterator across a suspension
        for id in ids:
            entry = pel[id]
            if entry.consumer is not None:
                yield entry
        if len(ids) < _SCAN:
            return
        after = ids[-1]


def _unowned(group: ConsumerGroup) -> Iterator[PendingEntry]:
    """The group's unowned pending entries in NACK-zone order, lazily (as
    :func:`_owned`, by the zone's sequence numbers)."""
    after = -1
    while True:
        page = group.nack_zone(after, _SCAN)
        for _, id in page:
            yield group.pel[id]
        if len(page) < _SCAN:
            return
        after = page[-1][0]


_STAGES = {NODES: 0, GROUP: 1, PEL: 1, COMMIT: 2}  # GROUP and PEL alternate


class StreamStager:
    """Chunks from :func:`chunks` put back together, invisible until committed.

    :meth:`feed` takes each chunk in order; the COMMIT chunk builds the
    stream, after which :attr:`stream` holds it.  Any bad chunk raises
    :class:`ChunkError` and leaves the stager unusable (the caller drops it:
    nothing was installed anywhere).
    """

    def __init__(self) -> None:
        self.seq = 0                # the seq the next chunk must carry
        self.size = 0               # bytes fed, for memory accounting
        self.stream: Stream | None = None
        self._failed = False
        self._nodes: list[tuple[StreamID, bytes]] = []
        self._groups: list[ConsumerGroup] = []
        self._consumers: list = []  # of the last group, by owner index - 1
        self._stage = 0             # NODES, then GROUP/PEL, then COMMIT: never back

    def feed(self, chunk: bytes) -> bool:
        """Apply one chunk; True once the stream is committed.

        Cost: O(len(chunk)); the COMMIT chunk O(nodes) (see module docstring).
        """
        if self._failed or self.stream is not None:
            raise ChunkError("stream already committed" if self.stream is not None
                             else "stager failed earlier")
        try:
            return self._feed(chunk)
        except ChunkError:
            self._failed = True
            raise
        except (RdbError, CorruptStream, ValueError, IndexError, struct.error) as exc:
            self._failed = True
            raise ChunkError(f"chunk {self.seq}: {exc}") from None

    def _feed(self, chunk: bytes) -> bool:
        if len(chunk) < 11:
            raise ChunkError("chunk too short")
        if crc64(memoryview(chunk)[:-8]) != _U64.unpack_from(chunk, len(chunk) - 8)[0]:
            raise ChunkError("chunk checksum mismatch")
        if chunk[0] != VERSION:
            raise ChunkError(f"chunk format version {chunk[0]} not understood")
        kind = chunk[1]
        if kind not in _KINDS:
            raise ChunkError(f"unknown chunk kind {kind}")
        r = Reader(bytes(chunk[2:-8]))
        seq = r.length()
        if seq != self.seq:
            raise ChunkError(f"chunk {seq} where chunk {self.seq} was due")
        stage = _STAGES[kind]
        if stage < self._stage or (kind == PEL and not self._groups):
            raise ChunkError(f"chunk {seq}: kind {kind} out of order")
        self._stage = stage
        if kind == NODES:
            self._read_nodes(r)
        elif kind == GROUP:
            self._read_group(r)
        elif kind == PEL:
            self._read_pel(r)
        else:
            self._commit(r)
        if r.pos != len(r.data):
            raise ChunkError(f"chunk {seq}: {len(r.data) - r.pos} bytes left over")
        self.seq += 1
        self.size += len(chunk)
        return self.stream is not None

    def _read_nodes(self, r: Reader) -> None:
        count = r.length()
        if count == 0:
            raise ChunkError("a NODES chunk with no node")
        nodes = self._nodes
        for _ in range(count):
            ms, seq = _ID.unpack(r.raw(16))
            nodes.append((StreamID(ms, seq), r.string()))

    def _read_group(self, r: Reader) -> None:
        name = r.string()
        if any(g.name == name for g in self._groups):
            raise ChunkError(f"duplicate group {name!r}")
        last = StreamID(r.length(), r.length())
        group = ConsumerGroup(name, last, r.int64())
        consumers = []
        for _ in range(r.length()):
            cname = r.string()
            seen = r.int64()
            consumer, created = group.create_consumer(cname, seen)
            if not created:
                raise ChunkError(f"group {name!r}: duplicate consumer {cname!r}")
            consumer.active_time = r.int64()
            consumers.append(consumer)
        self._groups.append(group)
        self._consumers = consumers

    def _read_pel(self, r: Reader) -> None:
        group = self._groups[-1]
        consumers = self._consumers
        for _ in range(r.length()):
            ms, seq = _ID.unpack(r.raw(16))
            id = StreamID(ms, seq)
            when = r.int64()
            deliveries = r.length()
            owner = r.length()
            if id in group.pel:
                raise ChunkError(f"group {group.name!r}: duplicate pending ID {id}")
            if owner == 0:
                group.add_unowned(id, deliveries, when)
            elif owner <= len(consumers):
                group.claim(id, consumers[owner - 1], when, deliveries)
            else:
                raise ChunkError(f"group {group.name!r}: pending {id}: no consumer {owner}")

    def _commit(self, r: Reader) -> None:
        sent = r.length()
        if sent != self.seq:
            raise ChunkError(f"COMMIT after {sent} chunks, {self.seq} received")
        length = r.length()
        last = StreamID(r.length(), r.length())
        first = StreamID(r.length(), r.length())
        deleted = StreamID(r.length(), r.length())
        added = r.length()
        stream = Stream.from_nodes(self._nodes, length, last, first, deleted, added)
        for group in self._groups:
            stream.groups[group.name] = group
        self._nodes = []
        self._groups = []
        self._consumers = []
        self.stream = stream
