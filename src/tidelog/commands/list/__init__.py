"""The list commands, Redis's t_list.c."""
