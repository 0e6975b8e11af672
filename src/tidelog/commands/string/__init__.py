"""The string commands, Redis's t_string.c: values, conditions and digests, INCREX, ranges."""
