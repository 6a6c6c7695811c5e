#!/usr/bin/env python3
"""reload_load.py: the clients that keep server_reload.sh's server under load while it
reloads. HTTP clients on keep-alive connections ask for IDs of the text-form generators
and check each reply against the formats given (any of them); RESP clients on their own
connections ask ID and ID <segment> and check each reply is a decimal number. Every
connection is opened once: a connection the server closes, a reply that does not parse
or does not match counts as an error (and the client opens a new one). Runs until the
stop file appears, then prints one JSON line of counts.

  reload_load.py HOST HTTP_PORT RESP_PORT STOP_FILE GEN=REGEX|REGEX ... [--http N]
                 [--resp N] [--resp-id GEN ...]

GEN=REGEX|REGEX: HTTP asks /v1/id?name=GEN, the ID must match one of the REGEXes; RESP
asks ID (the default generator) and ID GEN for each --resp-id.
"""
import http.client
import json
import os
import re
import socket
import sys
import threading
import time

host, http_port, resp_port, stop_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
args = sys.argv[5:]
n_http, n_resp = 2, 2
gens = []
resp_ids = []
i = 0
while i < len(args):
    if args[i] == "--http":
        n_http = int(args[i + 1]); i += 2; continue
    if args[i] == "--resp-id":
        resp_ids.append(args[i + 1]); i += 2; continue
    if args[i] == "--resp":
        n_resp = int(args[i + 1]); i += 2; continue
    name, patterns = args[i].split("=", 1)
    gens.append((name, [re.compile(p) for p in patterns.split("|")]))
    i += 1

lock = threading.Lock()
counts = {"http_requests": 0, "resp_requests": 0, "errors": 0, "connections": 0}
per_format = {}  # "gen#k": replies matching format k
first_errors = []


def count(key, n=1):
    with lock:
        counts[key] = counts.get(key, 0) + n


def error(what):
    with lock:
        counts["errors"] += 1
        if len(first_errors) < 10:
            first_errors.append(what)


def stopping():
    # The stop file, or its directory gone: the test that started us has ended.
    return os.path.exists(stop_file) or not os.path.isdir(os.path.dirname(stop_file) or ".")


def http_client(k):
    conn = None
    while not stopping():
        for name, pats in gens:
            if conn is None:
                conn = http.client.HTTPConnection(host, http_port, timeout=10)
                count("connections")
            try:
                conn.request("GET", "/v1/id?name=" + name)
                r = conn.getresponse()
                body = r.read().decode()
                if r.status != 200 or r.getheader("connection", "").lower() == "close":
                    error("http %s: %d %s" % (name, r.status, body.strip()))
                    conn.close(); conn = None
                    continue
                ident = json.loads(body)["id"]
                hit = [j for j, p in enumerate(pats) if p.fullmatch(ident)]
                if not hit:
                    error("http %s: %r matches no format" % (name, ident))
                else:
                    with lock:
                        key = "%s#%d" % (name, hit[0])
                        per_format[key] = per_format.get(key, 0) + 1
                count("http_requests")
            except Exception as e:  # a drop, a timeout, a body that is no JSON
                error("http %s: %s: %s" % (name, type(e).__name__, e))
                try:
                    conn.close()
                except Exception:
                    pass
                conn = None


def resp_read_line(f):
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("connection closed")
    return line[:-2]


def resp_client(k):
    sock = f = None
    cmds = [b"ID\r\n"] + [("ID %s\r\n" % n).encode() for n in resp_ids]
    while not stopping():
        if sock is None:
            sock = socket.create_connection((host, resp_port), timeout=10)
            f = sock.makefile("rb")
            count("connections")
        try:
            for c in cmds:
                sock.sendall(c)
                head = resp_read_line(f)
                if not head.startswith(b"$"):
                    raise ValueError("reply %r" % head)
                val = resp_read_line(f)
                if len(val) != int(head[1:]) or not re.fullmatch(rb"[0-9]+", val):
                    raise ValueError("ID %r" % val)
                count("resp_requests")
        except Exception as e:
            error("resp: %s: %s" % (type(e).__name__, e))
            try:
                sock.close()
            except Exception:
                pass
            sock = f = None


threads = [threading.Thread(target=http_client, args=(k,)) for k in range(n_http)]
threads += [threading.Thread(target=resp_client, args=(k,)) for k in range(n_resp)]
for t in threads:
    t.start()
for t in threads:
    t.join()
counts["per_format"] = per_format
counts["first_errors"] = first_errors
print(json.dumps(counts, sort_keys=True))
