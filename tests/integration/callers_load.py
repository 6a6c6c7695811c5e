"""callers_load.py: many callers' names at idgen serve, fast: pipelined over a few
connections, RESP `CLIENT SETNAME name` then commands, HTTP GET /healthz with a
User-Agent per request. Light names send 1 to 3 each; heavy ones many, spread through
the whole stream. Prints the true count of each heavy name as JSON.

Usage: python3 callers_load.py HOST RESP_PORT HTTP_PORT LIGHT_RESP LIGHT_HTTP
  light names: resp-light-I (RESP), http-light-I (HTTP)
  heavy names: heavy-resp (RESP), heavy-http (HTTP), heavy-both (both), 2,000 each
"""
import json
import random
import socket
import sys

host, resp_port, http_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
light_resp, light_http = int(sys.argv[4]), int(sys.argv[5])
CONNS = 4
CHUNK = 500  # commands or requests written before their replies are read
random.seed(11)

# The streams: (name, commands) for RESP, names for HTTP, heavy ones spread evenly.
truth = {}
resp_ops, http_ops = [], []
for i in range(light_resp):
    resp_ops.append((f"resp-light-{i}", random.randint(0, 2)))
for i in range(light_http):
    for _ in range(random.randint(1, 3)):
        http_ops.append(f"http-light-{i}")
random.shuffle(http_ops)
for name, n, ops in (("heavy-resp", 2000, resp_ops), ("heavy-both", 1000, resp_ops)):
    # in runs of 20 commands (SETNAME included), at even intervals
    runs = n // 20
    for r in range(runs):
        ops.insert((r * len(ops)) // runs + r, (name, 19))
for name, n in (("heavy-http", 2000), ("heavy-both", 1000)):
    for r in range(n):
        http_ops.insert((r * len(http_ops)) // n + r, name)


def drain(sock, want, marker):
    got, buf = 0, b""
    while got < want:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise EOFError("server closed the connection")
        buf += chunk
        got = buf.count(marker)
    return buf


def resp_run(ops):
    conns = [socket.create_connection((host, resp_port)) for _ in range(CONNS)]
    for k, sock in enumerate(conns):
        mine = ops[k::CONNS]
        for at in range(0, len(mine), CHUNK):
            out, want = [], 0
            for name, n in mine[at:at + CHUNK]:
                out.append(f"CLIENT SETNAME {name}\r\n" + "PING\r\n" * n)
                want += 1 + n
                truth[name] = truth.get(name, 0) + 1 + n
            sock.sendall("".join(out).encode())
            buf = drain(sock, want, b"\r\n")
            if buf.startswith(b"-") or b"\n-" in buf:
                raise RuntimeError("an error reply: " + buf[:200].decode(errors="replace"))
        sock.close()


def http_run(ops):
    conns = [socket.create_connection((host, http_port)) for _ in range(CONNS)]
    for k, sock in enumerate(conns):
        mine = ops[k::CONNS]
        for at in range(0, len(mine), CHUNK):
            batch = mine[at:at + CHUNK]
            sock.sendall("".join(f"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: {n}\r\n\r\n"
                                 for n in batch).encode())
            for n in batch:
                truth[n] = truth.get(n, 0) + 1
            drain(sock, len(batch), b"HTTP/1.1 200 ")
        sock.close()


resp_run(resp_ops)
http_run(http_ops)
print(json.dumps({"heavy": {n: truth[n] for n in ("heavy-resp", "heavy-http", "heavy-both")},
                  "names": len(truth), "requests": sum(truth.values())}))
