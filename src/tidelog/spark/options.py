"""The data source's options, read once into typed records.

Spark hands options over as a case-insensitive dict of strings (its keys are
lower-cased, so ``numPartitions`` and ``numpartitions`` are the same option);
everything here looks them up through that dict and never copies it into a
plain one.  A bad value raises ValueError naming the option, which Spark shows
to the user when the query is planned.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..client.partitions import partition_keys
from .ids import MAX_ID, MIN_ID, StreamId, id_of_time, parse_id

DEFAULT_URL = "redis://127.0.0.1:6379/0"

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _get(options: Mapping[str, str], name: str) -> str | None:
    # CaseInsensitiveDict lower-cases on lookup; a plain dict from our own
    # callers may use either spelling.
    value = options.get(name)
    if value is None:
        value = options.get(name.lower())
    return None if value is None else str(value)


def get_bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    value = _get(options, name)
    if value is None:
        return default
    if value.strip().lower() in _TRUE:
        return True
    if value.strip().lower() in _FALSE:
        return False
    raise ValueError(f"option {name!r} must be true or false, not {value!r}")


def get_int(options: Mapping[str, str], name: str, default: int | None,
            minimum: int = 1) -> int | None:
    value = _get(options, name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"option {name!r} must be an integer, not {value!r}") from None
    if number < minimum:
        raise ValueError(f"option {name!r} must be at least {minimum}, not {number}")
    return number


def get_str(options: Mapping[str, str], name: str, default: str | None = None) -> str | None:
    value = _get(options, name)
    return default if value is None else value


def get_cluster(options: Mapping[str, str]) -> bool | None:
    """Option ``cluster``: ``true``, ``false``, or ``auto`` (the default: None, the
    server's ``INFO cluster`` decides)."""
    value = _get(options, "cluster")
    if value is None or value.strip().lower() == "auto":
        return None
    return get_bool(options, "cluster", False)


def _stream_keys(options: Mapping[str, str]) -> tuple[str, ...]:
    text = _get(options, "stream") or _get(options, "streams") or ""
    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    topic = _get(options, "topic")
    if topic is None:
        if _get(options, "topicPartitions") is not None:
            raise ValueError("option 'topicPartitions' goes with 'topic'")
        return keys
    if keys:
        raise ValueError("options 'stream' and 'topic' exclude each other")
    count = get_int(options, "topicPartitions", None)
    if count is None:
        raise ValueError("option 'topic' needs 'topicPartitions' (its number of partitions)")
    return topic_keys(topic, count)


def topic_keys(topic: str, count: int) -> tuple[str, ...]:
    """The stream keys of a partitioned topic (tidelog.client.partitions:
    ``topic:{tag}``, partition i in the i-th of ``count`` slot ranges).
    ValueError for a name or count the topic helper refuses."""
    return tuple(partition_keys(topic, count))


@dataclass(frozen=True)
class ReadOptions:
    """What to read and how: the options of ``spark.read`` and ``spark.readStream``.

    ``start``/``end`` bound every stream's range (inclusive IDs); they come from
    ``startingId``/``endingId`` or ``startingTimestamp``/``endingTimestamp``.
    """

    url: str
    keys: tuple[str, ...]          # explicit stream keys (``stream``, comma-separated)
    pattern: str | None            # or a SCAN MATCH pattern (``pattern``)
    start: StreamId
    end: StreamId
    num_partitions: int | None     # None: one per stream
    page_size: int                 # XRANGE ... COUNT
    pipeline_depth: int            # ranges whose first page is fetched in one round trip
    binary_values: bool            # ``fields`` as map<string, binary>
    failfast: bool                 # ``mode``: FAILFAST fails on a bad value, PERMISSIVE nulls it
    push_filters: bool | None      # None: as the registration decided
    max_entries_per_trigger: int | None
    starting_offsets: str | None   # earliest (default) | latest | JSON {key: id}
    group: str | None              # consumer group kept at the committed offset
    cluster: bool | None = None    # Redis Cluster: True, False, None (ask the server)
    read_replicas: bool = False    # batch reads from the owning shard's replicas

    @staticmethod
    def parse_binary(options: Mapping[str, str]) -> bool:
        return get_bool(options, "binaryValues", False)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        keys = _stream_keys(options)
        pattern = _get(options, "pattern")
        if not keys and not pattern:
            raise ValueError("set option 'stream' (keys, comma-separated), 'topic' or 'pattern'")
        if keys and pattern:
            raise ValueError("options 'stream' (or 'topic') and 'pattern' exclude each other")
        start, end = MIN_ID, MAX_ID
        if (text := _get(options, "startingId")) is not None:
            start = parse_id(text, missing_seq=0)
        if (text := _get(options, "endingId")) is not None:
            end = parse_id(text, missing_seq=MAX_ID[1])
        if (text := _get(options, "startingTimestamp")) is not None:
            start = max(start, (id_of_time(text), 0))
        if (text := _get(options, "endingTimestamp")) is not None:
            end = min(end, (id_of_time(text), MAX_ID[1]))
        mode = (get_str(options, "mode", "PERMISSIVE") or "").upper()
        if mode not in ("PERMISSIVE", "FAILFAST"):
            raise ValueError(f"option 'mode' must be PERMISSIVE or FAILFAST, not {mode!r}")
        push = _get(options, "pushFilters")
        return cls(
            url=get_str(options, "url", DEFAULT_URL),
            keys=keys,
            pattern=pattern,
            start=start,
            end=end,
            num_partitions=get_int(options, "numPartitions", None),
            page_size=get_int(options, "pageSize", 1000),
            pipeline_depth=get_int(options, "pipelineDepth", 8),
            binary_values=get_bool(options, "binaryValues", False),
            failfast=mode == "FAILFAST",
            push_filters=None if push is None else get_bool(options, "pushFilters", True),
            max_entries_per_trigger=get_int(options, "maxEntriesPerTrigger", None),
            starting_offsets=get_str(options, "startingOffsets"),
            group=get_str(options, "group"),
            cluster=get_cluster(options),
            read_replicas=get_bool(options, "readReplicas", False),
        )


@dataclass(frozen=True)
class WriteOptions:
    """How rows become entries: the options of ``df.write`` and ``df.writeStream``."""

    url: str
    key: str | None                # the target stream; else each row's ``stream`` column
    keep_ids: bool                 # XADD the row's ``id`` instead of ``*``
    max_len: int | None            # XADD ... MAXLEN [~] n
    min_id: str | None             # XADD ... MINID [~] id
    approximate_trim: bool         # ``~`` (whole nodes, cheap) or ``=``
    idempotent: bool               # XADD ... IDMP producer iid
    producer_id: str | None        # IDMP producer prefix; default: the query ID / a job UUID
    batch_size: int                # XADDs per pipeline round trip
    cluster: bool | None = None    # Redis Cluster: True, False, None (ask the server)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> WriteOptions:
        keys = _stream_keys(options)
        if len(keys) > 1:
            raise ValueError("option 'stream' of a write names one key")
        max_len = get_int(options, "maxLen", None, minimum=0)
        min_id = get_str(options, "minId")
        if max_len is not None and min_id is not None:
            raise ValueError("options 'maxLen' and 'minId' exclude each other")
        if min_id is not None:
            parse_id(min_id)  # validate early
        return cls(
            url=get_str(options, "url", DEFAULT_URL),
            key=keys[0] if keys else None,
            keep_ids=get_bool(options, "keepIds", False),
            max_len=max_len,
            min_id=min_id,
            approximate_trim=get_bool(options, "approximateTrim", True),
            idempotent=get_bool(options, "idempotent", False),
            producer_id=get_str(options, "producerId"),
            batch_size=get_int(options, "batchSize", 1000),
            cluster=get_cluster(options),
        )
