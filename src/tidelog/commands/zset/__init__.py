"""The sorted set commands, Redis's t_zset.c, and the geo commands (geo.c), whose sets are
sorted sets."""
