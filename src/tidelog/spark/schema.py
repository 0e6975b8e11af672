"""Rows of the ``tidelog`` format: the default schema, user schemas, Arrow batches.

The default schema::

    stream string, id string, ms long, seq long, ts timestamp,
    fields map<string, string>          (map<string, binary> with binaryValues=true)

``ms`` and ``seq`` are the two halves of the ID (order by them, not by ``id``,
whose text does not sort numerically); ``ts`` is ``ms`` as a UTC timestamp.
A field value that is not UTF-8 is null in ``fields`` with ``mode=PERMISSIVE``
and fails the query with ``mode=FAILFAST``; ``binaryValues=true`` keeps bytes.

A user schema (``spark.read.schema(...)``) may name any of those six columns
and any entry field: a column whose name is not one of the six is read from the
field of that name and converted to the column's type.  A missing field is
null; a value that does not convert is null with ``mode=PERMISSIVE`` (the
default) and fails the query with ``mode=FAILFAST``.  Integers given for
timestamps are Unix milliseconds (as stream IDs are); other text is ISO 8601.

Batches are built column by column straight into Arrow with the exact Arrow
schema Spark expects (``to_arrow_schema``), so no per-row Python objects go to
Spark.  Building a batch of R entries with F fields each costs O(R * F).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from itertools import accumulate, chain

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from .ids import id_of_time

META_COLUMNS = ("stream", "id", "ms", "seq", "ts", "fields")

DEFAULT_DDL = ("stream string, id string, ms long, seq long, ts timestamp, "
               "fields map<string, string>")
BINARY_DDL = ("stream string, id string, ms long, seq long, ts timestamp, "
              "fields map<string, binary>")


def default_schema(binary_values: bool = False) -> StructType:
    """The default schema as a StructType (workers cannot parse DDL: no SparkContext)."""
    return StructType([
        StructField("stream", StringType()),
        StructField("id", StringType()),
        StructField("ms", LongType()),
        StructField("seq", LongType()),
        StructField("ts", TimestampType()),
        StructField("fields", MapType(StringType(),
                                      BinaryType() if binary_values else StringType())),
    ])


# A page of entries as XRANGE returns them: [(id bytes, [field, value, ...]), ...]
Entries = Sequence[Sequence]
_EPOCH_DATE = date(1970, 1, 1)
_U64 = 1 << 64


class BadValue(ValueError):
    """A field value that does not convert to its column's type (``mode=FAILFAST``)."""


def _to_int(bits: int) -> Callable[[bytes], int]:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def convert(raw: bytes) -> int:
        number = int(raw)
        if not lo <= number <= hi:
            raise ValueError(f"out of range for a {bits}-bit integer")
        return number
    return convert


def _to_bool(raw: bytes) -> bool:
    text = raw.strip().lower()
    if text in (b"true", b"1", b"yes", b"t"):
        return True
    if text in (b"false", b"0", b"no", b"f"):
        return False
    raise ValueError("not a boolean")


def _to_timestamp_us(raw: bytes) -> int:
    return id_of_time(raw.decode()) * 1000 if raw.strip().lstrip(b"-").isdigit() \
        else _iso_micros(raw.decode())


def _iso_micros(text: str) -> int:
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _to_date(raw: bytes) -> date:
    return date.fromisoformat(raw.decode().strip()[:10])


def _decimal(dtype: DecimalType) -> Callable[[bytes], Decimal]:
    quantum = Decimal(1).scaleb(-dtype.scale)

    def convert(raw: bytes) -> Decimal:
        try:
            value = Decimal(raw.decode()).quantize(quantum, ROUND_HALF_UP)  # as Spark casts
        except InvalidOperation:
            raise ValueError("not a decimal") from None
        if len(value.as_tuple().digits) > dtype.precision:
            raise ValueError(f"does not fit decimal({dtype.precision},{dtype.scale})")
        return value
    return convert


def field_converter(dtype: DataType) -> Callable[[bytes], object]:
    """How a field value (bytes) becomes a value of Spark type ``dtype`` for Arrow."""
    if isinstance(dtype, StringType):
        return lambda raw: raw.decode("utf-8")
    if isinstance(dtype, BinaryType):
        return bytes
    if isinstance(dtype, LongType):
        return _to_int(64)
    if isinstance(dtype, IntegerType):
        return _to_int(32)
    if isinstance(dtype, ShortType):
        return _to_int(16)
    if isinstance(dtype, ByteType):
        return _to_int(8)
    if isinstance(dtype, (DoubleType, FloatType)):
        return float
    if isinstance(dtype, BooleanType):
        return _to_bool
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        return _to_timestamp_us
    if isinstance(dtype, DateType):
        return _to_date
    if isinstance(dtype, DecimalType):
        return _decimal(dtype)
    raise ValueError(f"the tidelog format cannot read a field as {dtype.simpleString()}")


def check_schema(schema: StructType) -> None:
    """Refuse, at planning, a schema whose columns the reader cannot fill."""
    expected = {f.name: f.dataType for f in default_schema().fields}
    for field in schema.fields:
        if field.name in ("ms", "seq"):
            if not isinstance(field.dataType, LongType):
                raise ValueError(f"column {field.name!r} must be bigint")
        elif field.name == "fields":
            dt = field.dataType
            if not (isinstance(dt, MapType) and isinstance(dt.keyType, StringType)
                    and isinstance(dt.valueType, (StringType, BinaryType))):
                raise ValueError("column 'fields' must be map<string,string> or "
                                 "map<string,binary>")
        elif field.name in expected:
            if type(field.dataType) is not type(expected[field.name]):
                raise ValueError(f"column {field.name!r} must be "
                                 f"{expected[field.name].simpleString()}")
        else:
            field_converter(field.dataType)


class BatchBuilder:
    """Turns pages of XRANGE replies into ``pyarrow.RecordBatch`` es of ``schema``.

    Made once per partition (on the executor); ``build`` is O(R * F) per batch.
    """

    def __init__(self, schema: StructType, failfast: bool):
        self.schema = schema
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")
        self.failfast = failfast
        self.names = schema.fieldNames()
        self.converters = {f.name: field_converter(f.dataType)
                           for f in schema.fields if f.name not in META_COLUMNS}
        self.field_names = {name: name.encode() for name in self.converters}

    def build(self, chunks: Sequence[tuple[str, Entries]]) -> pa.RecordBatch:
        """One batch from ``[(key, entries), ...]``, rows in the order given."""
        keys: list[str] = []
        ids: list[bytes] = []
        values: list[Sequence[bytes]] = []
        for key, entries in chunks:
            keys.extend([key] * len(entries))
            for eid, fv in entries:
                ids.append(eid)
                values.append(fv or ())
        page = _Page(keys, ids, values)
        arrays = [self._column(name, i, page) for i, name in enumerate(self.names)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)

    def _column(self, name: str, index: int, page: _Page) -> pa.Array:
        atype = self.arrow_schema.field(index).type
        if name == "stream":
            return pa.array(page.keys, type=atype)
        if name == "id":
            return page.id_text.cast(atype)
        if name == "ms":
            return page.id_part(0).cast(atype)
        if name == "ts":
            return pc.multiply(page.id_part(0), 1000).cast(pa.int64()).cast(atype)
        if name == "seq":
            return page.id_part(1).cast(atype)
        if name == "fields":
            offsets = [0]
            offsets.extend(accumulate(len(fv) >> 1 for fv in page.values))
            flat = list(chain.from_iterable(page.values))
            return pa.MapArray.from_arrays(
                pa.array(offsets, type=pa.int32()),
                self._texts(flat[0::2], atype.key_type, "name", page),
                self._texts(flat[1::2], atype.item_type, "value", page),
                type=atype)
        return pa.array(self._field_values(name, page), type=atype)

    def _texts(self, raw: list[bytes], atype: pa.DataType, what: str,
               page: _Page) -> pa.Array:
        """Field names or values as an Arrow string (or binary) array.  Text that is
        not UTF-8 fails with FAILFAST; with PERMISSIVE a value becomes null and a
        name keeps its bytes with U+FFFD for each bad one (map keys cannot be null)."""
        try:
            return pa.array(raw, type=atype)
        except pa.ArrowInvalid:
            pass
        out: list[str | None] = []
        for item in raw:
            try:
                out.append(item.decode("utf-8"))
            except UnicodeDecodeError:
                if self.failfast:
                    row = next(i for i, fv in enumerate(page.values) if item in fv)
                    raise BadValue(
                        f"stream {page.keys[row]!r} entry {page.ids[row].decode()}: a field {what} "
                        f"{item[:64]!r} is not UTF-8; read with binaryValues=true or "
                        f"mode=PERMISSIVE") from None
                out.append(item.decode("utf-8", "replace") if what == "name" else None)
        return pa.array(out, type=atype)

    def _field_values(self, name: str, page: _Page) -> list:
        wanted = self.field_names[name]
        convert = self.converters[name]
        out: list = []
        for row, fv in enumerate(page.values):
            raw = None
            for j in range(0, len(fv) - 1, 2):
                if fv[j] == wanted:
                    raw = fv[j + 1]
                    break
            if raw is None:
                out.append(None)
                continue
            try:
                out.append(convert(raw))
            except (ValueError, UnicodeDecodeError, OverflowError) as exc:
                if self.failfast:
                    raise BadValue(
                        f"stream {page.keys[row]!r} entry {page.ids[row].decode()}: "
                        f"field {name!r} value "
                        f"{raw[:64]!r} is not a valid "
                        f"{self.schema[name].dataType.simpleString()} ({exc}); "
                        f"use mode=PERMISSIVE to read it as null") from None
                out.append(None)
        return out


class _Page:
    """The rows of one batch before they become columns; the ID's text and its two
    halves are computed once, in Arrow, by the columns that need them."""

    def __init__(self, keys: list[str], ids: list[bytes], values: list[Sequence[bytes]]):
        self.keys, self.ids, self.values = keys, ids, values
        self._text: pa.Array | None = None
        self._parts: pa.Array | None = None

    @property
    def id_text(self) -> pa.Array:
        if self._text is None:
            self._text = pa.array(self.ids, type=pa.string())
        return self._text

    def id_part(self, index: int) -> pa.Array:
        """``ms`` (0) or ``seq`` (1) as uint64."""
        if self._parts is None:
            self._parts = pc.split_pattern(self.id_text, "-")
        return pc.list_element(self._parts, index).cast(pa.uint64())
