"""Redis's RDB encoding of values: a data format, below the command layer.

- :mod:`.format` -- the low-level pieces: lengths, strings, LZF, the CRC-64,
  ``Reader``.
- :mod:`.values` -- one value's encoding (strings, streams) and the plug-in
  tables of the other types; DUMP's and FUNCTION DUMP's payloads.
- :mod:`.hash`, :mod:`.list`, :mod:`.set`, :mod:`.zset`, :mod:`.array` -- each
  type's encodings (every one Redis writes is read).

Files (snapshots, an AOF's RDB preamble) are :mod:`tidelog.persistence.rdb`'s;
nothing here opens one, nor knows the engine.
"""
