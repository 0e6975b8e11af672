"""The HyperLogLog commands (PFADD, PFCOUNT, PFMERGE ...), Redis's hyperloglog.c."""
