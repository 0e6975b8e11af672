"""Durability: snapshots in Redis's RDB format, and the append-only file.

- :mod:`.rdb` -- the RDB file format: ``write_file(engine, path=None)`` (temp file,
  fsync, rename; ``aof_base=True`` for an AOF's RDB preamble), ``load_file(engine,
  path=None)`` (replaces every database; raises ``RdbError`` naming the byte offset),
  and the in-memory ``dumps`` / ``loads`` they are made of.  Value types beyond
  strings and streams plug in through :mod:`tidelog.rdb.values`' ``VALUE_WRITERS`` / ``VALUE_READERS``.
- :mod:`tidelog.rdb` (below the command layer) -- RDB's encoding of one value
  (DUMP/RESTORE's too) and its low-level pieces: lengths, strings, LZF, the
  CRC-64 and ``Reader``.
- :mod:`.snapshot` -- when snapshots are taken: SAVE, BGSAVE in a forked child, the
  ``save <seconds> <changes>`` points, saving at shutdown, loading at start-up.
- :mod:`.aof` -- the append-only file.

- :mod:`.durability` -- the engine's ``persistence``: snapshots and the AOF
  behind the interface commands see (``attach(engine)``), which does the work
  of SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF, DEBUG RELOAD and DEBUG LOADAOF
  (their handlers are in the command layer with every other command).

Start-up loads one source, as Redis does: the AOF when ``appendonly`` is yes,
otherwise ``<dir>/<dbfilename>`` (``snapshot.load_at_startup``).
"""
