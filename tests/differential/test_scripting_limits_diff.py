"""Scripts at Lua's limits, error lines, read-only metatables, error replies
and their statistics, script flags at admission: against redis-server 7.0.15.

* redis.call with about 8,000 arguments (``unpack`` of a big table): Redis's
  Lua takes them; one more result than ``unpack`` may give is its ``too many
  results to unpack``.
* The line an error names when the script tail-calls a library function
  (``return redis.call(...)``, ``return unpack(...)``).
* ``setmetatable`` / ``getmetatable`` on the read-only tables.
* ``redis.error_reply``'s code and message, and which errors count once in
  INFO errorstats and commandstats.
* A script with a shebang (or a function) refused past maxmemory, or with
  too few replicas, before it runs unless its flags allow it.
* Big numbers and DEBUG PROTOCOL's samples seen from scripts.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.differential


@pytest.fixture
def d(differ):
    for client in (differ.ours, differ.theirs):
        assert client.call("SCRIPT", "FLUSH") == b"+OK\r\n"
        assert client.call("FUNCTION", "FLUSH") == b"+OK\r\n"
    yield differ
    for client in (differ.ours, differ.theirs):
        client.call("FUNCTION", "FLUSH")
        client.call("CONFIG", "SET", "maxmemory", "0")
        client.call("CONFIG", "SET", "min-replicas-to-write", "0")
        client.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")


def E(script: str, *rest: str | int) -> list[str | int]:
    return ["EVAL", script, *(rest or (0,))]


FILL = "local a = {} for i=1,%d do a[i]=%s end\n"

BIG_CALLS = [
    E(FILL % (7999, "1") + "return redis.call('lpush', 'l', unpack(a))"),
    E(FILL % (7999, "'x'") + "return redis.call('lpush', 'l', 1, 2, 3, 4, 5, 6, 7, 8, unpack(a))"),
    ["LLEN", "l"],
    E(FILL % (7999, "1") + "return redis.pcall('rpush', 'l', unpack(a))"),
    E(FILL % (8000, "1") + "return redis.call('lpush', 'l', unpack(a))"),
    E(FILL % (7998, "1") + "return redis.call('lpush', 'l', unpack(a, 1, 7998))"),
    E(FILL % (7999, "1") + "return redis.call('lpush', 'l', nil, unpack(a))"),
    E(FILL % (7999, "1") + "return redis.call('lpush', 'l', {}, unpack(a))"),
    E(FILL % (7999, "1") + "return redis.pcall('lpush', 'l', {}, unpack(a))"),
    E(FILL % (7999, "'x'") + "return redis.sha1hex(unpack(a))"),
    E(FILL % (7999, "'x'") + "redis.log(redis.LOG_DEBUG, unpack(a)) return 1"),
    E(FILL % (7999, "'get'") + "return redis.call(unpack(a))"),
    E(FILL % (7999, "1") + "return select('#', unpack(a))"),
]

LINES = [
    ["SET", "s", "abc"],
    E("\n\nreturn redis.call('incr', 's')"), E("\nreturn redis.call()"),
    E("\nreturn redis.call('nosuch')"), E("\n\nreturn redis.call('get', {})"),
    E("\nreturn unpack({1, 2, 3}, -2, 2147483647)"), E("\nreturn unpack()"),
    E("local function f()\n  return redis.call('incr', 's')\nend\nreturn f()"),
    E("local function f()\n  return redis.call('incr', 's')\nend\nlocal x = f()\nreturn x"),
    E("local function f(n)\n if n == 0 then return redis.call('incr', 's') end\n"
      " return f(n - 1)\nend\nreturn f(10)"),
    E("local function f(n) if n == 0 then return 'done' end return f(n - 1) end return f(5000)"),
    E("return rawset(_G, 'x', 1)"), E("\nreturn setmetatable(_G, {})"),
    E("return redis.sha1hex()"), E("\nreturn redis.setresp(9)"),
    E("return pcall(redis.call, 'incr', 's')"),
    E("local f = loadstring(\"return redis.call('incr', 's')\") return f()"),
    E("local f = loadstring(\"local x = redis.call('incr', 's') return x\") return f()"),
    E("local n = 0 return load(function() n = n + 1 if n == 1 then return 'return 5' end end)()"),
]

METATABLES = [
    E("setmetatable(_G, {})"), E("setmetatable(_G, nil)"), E("setmetatable(redis, {})"),
    E("local g = getmetatable(_G)\ng.__index = {}"),
    E("local m = getmetatable(_G) return {type(m.__index), type(m.__newindex), type(m.__metatable)}"),
    E("return type(getmetatable(redis))"), E("return type(getmetatable(string))"),
    E("return type(getmetatable(cjson))"),
    E("return setmetatable(getmetatable(_G), {})"), E("setmetatable(getmetatable(''), {})"),
    E("local m = getmetatable('') return {type(m.__index), m.__index == string}"),
    E("return getmetatable(setmetatable({}, {__metatable = 5}))"),
    E("local t = setmetatable({}, {__metatable = false}) setmetatable(t, {})"),
    E("return setmetatable(1, {})"), E("return getmetatable(KEYS)"),
    E("return type(setmetatable({}, {}))"),
    # rawget, next and pairs see the read-only tables' contents
    E("return tostring(rawget(_G, 'redis')):sub(1, 6)"), E("return next(_G) ~= nil"),
    E("return rawget(redis, 'call') ~= nil"), E("return rawget(string, 'rep') ~= nil"),
    E("return rawget(_G, 'nope')"), E("return rawget(KEYS, 1)"), E("return rawget()"),
    E("return rawget({})"), E("return rawget(1, 2)"), E("return rawget(_G, 'KEYS')[1]", 1, "k"),
    E("local n = 0 for k in pairs(string) do n = n + 1 end return n"),
]

ERROR_REPLIES = [
    E("return redis.error_reply('MY_ERR_CODE custom msg')"), E("return redis.error_reply('X')"),
    E("return redis.error_reply('-X')"), E("return redis.error_reply('-X y')"),
    E("return redis.error_reply('')"), E("return redis.error_reply('-')"),
    E("return redis.error_reply(' x')"), E("return redis.error_reply('A  B')"),
    E("return redis.error_reply('A B\\r\\n')"), E("return redis.error_reply('A \\r\\nB')"),
    E("error(redis.error_reply('X\\r\\n+INJECTED'))"),
    E("return redis.error_reply('x', 'y')"), E("return redis.error_reply()"),
    E("return redis.status_reply('a', 'b')"), E("return redis.status_reply('a\\r\\nb')"),
    E("local t = redis.pcall('select', 99) return tostring(t.ignore_error_stats_update)"),
    E("return tostring(redis.error_reply('E x').ignore_error_stats_update)"),
    # pcall gives an error table's err (a string or number) in its place
    E("local ok, e = pcall(function() error(redis.error_reply('x')) end) return type(e)"),
    E("local ok, e = pcall(error, {err='x'}) return e"),
    E("local ok, e = pcall(error, {err=5}) return {type(e), e}"),
    E("local ok, e = pcall(error, {err={}}) return type(e)"),
    E("local ok, e = pcall(error, {a=1}) return type(e)"),
    E("local ok, e = pcall(function() redis.call('select', 99) end) return e"),
    E("local ok, e = pcall(function() redis.call('select', 99) end) error(e)"),
    E("local ok, e = xpcall(function() error({err='x'}) end, function(e) return type(e) end) "
      "return e"),
]


# PUBLISH and PFCOUNT may replicate: read-only scripts refuse them as writes
# (redis/redis#10364, since 7.0).
READ_ONLY = [
    E("#!lua flags=no-writes\nreturn redis.call('publish', 'c', 'm')"),
    E("#!lua flags=no-writes\nreturn redis.pcall('publish', 'c', 'm')"),
    E("#!lua flags=no-writes\nreturn redis.call('spublish', 'c', 'm')"),
    E("#!lua flags=no-writes\nreturn redis.call('pfcount', 'hll')"),
    ["EVAL_RO", "return redis.call('publish', 'c', 'm')", 0],
    ["EVAL_RO", "return redis.call('pfcount', 'hll')", 0],
    E("return redis.call('publish', 'c', 'm')"), E("return redis.call('pfcount', 'hll')"),
    E("#!lua\nreturn redis.call('publish', 'c', 'm')"),
]

# Library functions Redis has in C and Tidelog in Lua: their argument errors.
ARGUMENTS = [
    E("return rawset(1, 2, 3)"), E("return rawset({})"), E("return rawset({}, 1)"),
    E("return rawset({}, nil, 1)"), E("return setmetatable({}, 1)"), E("return setmetatable()"),
    E("return setmetatable({})"), E("return xpcall()"), E("return next(1)"), E("return next()"),
    E("return next({}, 'nokey')"), E("return pairs(1)"), E("return ipairs(nil)"),
    E("return load(1)"), E("return load('return 1')"), E("return load(function() return nil end)"),
    E("return coroutine.create(1)"), E("return coroutine.create(tostring)"),
    E("return coroutine.create(redis.call)"), E("return coroutine.create(pcall)"),
    E("return coroutine.resume(1)"), E("return coroutine.wrap(1)"), E("return getmetatable()"),
    E("return type(coroutine.create(function() end))"),
    E("local n = 0 for k, v in pairs({a=1, b=2}) do n = n + v end return n"),
    E("local n = 0 for k, v in pairs(redis) do n = n + 1 end return n > 5"),
    E("local n = 0 for i, v in ipairs(KEYS) do n = n + 1 end return n", 2, "a", "b"),
    # the name is the caller's ('?' through pcall), pcall(error, msg, 2) names the script
    E("local rs = rawset\nreturn rs(1)"), E("local c = coroutine\nreturn c.wrap(1)"),
    E("local u = unpack\nreturn u({}, 1, 'y')"),
    E("local ok, e = pcall(rawset, 1) return e"), E("local ok, e = pcall(unpack) return e"),
    E("local ok, e = pcall(unpack, {}, 'x') return e"),
    E("local ok, e = pcall(setmetatable, 1) return e"), E("local ok, e = pcall(next) return e"),
    E("local ok, e = pcall(error, 'x', 2) return e"), E("local ok, e = pcall(error, 'x') return e"),
]


# redis.log, redis.setresp and redis.set_repl read their numbers as
# lua_tonumber does (numeric strings too, truncated to an int)
NUMBERS = [
    E("return redis.log('3', 'x')"), E("return redis.log(' 0x3 ', 'x')"),
    E("return redis.log('x', 'y')"), E("return redis.log(redis.LOG_WARNING, 1, true, {}, 'z')"),
    E("return redis.setresp('3')"), E("return redis.setresp(2.5)"), E("return redis.setresp(3.9)"),
    E("return redis.setresp('x')"), E("return redis.setresp(true)"),
    E("redis.setresp('3') return redis.call('hgetall', 'nohash')"),
    E("return redis.set_repl('x')"), E("return redis.set_repl(4)"), E("return redis.set_repl(-1)"),
    E("return redis.set_repl(3.7)"), E("return redis.set_repl('2')"),
]


def test_newer_texts_of_set_repl_and_log(d):
    """Redis 8's texts (src/script_lua.c of redis/redis after 7.4: luaRedisSetReplCommand
    'requires one argument.', luaLogCommand 'Invalid log level.'); 7.0 said 'requires two
    arguments.' and 'Invalid debug level.'."""
    suffix = b" script: %s, on @user_script:1.\r\n"
    for script, text in (("return redis.set_repl()", b"redis.set_repl() requires one argument."),
                         ("return redis.set_repl(1, 2)", b"redis.set_repl() requires one argument."),
                         ("return redis.log(9, 'x')", b"Invalid log level."),
                         ("return redis.log(-1, 'x')", b"Invalid log level.")):
        sha = d.ours.call("SCRIPT", "LOAD", script).split(b"\r\n")[1]
        d.check_newer("EVAL", script, 0, ours=b"-ERR " + text + suffix % sha)


@pytest.mark.parametrize("corpus", [BIG_CALLS, LINES, METATABLES, ERROR_REPLIES, READ_ONLY,
                                    ARGUMENTS, NUMBERS],
                         ids=["big-calls", "lines", "metatables", "error-replies", "read-only",
                              "arguments", "numbers"])
def test_corpus(d, corpus):
    d.check_all(corpus)


def _stats(client) -> list[bytes]:
    """The error counts and the calls of the commands the scripts run."""
    lines = []
    for section in ("errorstats", "stats", "commandstats"):
        for line in client.call("INFO", section).split(b"\r\n"):
            if line.startswith((b"errorstat_", b"total_error_replies")) or re.match(
                    rb"cmdstat_(eval|select|incr|set|get|nosuch):", line):
                lines.append(re.sub(rb"usec=\d+,usec_per_call=[\d.]+,", b"", line))
    return sorted(lines)


@pytest.mark.parametrize("scripts", [
    ["return redis.error_reply('MY_ERR_CODE custom msg')"], ["return redis.error_reply('')"],
    ["return redis.call('select', 99)"], ["return redis.pcall('select', 99)"],
    ["local t = redis.pcall('select', 99) return 1"], ["error('x')"], ["return {err='FOO bar'}"],
    ["redis.call('nosuch')"], ["return redis.pcall('nosuch')"],
    ["local t = redis.pcall('select', 99) error(t)"], ["redis.call('incr')"], ["redis.call()"],
    ["return redis.call('set', 'x', 1, 'ex', -1)"],
    ["local ok, e = pcall(redis.call, 'select', 99) return e"],
    ["local ok, e = pcall(function() redis.call('select', 99) end) error(e, 0)"],
    ["local ok, e = pcall(error, {err='FOO x'}) error(e)"],
    ["return redis.error_reply('A x')", "return redis.error_reply('A y')", "return 1"],
])
def test_errors_count_once(d, scripts):
    """INFO errorstats, total_error_replies and the commands' calls, rejected
    and failed calls after each script: a command's error counts where it
    arose, the script passing it on does not count it again, an error the
    script makes counts when replied (Redis 7's ignore_error_stats_update)."""
    for client in (d.ours, d.theirs):
        assert client.call("CONFIG", "RESETSTAT") == b"+OK\r\n"
    for script in scripts:
        d.check("EVAL", script, 0)
    assert _stats(d.ours) == _stats(d.theirs)


def test_errorstats_are_listed_in_byte_order(d):
    for client in (d.ours, d.theirs):
        assert client.call("CONFIG", "RESETSTAT") == b"+OK\r\n"
    for code in ("ZZZ", "AAA", "aaa", "BBB", "B_B"):
        d.check(*E(f"return redis.error_reply('{code} x')"))
    d.check("INFO", "errorstats")


def test_shebang_flags_decide_oom_and_replicas(d):
    """A shebang's flags stand for EVAL's own (Redis's scriptFlagsToCmdFlags)."""
    d.check("SET", "x", "123")
    d.check("FUNCTION", "LOAD", "#!lua name=lib\n"
            "redis.register_function('plain', function() return 1 end)\n"
            "redis.register_function{function_name='ro', callback=function() return 2 end, "
            "flags={'no-writes'}}\n"
            "redis.register_function{function_name='oom', callback=function() "
            "return redis.call('set', 'x', 1) end, flags={'allow-oom'}}")
    d.check("SCRIPT", "LOAD", "#!lua\nreturn 1")
    sha = d.check("SCRIPT", "LOAD", "#!lua\nreturn 1").split(b"\r\n")[1].decode()
    runs = [
        E("return redis.call('set', 'x', 1)", 1, "x"), E("return redis.call('get', 'x')", 1, "x"),
        E("#!lua flags=\nreturn 1"), E("#!lua\nreturn 1"), E("#!lua flags=no-writes\nreturn 1"),
        E("#!lua flags=allow-oom\nreturn redis.call('set', 'x', 1)", 1, "x"),
        E("#!lua flags=allow-stale\nreturn 1"),
        ["EVALSHA", sha, 0], ["EVAL_RO", "#!lua\nreturn 1", 0],
        ["EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', 'x')", 1, "x"],
        ["FCALL", "plain", 0], ["FCALL", "ro", 0], ["FCALL_RO", "ro", 0], ["FCALL", "oom", 1, "x"],
    ]
    for name, value in (("maxmemory", "1"), ("min-replicas-to-write", "1")):
        for client in (d.ours, d.theirs):
            assert client.call("CONFIG", "SET", name, value) == b"+OK\r\n"
        d.check_all(runs)
        for client in (d.ours, d.theirs):
            assert client.call("CONFIG", "SET", name, "0") == b"+OK\r\n"
        d.check_all(runs)


def test_sort_of_a_set_is_sorted_in_scripts(d):
    d.check("SADD", "myset", *"a b c d e f g h i l m n o p q r s t u v z aa aaa azz".split())
    d.check(*E("return redis.call('sort', KEYS[1], 'by', '_')", 1, "myset"))
    d.check(*E("return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')", 1,
               "myset"))
    d.check(*E("return redis.call('sort', KEYS[1], 'by', '_', 'desc')", 1, "myset"))
    d.check("RPUSH", "mylist", "c", "a", "b")
    d.check(*E("return redis.call('sort', KEYS[1], 'by', '_')", 1, "mylist"))


@pytest.mark.parametrize("resp", [2, 3])
def test_big_numbers_and_debug_protocol_in_scripts(d, resp):
    if resp == 3:
        d.resp3()
    for client in (d.ours, d.theirs):
        assert client.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1") == b"+OK\r\n"
    for kind in ("bignum", "attrib", "map", "set", "double", "null", "verbatim", "true",
                 "false", "string", "integer", "array"):
        for lua_resp in (2, 3):
            d.check(*E(f"redis.setresp({lua_resp}) return redis.call('debug', 'protocol', '{kind}')"))
            d.check(*E(f"redis.setresp({lua_resp}) local r = redis.call('debug', 'protocol', "
                       f"'{kind}') return type(r) == 'table' and r.big_number or type(r)"))
    d.check(*E("return {big_number='123\\r\\n123'}"))
    d.check(*E("return {big_number='99999999999999999999'}"))
    d.check("DEBUG", "PROTOCOL", "bignum")
    for client in (d.ours, d.theirs):
        assert client.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0") == b"+OK\r\n"
    d.check(*E("return redis.call('debug', 'protocol', 'bignum')"))
