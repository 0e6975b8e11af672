"""The stream data type: listpack macro nodes, and a sorted index over their keys.

A stream is a sequence of nodes, each one Redis listpack (``listpack.py``)
holding consecutive entries, keyed by its *master ID*: the ID of the first
entry ever added to it.  ``Stream._keys`` (sorted ints, ``ms << 64 | seq``)
and ``Stream._nodes`` are parallel lists; a seek is a bisect on ``_keys``
(Redis keeps the same nodes in a radix tree).  The bytes of a node are
exactly Redis 7's, so a snapshot writes and loads them as whole blobs.

One node, as listpack elements::

    master entry (the fields of the node's first entry):
    +-------+---------+------------+---------+-----+---------+---+
    | count | deleted | num-fields | field_1 | ... | field_N | 0 |
    +-------+---------+------------+---------+-----+---------+---+
    count = live entries, deleted = entries flagged deleted, 0 ends the master entry

    then each entry, oldest first, in one of two forms:
    +-------+----------+-----------+------------+----+----+-----+----+----+----------+
    | flags | ms-delta | seq-delta | num-fields | f1 | v1 | ... | fM | vM | lp-count |
    +-------+----------+-----------+------------+----+----+-----+----+----+----------+
    +-------+----------+-----------+----+-----+----+----------+
    | flags | ms-delta | seq-delta | v1 | ... | vN | lp-count |    flags has SAMEFIELDS
    +-------+----------+-----------+----+-----+----+----------+

    flags: DELETED = 1, SAMEFIELDS = 2 (fields equal the master fields exactly)
    ms-delta, seq-delta: entry ID minus master ID, each part as an int64
                         (uint64 arithmetic, wrapping modulo 2**64)
    lp-count: the number of elements of this entry before lp-count
              (3 + N with SAMEFIELDS, else 3 + 1 + 2M), so that the entry can
              be walked backwards from its end

Deleting an entry only sets its DELETED flag and patches the master counters;
a node whose count drops to 0 through :meth:`Stream.delete` is removed.
Trimming removes whole nodes from the head, then (exact trims) flags entries
inside the first remaining node, as Redis 7 does.

Python-side representation (none of it is saved; all of it is rebuilt from the
bytes): only the tail node may be a ``bytearray``, appended to in place with
its header and counters patched in place; every other node is compact
``bytes``.  Each node caches its live/deleted counters, its master ID as two
ints (no tuple per node), and, once indexed, its master fields, the offset
of its first entry (``base``) and an ``array`` of entry offsets relative to
``base`` (2 bytes an entry).  A node appended with the same fields as the
one before shares that node's list: a stream of same-shaped entries keeps
one, instead of a list and the first entry's field objects alive per node
(measured at 1,000,000 entries: 2.9 bytes an entry of resident memory, twice
their own size, as small long-lived objects scattered among the freed
arguments of the commands that made the nodes).  The
index is built as entries are appended, or on first use for nodes adopted by
:meth:`Stream.from_nodes`; seeks inside a node bisect that array, decoding
only the IDs they probe, and a range decodes only the entries it yields.

Invariants that :meth:`Stream.check` asserts:

1. ``_keys`` is strictly increasing and ``_keys[i]`` is node i's master ID,
   which is the ID of the node's first entry (deltas 0, 0, SAMEFIELDS).
2. Each listpack is well formed: header total and element count, every
   backlen, canonical element encodings, the 0xFF terminator.
3. Each node holds at least one entry; its master count and deleted equal
   its live and flagged entries; flags use only DELETED|SAMEFIELDS;
   SAMEFIELDS is set exactly when the fields equal the master fields; every
   lp-count is right.
4. Entry IDs (deleted or not) strictly increase across the whole stream.
5. ``length`` is the number of live entries; ``first_id`` is the first live
   ID (0-0 when empty); ``last_id`` is at least every ID held;
   ``entries_added >= length``.
6. A node with no live entries exists only as Redis leaves one after an exact
   MINID trim: its last entry is flagged deleted.  (XDEL removes a node as
   soon as it has no live entry; Redis does not do that for trims, and the
   node stays visible in XINFO's radix-tree-keys and to the split rule.)
7. The cached counters, fields, base and offsets agree with the bytes, and
   every node but the last is immutable ``bytes``.
"""

from __future__ import annotations

import copy
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence

from tidelog.ids import MAX_ID, MIN_ID, StreamID
from tidelog.types import listpack
from tidelog.types.idmp import IdmpState
from tidelog.types.listpack import (
    HEADER_SIZE,
    ListpackError,
    append_stream_entry,
    encode_int,
    encode_string,
    read_bytes,
    read_int,
    skip,
    stream_entry_fields,
    stream_entry_id,
    stream_live_entries,
)

FLAG_NONE = 0
FLAG_DELETED = 1
FLAG_SAMEFIELDS = 2
STREAM_LISTPACK_MAX_SIZE = 1 << 30  # node_max_bytes 0 or above this means this

_M64 = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1
_TWO64 = 1 << 64
_SMALL = [encode_int(v) for v in range(128)]  # whole elements for 0..127
_EOF = b"\xff"
_new_id = tuple.__new__  # StreamID(ms, seq) without the NamedTuple __new__ call


class CorruptStream(ValueError):
    """Node bytes (from a snapshot) do not form a valid stream."""


def _as_int(id: StreamID) -> int:
    return (id[0] << 64) | id[1]


def _delta(a: int, b: int) -> int:
    """``a - b`` as Redis stores it: uint64 subtraction read as int64."""
    d = (a - b) & _M64
    return d - _TWO64 if d > _INT64_MAX else d


class _Node:
    """One macro node: its key (``kms``, ``kseq``; ``ikey`` as one int), its
    listpack, and caches rebuilt from the bytes."""

    __slots__ = ("kms", "kseq", "ikey", "lp", "live", "dead", "fields", "base", "offs")

    def __init__(self, key: StreamID, lp: bytes | bytearray, live: int, dead: int) -> None:
        self.kms, self.kseq = key
        self.ikey = _as_int(key)
        self.lp = lp
        self.live = live  # master "count"
        self.dead = dead  # master "deleted"
        self.fields: list[bytes] | None = None  # master fields, once indexed
        self.base = 0  # offset of the first entry, once indexed
        self.offs: array[int] | None = None  # entry offsets minus base, once indexed

    @property
    def key(self) -> StreamID:
        """The master ID as a StreamID (built on each use: snapshots, errors, checks)."""
        return _new_id(StreamID, (self.kms, self.kseq))


class Stream:
    """A Redis stream: entries ordered by ID, in listpack macro nodes.

    ``length``, ``last_id``, ``first_id``, ``max_deleted_entry_id`` and
    ``entries_added`` are plain attributes (XSETID-like commands assign them);
    ``groups`` is an ordered dict, name -> consumer group, owned by the
    consumer-group code; ``idmp`` is the idempotent-production state
    (:class:`~tidelog.types.idmp.IdmpState`), None until first used.
    """

    TYPE_NAME = b"stream"  # what TYPE says

    def __init__(self) -> None:
        self.length = 0
        self.last_id: StreamID = MIN_ID
        self.first_id: StreamID = MIN_ID
        self.max_deleted_entry_id: StreamID = MIN_ID
        self.entries_added = 0
        self.groups: dict = {}
        # Idempotent-production state (types/idmp.py), made on first use.
        self.idmp: IdmpState | None = None
        self._keys: list[int] = []
        self._nodes: list[_Node] = []

    def object_encoding(self) -> bytes:
        """What OBJECT ENCODING says."""
        return b"stream"

    def copy(self) -> Stream:
        """An independent stream: entries, IDs, counters, consumer groups
        with their consumers and pending entries, IDMP state (COPY).
        O(size): node blobs are immutable bytes and shared; everything
        mutable is copied."""
        return copy.deepcopy(self)

    def __repr__(self) -> str:
        return (
            f"<Stream length={self.length} nodes={len(self._nodes)} "
            f"first={self.first_id} last={self.last_id}>"
        )

    # -- adding ---------------------------------------------------------------

    def append(
        self,
        id: StreamID,
        fields_values: Sequence[bytes],
        node_max_entries: int,
        node_max_bytes: int,
    ) -> None:
        """Add an entry; ``id`` must exceed ``last_id``.

        ``fields_values`` is the flat list ``f1, v1, f2, v2, ...``.  The
        entry goes into the tail node unless Redis 7's split rule starts a
        new node: the tail's bytes plus the raw sizes of the new fields and
        values reach ``node_max_bytes`` (0 or above 1 GiB means 1 GiB), or
        ``node_max_entries`` is not 0 and the tail holds that many entries,
        live or deleted.

        Cost: O(F) for F fields, amortised; O(node size) when a counter's
        encoding grows (at counts 128, 4096, ...) or when the tail is a node
        adopted from a snapshot (its index is built once).
        """
        if type(id) is not StreamID:
            id = StreamID(*id)
        if id <= self.last_id:
            raise ValueError(f"entry ID {id} is not greater than the last ID {self.last_id}")
        fv = fields_values if type(fields_values) is list else list(fields_values)
        if len(fv) & 1:
            raise ValueError("fields_values must hold field/value pairs")
        nodes = self._nodes
        if not nodes:
            self._append_node(id, fv)
        else:
            tail = nodes[-1]
            lp = tail.lp
            if node_max_bytes <= 0 or node_max_bytes > STREAM_LISTPACK_MAX_SIZE:
                node_max_bytes = STREAM_LISTPACK_MAX_SIZE
            if len(lp) + sum(map(len, fv)) >= node_max_bytes or (
                node_max_entries and tail.live + tail.dead >= node_max_entries
            ):
                if type(lp) is bytearray:
                    tail.lp = bytes(lp)  # seal it: compact and immutable
                self._append_node(id, fv)
            else:
                if tail.offs is None:
                    self._index(tail)
                if type(lp) is not bytearray:
                    lp = tail.lp = bytearray(lp)
                self._append_to_tail(tail, lp, id, fv)
        self.length += 1
        self.entries_added += 1
        self.last_id = id
        if self.length == 1:
            self.first_id = id

    def extend(
        self,
        ids: Sequence[StreamID],
        fields_values: Sequence[list[bytes]],
        node_max_entries: int,
        node_max_bytes: int,
    ) -> None:
        """Add many entries, exactly as :meth:`append` one by one would.

        ``ids[i]`` goes with ``fields_values[i]`` (a flat ``[f1, v1, ...]``
        list).  Everything is checked first (each ID a ``StreamID`` above the
        one before it and above ``last_id``, every list of field/value
        pairs), so a ValueError leaves the stream unchanged.  The nodes,
        their bytes and every counter end as after the appends one by one.

        Cost: as :meth:`append` for each entry, with the per-call work done
        once per node.
        """
        if len(ids) != len(fields_values):
            raise ValueError("ids and fields_values differ in length")
        prev = self.last_id
        for id, fv in zip(ids, fields_values):
            if type(id) is not StreamID or id <= prev:
                raise ValueError(f"entry ID {id} is not a StreamID greater than {prev}")
            if type(fv) is not list or len(fv) & 1:
                raise ValueError("fields_values must be lists of field/value pairs")
            prev = id
        if node_max_bytes <= 0 or node_max_bytes > STREAM_LISTPACK_MAX_SIZE:
            node_max_bytes = STREAM_LISTPACK_MAX_SIZE
        nodes = self._nodes
        join = b"".join
        n = len(ids)
        i = 0
        while i < n:
            if not nodes:
                self._append_node(ids[i], fields_values[i])
                i += 1
                continue
            tail = nodes[-1]
            lp = tail.lp
            # The split rule of append(), then entries into this tail until it splits.
            # (The raw size as len(join): for a few short strings, faster than sum(map(len)).)
            if len(lp) + len(join(fields_values[i])) >= node_max_bytes or (
                node_max_entries and tail.live + tail.dead >= node_max_entries
            ):
                if type(lp) is bytearray:
                    tail.lp = bytes(lp)
                self._append_node(ids[i], fields_values[i])
                i += 1
                continue
            if tail.offs is None:
                self._index(tail)
            if type(lp) is not bytearray:
                lp = tail.lp = bytearray(lp)
            append_to_tail = self._append_to_tail
            while True:
                append_to_tail(tail, lp, ids[i], fields_values[i])
                i += 1
                if i == n:
                    break
                if len(lp) + len(join(fields_values[i])) >= node_max_bytes or (
                    node_max_entries and tail.live + tail.dead >= node_max_entries
                ):
                    break
        if n:
            if self.length == 0:
                self.first_id = ids[0]
            self.length += n
            self.entries_added += n
            self.last_id = ids[-1]

    def _append_node(self, id: StreamID, fv: list[bytes]) -> None:
        nf = len(fv) >> 1
        fields = fv[0::2]
        nodes = self._nodes
        if nodes and nodes[-1].fields == fields:
            fields = nodes[-1].fields  # one list for a run of nodes with the same fields
        master = [_SMALL[1], _SMALL[0], encode_int(nf)]
        master += map(encode_string, fields)
        master.append(_SMALL[0])
        entry = [_SMALL[FLAG_SAMEFIELDS], _SMALL[0], _SMALL[0]]
        entry += map(encode_string, fv[1::2])
        entry.append(encode_int(nf + 3))
        head = b"".join(master)
        body = b"".join(entry)
        base = HEADER_SIZE + len(head)
        lp = bytearray(listpack.header(base + len(body) + 1, 8 + 2 * nf))
        lp += head
        lp += body
        lp += _EOF
        node = _Node(id, lp, 1, 0)
        node.fields = fields
        node.base = base
        node.offs = array("H", (0,))
        self._nodes.append(node)
        self._keys.append(node.ikey)

    @staticmethod
    def _append_to_tail(tail: _Node, lp: bytearray, id: StreamID, fv: list[bytes]) -> None:
        msd = id[0] - tail.kms  # >= 0: the tail's key is an ID of the stream
        if msd > _INT64_MAX:
            msd -= _TWO64
        seqd = id[1] - tail.kseq
        if not -_INT64_MAX <= seqd <= _INT64_MAX:
            seqd = _delta(id[1], tail.kseq)
        rel = append_stream_entry(lp, msd, seqd, fv, fv[0::2] == tail.fields) - tail.base
        offs = tail.offs
        if rel > 65535 and offs.typecode == "H":
            offs = tail.offs = array("I", offs)
        offs.append(rel)
        live = tail.live + 1
        if live < 128:  # the count element stays one byte: patch it in place
            lp[HEADER_SIZE] = live
            tail.live = live
        else:
            Stream._set_counters(tail, live, tail.dead)

    # -- reading --------------------------------------------------------------

    def range(
        self, start: StreamID, end: StreamID, rev: bool = False
    ) -> Iterator[tuple[StreamID, list[bytes]]]:
        """Live entries with ``start <= id <= end``, oldest first (newest with ``rev``).

        A lazy iterator: take what you need with ``itertools.islice``.  Each
        entry is ``(id, [f1, v1, f2, v2, ...])``.  The stream may change while
        the iterator is suspended: it goes on from where it was and never
        yields an entry deleted or trimmed in the meantime.

        Cost: O(log N + log E) to seek (N nodes, E entries a node), then O(1)
        per entry yielded or skipped (deleted entries are skipped, not decoded).
        """
        if start > end or not self._nodes:
            return iter(())
        if rev:
            return self._iter_rev(_as_int(start), _as_int(end))
        return self._iter_fwd(_as_int(start), _as_int(end))

    def read_from(self, start: StreamID, count: int,
                  end: StreamID = MAX_ID) -> tuple[list[StreamID], list[list]]:
        """The live entries with ``start <= id <= end``, oldest first, at most
        ``count`` (0: all), read at once: their IDs, and each as
        ``[b"<ms>-<seq>", [f1, v1, ...]]`` (the shape of a read reply's entry).

        What ``range(start, end)`` yields, without a generator step per
        entry: each node is read by one kernel call.  Cost: O(log N + log E)
        to seek, then O(1) per entry returned or skipped, plus at most one
        node's entries decoded past ``end`` (then dropped).
        """
        ids: list[StreamID] = []
        entries: list[list] = []
        if start > end:
            return ids, entries
        nodes = self._nodes
        lo = _as_int(start)
        hi = _as_int(end)
        i = max(bisect_right(self._keys, lo) - 1, 0)
        while i < len(nodes):
            node = nodes[i]
            if node.ikey > hi:
                break
            i += 1
            if node.offs is None:
                self._index(node)
            k = 0 if node.ikey >= lo else self._seek(node, lo)
            kms, kseq = node.kms, node.kseq
            left = count - len(ids) if count else 0
            got = stream_live_entries(node.lp, node.base, node.offs, k, kms, kseq,
                                      node.fields, left, StreamID, ids, entries)
            if got and ids[-1] > end:  # this node reaches past the end
                cut = bisect_right(ids, end)
                del ids[cut:], entries[cut:]
                break
            if count and got == left:
                break
        return ids, entries

    def _iter_fwd(self, lo: int, hi: int) -> Iterator[tuple[StreamID, list[bytes]]]:
        hi_t = (hi >> 64, hi & _M64)
        keys = self._keys
        nodes = self._nodes
        i = bisect_right(keys, lo) - 1
        if i < 0:
            i = 0
        while i < len(nodes):
            node = nodes[i]
            if node.ikey > hi:
                return
            if node.offs is None:
                self._index(node)
            k = 0 if node.ikey >= lo else self._seek(node, lo)
            kms, kseq = node.kms, node.kseq
            lp = node.lp
            base = node.base
            offs = node.offs
            while k < len(offs):
                p = base + offs[k]
                k += 1
                t = stream_entry_id(lp, p, kms, kseq)
                if t > hi_t:
                    return
                if lp[p] & FLAG_DELETED:
                    continue
                yield _new_id(StreamID, t), stream_entry_fields(lp, p, node.fields)
                lp = node.lp  # a delete may have replaced or shifted the bytes
                base = node.base
                offs = node.offs
            i = bisect_right(keys, node.ikey)

    def _iter_rev(self, lo: int, hi: int) -> Iterator[tuple[StreamID, list[bytes]]]:
        lo_t = (lo >> 64, lo & _M64)
        keys = self._keys
        nodes = self._nodes
        i = bisect_right(keys, hi) - 1
        while i >= 0:
            node = nodes[i]
            if node.offs is None:
                self._index(node)
            k = self._seek(node, hi + 1) - 1
            kms, kseq = node.kms, node.kseq
            lp = node.lp
            base = node.base
            offs = node.offs
            while k >= 0:
                p = base + offs[k]
                k -= 1
                t = stream_entry_id(lp, p, kms, kseq)
                if t < lo_t:
                    return
                if lp[p] & FLAG_DELETED:
                    continue
                yield _new_id(StreamID, t), stream_entry_fields(lp, p, node.fields)
                lp = node.lp
                base = node.base
                offs = node.offs
                if k >= len(offs):  # the node was dropped meanwhile
                    break
            if node.ikey <= lo:
                return
            i = bisect_left(keys, node.ikey) - 1

    def get(self, id: StreamID) -> list[bytes] | None:
        """The fields and values of the live entry ``id``, or None.

        Cost: O(log N + log E).
        """
        found = self._locate(id)
        if found is None:
            return None
        node, p, flags = found
        if flags & FLAG_DELETED:
            return None
        return stream_entry_fields(node.lp, p, node.fields)

    def first_entry(self) -> tuple[StreamID, list[bytes]] | None:
        """The oldest live entry, or None.  Cost: O(log N + D), D deleted entries skipped."""
        return next(self._iter_fwd(0, _M64 << 64 | _M64), None) if self._nodes else None

    def last_entry(self) -> tuple[StreamID, list[bytes]] | None:
        """The newest live entry, or None.  Cost: O(log N + D), D deleted entries skipped."""
        return next(self._iter_rev(0, _M64 << 64 | _M64), None) if self._nodes else None

    def last_live_id(self) -> StreamID | None:
        """The ID of the newest live entry, or None; its fields are not read.

        Cost: O(1) when that entry is the tail node's last one (the common
        case: only an XDEL of the newest entries makes it otherwise), else as
        :meth:`last_entry`."""
        if not self._nodes:
            return None
        node = self._nodes[-1]
        if node.offs is None:
            self._index(node)
        offs = node.offs
        if offs:
            p = node.base + offs[-1]
            if not node.lp[p] & FLAG_DELETED:
                kms, kseq = node.kms, node.kseq
                return _new_id(StreamID, stream_entry_id(node.lp, p, kms, kseq))
        last = self.last_entry()
        return None if last is None else last[0]

    @property
    def node_count(self) -> int:
        """How many nodes (XINFO's radix-tree-keys).  Cost: O(1)."""
        return len(self._nodes)

    # -- deleting and trimming ------------------------------------------------

    def delete(self, id: StreamID) -> bool:
        """Flag the live entry ``id`` deleted (XDEL); False when there is none.

        Raises ``max_deleted_entry_id`` to ``id``, moves ``first_id`` on when
        the first entry goes, and removes the node when its last live entry
        goes.

        Cost: O(log N + log E), plus O(node size) to copy an immutable node
        (or when a counter's encoding shrinks), plus O(N) pointer moves to
        drop an emptied node from the index.
        """
        found = self._locate(id)
        if found is None:
            return False
        node, p, flags = found
        if flags & FLAG_DELETED:
            return False
        if node.live == 1:
            i = bisect_left(self._keys, node.ikey)
            del self._keys[i]
            del self._nodes[i]
            _drop(node)
        else:
            lp = node.lp
            buf = lp if type(lp) is bytearray else bytearray(lp)
            buf[p] = flags | FLAG_DELETED  # one byte (0..3), same size
            node.lp = buf
            self._set_counters(node, node.live - 1, node.dead + 1)
            if buf is not lp:
                node.lp = bytes(buf)
        self.length -= 1
        if id > self.max_deleted_entry_id:
            self.max_deleted_entry_id = id
        if self.length == 0:
            self.first_id = MIN_ID
        elif id == self.first_id:
            self.first_id = self._first_live_id()
        return True

    def trim_maxlen(
        self, maxlen: int, approx: bool, limit: int,
        keep: Callable[[StreamID], bool] | None = None,
    ) -> int:
        """XTRIM MAXLEN: drop the oldest entries until at most ``maxlen`` remain.

        Redis 7's walk from the head: a node whose removal still leaves at
        least ``maxlen`` entries goes whole; at the first node that cannot
        go whole, an approximate trim stops, and an exact trim flags entries
        of that node deleted until ``length <= maxlen`` and then stops.  With
        ``limit`` not 0, the walk stops before a node whose live entries
        would take the count removed past ``limit``.  Returns how many
        entries were removed.

        ``keep`` (trimming with ACKED, Redis 8.2) stops the walk at the first
        live entry for which it returns True: that entry and all after it
        stay.  A node holding such an entry never goes whole; an exact trim
        flags the entries of that node before it, an approximate one stops
        at the node (whole nodes only, as always).

        Cost: O(R + E) for R nodes removed whole and E entries of one node,
        plus O(N) pointer moves in the index.  With ``keep``: one call per
        live entry of each node looked at, O(E) decoding per node.
        """
        if maxlen < 0:
            raise ValueError("maxlen must not be negative")
        return self._trim(maxlen, 0, approx, limit, keep)

    def trim_minid(
        self, minid: StreamID, approx: bool, limit: int,
        keep: Callable[[StreamID], bool] | None = None,
    ) -> int:
        """XTRIM MINID: drop entries with IDs below ``minid``.

        As :meth:`trim_maxlen`, except that a node goes whole when its last
        entry (deleted or not) is below ``minid``, and an exact trim flags
        the entries of the next node up to the first one ``>= minid``.  The
        node can be left with no live entry, as in Redis.  Returns how many
        entries were removed.  ``keep`` stops the walk as for
        :meth:`trim_maxlen`.

        Cost: O(R + E) as for :meth:`trim_maxlen`.
        """
        return self._trim(-1, _as_int(minid), approx, limit, keep)

    def _trim(
        self, maxlen: int, minid: int, approx: bool, limit: int,
        keep: Callable[[StreamID], bool] | None = None,
    ) -> int:
        by_len = maxlen >= 0
        removed = 0
        whole = 0
        for node in self._nodes:
            if by_len and self.length <= maxlen:
                break
            entries = node.live
            if limit and removed + entries > limit:
                break
            if by_len:
                remove_node = self.length - entries >= maxlen
            else:
                remove_node = self._last_entry_int(node) < minid
            stop = None if keep is None else self._first_kept(node, keep)
            if remove_node and stop is None:
                whole += 1
                self.length -= entries
                removed += entries
                continue
            if not approx:
                removed += self._trim_node(node, maxlen, minid, stop)
            break
        if whole:
            for node in self._nodes[:whole]:
                _drop(node)
            del self._nodes[:whole]
            del self._keys[:whole]
        if removed:
            self.first_id = self._first_live_id() if self.length else MIN_ID
        return removed

    def _first_kept(self, node: _Node, keep: Callable[[StreamID], bool]) -> int | None:
        """Index of the first live entry of ``node`` that ``keep`` keeps, or None."""
        if node.offs is None:
            self._index(node)
        lp = node.lp
        base = node.base
        kms, kseq = node.kms, node.kseq
        for k, off in enumerate(node.offs):
            p = base + off
            if lp[p] & FLAG_DELETED:
                continue
            ms, q = read_int(lp, p + 2)
            seq, _ = read_int(lp, q)
            if keep(_new_id(StreamID, ((kms + ms) & _M64, (kseq + seq) & _M64))):
                return k
        return None

    def _trim_node(self, node: _Node, maxlen: int, minid: int, stop: int | None = None) -> int:
        """Flag entries of ``node`` deleted from its start (an exact trim),
        never entry ``stop`` (an index) or any after it."""
        if node.offs is None:
            self._index(node)
        lp = node.lp
        buf = lp if type(lp) is bytearray else bytearray(lp)
        base = node.base
        kms, kseq = node.kms, node.kseq
        flagged = 0
        for k, off in enumerate(node.offs):
            if k == stop:
                break
            p = base + off
            if maxlen >= 0:
                if self.length <= maxlen:
                    break
            else:
                ms, q = read_int(buf, p + 2)
                seq, _ = read_int(buf, q)
                if (((kms + ms) & _M64) << 64 | ((kseq + seq) & _M64)) >= minid:
                    break
            flags = buf[p]
            if not flags & FLAG_DELETED:
                buf[p] = flags | FLAG_DELETED
                flagged += 1
                self.length -= 1
        node.lp = buf
        self._set_counters(node, node.live - flagged, node.dead + flagged)
        if buf is not lp:
            node.lp = bytes(buf)
        return flagged

    # -- snapshots ------------------------------------------------------------

    def nodes(self) -> Iterator[tuple[StreamID, bytes]]:
        """``(master ID, listpack bytes)`` for each node, oldest first: what a
        snapshot saves (the ID as 16 bytes, big-endian ms then seq).

        Cost: O(1) per node; O(size) for the tail node, which is copied.
        """
        for node in self._nodes:
            yield node.key, bytes(node.lp)

    @classmethod
    def from_nodes(
        cls,
        nodes: Iterable[tuple[StreamID, bytes]],
        length: int,
        last_id: StreamID,
        first_id: StreamID | None = None,
        max_deleted_entry_id: StreamID = MIN_ID,
        entries_added: int | None = None,
    ) -> Stream:
        """A stream adopting node blobs as a snapshot loader reads them.

        The blobs are kept as they are; entries are decoded only when first
        used.  Checked now, cheaply: each blob's header total, terminator and
        master counters, keys strictly increasing, the counters summing to
        ``length``, and ``last_id`` not below the last node's last entry.
        Without ``first_id`` (old snapshots) it is found; without
        ``entries_added`` it is ``length``.  Raises :class:`CorruptStream`.

        Cost: O(N) for N nodes, plus finding the first live entry when
        ``first_id`` is not given.
        """
        stream = cls()
        total = 0
        prev = -1
        for key, blob in nodes:
            if type(key) is not StreamID:
                key = StreamID(*key)
            if type(blob) is not bytes:
                blob = bytes(blob)
            try:
                size, _ = listpack.read_header(blob)
                if size != len(blob) or blob[-1] != listpack.EOF:
                    raise CorruptStream(f"node {key}: bad listpack header or terminator")
                live, p = read_int(blob, HEADER_SIZE)
                dead, p = read_int(blob, p)
            except (ListpackError, IndexError) as exc:
                raise CorruptStream(f"node {key}: {exc}") from None
            if live < 0 or dead < 0 or live + dead == 0:
                raise CorruptStream(f"node {key}: bad master counters {live}, {dead}")
            node = _Node(key, blob, live, dead)
            if node.ikey <= prev:
                raise CorruptStream(f"node {key} is not after the node before it")
            prev = node.ikey
            total += live
            stream._nodes.append(node)
            stream._keys.append(node.ikey)
        if total != length:
            raise CorruptStream(f"nodes hold {total} live entries, length is {length}")
        stream.length = length
        stream.last_id = StreamID(*last_id)
        if stream._nodes:
            try:
                last = stream._last_entry_int(stream._nodes[-1])
            except (ListpackError, IndexError) as exc:
                raise CorruptStream(f"last node: {exc}") from None
            if last > _as_int(stream.last_id):
                raise CorruptStream("last_id is below the last entry")
        stream.max_deleted_entry_id = StreamID(*max_deleted_entry_id)
        stream.entries_added = length if entries_added is None else entries_added
        if first_id is None:
            first_id = stream._first_live_id() if length else MIN_ID
        stream.first_id = StreamID(*first_id)
        return stream

    def memory_usage(self) -> int:
        """Approximate bytes held: node blobs plus the index and caches.

        Cost: O(N) for N nodes.
        """
        total = sys.getsizeof(self) + sys.getsizeof(self._nodes) + sys.getsizeof(self._keys)
        node_size = sys.getsizeof(_Node.__new__(_Node))
        fields = None
        for node in self._nodes:
            total += node_size + sys.getsizeof(node.lp) + sys.getsizeof(node.ikey)
            if node.offs is not None:
                total += sys.getsizeof(node.offs)
            if node.fields is not None and node.fields is not fields:
                fields = node.fields  # counted once for the nodes sharing it
                total += sys.getsizeof(fields)
        if self.idmp is not None:
            total += self.idmp.memory_usage()
        return total

    # -- internals ------------------------------------------------------------

    def _index(self, node: _Node) -> None:
        """Decode a node's master entry and find its entry offsets (validating)."""
        lp = node.lp
        try:
            live, p = read_int(lp, HEADER_SIZE)
            dead, p = read_int(lp, p)
            nf, p = read_int(lp, p)
            fields = []
            for _ in range(nf):
                field, p = read_bytes(lp, p)
                fields.append(field)
            zero, p = read_int(lp, p)
            if zero != 0:
                raise CorruptStream(f"node {node.key}: master entry not terminated by 0")
            base = p
            last = len(lp) - 1
            offs = array("H" if last - base <= 65535 else "I")
            seen_live = seen_dead = 0
            while p < last:
                offs.append(p - base)
                flags = lp[p]
                if flags > 3:
                    raise CorruptStream(f"node {node.key}: bad entry flags {flags}")
                p = skip(lp, skip(lp, p + 2))
                if flags & FLAG_SAMEFIELDS:
                    for _ in range(nf):
                        p = skip(lp, p)
                    expect = nf + 3
                else:
                    n, p = read_int(lp, p)
                    for _ in range(2 * n):
                        p = skip(lp, p)
                    expect = 2 * n + 4
                count, p = read_int(lp, p)
                if count != expect:
                    raise CorruptStream(f"node {node.key}: wrong lp-count {count}")
                if flags & FLAG_DELETED:
                    seen_dead += 1
                else:
                    seen_live += 1
            if p != last or not offs:
                raise CorruptStream(f"node {node.key}: entries do not end at the terminator")
            if (seen_live, seen_dead) != (live, dead):
                raise CorruptStream(f"node {node.key}: master counters do not match entries")
            ms, q = read_int(lp, base + 2)
            seq, _ = read_int(lp, q)
            if ms or seq:
                raise CorruptStream(f"node {node.key}: first entry is not the master ID")
        except (ListpackError, IndexError) as exc:
            raise CorruptStream(f"node {node.key}: {exc}") from None
        node.fields = fields
        node.base = base
        node.offs = offs

    def _entry_int(self, node: _Node, k: int) -> int:
        """The ID of entry ``k`` of an indexed node, as an int."""
        lp = node.lp
        ms, p = read_int(lp, node.base + node.offs[k] + 2)
        seq, _ = read_int(lp, p)
        return ((node.kms + ms) & _M64) << 64 | ((node.kseq + seq) & _M64)

    @staticmethod
    def _seek(node: _Node, target: int) -> int:
        """Index of the first entry of an indexed node with ID >= ``target``."""
        lp = node.lp
        offs = node.offs
        base = node.base + 2  # skip the flags element
        kms, kseq = node.kms, node.kseq
        lo = 0
        hi = len(offs)
        while lo < hi:
            mid = (lo + hi) >> 1
            p = base + offs[mid]
            b = lp[p]
            if b < 0x80:
                ms = (kms + b) & _M64
                p += 2
            else:
                ms, p = read_int(lp, p)
                ms = (kms + ms) & _M64
            b = lp[p]
            if b < 0x80:
                seq = (kseq + b) & _M64
            else:
                seq, _ = read_int(lp, p)
                seq = (kseq + seq) & _M64
            if ((ms << 64) | seq) < target:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _locate(self, id: StreamID) -> tuple[_Node, int, int] | None:
        """``(node, offset of the entry's flags, flags)`` for entry ``id``, live or not."""
        target = _as_int(id)
        i = bisect_right(self._keys, target) - 1
        if i < 0:
            return None
        node = self._nodes[i]
        if node.offs is None:
            self._index(node)
        k = self._seek(node, target)
        if k == len(node.offs) or self._entry_int(node, k) != target:
            return None
        p = node.base + node.offs[k]
        return node, p, node.lp[p]

    def _last_entry_int(self, node: _Node) -> int:
        """The ID of a node's last entry (deleted or not), as an int."""
        if node.offs is not None:
            return self._entry_int(node, len(node.offs) - 1)
        lp = node.lp  # walk back from the last lp-count; no index needed
        p = listpack.prev(lp, len(lp) - 1)
        count, _ = read_int(lp, p)
        for _ in range(count):
            p = listpack.prev(lp, p)
        ms, p = read_int(lp, p + 2)
        seq, _ = read_int(lp, p)
        return ((node.kms + ms) & _M64) << 64 | ((node.kseq + seq) & _M64)

    def _first_live_id(self) -> StreamID:
        first = self.first_entry()
        return first[0] if first is not None else MIN_ID

    @staticmethod
    def _set_counters(node: _Node, live: int, dead: int) -> None:
        """Rewrite the master count and deleted elements; node.lp must be a bytearray."""
        lp = node.lp
        end = skip(lp, skip(lp, HEADER_SIZE))
        new = encode_int(live) + encode_int(dead)
        if len(new) == end - HEADER_SIZE:
            lp[HEADER_SIZE:end] = new
        else:
            lp[HEADER_SIZE:end] = new
            node.base += len(new) - (end - HEADER_SIZE)
            lp[0:4] = len(lp).to_bytes(4, "little")
        node.live = live
        node.dead = dead

    # -- invariants -----------------------------------------------------------

    def check(self) -> None:
        """Assert every invariant listed at the top of this module.

        For tests and debugging.  Cost: O(total bytes).
        """
        assert len(self._keys) == len(self._nodes), "index and nodes differ in length"
        prev_id = -1
        live_total = 0
        first_live = last_live = None
        for i, node in enumerate(self._nodes):
            assert self._keys[i] == node.ikey == _as_int(node.key), f"node {i}: key mismatch"
            assert isinstance(node.key, StreamID)
            if i < len(self._nodes) - 1:
                assert type(node.lp) is bytes, f"node {i}: not the tail but mutable"
            else:
                assert type(node.lp) in (bytes, bytearray)
            try:
                elements = listpack.unpack(node.lp)
            except ListpackError as exc:
                raise AssertionError(f"node {node.key}: {exc}") from None
            entries = _parse_node(node.key, elements)
            assert entries, f"node {node.key}: no entries"
            first_flags, first_id, _ = entries[0]
            assert first_id == node.key, f"node {node.key}: first entry is {first_id}"
            assert first_flags & FLAG_SAMEFIELDS, f"node {node.key}: first entry flags"
            live = sum(1 for flags, _, _ in entries if not flags & FLAG_DELETED)
            dead = len(entries) - live
            assert (elements[0], elements[1]) == (live, dead), f"node {node.key}: counters"
            assert (node.live, node.dead) == (live, dead), f"node {node.key}: cached counters"
            if live == 0:
                assert entries[-1][0] & FLAG_DELETED, f"node {node.key}: empty node"
            for flags, eid, _ in entries:
                value = _as_int(eid)
                assert value > prev_id, f"entry {eid} is not after the entry before it"
                prev_id = value
                if not flags & FLAG_DELETED:
                    last_live = eid
                    if first_live is None:
                        first_live = eid
            live_total += live
            if node.offs is not None:
                self._check_index(node, entries)
        assert self.length == live_total, f"length {self.length}, live entries {live_total}"
        assert self.first_id == (first_live or MIN_ID), f"first_id {self.first_id}"
        assert self.last_live_id() == last_live, f"last live ID {self.last_live_id()}"
        assert _as_int(self.last_id) >= max(prev_id, 0), "last_id below an entry"
        assert self.entries_added >= self.length, "entries_added below length"

    def _check_index(self, node: _Node, entries: list) -> None:
        fields_count = len(entries[0][2]) // 2
        expect_fields = entries[0][2][0::2]
        assert node.fields == expect_fields, f"node {node.key}: cached fields"
        assert len(node.offs) == len(entries), f"node {node.key}: offsets count"
        lp = node.lp
        p = HEADER_SIZE
        for _ in range(3 + fields_count + 1):
            p = skip(lp, p)
        assert node.base == p, f"node {node.key}: base {node.base}, expected {p}"
        for k, (flags, eid, fv) in enumerate(entries):
            at = node.base + node.offs[k]
            assert lp[at] == flags, f"node {node.key}: offset of entry {k}"
            assert self._entry_int(node, k) == _as_int(eid)
            assert stream_entry_fields(lp, at, node.fields) == fv


def _drop(node: _Node) -> None:
    """Empty a node taken out of the stream, so open iterators skip what it held."""
    node.offs = array("H")
    node.live = 0


def _parse_node(key: StreamID, elements: list) -> list[tuple[int, StreamID, list[bytes]]]:
    """Check a node's element list against the stream node layout (for check()).

    Returns ``(flags, id, [f1, v1, ...])`` for every entry, deleted or not.
    """

    def text(value: int | bytes) -> bytes:
        return value if isinstance(value, bytes) else b"%d" % value

    def integer(j: int) -> int:
        assert isinstance(elements[j], int), f"node {key}: element {j} is not an integer"
        return elements[j]

    assert len(elements) >= 4, f"node {key}: too short"
    integer(0)
    integer(1)
    nf = integer(2)
    assert nf >= 0
    fields = [text(v) for v in elements[3 : 3 + nf]]
    assert integer(3 + nf) == 0, f"node {key}: master entry not terminated by 0"
    j = 4 + nf
    entries = []
    while j < len(elements):
        start = j
        flags = integer(j)
        assert flags & ~(FLAG_DELETED | FLAG_SAMEFIELDS) == 0, f"node {key}: flags {flags}"
        ms = (key.ms + integer(j + 1)) & _M64
        seq = (key.seq + integer(j + 2)) & _M64
        j += 3
        if flags & FLAG_SAMEFIELDS:
            values = [text(v) for v in elements[j : j + nf]]
            assert len(values) == nf, f"node {key}: truncated entry"
            fv = [x for pair in zip(fields, values, strict=True) for x in pair]
            j += nf
        else:
            m = integer(j)
            fv = [text(v) for v in elements[j + 1 : j + 1 + 2 * m]]
            assert len(fv) == 2 * m, f"node {key}: truncated entry"
            assert fv[0::2] != fields, f"node {key}: SAMEFIELDS missing"
            j += 1 + 2 * m
        assert integer(j) == j - start, f"node {key}: wrong lp-count"
        j += 1
        entries.append((flags, StreamID(ms, seq), fv))
    return entries
