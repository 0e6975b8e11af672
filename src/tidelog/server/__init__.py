"""The I/O layer: sockets (net), start-up and command line (main), and an
embeddable server running in a background thread (embed)."""
