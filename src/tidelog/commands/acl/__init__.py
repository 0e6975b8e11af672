"""The ACL commands (ACL SETUSER, GETUSER, LOG, DRYRUN ...); the user model is :mod:`tidelog.acl`."""
