#!/usr/bin/env python3
"""http_ids.py: IDs from `idgen serve` over HTTP with the standard library alone.

    python3 http_ids.py             # IDGEN_HTTP=host:port, default 127.0.0.1:8080

The JSON carries every ID as a string; int() keeps all its digits, where a float (what a
JSON number becomes in many languages) would not."""
import json
import os
import urllib.request

base = "http://" + os.environ.get("IDGEN_HTTP", "127.0.0.1:8080")


def get(path):
    # With --auth-token-file: add headers={"Authorization": "Bearer <token>"}.
    with urllib.request.urlopen(urllib.request.Request(base + path)) as resp:
        return json.load(resp)


one = int(get("/v1/id")["id"])
print("ID     ", one)
ids = [int(i) for i in get("/v1/ids?count=5")["ids"]]
print("IDS    ", ids)
print("base62 ", get("/v1/id?format=base62")["id"])
parts = get("/v1/decode/%d" % one)
print("DECODE  time %s, worker %d, sequence %d" % (parts["time"], parts["fields"]["worker"],
                                                 parts["fields"]["sequence"]))
