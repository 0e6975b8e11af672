"""The bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD), Redis's bitops.c."""
