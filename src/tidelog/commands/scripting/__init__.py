"""EVAL, SCRIPT, FUNCTION and FCALL, Redis's eval.c and functions.c."""
