"""The server commands, Redis's server.c, config.c, debug.c, object.c's MEMORY, latency.c,
slowlog.c, module.c, cluster.c and lolwut.c."""
