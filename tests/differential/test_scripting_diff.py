"""EVAL, EVALSHA, EVAL_RO, SCRIPT: reply bytes against redis-server 7.0.15.

The corpus covers the conversions both ways (RESP2 and, after
``redis.setresp(3)``, RESP3), Redis 7's error texts with their
``script: <sha>, on @user_script:<line>.`` suffix, pcall / error_reply /
status_reply, KEYS and ARGV, the read-only global table, the sandbox,
shebang flags, EVAL_RO's refusals and the SCRIPT subcommands.

What Redis 8 changed is checked with ``check_newer``: ``redis.REDIS_VERSION``
(ours says 8.10.0), and the ``os`` table, which Redis 8 gives scripts with
``os.clock`` only (https://redis.io/docs/latest/develop/programmability/lua-api/,
"os library"); 7.0.15 has no ``os`` at all.
"""

from __future__ import annotations

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


def E(script: str, *rest: str | int) -> list[str | int]:
    """EVAL with no keys unless given."""
    return ["EVAL", script, *(rest or (0,))]


CONVERSIONS = [
    E("return 1"), E("return 3.99"), E("return -2.7"), E("return 'abc'"), E("return true"),
    E("return false"), E("return nil"), E("return {1,2,nil,4}"),
    E("return {1.9,-2.7,'a',true,false}"), E("return {a=1}"), E("return {1, {2, {3, 'x'}}, 'y'}"),
    E("return {ok='x'}"), E("return {err='x y'}"), E("return {err=''}"), E("return {err='-x'}"),
    E("return {err=123}"), E("return {ok='a\\r\\nb'}"),
    E("return {double=3.5}"), E("return {map={a=1}}"), E("return {set={a=true}}"),
    E("return {big_number='123'}"), E("return {verbatim_string={format='txt', string='abc'}}"),
    E("return 1/0"), E("return -1/0"), E("return 0/0"), E("return 2^53"), E("return 2^63"),
    E("return -2^63"), E("return 'a\\0b'"), E("local t = {} for i=1,100 do t[i]=i end return t"),
    E("return redis.error_reply('My Error')"), E("return redis.error_reply('-My Error')"),
    E("return redis.error_reply('')"), E("return redis.error_reply('-')"),
    E("return redis.error_reply(1)"), E("return redis.status_reply('FINE')"),
    E("return redis.status_reply(1)"),
    ["SET", "s", "abc"], ["HSET", "h", "a", "1"], ["ZADD", "z", "1.5", "m"], ["SADD", "st", "m"],
    E("return redis.call('get', 's')"), E("return redis.call('get', 'nokey')"),
    E("return redis.call('type', 'h')"), E("return redis.call('type', 'h')['ok']"),
    E("return redis.call('hgetall', 'h')"), E("return redis.call('zscore', 'z', 'm')"),
    E("return redis.call('zrange', 'z', 0, -1, 'withscores')"),
    E("return redis.call('lpop', 'nolist')"), E("return redis.call('lpop', 'nolist', 2)"),
    E("return redis.call('smembers', 'st')"), E("return redis.call('ping')"),
    E("return redis.pcall('incr', 's')"),
    E("redis.call('set', 'f', 0.1) return redis.call('get', 'f')"),
    E("redis.call('set', 'f', 1e20) return redis.call('get', 'f')"),
    E("redis.call('set', 'f', 1.5) return redis.call('get', 'f')"),
    E("return redis.call('set', 'n', 12345678901234567)"), ["GET", "n"],
    E("return select('#', redis.call('ping'))"),
    E("return KEYS[1]..ARGV[1]", 1, "k", "a"), E("return #KEYS + #ARGV", 2, "a", "b", "c"),
    E("return redis.call('incr', KEYS[1])", 1, "cnt"),
    E("return string.format('%d-%s', 5, 'x')"), E("return math.floor(7.9)"),
    E("return table.concat({'a','b'}, ',')"), E("return tostring(1/0)"), E("return tonumber('0x10')"),
    E("return coroutine.wrap(function() coroutine.yield(redis.call('incr','co')) end)()"),
    E("return redis.sha1hex('')"), E("return redis.sha1hex('abc')"),
]

RESP3_IN_SCRIPT = [
    ["HSET", "h", "a", "1"], ["ZADD", "z", "1.5", "m"], ["SADD", "st", "m"],
    E("redis.setresp(3) return redis.call('hgetall', 'h')"),
    E("redis.setresp(3) return redis.call('hgetall', 'nohash')"),
    E("redis.setresp(3) return redis.call('zscore', 'z', 'm')"),
    E("redis.setresp(3) local r = redis.call('zscore', 'z', 'm') return {type(r), r['double']}"),
    E("redis.setresp(3) return redis.call('get', 'nokey')"),
    E("redis.setresp(3) return redis.call('get', 'nokey') == nil"),
    E("redis.setresp(3) return type(redis.call('get', 'nokey'))"),
    E("redis.setresp(3) return redis.call('smembers', 'st')"),
    E("redis.setresp(3) return redis.call('zrange', 'z', 0, -1, 'withscores')"),
    E("redis.setresp(3) return redis.call('exists', 'h')"),
    E("redis.setresp(2) return redis.call('hgetall', 'h')"),
    E("return redis.setresp(3)"), E("return redis.setresp(4)"), E("return redis.setresp()"),
]

ERRORS = [
    ["SET", "s", "abc"],
    E("return redis.call('incr', 's')"), E("return redis.call('nosuch', 's')"),
    E("return redis.call('get')"), E("return 1 + nil"), E("return 1 +"), E("error('boom')"),
    E("error({err='FOO bar'})"), E("error(nil)"), E("error(123)"), E("error({err=123})"),
    E("local function f() error('in f') end\n\nf()"),
    E("local function f() return redis.call('incr','s') end\n\nreturn f()"),
    E("local x = 1\nlocal y = 2\nreturn redis.call('incr', 's')"),
    E("return redis.pcall('nosuch')"), E("return redis.pcall('get')"),
    E("return pcall(redis.call, 'nosuch')"),
    E("local ok, e = pcall(redis.call, 'incr', 's') return e"),
    E("local ok, e = pcall(redis.call, 'incr', 's') return type(e)"),
    E("local ok, e = pcall(redis.call, 'incr', 's') error(e)"),
    E("local ok, e = pcall(redis.call, 'incr', 's') error(e, 0)"),
    E("local ok, e = pcall(error, 'x') return e"), E("error('ERR x', 0)"),
    E("local ok, e = xpcall(function() return redis.call('incr','s') end, "
      "function(x) return type(x) end) return e"),
    E("return redis.call()"), E("return redis.call(1)"), E("return redis.call('set', {}, 'x')"),
    E("return redis.call('subscribe', 'x')"), E("return redis.call('blpop', 'nolist', 0)"),
    E("return redis.call('multi')"), E("return redis.call('eval', 'return 1', 0)"),
    E("return redis.call('object', 'foo')"), E("return redis.pcall('object', 'foo')"),
    E("return redis.call('xread', 'block', 0, 'streams', 'st', '$')"),
    E("return redis.call('xreadgroup', 'group', 'g', 'c', 'block', 1, 'streams', 'st', '>')"),
    E("return redis.call('xread', 'count', 1, 'streams', 'st', '0')"),
    E("return redis.log(redis.LOG_WARNING, 'hi')"), E("return redis.log(redis.LOG_WARNING)"),
    E("return redis.set_repl(redis.REPL_ALL)"), E("return redis.set_repl(9)"),
    E("return {redis.REPL_ALL, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_NONE}"),
    E("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}"),
    E("return redis.replicate_commands()"), E("return redis.breakpoint()"), E("return redis.debug('x')"),
    ["EVAL", "return 1", -1], ["EVAL", "return 1", 2, "a"], ["EVAL", "return 1", "x"],
    ["EVAL", "return 1"], ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", 0],
    ["EVALSHA", "fff", 0],
]

SANDBOX = [
    E("x = 1"), E("return y"), E("function f() end"), E("redis.call = 1"), E("string.foo = 1"),
    E("_G.x = 1"), E("rawset(_G, 'x', 1)"), E("return {type(_G)}"), E("return _VERSION"),
    E("return io"), E("return debug"), E("return require"), E("return {type(print)}"),
    E("return {type(dofile)}"), E("return {type(loadfile)}"), E("return {type(module)}"),
    E("return {type(getfenv)}"), E("return {type(setfenv)}"), E("return {type(newproxy)}"),
    E("return {type(package)}"), E("return type(loadstring)"),
    E("return {type(collectgarbage), type(load), type(_VERSION), type(xpcall), type(select), "
      "type(gcinfo), type(unpack), type(coroutine), type(pcall), type(error), type(next)}"),
    E("return {type(string), type(table), type(math), type(redis)}"),
    E("local f = loadstring('x = 1') f()"), E("local f = loadstring('return io') return f()"),
    E("return getmetatable('').__index == string"), E("return ('abc'):upper()"),
    E("local t = {} for k in pairs(string) do t[#t+1] = k end return #t > 0"),
    E("local n = 0 for i, v in ipairs(KEYS) do n = n + 1 end return n", 2, "a", "b"),
    E("return next(redis) ~= nil"), E("return {double='x'}"), E("return redis.sha1hex({})"),
    E("return type(redis.call)"), E("return {type(redis.pcall), type(redis.log), type(redis.sha1hex)}"),
    E("local t = {} for k in pairs(redis) do t[#t+1] = k end table.sort(t) return t"),
    E("return redis.acl_check_cmd('get', 'x')"), E("return redis.acl_check_cmd('nosuch')"),
    E("return redis.acl_check_cmd()"),
]

FLAGS_AND_RO = [
    ["SET", "k", "v"],
    E("#!lua flags=no-writes\nreturn redis.call('set','k','v')"),
    E("#!lua flags=no-writes\nreturn redis.call('get','k')"),
    E("#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1"),
    E("#!lua flags=\nreturn 2"), E("#!lua flags=bad\nreturn 1"), E("#!lua name=x\nreturn 1"),
    E("#!lua\nreturn 1"), E("#!luax\nreturn 1"), E("#!lua flags=no-writes\nreturn error('x')"),
    E("#!lua\nreturn redis.call('get', 'k')", 1, "k"),
    ["EVAL_RO", "return redis.call('get', 'k')", 0],
    ["EVAL_RO", "return redis.call('set', 'k', 'v')", 0],
    ["EVAL_RO", "return redis.pcall('set', 'k', 'v')", 0],
    ["SCRIPT", "LOAD", "return redis.call('get', KEYS[1])"],
    ["EVALSHA_RO", "d3c21d0c2b9ca22f82737626a27bcaf5d288f99f", 1, "k"],
    ["SCRIPT", "LOAD", "return redis.call('del', KEYS[1])"],
    ["EVALSHA_RO", "2ea7c8bda2a7f4e98ec0d6deda4d8ed2e7eebc67", 1, "k"],
]

SCRIPT_SUBCOMMANDS = [
    ["SCRIPT", "LOAD", "return 1"],
    ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "ab"],
    ["SCRIPT", "EXISTS", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB"],
    ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0],
    ["EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", 0],
    ["SCRIPT", "LOAD", "return +"], ["SCRIPT", "LOAD"], ["SCRIPT", "EXISTS"],
    ["SCRIPT", "FLUSH", "bad"], ["SCRIPT", "FLUSH", "async", "x"], ["SCRIPT", "KILL"],
    ["SCRIPT", "KILL", "x"], ["SCRIPT", "NOPE"], ["SCRIPT"], ["SCRIPT", "HELP"],
    ["SCRIPT", "FLUSH", "ASYNC"],
    ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"],
    ["EVAL", "return 1", 0], ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"],
    ["SCRIPT", "FLUSH", "sync"], ["SCRIPT", "FLUSH"], ["SCRIPT", "DEBUG", "bad"],
    ["SCRIPT", "DEBUG", "no"], ["SCRIPT", "DEBUG"],
    ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"],
]

SELECT_AND_MULTI = [
    E("redis.call('select', 5) redis.call('set', 'in5', 'x') return redis.call('dbsize')"),
    ["GET", "in5"], ["SELECT", "5"], ["GET", "in5"], ["FLUSHDB"], ["SELECT", "0"],
    E("return redis.call('select', 99)"),
    ["MULTI"], E("return redis.call('incr', 'cnt')"), ["INCR", "cnt"],
    ["EVAL", "return 1 +", 0], ["EXEC"],
    ["MULTI"], E("return redis.call('incr', 'cnt')"), E("return redis.call('nosuch')"), ["EXEC"],
    ["GET", "cnt"],
]


@pytest.mark.parametrize("corpus", [CONVERSIONS, ERRORS, SANDBOX, FLAGS_AND_RO, SCRIPT_SUBCOMMANDS,
                                    SELECT_AND_MULTI],
                         ids=["conversions", "errors", "sandbox", "flags", "script", "select-multi"])
def test_corpus(d, corpus):
    d.check_all(corpus)


def test_resp3_in_script(d):
    d.check_all(RESP3_IN_SCRIPT)


def test_resp3_client(d):
    d.resp3()
    d.check_all(RESP3_IN_SCRIPT)
    d.check_all([E("return true"), E("return false"), E("return nil"), E("return {double=3.5}"),
                 E("return {map={a=1}}"), E("return {set={a=true}}"),
                 E("return {verbatim_string={format='txt', string='abc'}}"),
                 E("redis.setresp(3) return true"), E("redis.setresp(3) return false")])


def test_newer_than_7_0(d):
    d.check_newer("EVAL", "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", 0,
                  ours=b"*2\r\n$6\r\n8.10.0\r\n:526848\r\n")
    d.check_newer("EVAL", "return type(os.clock())", 0, ours=b"$6\r\nnumber\r\n")
    d.check_newer("EVAL", "return type(os.time)", 0, ours=b"$3\r\nnil\r\n")


# FUNCTION LOAD/LIST/DELETE/FLUSH/STATS, FCALL, FCALL_RO: every listing names
# one library (several list in the server's hash order).
FUNCTIONS = [
    ['function', 'flush'],
    ['function',
     'load',
     ("#!lua name=mylib\nredis.register_function('f1', function(keys"
       ", args) return redis.call('incr', keys[1]) end)")],
    ['function', 'load', "#!lua name=mylib\nredis.register_function('f1', function() return 1 end)"],
    ['function',
     'load',
     ("#!lua name=lib2b\nredis.register_function{function_name='f2',"
       " callback=function(keys, args) return args[1] end, flags={'n"
       "o-writes'}, description='desc'}")],
    ['fcall', 'f1', 1, 'x'],
    ['fcall', 'f2', 0, 'a'],
    ['fcall_ro', 'f1', 1, 'x'],
    ['fcall_ro', 'f2', 0, 'a'],
    ['fcall', 'nof', 0],
    ['function', 'list', 'libraryname', 'mylib'],
    ['function', 'list', 'withcode', 'libraryname', 'my*'],
    ['function', 'list', 'libraryname', 'lib2b', 'withcode'],
    ['function', 'list', 'withcode', 'libraryname', 'my'],
    ['function', 'stats'],
    ['function', 'kill'],
    ['function', 'load', "redis.register_function('f1', function() return 1 end)"],
    ['function', 'load', "#!lua name=lib2\nredis.call('ping')"],
    ['function', 'load', '#!lua name=lib2\nreturn 1'],
    ['function', 'load', "#!lua name=lib2\nredis.register_function('f1', function() return 1 end)"],
    ['function', 'load', "#!lua name=lib3\nredis.register_function('h', function() error('x') end)"],
    ['fcall', 'h', 0],
    ['function', 'load', '#!lua name=lib4 foo=bar\n'],
    ['function', 'load', '#!lua\n'],
    ['function', 'load', '#!lua name=lib4\nlocal x = 1'],
    ['function', 'load', '#!lua name=lib4\nx = 1'],
    ['function', 'load', "#!lua name=lib4\nredis.register_function('z', function() return 1 end, 'x')"],
    ['function',
     'load',
     ("#!lua name=lib4\nredis.register_function{function_name='z', c"
       "allback=function() return 1 end, flags={'bad'}}")],
    ['function',
     'load',
     ("#!lua name=lib4\nredis.register_function{function_name='z', c"
       'allback=function() return 1 end, foo=1}')],
    ['function', 'load', "#!lua name=lib4\nredis.register_function{function_name='z'}"],
    ['function', 'load', '#!lua name=lib4\nreturn redis.setresp(3)'],
    ['function', 'load', "#!lua name=lib4\nreturn redis.log(redis.LOG_WARNING, 'x')"],
    ['function', 'delete', 'nolib'],
    ['function', 'delete', 'lib3'],
    ['fcall', 'h', 0],
    ['function', 'restore', 'bad'],
    ['function', 'flush', 'bad'],
    ['function', 'help'],
    ['function', 'load', '#!lua name=c1\nreturn +'],
    ['function', 'load', "#!lua name=c1\nredis.register_function('a-b', function() return 1 end)"],
    ['function', 'load', "#!lua name=c-1\nredis.register_function('ab', function() return 1 end)"],
    ['function', 'load', "#!lua name=c1\nredis.register_function('ab', 1)"],
    ['function', 'load', '#!lua name=c0\nredis.register_function(1, function() return 1 end)'],
    ['fcall', '1', 0],
    ['function',
     'load',
     ('#!lua name=c1\nlocal f = function(keys, args) return {keys[1]'
       ', args[1], #keys, #args, type(KEYS)} end\nredis.register_func'
       "tion('ab', f)")],
    ['fcall', 'ab', 1, 'k', 'a'],
    ['fcall', 'ab', 2, 'k'],
    ['fcall', 'ab', -1],
    ['fcall', 'ab', 'x'],
    ['fcall', 'ab'],
    ['eval_ro', '#!lua\nreturn 1', 0],
    ['eval_ro', '#!lua flags=no-writes\nreturn 1', 0],
    ['function',
     'load',
     'replace',
     ("#!lua name=c1\nredis.register_function('ab', function() retur"
       "n redis.call('set','x','y') end)")],
    ['fcall', 'ab', 0],
    ['function',
     'load',
     ("#!lua name=c2\nredis.register_function{function_name='ro', ca"
       "llback=function() return redis.call('set','x','y') end, flag"
       "s={'no-writes'}}")],
    ['fcall', 'ro', 0],
    ['function',
     'load',
     ("#!lua name=c3\nredis.register_function('c3', function() retur"
       'n redis.setresp(3) end)')],
    ['fcall', 'c3', 0],
    ['function',
     'load',
     ("#!lua name=c4\nlocal x = redis.call\nredis.register_function('"
       "c4', function() return 1 end)")],
    ['function',
     'load',
     ("#!lua name=c5\nredis.register_function('c5', function() retur"
       "n redis.register_function('x', function() end) end)")],
    ['fcall', 'c5', 0],
    ['function', 'list', 'libraryname', 'c1', 'withcode'],
    ['function', 'list', 'bad'],
    ['function', 'list', 'libraryname'],
    ['function', 'load'],
    ['function', 'load', 'replace'],
    ['function', 'load', 'bad', 'x'],
    ['function', 'restore', 'bad', 'bad'],
    ['function', 'delete'],
    ['function', 'stats', 'x'],
    ['function', 'load', "#!lua name=c6 name=c7\nredis.register_function('c6', function() return 1 end)"],
    ['function', 'load', "#!luajit name=c6\nredis.register_function('c6', function() return 1 end)"],
    ['function', 'load', "#!lua  name=c8\nredis.register_function('c8', function() return 1 end)"],
    ['function', 'load', 'replace', "#!lua name=c8\nredis.register_function('f2', function() return 1 end)"],
    ['function',
     'load',
     'replace',
     ("#!lua name=c8\nredis.register_function('c9', function() retur"
       "n 1 end)\nredis.register_function('c9', function() return 1 e"
       'nd)')],
    ['function', 'load', "#!lua name=c10\nredis.register_function('c10', function() return 1 end)"],
    ['function', 'load', "#!lua name=c10\nredis.register_function('c10', function() return 1 end)"],
    ['fcall', 'c10', 0],
    ['function',
     'load',
     'replace',
     ("#!lua name=c10\nredis.register_function('c10b', function() re"
       'turn 2 end)')],
    ['fcall', 'c10', 0],
    ['fcall', 'c10b', 0],
    ['function', 'flush', 'async'],
    ['function', 'stats'],
    ['function', 'list'],
    ['fcall', 'c10b', 0],
]


def test_functions(d):
    d.check_all(FUNCTIONS)


def test_function_dump_restore_both_ways(d):
    """A payload of either server restores on the other (Redis compresses
    long codes with LZF, which we read; ours may be uncompressed)."""
    code = ("#!lua name=lib_a\nredis.register_function('fa', function(keys, args) "
            "return 'a body long enough for redis to compress it with lzf' end)")
    d.check("FUNCTION", "LOAD", code)
    for source, target in ((d.theirs, d.ours), (d.ours, d.theirs)):
        payload = source.call("FUNCTION", "DUMP")
        assert payload.startswith(b"$")
        raw = payload.split(b"\r\n", 1)[1][:-2]
        target.call("FUNCTION", "FLUSH")
        assert target.call("FUNCTION", "RESTORE", raw) == b"+OK\r\n"
        assert target.call("FUNCTION", "RESTORE", raw) == b"-ERR Library lib_a already exists\r\n"
        assert target.call("FUNCTION", "RESTORE", raw, "REPLACE") == b"+OK\r\n"
        assert target.call("FUNCTION", "RESTORE", raw, "FLUSH") == b"+OK\r\n"
    d.check("FCALL", "fa", 0)
    d.check("FUNCTION", "LIST", "WITHCODE")
    d.check("FUNCTION", "RESTORE", "bad")
    d.check("FUNCTION", "RESTORE", "bad", "bad")
    d.check("FUNCTION", "RESTORE", b"\xf5\x01x\x0a\x00" + b"\x00" * 8)


def test_functions_resp3(d):
    d.resp3()
    d.check("FUNCTION", "LOAD", "#!lua name=r3\nredis.register_function{function_name='f', "
            "callback=function() return {map={a=1}} end, flags={'no-writes', 'allow-oom'}, "
            "description='d'}")
    d.check("FUNCTION", "LIST")
    d.check("FUNCTION", "LIST", "WITHCODE")
    d.check("FUNCTION", "STATS")
    d.check("FCALL", "f", 0)
    d.check("FCALL_RO", "f", 0)


def test_command_info_and_getkeys(d):
    for name in ("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "script|load",
                 "script|exists", "script|flush", "script|kill", "script|help", "script|debug",
                 "function|load",
                 "function|delete", "function|list", "function|restore", "function|dump",
                 "function|stats", "function|flush", "function|kill", "function|help"):
        d.check("COMMAND", "INFO", name)
    d.check("COMMAND", "GETKEYS", "EVAL", "return 1", 2, "a", "b", "c")
    d.check("COMMAND", "GETKEYS", "FCALL", "f", 1, "a", "b")
    d.check("COMMAND", "GETKEYS", "EVAL", "return 1", 0)
    d.check("COMMAND", "GETKEYSANDFLAGS", "EVAL_RO", "return 1", 1, "a")


@pytest.mark.parametrize("script", [
    "return cjson.encode({1, 2, {a = 1}, 'x/y'})",
    "return cjson.decode('[1, null, {\"k\": [true, false]}]')[3].k[1]",
    "return tostring(cjson.decode('[null]')[1] == cjson.null)",
    "return cmsgpack.pack(1, 'two', {3, 4.5})",
    "return cmsgpack.unpack(cmsgpack.pack({1, 2, 3}))",
    "return bit.tohex(bit.bor(0xf0, 0x0f)) .. bit.tohex(-1, -4)",
    "return struct.pack('>I2s', 7, 'ab')",
    "return {struct.unpack('<i4', struct.pack('<i4', -5))}",
    "return pcall(cjson.decode, '{bad')",
    "local ok, err = pcall(cjson.encode, {[{}] = 1}) return err",
])
def test_the_lua_libraries_through_eval(d, script) -> None:
    """cjson, cmsgpack, bit and struct reach scripts as redis-server's do."""
    d.check("EVAL", script, "0")
