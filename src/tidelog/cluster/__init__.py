"""Redis Cluster: the cluster bus as a sans-IO state machine, the slot map,
the node table and its texts.  The asyncio shell that owns the bus sockets,
the timer and the nodes.conf file lives in :mod:`tidelog.server`."""
