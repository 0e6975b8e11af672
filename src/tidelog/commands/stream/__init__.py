"""The stream commands, Redis's t_stream.c: entries, consumer groups, their pending
entries, XINFO, and IDMP."""
