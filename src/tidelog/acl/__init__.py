"""ACL users: who may connect, and which commands, keys and channels each may use.

The model is Redis's (6.0's users, 7.0's selectors and read/write key
patterns, 7.2's ordered command rules), with Redis 8's texts:

* :mod:`.selectors` -- the rules and :class:`~.selectors.Selector`, one set
  of permissions: which commands it allows, the key patterns (each for
  reading, writing or both: ``%R~``, ``%W~``, ``~``) or ``allkeys``, and the
  channel patterns or ``allchannels``;
* :mod:`.users` -- :class:`~.users.User`: flags, password hashes, the root
  selector and the ones written as ``(...)``; the check of a command;
* :mod:`.registry` -- :class:`~.registry.Acl`: the users by name, the
  ``ACL LOG`` and its counters, and the ACL file.

Nothing here knows clients or sockets: the engine asks
:meth:`~.users.User.check` before it runs a command; the ACL commands tell it
which users changed or went (``Engine.users_changed``), so it can re-check
or close their clients.  The model reads the command table (categories,
subcommands) and the key finder, so it sits beside the command layer.
"""
