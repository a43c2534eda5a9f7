#!/usr/bin/env python3
"""Round-trip cost of the Redis replay store's command shapes, interleaved
in one run so that load falls on each alike (docs/benchmarks.md, "Replay
checks on Redis"): `SET NX EX` alone (the earlier single-entry check), `EXISTS`
of the legacy key pipelined with `SET NX EX` (the single-entry check now),
and the batch script by `EVALSHA` over two keys.

Usage: redis-server --port 6391 --save "" & python3 scripts/bench-redis-commands.py [PORT]
"""
import socket
import statistics
import sys
import time

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 6391
s = socket.create_connection(("127.0.0.1", PORT)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
f = s.makefile("rb")
def cmd(*a):
    out = b"*%d\r\n" % len(a)
    for x in a:
        x = x if isinstance(x, bytes) else str(x).encode()
        out += b"$%d\r\n%s\r\n" % (len(x), x)
    return out
def rd():
    line = f.readline()
    if line[:1] == b"$" and line[1:3] != b"-1":
        n = int(line[1:]); f.read(n + 2)
SHA = None
def one_set(i):
    s.sendall(cmd("SET", b"k:%d" % i, 1, "NX", "EX", 100)); rd()
def pipelined(i):
    s.sendall(cmd("EXISTS", b"l:%d" % i) + cmd("SET", b"n:%d" % i, 1, "NX", "EX", 100)); rd(); rd()
def script(i):
    s.sendall(cmd("EVALSHA", SHA, 2, b"m:%d" % i, b"o:%d" % i, 100)); rd()
s.sendall(cmd("SCRIPT", "LOAD", "for i = 1, #KEYS do if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end end for i = 1, #ARGV do local ttl = tonumber(ARGV[i]) if ttl > 0 then redis.call('SET', KEYS[i], '1', 'EX', ttl) end end return 1"))
f.readline(); SHA = f.readline().strip().decode()
res = {"set": [], "pipe": [], "lua": []}
i = 0
for r in range(7):
    for name, fn in (("set", one_set), ("pipe", pipelined), ("lua", script)):
        t = time.perf_counter()
        for _ in range(3000):
            i += 1; fn(i)
        res[name].append((time.perf_counter() - t) / 3000 * 1e6)
for k, v in res.items():
    print(k, "median us per op", round(statistics.median(v), 1))
