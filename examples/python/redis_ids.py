#!/usr/bin/env python3
"""redis_ids.py: IDs from `idgen serve` with redis-py (Debian: python3-redis; pip: redis).

    python3 redis_ids.py            # IDGEN_RESP=host:port, default 127.0.0.1:6380

IDs come as strings; int() reads them whole (Python ints have no 2^53 limit)."""
import json
import os

import redis

host, port = os.environ.get("IDGEN_RESP", "127.0.0.1:6380").rsplit(":", 1)
# decode_responses: str, not bytes. With --auth-token-file: password="<token>".
r = redis.Redis(host=host, port=int(port), decode_responses=True)

one = r.execute_command("ID")
print("ID     ", one)
ids = r.execute_command("IDS", 5)  # a list of 5 strings, increasing
print("IDS    ", ids)

# Many at once without waiting for each: a pipeline (no MULTI: an ID service needs none).
pipe = r.pipeline(transaction=False)
for _ in range(3):
    pipe.execute_command("ID")
print("piped  ", pipe.execute())

parts = json.loads(r.execute_command("DECODE", one))
print("DECODE  time %s, worker %d, sequence %d" % (parts["time"], parts["fields"]["worker"],
                                                 parts["fields"]["sequence"]))
