"""The I/O layer: the server (net: listeners, connections, their output, the
busy-script loop, around each client's sans-IO session), start-up and command
line (main, daemon), and an embeddable server running in a background thread (embed)."""
