"""HIMPORT's fieldsets (Redis 8.10): the named field lists one connection prepared.

A client about to write many hashes of one shape names the shape once
(``HIMPORT PREPARE users name email age``) and then sends only the values
of each key (``HIMPORT SET user:1 users alice a@x 30``).  The names live on
the connection: no other client sees them, and RESET or the connection's
end drops them all.  A hash written from a fieldset is an ordinary hash;
dropping the fieldset leaves it alone.

Representation::

    Fieldsets  by_name  dict, name -> Fieldset (a name prepared again replaces it)
      b"users"  Fieldset  fields     (b"age", b"name", b"email")   canonical order
                          positions  (2, 0, 1)    where each field's value is
                                                  among the values HIMPORT SET sends

The canonical order is Redis's: shorter names first, equal lengths by their
bytes (``age`` < ``name`` < ``email``; ``b`` < ``aa``).  Redis keeps a
HIMPORT hash's fields in that order, so HGETALL answers in it; the sort is
done once at PREPARE, not once per key.

``Fieldsets.memory`` counts the bytes the connection holds this way (the
names, and a machine word per field for its position), which CLIENT LIST's
``tot-mem`` includes, as Redis counts fieldsets in a client's memory.

Costs: prepare O(N log N) for N fields; pairs O(N); lookup O(1); discard
O(N); discard_all O(F) for F fieldsets.
"""

from __future__ import annotations

from dataclasses import dataclass


class DuplicateField(ValueError):
    """A field name given twice in one fieldset."""


def canonical_key(name: bytes) -> tuple[int, bytes]:
    """The sort key of a field name in Redis's order: length, then bytes."""
    return len(name), name


@dataclass(frozen=True, slots=True)
class Fieldset:
    """One prepared shape: the fields in canonical order, and for each the
    index of its value among the values in declared order."""

    fields: tuple[bytes, ...]
    positions: tuple[int, ...]

    @classmethod
    def of(cls, declared: list[bytes]) -> Fieldset:
        """The fieldset of field names in their declared order; DuplicateField
        if one is there twice.  O(N log N)."""
        order = sorted(range(len(declared)), key=lambda i: canonical_key(declared[i]))
        fields = tuple(declared[i] for i in order)
        for a, b in zip(fields, fields[1:]):
            if a == b:
                raise DuplicateField(a)
        return cls(fields, tuple(order))

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def memory(self) -> int:
        """The bytes it holds: the field names and a word per position.  O(N)."""
        return sum(len(f) for f in self.fields) + 8 * len(self.fields)

    def pairs(self, values: list[bytes]) -> dict[bytes, bytes]:
        """Field -> value in canonical order, from values in declared order
        (as many as there are fields: the caller checked).  O(N)."""
        return {field: values[at] for field, at in zip(self.fields, self.positions)}


class Fieldsets:
    """The fieldsets of one connection, by name (bytes, compared exactly)."""

    __slots__ = ("by_name", "memory")

    def __init__(self) -> None:
        self.by_name: dict[bytes, Fieldset] = {}
        self.memory = 0  # bytes held: every name, field names, positions

    def __len__(self) -> int:
        return len(self.by_name)

    def prepare(self, name: bytes, declared: list[bytes]) -> None:
        """HIMPORT PREPARE: name the shape, replacing what the name held.  A
        duplicate field raises DuplicateField and leaves the name as it was.
        O(N log N)."""
        fieldset = Fieldset.of(declared)
        self.discard(name)
        self.by_name[name] = fieldset
        self.memory += len(name) + fieldset.memory

    def get(self, name: bytes) -> Fieldset | None:
        """The fieldset under name, None if this connection has none.  O(1)."""
        return self.by_name.get(name)

    def discard(self, name: bytes) -> bool:
        """HIMPORT DISCARD: whether there was one to drop.  O(N) for its N
        fields (its memory is counted off)."""
        fieldset = self.by_name.pop(name, None)
        if fieldset is None:
            return False
        self.memory -= len(name) + fieldset.memory
        return True

    def discard_all(self) -> int:
        """HIMPORT DISCARDALL: how many there were.  O(F)."""
        count = len(self.by_name)
        self.by_name.clear()
        self.memory = 0
        return count
