#!/usr/bin/python3
"""client_ids.py: IDs from libidgen-client's local buffer through the ctypes binding
(bindings/python/idgen_client.py): no round trip per ID.
  IDGEN_CLIENT_LIB=build/libidgen-client.so PYTHONPATH=bindings/python \
    /usr/bin/python3 examples/python/client_ids.py 127.0.0.1:6380 [name]
"""
import sys

from idgen_client import Client, Unavailable

servers = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:6380"
name = sys.argv[2] if len(sys.argv) > 2 else "default"
with Client(servers, max_wait_ms=500) as c:
    try:
        print(c.next(name))
        for i in c.next_n(name, 4):
            print(i)
    except Unavailable as e:
        sys.exit("no ID: %s" % e)
