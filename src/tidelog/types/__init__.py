"""Pure data types: no I/O, no clock, no wire text.

``listpack`` encodes and decodes Redis listpacks byte for byte; ``stream`` builds
the stream type on them (listpack macro nodes keyed by their first ID, with a
sorted index over the node keys); ``groups`` holds consumer groups: pending
entries lists ordered by ID, shared between a group and its consumers, with an
index by delivery time; ``idmp`` holds a stream's idempotent-production state
(producer -> idempotent ID -> stream ID, aged and capped); ``set`` is the set
type in Redis's intset, listpack and hashtable encodings; ``zset`` the
sorted set (a dict and a sorted list of (score, member), reported as
listpack or skiplist); ``bits`` reads strings as arrays of bits (the
bitmap commands' counting, searching, BITOP and BITFIELD integers).
"""
