"""The generic key commands, Redis's db.c, expire.c and sort.c: DEL, SCAN, EXPIRE, OBJECT, the
database operations, SORT."""
