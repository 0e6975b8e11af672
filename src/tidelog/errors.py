"""Every error text Tidelog sends on the wire, and the exception that carries it.
Also the texts of configuration errors (:class:`tidelog.config.ConfigError`),
which CONFIG SET sends and a bad config file or command line prints.

Handlers raise :class:`CommandError`; the engine turns it into an error reply
and the connection stays open.  The texts are Redis's, byte for byte (the
differential tests compare them against redis-server).  Texts that name a
key or an argument are built by the small functions below, from bytes, so
any byte a client sent comes back unchanged.
"""

from __future__ import annotations


class CommandError(Exception):
    """A command failed; ``message`` is the whole error line without ``-``."""

    def __init__(self, message: bytes | str) -> None:
        if isinstance(message, str):
            message = message.encode()
        super().__init__(message)
        self.message = message


# -- generic -----------------------------------------------------------------
SYNTAX = b"ERR syntax error"
WRONGTYPE = b"WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INTEGER = b"ERR value is not an integer or out of range"
NO_SUCH_KEY = b"ERR no such key"
INVALID_DB_INDEX = b"ERR DB index is out of range"
NESTED_MULTI = b"ERR MULTI calls can not be nested"
EXEC_WITHOUT_MULTI = b"ERR EXEC without MULTI"
DISCARD_WITHOUT_MULTI = b"ERR DISCARD without MULTI"
WATCH_INSIDE_MULTI = b"ERR WATCH inside MULTI is not allowed"
EXECABORT = b"EXECABORT Transaction discarded because of previous errors."
INTERNAL = b"ERR internal error"
TIMEOUT_NOT_INTEGER = b"ERR timeout is not an integer or out of range"
TIMEOUT_NEGATIVE = b"ERR timeout is negative"
TIMEOUT_NOT_FLOAT = b"ERR timeout is not a float or out of range"
TIMEOUT_OUT_OF_RANGE = b"ERR timeout is out of range"
INVALID_EXPIRE = b"ERR invalid expire time in '%s' command"
PROTOCOL_PREFIX = b"ERR Protocol error: "        # + the parser's message; then close
# The request parser's messages (str: ProtocolError's text, after PROTOCOL_PREFIX).
PROTOCOL_MBULK_TOO_BIG = "too big mbulk count string"
PROTOCOL_MBULK_INVALID = "invalid multibulk length"
PROTOCOL_BULK_TOO_BIG = "too big bulk count string"
PROTOCOL_BULK_INVALID = "invalid bulk length"
PROTOCOL_INLINE_TOO_BIG = "too big inline request"
PROTOCOL_UNBALANCED_QUOTES = "unbalanced quotes in request"
PROTOCOL_QUERY_BUFFER_LIMIT = "query buffer limit exceeded"
PROTOCOL_UNAUTH_MBULK = "unauthenticated multibulk length"
PROTOCOL_UNAUTH_BULK = "unauthenticated bulk length"
MAX_CLIENTS_REACHED = b"ERR max number of clients reached"  # sent raw, then close
NOPROTO = b"NOPROTO unsupported protocol version"
UNKNOWN_COMMAND_PREFIX = b"ERR unknown command '"  # unknown_command's text starts so
NOAUTH_HELLO = (b"ERR AUTH <password> called without any password configured for the default user. "
                b"Are you sure your configuration is correct?")


def protocol_expected_dollar(got: str) -> str:
    """The parser's message for a multibulk argument not starting with ``$``
    (``got``: the byte received, as one Latin-1 character)."""
    return f"expected '$', got '{got}'"


def unknown_command(name: bytes, args: list[bytes]) -> CommandError:
    """``ERR unknown command 'x', with args beginning with: 'a' 'b' ``."""
    shown = b""
    for arg in args:  # Redis stops once 128 bytes of arguments are shown
        if len(shown) >= 128:
            break
        shown += b"'%s' " % arg[: 128 - len(shown)]
    return CommandError(
        UNKNOWN_COMMAND_PREFIX + b"%s', with args beginning with: %s" % (_clip(name), shown)
    )


def unknown_subcommand(sub: bytes, command: bytes) -> CommandError:
    return CommandError(
        b"ERR unknown subcommand '%s'. Try %s HELP." % (_clip(sub), command.upper())
    )


def wrong_arity(name: bytes) -> CommandError:
    return CommandError(b"ERR wrong number of arguments for '%s' command" % name.lower())


def _clip(arg: bytes, limit: int = 128) -> bytes:
    """Redis shows at most 128 bytes of an argument in an error."""
    return arg[:limit]


# -- connection, server and keyspace commands ------------------------------------
# (added with commands/connection.py, keys.py, server.py, strings.py)
WRONGPASS = b"WRONGPASS invalid username-password pair or user is disabled."
NOAUTH = b"NOAUTH Authentication required."
OOM = b"OOM command not allowed when used memory > 'maxmemory'."

# -- ACL ---------------------------------------------------------------------
# Why an ACL SETUSER rule cannot be applied (after "Error in ACL SETUSER
# modifier '<rule>': "; the ACL file's messages use them too).
ACL_RULE_UNKNOWN = b"Unknown command or category name in ACL"
ACL_RULE_SYNTAX = b"Syntax error"
ACL_RULE_KEYS_AFTER_ALL = (b"Adding a pattern after the * pattern (or the 'allkeys' flag) is not "
                           b"valid and does not have any effect. Try 'resetkeys' to start with "
                           b"an empty list of patterns")
ACL_RULE_CHANNELS_AFTER_ALL = (b"Adding a pattern after the * pattern (or the 'allchannels' flag) "
                               b"is not valid and does not have any effect. Try 'resetchannels' "
                               b"to start with an empty list of channels")
ACL_RULE_NO_SUCH_PASSWORD = b"The password you are trying to remove from the user does not exist"
ACL_RULE_BAD_HASH = (b"The password hash must be exactly 64 characters and contain only "
                     b"lowercase hexadecimal characters")
ACL_RULE_DUPLICATE_USER = (b"Duplicate user found. A user can only be defined once in config "
                           b"files")
ACL_RULE_SUBCOMMAND_FIRSTARG = b"Allowing first-arg of a subcommand is not supported"
ACL_USERNAME_SPACES = b"ERR Usernames can't contain spaces or null characters"
ACL_DELETE_DEFAULT = b"ERR The 'default' user cannot be removed"
ACL_NO_FILE = (b"ERR This Redis instance is not configured to use an ACL file. You may want to "
               b"specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
               b"(assuming you have a Redis configuration file set) in order to store users in "
               b"the Redis configuration.")
ACL_SAVE_FAILED = (b"ERR There was an error trying to save the ACLs. Please check the server "
                   b"logs for more information")
ACL_GENPASS_BITS = (b"ERR ACL GENPASS argument must be the number of bits for the output "
                    b"password, a positive number up to 4096")
ACL_FILE_AND_USERS = ("Configuring Redis with users defined in redis.conf and at the same setting "
                      "an ACL file path is invalid. This setup is very likely to lead to "
                      "configuration errors and security holes, please define either an ACL "
                      "file or declare users directly in your redis.conf, but not both.")
# EXEC finding a queued command no longer allowed (%s: why).
ACL_EXEC_CHANGED = (b"NOPERM ACLs rules changed between the moment the transaction was "
                    b"accumulated and the EXEC call. This command is no longer allowed for the "
                    b"following reason: %s")
ACL_EXEC_REASONS = {1: b"no permission to execute the command or subcommand",
                    2: b"no permission to touch the specified keys",
                    4: b"no permission to access one of the channels used as arguments"}
ACL_SCRIPT_PREFIX = b"ERR ACL failure in script: "
SORT_BY_DENIED = b"ERR BY option of SORT denied due to insufficient ACL permissions."
SORT_GET_DENIED = b"ERR GET option of SORT denied due to insufficient ACL permissions."


def acl_setuser_error(rule: bytes, reason: bytes) -> CommandError:
    return CommandError(b"ERR Error in ACL SETUSER modifier '%s': %s" % (rule, reason))


def acl_unmatched_parenthesis(arg: bytes) -> CommandError:
    return CommandError(b"ERR Unmatched parenthesis in acl selector starting at '%s'." % arg)


def acl_unknown_category(name: bytes) -> CommandError:
    return CommandError(b"ERR Unknown category '%s'" % name[:128])


def acl_no_such_user(name: bytes) -> CommandError:
    """ACL DRYRUN's unknown user."""
    return CommandError(b"ERR User '%s' not found" % name)


def acl_no_such_command(name: bytes) -> CommandError:
    """ACL DRYRUN's unknown command."""
    return CommandError(b"ERR Command '%s' not found" % name)


def exec_aborted(reason: bytes) -> bytes:
    """EXEC refused before it ran (Redis: the refusal becomes an EXECABORT)."""
    return b"EXECABORT Transaction discarded because of: " + reason

HELLO_NOAUTH = (b"NOAUTH HELLO must be called with the client already authenticated, otherwise the "
                b"HELLO AUTH <user> <pass> option can be used to authenticate the client "
                b"and select the RESP protocol version at the same time")
HELLO_BAD_PROTOVER = b"ERR Protocol version is not an integer or out of range"
BAD_CLIENT_NAME = b"ERR Client names cannot contain spaces, newlines or special characters."
INVALID_CLIENT_ID = b"ERR Invalid client ID"
CLIENT_ID_POSITIVE = b"ERR client-id should be greater than 0"
NO_SUCH_CLIENT = b"ERR No such client"
UNBLOCK_REASON = b"ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
UNBLOCKED = b"UNBLOCKED client unblocked via CLIENT UNBLOCK"
NOT_IN_MULTI = b"ERR Command not allowed inside a transaction"
INVALID_CURSOR = b"ERR invalid cursor"
EXPIRE_NX_XX_GT_LT = b"ERR NX and XX, GT or LT options at the same time are not compatible"
EXPIRE_GT_LT = b"ERR GT and LT options at the same time are not compatible"
INCR_OVERFLOW = b"ERR increment or decrement would overflow"
DECR_OVERFLOW = b"ERR decrement would overflow"
LFU_NOT_SELECTED = (b"ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
                    b"Please note that when switching between policies at runtime LRU and LFU "
                    b"data will take some time to adjust.")
LFU_SELECTED = (b"ERR An LFU maxmemory policy is selected, idle time not tracked. "
                b"Please note that when switching between policies at runtime LRU and LFU "
                b"data will take some time to adjust.")
NO_CONFIG_FILE = b"ERR The server is running without a config file"
CONFIG_IMMUTABLE = b"can't set immutable config"      # the why of config_set_failed
CONFIG_DUPLICATE = b"duplicate parameter"
CONFIG_AOF_FAILED = b"Unable to turn on AOF. Check server logs."
CONFIG_LISTEN_FAILED = b"Unable to listen on this port. Check server logs."  # port, tls-port
CONFIG_BIND_FAILED = b"Failed to bind to specified addresses."
CONFIG_TLS_FAILED = b"Unable to update TLS configuration. Check server logs."
CONFIG_NO_SUCH_DIR = "No such file or directory"       # a ConfigError's text
NO_SHUTDOWN_IN_PROGRESS = b"ERR No shutdown in progress."
SHUTDOWN_FAILED = b"ERR Errors trying to SHUTDOWN. Check logs."
GETKEYS_INVALID_COMMAND = b"ERR Invalid command specified"
GETKEYS_NO_KEYS = b"ERR The command has no key arguments"
GETKEYS_BAD_ARITY = b"ERR Invalid number of arguments specified for command"
GETKEYS_INVALID_ARGUMENTS = b"ERR Invalid arguments specified for command"

# -- strings (commands/string/) ---------------------------------
NOT_A_FLOAT = b"ERR value is not a valid float"
INCRBYFLOAT_NAN_OR_INF = b"ERR increment would produce NaN or Infinity"
STRING_TOO_LONG = b"ERR string exceeds maximum allowed size (proto-max-bulk-len)"
OFFSET_OUT_OF_RANGE = b"ERR offset is out of range"
LCS_NOT_STRINGS = b"ERR The specified keys must contain string values"
LCS_LEN_AND_IDX = b"ERR If you want both the length and indexes, please just use IDX."
LCS_TOO_BIG = b"ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"


def unsupported_option(option: bytes) -> CommandError:
    """EXPIRE's ``ERR Unsupported option x``."""
    return CommandError(b"ERR Unsupported option %s" % option)


def invalid_expire(command: bytes) -> CommandError:
    return CommandError(INVALID_EXPIRE % command.lower())


def unknown_client_type(name: bytes) -> CommandError:
    return CommandError(b"ERR Unknown client type '%s'" % name)


def hello_syntax(option: bytes) -> CommandError:
    return CommandError(b"ERR Syntax error in HELLO option '%s'" % option)


def unknown_config(name: bytes) -> CommandError:
    return CommandError(b"ERR Unknown option or number of arguments for CONFIG SET - '%s'" % name)


def config_set_failed(name: bytes, why: bytes) -> CommandError:
    return CommandError(
        b"ERR CONFIG SET failed (possibly related to argument '%s') - %s" % (name, why))


def config_rewrite_failed(why: str) -> CommandError:
    return CommandError(b"ERR Rewriting config file: " + why.encode())


def unknown_setinfo_option(option: bytes) -> CommandError:
    return CommandError(b"ERR Unrecognized option '%s'" % option)


def bad_setinfo_value(option: bytes) -> CommandError:
    return CommandError(b"ERR %s cannot contain spaces, newlines or special characters." % option)


def debug_unknown_subcommand(sub: bytes) -> CommandError:
    return CommandError(
        b"ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP." % _clip(sub))


def no_such_user(name: bytes) -> CommandError:
    return CommandError(b"ERR No such user '%s'" % name)


# -- configuration values (tidelog/config.py) --------------------------------------
# A ConfigError's text (str).  CONFIG SET sends it after config_set_failed's
# "... - "; a config file or command line error prints it after the line.
CONFIG_NOT_MEMORY = "argument must be a memory value"
CONFIG_NOT_INTEGER = "argument couldn't be parsed into an integer"
CONFIG_NOT_OCTAL = "argument couldn't be parsed as an octal number"
CONFIG_NOT_YES_NO = "argument must be 'yes' or 'no'"
CONFIG_DBFILENAME_PATH = "dbfilename can't be a path, just a filename"
CONFIG_BAD_SAVE = "Invalid save parameters"
CONFIG_UNBALANCED_QUOTES = "Unbalanced quotes in configuration line"
CONFIG_BAD_DIRECTIVE = "Bad directive or wrong number of arguments"
CONFIG_WRONG_ARGUMENTS = "wrong number of arguments"
CONFIG_NOTIFY_CLASS = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
CONFIG_BUFFER_LIMIT_ARGS = "Wrong number of arguments in buffer limit configuration."
CONFIG_BUFFER_LIMIT_CLASS = "Invalid client class specified in buffer limit configuration."
CONFIG_BUFFER_LIMIT_VALUE = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
CONFIG_NOT_MEMORY_OR_PERCENT = "argument must be a memory or percent value"
CONFIG_OOM_VALUES = "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
CONFIG_SHUTDOWN_SAVE_NOSAVE = "shutdown options SAVE and NOSAVE can't be used simultaneously"
CONFIG_PROC_TITLE = "template format is invalid or contains unknown variables"
CONFIG_HOSTNAME_CHARS = "Hostnames may only contain alphanumeric characters, hyphens or dots"
CONFIG_HOSTNAME_LENGTH = "Hostnames must be less than 256 characters"
CONFIG_NODENAME_CHARS = "Announced human node name contained invalid character"
CONFIG_SENTINEL_DIRECTIVE = "sentinel directive while not in sentinel mode"
CONFIG_NO_MODULES = "loadmodule: Tidelog does not load Redis modules"   # Tidelog's own text


def config_out_of_range(low: int, high: int) -> str:
    return f"argument must be between {low} and {high} inclusive"


def config_not_one_of(choices: tuple[str, ...]) -> str:
    return "argument(s) must be one of the following: " + ", ".join(choices)


def config_percent_too_big(high: int) -> str:
    return f"percentage argument must be less or equal to {high}"


def config_file_error(version: str, number: int, line: str, why: str) -> str:
    """Redis's report of a bad config file line (``line`` as read, stripped)."""
    return (f"\n*** FATAL CONFIG FILE ERROR (Redis {version}) ***\n"
            f"Reading the configuration file, at line {number}\n>>> '{line}'\n{why}")


def config_fatal(version: str, why: str) -> str:
    """Redis's report of a config error found after the lines were read."""
    return f"\n*** FATAL CONFIG FILE ERROR (Redis {version}) ***\n{why}"


def command_line_unexpected(arg: str) -> str:
    """tidelog-server's own text: a word before the first ``--name``."""
    return (f"tidelog-server: unexpected argument '{arg}' "
            "(options are --name value; see tidelog-server --help)")


def command_line_bad_option(given: str, why: str) -> str:
    """tidelog-server's own text: ``--name value`` refused (``why``: the ConfigError)."""
    return f"tidelog-server: bad option '{given}': {why} (see tidelog-server --help)"


# -- streams (Redis 7.0's texts unless noted) -----------------------------------
INVALID_STREAM_ID = b"ERR Invalid stream ID specified as stream command argument"
XADD_ID_ZERO = b"ERR The ID specified in XADD must be greater than 0-0"
XADD_ID_TOO_SMALL = b"ERR The ID specified in XADD is equal or smaller than the target stream top item"
XADD_ID_EXHAUSTED = b"ERR The stream has exhausted the last possible ID, unable to add more items"
MAXLEN_AND_MINID = b"ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
MAXLEN_NEGATIVE = b"ERR The MAXLEN argument must be >= 0."
LIMIT_NEGATIVE = b"ERR The LIMIT argument must be >= 0."
LIMIT_WITHOUT_STRATEGY = b"ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
LIMIT_WITHOUT_APPROX = b"ERR syntax error, LIMIT cannot be used without the special ~ option"
XTRIM_WITHOUT_STRATEGY = b"ERR syntax error, XTRIM must be called with a trimming strategy"
INVALID_START_INTERVAL = b"ERR invalid start ID for the interval"
INVALID_END_INTERVAL = b"ERR invalid end ID for the interval"
XSETID_ENTRIES_ADDED_NEGATIVE = b"ERR entries_added must be positive"
XSETID_BELOW_MAX_DELETED_ARG = (b"ERR The ID specified in XSETID is smaller than the provided "
                                b"max_deleted_entry_id")
XSETID_BELOW_CURRENT_MAX_DELETED = (b"ERR The ID specified in XSETID is smaller than current "
                                    b"max_deleted_entry_id")
XSETID_BELOW_TOP = b"ERR The ID specified in XSETID is smaller than the target stream top item"
XSETID_ENTRIES_ADDED_TOO_SMALL = (b"ERR The entries_added specified in XSETID is smaller than the "
                                  b"target stream length")
# Redis 8.0's text (it names the '+' ID, which 7.4 added; redis/redis#13474); 7.0 said
# "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
XREAD_UNBALANCED = (b"ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', "
                    b"or '$' must be specified.")
XREAD_GROUP_OPTION = b"ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
XREAD_NOACK_OPTION = b"ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
XREAD_GT_ID = (b"ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
               b"<group> <consumer> option.")

# -- idempotent production (commands/stream/idmp.py; Redis 8.6/8.8) --------------------------
# XADD's and XCFGSET's texts are Redis's (its test suite and clients' tests run
# against 8.6).  Redis documents XIDMPRECORD's failure cases but not their texts:
# those below are ours, worded like XADD's.
IDMP_ONLY_WITH_AUTO_ID = b"ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"
IDMP_TWICE = b"ERR IDMP/IDMPAUTO specified multiple times"
IDMP_EMPTY_PID = b"ERR IDMP requires a non-empty producer ID"
IDMP_EMPTY_IID = b"ERR IDMP requires a non-empty idempotent ID"
IDMPAUTO_EMPTY_PID = b"ERR IDMPAUTO requires a non-empty producer ID"
XCFGSET_NO_PARAMETER = b"ERR At least one parameter must be specified"
XCFGSET_DURATION_RANGE = b"ERR IDMP-DURATION must be between 1 and 86400 seconds"
XCFGSET_MAXSIZE_RANGE = b"ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
XIDMPRECORD_EMPTY_PID = b"ERR XIDMPRECORD requires a non-empty producer ID"
XIDMPRECORD_EMPTY_IID = b"ERR XIDMPRECORD requires a non-empty idempotent ID"
XIDMPRECORD_NO_ENTRY = b"ERR The stream ID specified in XIDMPRECORD does not exist in the stream"
XIDMPRECORD_CONFLICT = (b"ERR The producer ID and idempotent ID pair already maps to a "
                        b"different stream ID")

# -- consumer groups (commands/stream/; Redis 7.0's texts unless noted) ------------
XGROUP_KEY_MISSING = (b"ERR The XGROUP subcommand requires the key to exist. Note that for "
                      b"CREATE you may want to use the MKSTREAM option to create an empty "
                      b"stream automatically.")
ENTRIESREAD_INVALID = b"ERR value for ENTRIESREAD must be positive or -1"
BUSYGROUP = b"BUSYGROUP Consumer Group name already exists"
XREADGROUP_MISSING_GROUP = b"ERR Missing GROUP option for XREADGROUP"
XREADGROUP_DOLLAR_ID = (b"ERR The $ ID is meaningless in the context of XREADGROUP: you want to "
                        b"read the history of this consumer by specifying a proper ID, or use "
                        b"the > ID to get new messages. The $ ID would just return an empty "
                        b"result set.")
# Redis 7.2+'s text (redis/redis#11799: the command's own name, and '>', not '$',
# which XREADGROUP refuses); 7.0 said XREAD's "Unbalanced XREAD list of streams:
# for each stream key an ID or '$' must be specified."
XREADGROUP_UNBALANCED = (b"ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID "
                         b"or '>' must be specified.")
XCLAIM_MIN_IDLE = b"ERR Invalid min-idle-time argument for XCLAIM"
XCLAIM_IDLE = b"ERR Invalid IDLE option argument for XCLAIM"
XCLAIM_TIME = b"ERR Invalid TIME option argument for XCLAIM"
XCLAIM_RETRYCOUNT = b"ERR Invalid RETRYCOUNT option argument for XCLAIM"
XAUTOCLAIM_MIN_IDLE = b"ERR Invalid min-idle-time argument for XAUTOCLAIM"
XAUTOCLAIM_COUNT = b"ERR COUNT must be > 0"

# -- Redis 8.2-8.10 stream options (XDELEX, XACKDEL, XNACK, CLAIM, MAXCOUNT) ----------
# Texts as Redis's own test suite (tests/unit/type/stream-cgroups.tcl) asserts them.
IDS_NOT_POSITIVE = b"ERR Number of IDs must be a positive integer"
IDS_MISMATCH = b"ERR The `numids` parameter must match the number of arguments"
XNACK_BAD_MODE = b"ERR mode must be SILENT, FAIL, or FATAL"
XNACK_NO_IDS = b"ERR syntax error, expected IDS keyword"
XNACK_IDS_NOT_POSITIVE = b"ERR numids must be a positive integer"
XNACK_IDS_MISMATCH = b"ERR number of IDs doesn't match numids"
XNACK_RETRYCOUNT_NEGATIVE = b"ERR Invalid RETRYCOUNT value, must be >= 0"
MAXCOUNT_NOT_POSITIVE = b"ERR MAXCOUNT must be a positive integer"
MAXCOUNT_BELOW_COUNT = b"ERR MAXCOUNT must be greater than or equal to COUNT"
MAXSIZE_NOT_POSITIVE = b"ERR MAXSIZE must be a positive integer"
CLAIM_NOT_INTEGER = b"ERR min-idle-time is not an integer"
CLAIM_NEGATIVE = b"ERR min-idle-time must be a positive integer"
# Redis's test matches "ERR The CLAIM option is only supported*"; the rest
# follows its GROUP and NOACK texts.
XREAD_CLAIM_OPTION = b"ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead."


def xnack_unrecognized(option: bytes) -> CommandError:
    return CommandError(b"ERR Unrecognized XNACK option '%s'" % _clip(option))


def subcommand_syntax(sub: bytes, command: bytes) -> CommandError:
    """``ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.``

    ``sub`` is shown as the client typed it."""
    return CommandError(
        b"ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP."
        % (_clip(sub), command.upper()))


def nogroup_for_key(group: bytes, key: bytes) -> CommandError:
    """XGROUP SETID/CREATECONSUMER/DELCONSUMER and XINFO CONSUMERS."""
    return CommandError(b"NOGROUP No such consumer group '%s' for key name '%s'" % (group, key))


def nogroup_key_or_group(key: bytes, group: bytes) -> CommandError:
    """XPENDING, XCLAIM and XAUTOCLAIM."""
    return CommandError(b"NOGROUP No such key '%s' or consumer group '%s'" % (key, group))


def nogroup_xreadgroup(key: bytes, group: bytes) -> CommandError:
    """XREADGROUP; also what a blocked XREADGROUP gets when its key or group goes
    (Redis 7.2+ re-runs the command; 7.0 has other texts, see commands/stream/)."""
    return CommandError(b"NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP "
                        b"with GROUP option" % (key, group))


def xclaim_unrecognized(option: bytes) -> CommandError:
    return CommandError(b"ERR Unrecognized XCLAIM option '%s'" % option)


# -- hashes (commands/hash/; Redis 7.0's texts) -------------------------------
HASH_VALUE_NOT_INTEGER = b"ERR hash value is not an integer"
HASH_VALUE_NOT_FLOAT = b"ERR hash value is not a float"
VALUE_NAN_OR_INFINITY = b"ERR value is NaN or Infinity"
VALUE_OUT_OF_RANGE = b"ERR value is out of range"
# Redis 8.0's HGETDEL (and the other FIELDS-taking hash commands)
FIELDS_MISSING = b"ERR Mandatory argument FIELDS is missing or not at the right position"
NUMFIELDS_NOT_POSITIVE = b"ERR Number of fields must be a positive integer"
NUMFIELDS_MISMATCH = b"ERR The `numfields` parameter must match the number of arguments"
# Hash field expiry (Redis 7.4 HEXPIRE family, 8.0 HGETEX/HSETEX)
NUMFIELDS_NOT_GREATER = b"ERR Parameter `numFields` should be greater than 0"
EXPIRE_NEGATIVE = b"ERR invalid expire time, must be >= 0"
HSETEX_FNX_FXX = b"ERR Only one of FXX or FNX arguments can be specified"
HSETEX_TTL_ONE = b"ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
HSETEX_MISSING_EXPIRE = b"ERR missing expire time"
HSETEX_NUMFIELDS = b"ERR invalid number of fields"
HSETEX_UNKNOWN_ARGUMENT = b"ERR unknown argument: %s"


def value_out_of_range_between(lo: int, hi: int) -> CommandError:
    """A ranged number argument (HRANDFIELD's count) outside its range."""
    return CommandError(b"ERR value is out of range, value must between %d and %d" % (lo, hi))


# -- persistence (SAVE, BGSAVE, BGREWRITEAOF, DEBUG RELOAD / LOADAOF) ------------
BGSAVE_IN_PROGRESS = b"ERR Background save already in progress"
BGSAVE_CHILD_ACTIVE = (b"ERR Another child process is active (AOF?): can't BGSAVE right now. "
                       b"Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
SAVE_FAILED = b"ERR"  # Redis's bare reply when SAVE or a fork fails
REWRITE_IN_PROGRESS = b"ERR Background append only file rewriting already in progress"
REPLICAOF_BAD_PORT = b"ERR Invalid master port"
DEBUG_PROTOCOL_PUSH_RESP2 = b"ERR RESP2 is not supported by this command"
DEBUG_PROTOCOL_TYPE = (b"ERR Wrong protocol type name. Please use one of the following: "
                       b"string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|"
                       b"true|false")
DEBUG_PACKED_THRESHOLD = b"ERR argument must be a memory value bigger than 1 and smaller than 4gb"
DEBUG_RELOAD_OPTIONS = b"ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
DEBUG_RELOAD_SAVE_FAILED = b"ERR Error trying to save the DB"
DEBUG_RELOAD_LOAD_FAILED = b"ERR Error trying to load the RDB dump"
# An engine built without the server around it (embedded in a program or a
# test) has no durability layer until one is attached: saving is refused.
NO_PERSISTENCE = b"ERR no persistence is attached to this server"
NO_REPLICATION = b"ERR no replication is attached to this server"


def rewrite_failed(reason: str) -> CommandError:
    """BGREWRITEAOF could not fork or open its files."""
    return CommandError(f"ERR Can't rewrite append only file in background: {reason}")


def aof_load_failed(reason: str) -> CommandError:
    """DEBUG LOADAOF: the AOF did not load; the reason on one line."""
    return CommandError("ERR " + reason.replace("\r", " ").replace("\n", " "))

# -- sets (commands/set/; Redis 7.0's texts) ----------------------------------
POSITIVE_OUT_OF_RANGE = b"ERR value is out of range, must be positive"
NUMKEYS_NOT_POSITIVE = b"ERR numkeys should be greater than 0"
NUMKEYS_TOO_MANY = b"ERR Number of keys can't be greater than number of args"
MSETEX_INVALID_NUMKEYS = b"ERR invalid numkeys value"
MSETEX_WRONG_PAIRS = b"ERR wrong number of key-value pairs"
LIMIT_CANT_BE_NEGATIVE = b"ERR LIMIT can't be negative"

# -- lists ---------------------------------------------------------------------------
LIST_INDEX_OUT_OF_RANGE = b"ERR index out of range"
MPOP_COUNT_POSITIVE = b"ERR count should be greater than 0"
LPOS_RANK_ZERO = (b"ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                  b"second ... or use negative to start from the end of the list")
# Redis 7.2 (LPOS RANK) and 8.0 (LREM count) refuse LLONG_MIN, whose negation overflows.
LONG_OUT_OF_RANGE = (b"ERR value is out of range, value must between -9223372036854775807 and "
                     b"9223372036854775807")
LPOS_COUNT_NEGATIVE = b"ERR COUNT can't be negative"
LPOS_MAXLEN_NEGATIVE = b"ERR MAXLEN can't be negative"
# -- generic key commands: DUMP/RESTORE, COPY, MOVE, SWAPDB, SORT ----------------------------
DUMP_PAYLOAD_WRONG = b"ERR DUMP payload version or checksum are wrong"
BAD_DATA_FORMAT = b"ERR Bad data format"
BUSYKEY = b"BUSYKEY Target key name already exists."
INVALID_TTL = b"ERR Invalid TTL value, must be >= 0"
INVALID_IDLETIME = b"ERR Invalid IDLETIME value, must be >= 0"
INVALID_FREQ = b"ERR Invalid FREQ value, must be >= 0 and <= 255"
SAME_OBJECT = b"ERR source and destination objects are the same"
INVALID_FIRST_DB = b"ERR invalid first DB index"
INVALID_SECOND_DB = b"ERR invalid second DB index"
SORT_NOT_DOUBLE = b"ERR One or more scores can't be converted into double"

# -- sorted sets (commands/zset/; Redis's texts) ---------------------------------
ZADD_XX_NX = b"ERR XX and NX options at the same time are not compatible"
ZADD_GT_LT_NX = b"ERR GT, LT, and/or NX options at the same time are not compatible"
ZADD_INCR_PAIRS = b"ERR INCR option supports a single increment-element pair"
SCORE_NAN = b"ERR resulting score is not a number (NaN)"
RANGE_NOT_FLOAT = b"ERR min or max is not a float"
LEX_RANGE_INVALID = b"ERR min or max not valid string range item"
WEIGHT_NOT_FLOAT = b"ERR weight value is not a float"
LIMIT_RANK = (b"ERR syntax error, LIMIT is only supported in combination with either BYSCORE "
              b"or BYLEX")
WITHSCORES_BYLEX = b"ERR syntax error, WITHSCORES not supported in combination with BYLEX"


def at_least_one_key(name: bytes) -> CommandError:
    """ZUNION/ZINTER/ZDIFF (and their STORE forms) with numkeys 0."""
    return CommandError(b"ERR at least 1 input key is needed for '%s' command" % name)

# -- Pub/Sub ----------------------------------------------------------------------------
SSUBSCRIBE_DENY_BLOCKING = b"ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"


def pubsub_context(name: str) -> CommandError:
    """A RESP2 client with subscriptions sent a command other than these
    (``name`` is the table's, ``container|sub`` for a subcommand)."""
    return CommandError(
        b"ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
        b"are allowed in this context" % name.encode("latin-1"))


# -- the network layer (server/) -----------------------------------------------------------
PROTECTED_MODE = (
    b"DENIED Redis is running in protected mode because protected mode is enabled and no "
    b"password is set for the default user. In this mode connections are only accepted from the "
    b"loopback interface. If you want to connect from external computers to Redis you may adopt "
    b"one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    b"SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    b"host the server is running, however MAKE SURE Redis is not publicly accessible from "
    b"internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    b"you can just disable the protected mode by editing the Redis configuration file, and "
    b"setting the protected mode option to 'no', and then restarting the server. 3) If you "
    b"started the server manually just for testing, restart it with the '--protected-mode no' "
    b"option. 4) Setup a an authentication password for the default user. NOTE: You only need "
    b"to do one of the above things in order for the server to start accepting connections "
    b"from the outside.")


# -- replication (replication/; Redis's texts) -------------------------------------------
REPLICAOF_FROM_REPLICA = b"ERR Command is not valid when client is a replica."
NO_GOOD_REPLICAS = b"NOREPLICAS Not enough good replicas to write."
NO_MASTER_LINK = b"NOMASTERLINK Can't SYNC while not connected with my master"
MASTER_DOWN = (b"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set "
               b"to 'no'.")
READONLY_REPLICA = b"READONLY You can't write against a read only replica."
WAITAOF_ON_REPLICA = (b"ERR WAITAOF cannot be used with replica instances. Please also note "
                      b"that writes to replicas are just local and are not propagated.")
WAITAOF_NO_AOF = b"ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."
WAIT_ON_REPLICA = (b"ERR WAIT cannot be used with replica instances. Please also note that "
                   b"since Redis 4.0 if a replica is configured to be writable (which is not "
                   b"the default) writes to replicas are just local and are not propagated.")


def replconf_unknown(option: bytes) -> CommandError:
    """REPLCONF with an option it does not know."""
    return CommandError(b"ERR Unrecognized REPLCONF option: %s" % option)


# -- MONITOR, SLOWLOG, LATENCY, CLIENT PAUSE/REPLY (the operator's commands) ---------------
REPLICA_KEYSPACE = b"ERR Replica can't interact with the keyspace"
MONITOR_DENY_BLOCKING = b"ERR MONITOR isn't allowed for DENY BLOCKING client"
SLOWLOG_COUNT = b"ERR count should be greater than or equal to -1"
PAUSE_MODE = b"ERR CLIENT PAUSE mode must be WRITE or ALL"


def no_latency_samples(event: bytes) -> CommandError:
    return CommandError(b"ERR No samples available for event '%s'" % event)


# Scripting (EVAL, SCRIPT, FUNCTION) and the Lua sandbox.
NUMKEYS_NEGATIVE = b"ERR Number of keys can't be negative"
NOSCRIPT = b"NOSCRIPT No matching script. Please use EVAL."
NOTBUSY = b"NOTBUSY No scripts in execution right now."
BUSY = b"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
BUSY_FUNCTION = (b"BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 b"SHUTDOWN NOSAVE.")
UNKILLABLE = (b"UNKILLABLE Sorry the script already executed write commands against the dataset. "
              b"You can either wait the script termination or kill the server in a hard way "
              b"using the SHUTDOWN NOSAVE command.")
SCRIPT_KILLED = b"ERR Script killed by user with SCRIPT KILL..."
SCRIPT_FLUSH_MODE = b"ERR SCRIPT FLUSH only support SYNC|ASYNC option"
SCRIPT_COMPILE = b"ERR Error compiling script (new function): "   # + Lua's message
SCRIPT_UNKNOWN_COMMAND = b"ERR Unknown Redis command called from script"
SCRIPT_WRONG_ARITY = b"ERR Wrong number of args calling Redis command from script"
SCRIPT_NOT_ALLOWED = b"ERR This Redis command is not allowed from script"
SCRIPT_READ_ONLY = b"ERR Write commands are not allowed from read-only scripts."
SCRIPT_NO_ARGS = b"ERR Please specify at least one argument for this redis lib call"
SCRIPT_BAD_ARG = b"ERR Lua redis lib command arguments must be strings or integers"
SCRIPT_BAD_LIB_ARGS = b"ERR wrong number or type of arguments"
SCRIPT_RESP_VERSION = b"ERR RESP version must be 2 or 3."
SCRIPT_BLOCK_OPTION = b"ERR %s command is not allowed with BLOCK option from scripts"
SCRIPT_SHEBANG_FLAG = b"ERR Unexpected flag in script shebang: %s"
SCRIPT_SHEBANG_OPTION = b"ERR Unknown lua shebang option: %s"
SCRIPT_SHEBANG_ENGINE = b"ERR Unexpected engine in script shebang: %s"
SCRIPT_UNKNOWN_ERROR = b"ERR unknown error"
SCRIPT_RO_WRITE_FLAG = b"ERR Can not execute a script with write flag using *_ro command."
FUNCTION_NO_METADATA = b"ERR Missing library metadata"
FUNCTION_INVALID_METADATA = b"ERR Invalid library metadata"
FUNCTION_NO_ENGINE = b"ERR Engine '%s' not found"
FUNCTION_NAME_TWICE = b"ERR Invalid metadata value, name argument was given multiple times"
FUNCTION_BAD_METADATA = b"ERR Invalid metadata value given: %s"
FUNCTION_NO_NAME = b"ERR Library name was not given"
FUNCTION_BAD_NAME = (b"ERR Library names can only contain letters, numbers, or underscores(_) "
                     b"and must be at least one character long")
FUNCTION_LIBRARY_EXISTS = b"ERR Library '%s' already exists"
FUNCTION_COMPILE = b"ERR Error compiling function: "
FUNCTION_REGISTER = b"ERR Error registering functions: "
FUNCTION_EXISTS = b"ERR Function %s already exists"
FUNCTION_NONE_REGISTERED = b"ERR No functions registered"
FUNCTION_NO_LIBRARY = b"ERR Library not found"
FUNCTION_NOT_FOUND = b"ERR Function not found"
FUNCTION_FLUSH_MODE = b"ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
FUNCTION_LOAD_OPTION = b"ERR Unknown option given: %s"
FUNCTION_LIST_ARG = b"ERR Unknown argument %s"
FUNCTION_LIST_NO_NAME = b"ERR library name argument was not given"
FUNCTION_RESTORE_POLICY = (b"ERR Wrong restore policy given, value should be either FLUSH, APPEND "
                           b"or REPLACE.")
FUNCTION_DUPLICATE = b"ERR Function already exists in the library"
FUNCTION_BAD_NUMKEYS = b"ERR Bad number of keys provided"
FUNCTION_RESTORE_BAD_DATA = b"ERR given payload is not a function payload"
FUNCTION_RESTORE_EXISTS = b"ERR Library %s already exists"
FUNCTION_LOAD_TIMEOUT = b"ERR FUNCTION LOAD timeout"
LUA_STACK_LIMIT = b"ERR reached lua stack limit"
SCRIPT_DEBUG_MODE = b"ERR Use SCRIPT DEBUG YES/SYNC/NO"
SCRIPT_DEBUG_UNSUPPORTED = b"ERR The Lua debugger (SCRIPT DEBUG YES/SYNC) is not supported"


# -- MODULE, CLUSTER (disabled), LOLWUT, DEBUG ERROR, FAILOVER -----------------------
# MODULE LOAD/LOADEX keep Redis's prefix so clients that look for it still
# recognise a failed load; the rest says why it always fails here.
MODULE_LOAD_REFUSED = b"ERR Error loading the extension. Tidelog does not load Redis modules"
MODULE_UNLOAD_NONE = b"ERR Error unloading module: no such module with that name"
CLUSTER_DISABLED = b"ERR This instance has cluster support disabled"
FAILOVER_NO_REPLICAS = b"ERR FAILOVER requires connected replicas."
FAILOVER_NOT_A_REPLICA = b"ERR FAILOVER target HOST and PORT is not a replica."
FAILOVER_IN_PROGRESS = b"ERR FAILOVER already in progress."
FAILOVER_NONE = b"ERR No failover in progress."
FAILOVER_ON_REPLICA = b"ERR FAILOVER is not valid when server is a replica."
FAILOVER_TARGET_OFFLINE = b"ERR FAILOVER target replica is not online."
FAILOVER_FORCE_ARGS = b"ERR FAILOVER with force option requires both a timeout and target HOST and IP."
FAILOVER_TIMEOUT = b"ERR FAILOVER timeout must be greater than 0"
PSYNC_FAILOVER_REPLID = b"ERR PSYNC FAILOVER replid must match my replid."
PSYNC_FAILOVER_TO_PRIMARY = b"ERR PSYNC FAILOVER can't be sent to a master."
NO_SYNC_FAILING_OVER = b"NOMASTERLINK Can't SYNC while failing over"
REPLICAOF_FAILING_OVER = b"ERR REPLICAOF not allowed while failing over."


def debug_error(text: bytes) -> CommandError:
    """DEBUG ERROR's reply: the text itself as the error line, CR and LF
    made spaces (as Redis does for any error text)."""
    return CommandError(text.replace(b"\r", b" ").replace(b"\n", b" "))
# -- bitmaps (commands/bitmap/) -----------------------------------------------------
BIT_OFFSET_INVALID = b"ERR bit offset is not an integer or out of range"
BIT_VALUE_INVALID = b"ERR bit is not an integer or out of range"
BITPOS_BIT_INVALID = b"ERR The bit argument must be 1 or 0."
BITOP_NOT_ONE_KEY = b"ERR BITOP NOT must be called with a single source key."
BITOP_TWO_KEYS = b"ERR BITOP %s must be called with at least two source keys."  # % the operation
BITFIELD_BAD_TYPE = (b"ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is "
                     b"not supported but i64 is.")
BITFIELD_BAD_OVERFLOW = b"ERR Invalid OVERFLOW type specified"
BITFIELD_RO_GET_ONLY = b"ERR BITFIELD_RO only supports the GET subcommand"
# -- geo ----------------------------------------------------------------------------------
GEO_BAD_LONLAT = b"ERR invalid longitude,latitude pair %f,%f"
GEO_NO_MEMBER = b"ERR could not decode requested zset member"
GEO_BAD_UNIT = b"ERR unsupported unit provided. please use M, KM, FT, MI"
GEO_RADIUS_NOT_FLOAT = b"ERR need numeric radius"
GEO_RADIUS_NEGATIVE = b"ERR radius cannot be negative"
GEO_WIDTH_NOT_FLOAT = b"ERR need numeric width"
GEO_HEIGHT_NOT_FLOAT = b"ERR need numeric height"
GEO_BOX_NEGATIVE = b"ERR height or width cannot be negative"
GEO_COUNT_POSITIVE = b"ERR COUNT must be > 0"
GEO_ANY_NEEDS_COUNT = b"ERR the ANY argument requires COUNT argument"
GEO_STORE_WITH = b"ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
GEO_NEED_FROM = b"ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s"
GEO_NEED_BY = b"ERR exactly one of BYRADIUS and BYBOX can be specified for %s"
# -- HyperLogLog ---------------------------------------------------------------------
HLL_NOT_VALID = b"WRONGTYPE Key is not a valid HyperLogLog string value."
HLL_CORRUPT = b"INVALIDOBJ Corrupted HLL object detected"
PFDEBUG_NO_KEY = b"ERR The specified key does not exist"
PFDEBUG_NOT_SPARSE = b"ERR HLL encoding is not sparse"
PFSELFTEST_REGISTER = b"TESTFAILED Register %d should be %d but is %d"
PFSELFTEST_NOT_SPARSE = b"TESTFAILED sparse encoding not used"
PFSELFTEST_DISAGREE = b"TESTFAILED dense/sparse disagree"
PFSELFTEST_ERROR = b"TESTFAILED Too big error. card:%d abserr:%d"


def pfdebug_unknown_subcommand(sub: bytes) -> CommandError:
    """Redis formats the subcommand whole, line breaks turned to spaces."""
    sub = sub.replace(b"\r", b" ").replace(b"\n", b" ")
    return CommandError(b"ERR Unknown PFDEBUG subcommand '%s'" % sub)
# Client-side caching (CLIENT TRACKING, CLIENT CACHING).
TRACKING_ONE_REDIRECT = b"ERR A client can only redirect to a single other client"
TRACKING_NO_REDIRECT_CLIENT = b"ERR The client ID you want redirect to does not exist"
TRACKING_PREFIX_NEEDS_BCAST = b"ERR PREFIX option requires BCAST mode to be enabled"
TRACKING_BCAST_SWITCH = (b"ERR You can't switch BCAST mode on/off before disabling tracking for "
                         b"this client, and then re-enabling it with a different mode.")
TRACKING_OPTIN_BCAST = b"ERR OPTIN and OPTOUT are not compatible with BCAST"
TRACKING_OPTIN_AND_OPTOUT = b"ERR You can't specify both OPTIN mode and OPTOUT mode"
TRACKING_OPT_SWITCH = (b"ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for "
                       b"this client, and then re-enabling it with a different mode.")
TRACKING_PREFIX_EXISTING = (b"ERR Prefix '%s' overlaps with an existing prefix '%s'. "
                            b"Prefixes for a single client must not overlap.")
TRACKING_PREFIX_PROVIDED = (b"ERR Prefix '%s' overlaps with another provided prefix '%s'. "
                            b"Prefixes for a single client must not overlap.")
CACHING_NOT_TRACKING = (b"ERR CLIENT CACHING can be called only when the client is in tracking "
                        b"mode with OPTIN or OPTOUT mode enabled")
CACHING_YES_NOT_OPTIN = b"ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
CACHING_NO_NOT_OPTOUT = b"ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
# Arrays (Redis 8.8, t_array.c).
ARRAY_INVALID_INDEX = b"ERR invalid array index"
ARRAY_INDEX_OVERFLOW = b"ERR array index overflow"
ARRAY_INSERT_OVERFLOW = b"ERR insert index overflow"
ARRAY_RANGE_TOO_BIG = b"ERR range exceeds maximum of 1000000 items"
ARRAY_COUNT_TOO_BIG = b"ERR count exceeds maximum of 1000000 items"
ARRAY_LIMIT_NOT_POSITIVE = b"ERR LIMIT must be positive"
ARRAY_TOO_MANY_PREDICATES = b"ERR too many predicates, maximum is 250"
ARRAY_RE_TOO_LONG = b"ERR regular expression is too long, maximum is 2048 bytes"
ARRAY_RE_EMPTY = b"ERR regular expression is empty"
ARRAY_RE_INVALID = b"ERR invalid regular expression: %s"
ARRAY_RE_BACKREFS = b"ERR regular expression backreferences are not supported"
ARRAY_UNKNOWN_OP = b"ERR unknown operation"
ARRAY_MATCH_NEEDS_VALUE = b"ERR MATCH requires a value argument"
ARRAY_INVALID_SIZE = b"ERR invalid size"
ARRAY_SIZE_NOT_POSITIVE = b"ERR size must be positive"
ARRAY_INVALID_COUNT = b"ERR invalid COUNT"
ARRAY_NO_SUCH_KEY = b"ERR no such key"
CONFIG_ARRAY_SLICE_SIZE = "array-slice-size must be a power of two"

# -- MIGRATE ----------------------------------------------------------------------
MIGRATE_KEYS_NOT_EMPTY = (b"ERR When using MIGRATE KEYS option, the key argument must be set "
                          b"to the empty string")
MIGRATE_IOERR_CONNECT = b"IOERR error or timeout connecting to the client"
MIGRATE_IOERR_WRITE = b"IOERR error or timeout writing to target instance"
MIGRATE_IOERR_READ = b"IOERR error or timeout reading to target instance"
MIGRATE_TARGET_ERROR = b"ERR Target instance replied with error: "

# -- INCREX (Redis 8.8, commands/string/string_increx.py) ---------------------------------
INCREX_INCREMENT_NOT_INTEGER = b"ERR Increment is not an integer or out of range"
INCREX_INCREMENT_NOT_FLOAT = b"ERR Increment is not a valid float"
INCREX_INCREMENT_INFINITY = b"ERR BYFLOAT increment cannot be Infinity"
INCREX_VALUE_INFINITY = b"ERR value cannot be Infinity"
INCREX_BOUND_NOT_INTEGER = b"ERR %s is not an integer or out of range"  # LBOUND / UBOUND
INCREX_BOUND_NOT_FLOAT = b"ERR %s is not a valid float"
INCREX_BOUNDS_CROSSED = b"ERR LBOUND can't be greater than UBOUND"
INCREX_ENX_WITHOUT_EXPIRE = b"ERR ENX flag requires an expiration"
INCREX_APPLIED_OVERFLOW = b"ERR applied increment would overflow"
INCREX_APPLIED_INFINITY = b"ERR applied increment would be Infinity"

# -- HIMPORT (Redis 8.10) ------------------------------------------------------------
HIMPORT_DUPLICATE_FIELD = b"ERR duplicate field name in fieldset"
HIMPORT_NO_SUCH_FIELDSET = b"ERR no such fieldset"
HIMPORT_VALUE_COUNT = b"ERR value count does not match fieldset field count"

# -- HOTKEYS (Redis 8.6) ------------------------------------------------------------
HOTKEYS_IN_PROGRESS = b"ERR hotkey tracking session already in progress"
HOTKEYS_RESET_ACTIVE = b"ERR hotkey tracking session in progress, stop tracking first"
HOTKEYS_METRICS_REQUIRED = b"ERR METRICS parameter is required"
HOTKEYS_METRICS_COUNT = b"ERR METRICS count must be > 0 and <= %d"
HOTKEYS_METRICS_TWICE = b"ERR METRICS %s defined more than once!"
HOTKEYS_METRICS_MISMATCH = b"ERR METRICS count does not match number of metric types provided"
HOTKEYS_METRICS_NONE_VALID = b"ERR METRICS no valid metrics passed. Supported: CPU|NET"
HOTKEYS_COUNT_RANGE = b"ERR COUNT must be between 1 and 64"
HOTKEYS_DURATION_RANGE = b"ERR DURATION must be between 1 and 1000000"
HOTKEYS_SAMPLE_RANGE = b"ERR SAMPLE ratio must be positive"
HOTKEYS_SLOTS_NOT_CLUSTER = b"ERR SLOTS parameter cannot be used in non-cluster mode"
HOTKEYS_SLOTS_TWICE = b"ERR SLOTS parameter already specified"
HOTKEYS_SLOTS_COUNT = b"ERR SLOTS count must be between 1 and 16384"
HOTKEYS_SLOTS_MISSING = b"ERR not enough slot numbers provided"
HOTKEYS_SLOT_INVALID = b"ERR Invalid or out of range slot"
HOTKEYS_SLOT_DUPLICATE = b"ERR duplicate slot number"

class CountedError(CommandError):
    """An error reply already counted in the error statistics where it arose
    (a script passing on the error of a command it ran, as Redis marks it
    ``ignore_error_stats_update``): the call still counts as failed."""


# -- scripts: redis.set_repl and redis.log (Redis 8's texts; 7.0 said "requires
# two arguments" and "Invalid debug level.") ----------------------------------
SCRIPT_SET_REPL_ARGS = b"ERR redis.set_repl() requires one argument."
SCRIPT_SET_REPL_FLAGS = b"ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."
SCRIPT_LOG_LEVEL = b"ERR Invalid log level."

# -- cluster mode: the slot check's redirections and refusals (7.0.15's
# clusterRedirectClient, scriptVerifyClusterState) -----------------------------
CROSSSLOT = b"CROSSSLOT Keys in request don't hash to the same slot"
TRYAGAIN = b"TRYAGAIN Multiple keys request during rehashing of slot"
CLUSTERDOWN = b"CLUSTERDOWN The cluster is down"
CLUSTERDOWN_READ_ONLY = b"CLUSTERDOWN The cluster is down and only accepts read commands"
CLUSTERDOWN_UNBOUND = b"CLUSTERDOWN Hash slot not served"
SELECT_CLUSTER = b"ERR SELECT is not allowed in cluster mode"
SWAPDB_CLUSTER = b"ERR SWAPDB is not allowed in cluster mode"
MOVE_CLUSTER = b"ERR MOVE is not allowed in cluster mode"
COPY_DB_CLUSTER = b"ERR Copying to another database is not allowed in cluster mode"
SCRIPT_CLUSTER_DOWN = b"ERR Script attempted to execute a command while the cluster is down"
SCRIPT_CLUSTER_DOWN_READ_ONLY = (
    b"ERR Script attempted to execute a write command while the cluster is down and readonly")
SCRIPT_NON_LOCAL_KEY = b"ERR Script attempted to access a non local key in a cluster node"
SCRIPT_CROSS_SLOT = b"ERR Script attempted to access keys that do not hash to the same slot"


def moved(slot: int, endpoint: bytes, port: int) -> bytes:
    """``-MOVED <slot> <endpoint>:<port>``: the slot is served elsewhere."""
    return b"MOVED %d %s:%d" % (slot, endpoint, port)


def ask(slot: int, endpoint: bytes, port: int) -> bytes:
    """``-ASK <slot> <endpoint>:<port>``: the key is being migrated there."""
    return b"ASK %d %s:%d" % (slot, endpoint, port)


# -- cluster mode: REPLICAOF / SLAVEOF (the bus picks the master) ----------------------------
REPLICAOF_CLUSTER = b"ERR REPLICAOF not allowed in cluster mode."


# -- CLUSTER's subcommands in cluster mode (7.0.15's clusterCommand) ----------------------
CLUSTER_SLOT_INVALID = b"ERR Invalid or out of range slot"
CLUSTER_COUNTKEYS_SLOT_INVALID = b"ERR Invalid slot"
CLUSTER_GETKEYS_INVALID = b"ERR Invalid slot or number of keys"
CLUSTER_FLUSHSLOTS_NOT_EMPTY = b"ERR DB must be empty to perform CLUSTER FLUSHSLOTS."
CLUSTER_SETSLOT_MASTERS_ONLY = b"ERR Please use SETSLOT only with masters."
CLUSTER_SETSLOT_SYNTAX = (
    b"ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
CLUSTER_TARGET_NOT_MASTER = b"ERR Target node is not a master"
CLUSTER_FORGET_MYSELF = b"ERR I tried hard but I can't forget myself..."
CLUSTER_FORGET_MY_MASTER = b"ERR Can't forget my master!"
CLUSTER_REPLICATE_MYSELF = b"ERR Can't replicate myself"
CLUSTER_REPLICATE_REPLICA = b"ERR I can only replicate a master, not a replica."
CLUSTER_REPLICATE_NOT_EMPTY = (
    b"ERR To set a master the node must be empty and without assigned slots.")
CLUSTER_REPLICAS_NOT_MASTER = b"ERR The specified node is not a master"
CLUSTER_FAILOVER_ON_MASTER = b"ERR You should send CLUSTER FAILOVER to a replica"
CLUSTER_FAILOVER_NO_MASTER = b"ERR I'm a replica but my master is unknown to me"
CLUSTER_FAILOVER_MASTER_DOWN = (
    b"ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
CLUSTER_EPOCH_OTHER_NODES = (
    b"ERR The user can assign a config epoch only when the node does not know any other node.")
CLUSTER_EPOCH_NON_ZERO = b"ERR Node config epoch is already non-zero"
CLUSTER_RESET_MASTER_WITH_KEYS = (
    b"ERR CLUSTER RESET can't be called with master nodes containing keys")


def cluster_slot_busy(slot: int) -> CommandError:
    return CommandError(b"ERR Slot %d is already busy" % slot)


def cluster_slot_unassigned(slot: int) -> CommandError:
    return CommandError(b"ERR Slot %d is already unassigned" % slot)


def cluster_slot_repeated(slot: int) -> CommandError:
    return CommandError(b"ERR Slot %d specified multiple times" % slot)


def cluster_range_reversed(start: int, end: int) -> CommandError:
    return CommandError(b"ERR start slot number %d is greater than end slot number %d"
                        % (start, end))


def cluster_bad_port(kind: bytes, arg: bytes) -> CommandError:
    """``ERR Invalid TCP base port specified: x`` (``kind``: ``base`` or ``bus``)."""
    return CommandError(b"ERR Invalid TCP %s port specified: %s" % (kind, arg))


def cluster_bad_address(ip: bytes, port: bytes) -> CommandError:
    """CLUSTER MEET's address as the client typed it."""
    return CommandError(b"ERR Invalid node address specified: %s:%s" % (ip, port))


def cluster_not_slot_owner(slot: int) -> CommandError:
    return CommandError(b"ERR I'm not the owner of hash slot %d" % slot)


def cluster_already_slot_owner(slot: int) -> CommandError:
    return CommandError(b"ERR I'm already the owner of hash slot %d" % slot)


def cluster_dont_know_node(name: bytes) -> CommandError:
    """SETSLOT MIGRATING / IMPORTING naming a node not in the table."""
    return CommandError(b"ERR I don't know about node %s" % name)


def cluster_unknown_node(name: bytes) -> CommandError:
    return CommandError(b"ERR Unknown node %s" % name)


def cluster_slot_has_keys(slot: int) -> CommandError:
    return CommandError(b"ERR Can't assign hashslot %d to a different node while I still hold "
                        b"keys for this hash slot." % slot)


def cluster_bad_config_epoch(epoch: int) -> CommandError:
    return CommandError(b"ERR Invalid config epoch specified: %d" % epoch)


def cluster_save_failed(why: str) -> CommandError:
    return CommandError(b"ERR error saving the cluster node config: %s" % why.encode())


# CLUSTER SLOT-STATS (Valkey 8.0 / Redis 8.2).
CLUSTER_SLOT_STATS_METRIC = b"ERR Unrecognized sort metric for ORDERBY."
CLUSTER_SLOT_STATS_LIMIT = b"ERR Limit has to lie in between 1 and 16384 (maximum number of slots)."
CLUSTER_SLOT_STATS_REPEATED = b"ERR Multiple filters of the same type are disallowed."


def cluster_slot_stats_reversed(start: int, end: int) -> CommandError:
    """SLOT-STATS SLOTSRANGE's (a capital S, unlike ADDSLOTSRANGE's)."""
    return CommandError(b"ERR Start slot number %d is greater than end slot number %d"
                        % (start, end))


# TIDELOG.STAGE (Tidelog only: a stream arriving in chunks, rdb/stream_chunks.py).
STAGE_NO_SUCH = b"ERR no such staged key"
STAGE_TOKEN_OPEN = b"ERR staged key token already open"
STAGE_BAD_IDLE = b"ERR invalid idle time, must be > 0"
# (Redis replicas take -NOMASTERLINK as "try the PSYNC later")
STAGE_NO_SYNC = b"NOMASTERLINK Can't SYNC while a stream is being staged (TIDELOG.STAGE)"
STAGE_UNAVAILABLE = (b"ERR staging is not available: a connected replica did not announce "
                     b"the tidelog-stage capability")


def stage_bad_chunk(why: str) -> CommandError:
    """A chunk the stager refused (the staged copy is dropped)."""
    return CommandError(b"ERR bad chunk: " + why.encode("utf-8", "replace"))
