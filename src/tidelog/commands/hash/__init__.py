"""The hash commands, Redis's t_hash.c: fields, field expiry, HIMPORT."""
