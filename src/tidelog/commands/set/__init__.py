"""The set commands, Redis's t_set.c."""
