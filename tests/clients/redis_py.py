#!/usr/bin/python3
"""redis_py.py: redis-py (Debian's python3-redis) and urllib against idgen serve, with
their default options. Usage: redis_py.py PORT AUTH_PORT TOKEN HTTP_ADDR."""
import json
import sys
import threading
import urllib.request

import redis

FAILS = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)[:300]))
    if not ok:
        FAILS.append(name)


def check_ids(name, ids, count, increasing=True):
    check(name + ": %d IDs" % count, len(ids) == count, ids)
    check(name + ": every ID a decimal string", all(isinstance(i, str) and i.isdigit()
                                                   for i in ids), ids[:3])
    check(name + ": int round trip", all(str(int(i)) == i for i in ids))
    check(name + ": distinct", len(set(ids)) == len(ids))
    if increasing:
        check(name + ": increasing", all(int(a) < int(b) for a, b in zip(ids, ids[1:])))


port, auth_port, token, http = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
print("redis-py", redis.__version__)

r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
check("PING", r.ping() is True)
one = r.execute_command("ID")
check_ids("ID", [one], 1)
check_ids("IDS 100", r.execute_command("IDS", 100), 100)
decoded = json.loads(r.execute_command("DECODE", one))
check("DECODE: the same ID back", decoded["id"] == one, decoded)
pipe = r.pipeline(transaction=False)  # no MULTI: an ID service has no use for it
for _ in range(200):
    pipe.execute_command("ID")
check_ids("a pipeline of 200", pipe.execute(), 200)
r.client_setname("redis-py-test")
check("CLIENT SETNAME / GETNAME", r.client_getname() == "redis-py-test")
check("ECHO", r.echo("hi") == "hi")

# A pool of 8: eight connections taken at once, each sent 8 x IDS 50 before any reply is
# read, then 8 threads sharing the pool.
pool = redis.ConnectionPool(host="127.0.0.1", port=port, max_connections=8,
                            decode_responses=True)
conns = [pool.get_connection("IDS") for _ in range(8)]
for c in conns:
    for _ in range(8):
        c.send_command("IDS", 50)
lists = [i for c in conns for _ in range(8) for i in c.read_response()]
for c in conns:
    pool.release(c)
check_ids("a pool of 8: 64 x IDS 50", lists, 3200, increasing=False)
lists, lock = [], threading.Lock()


def worker():
    c = redis.Redis(connection_pool=pool)
    for _ in range(8):
        got = c.execute_command("IDS", 50)
        with lock:
            lists.extend(got)


threads = [threading.Thread(target=worker) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check_ids("8 threads on the pool: 64 x IDS 50", lists, 3200, increasing=False)
check("the pool holds 8 connections", len(pool._available_connections) == 8,
      len(pool._available_connections))
pool.disconnect()

authed = redis.Redis(host="127.0.0.1", port=auth_port, password=token, decode_responses=True)
check_ids("AUTH token, then ID", [authed.execute_command("ID")], 1)
try:
    redis.Redis(host="127.0.0.1", port=auth_port, password="wrong-token-xyz").ping()
    check("a wrong token is refused", False, "no error")
except redis.exceptions.RedisError as e:  # 4.3.4 raises WRONGPASS as a ResponseError
    check("a wrong token is refused", "WRONGPASS" in str(e), e)
try:
    redis.Redis(host="127.0.0.1", port=auth_port).execute_command("ID")
    check("no token: NOAUTH", False, "no error")
except redis.exceptions.RedisError as e:
    check("no token: NOAUTH", "Authentication required" in str(e), e)

# urllib over HTTP: the ID is a JSON string; int() keeps every digit.
with urllib.request.urlopen("http://%s/v1/ids?count=100" % http) as resp:
    ids = json.load(resp)["ids"]
check_ids("urllib GET /v1/ids?count=100", ids, 100)
check("floats would lose digits", any(str(int(float(i))) != i for i in ids))
with urllib.request.urlopen("http://%s/v1/decode/%d" % (http, int(ids[0]))) as resp:
    check("urllib decode of int(id) gives the same ID", json.load(resp)["id"] == ids[0])

if FAILS:
    print("%d check(s) failed" % len(FAILS))
    sys.exit(1)
print("all checks passed")
