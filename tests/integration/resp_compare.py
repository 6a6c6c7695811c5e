#!/usr/bin/python3
"""resp_compare.py: sends the same commands to redis-server and to idgen serve over raw
sockets, in RESP2 and RESP3, and checks that idgen answers as Redis does: the same bytes
where the reply does not depend on the server (errors, PONG, ECHO, SELECT, GETNAME), the
same shape where it does (HELLO's map, CLIENT ID and INFO, INFO, COMMAND's entries).
Standard library only. Usage: resp_compare.py REDIS_PORT IDGEN_PORT [TOKEN]: with a
token both servers require it (redis-server --requirepass, idgen --auth-token-file)."""
import socket
import sys

FAILS = []


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.reply()

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exactly(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        """One reply as a tree of (type, value): simple, error, int, bulk, verbatim,
        null, array, set, map (a list of (key, value) pairs)."""
        line = self.line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return ("simple", rest.decode())
        if t == b"-":
            return ("error", rest.decode())
        if t == b":":
            return ("int", int(rest))
        if t == b"_":
            return ("null", None)
        if t == b"$":
            n = int(rest)
            return ("null", None) if n < 0 else ("bulk", self.exactly(n).decode())
        if t == b"=":
            data = self.exactly(int(rest)).decode()
            return ("verbatim", data[4:])
        if t in (b"*", b"~"):
            n = int(rest)
            if n < 0:
                return ("null", None)
            return ("array" if t == b"*" else "set", [self.reply() for _ in range(n)])
        if t == b"%":
            return ("map", [(self.reply(), self.reply()) for _ in range(int(rest))])
        raise ValueError("unknown reply type %r" % line)

    def close(self):
        self.sock.close()


def pairs(tree):
    """A map's pairs: RESP3's map, or RESP2's flat array of keys and values."""
    if tree[0] == "map":
        return [(k[1], v) for k, v in tree[1]]
    items = tree[1]
    return [(items[i][1], items[i + 1]) for i in range(0, len(items), 2)]


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        FAILS.append(name)


def same(name, redis, idgen):
    check(name, redis == idgen, "redis %r, idgen %r" % (redis, idgen))


def same_types(name, redis, idgen):
    """Both maps (or both RESP2 key-value arrays) with the same keys in the same order and
    values of the same types."""
    rk = [(k, v[0]) for k, v in pairs(redis)]
    ik = [(k, v[0]) for k, v in pairs(idgen)]
    check(name, redis[0] == idgen[0] and rk == ik, "redis %r, idgen %r" % (rk, ik))


def exact_commands(r, i, label, commands):
    for args in commands:
        same("%s %r" % (label, args), r.send(*args), i.send(*args))


# Replies that depend on nothing but the request: every error text among them.
PLAIN = [
    ["PING"], ["PING", "hello"], ["ping", "a", "b"], ["ECHO", "hi"], ["ECHO"],
    ["SELECT", "0"], ["SELECT", "x"], ["SELECT", "-1"], ["SELECT", "01"],
    ["CLIENT", "GETNAME"], ["CLIENT", "SETNAME", "compat"], ["CLIENT", "GETNAME"],
    ["CLIENT", "SETNAME", "a b"], ["CLIENT", "SETNAME", "x\ny"], ["CLIENT", "SETNAME", ""],
    ["CLIENT", "GETNAME"], ["CLIENT"], ["CLIENT", "FOO"], ["client", "setname"],
    ["CLIENT", "ID", "x"], ["CLIENT", "INFO", "x"], ["COMMAND", "FOO"],
    ["COMMAND", "COUNT", "x"], ["COMMAND", "DOCS", "nosuch"], ["COMMAND", "INFO", "nosuch"],
    ["FOO", "a", "b"], ["foo"], ["FOO"] + [str(n) for n in range(60)], ["x" * 200, "y" * 200],
    ["HELLO", "4"], ["HELLO", "1"], ["HELLO", "x"], ["HELLO", "3", "FOO"],
    ["HELLO", "3", "AUTH", "a"], ["HELLO", "3", "SETNAME"], ["HELLO", "3", "SETNAME", "a b"],
    ["INFO", "nosuch"], ["RESET", "x"], ["AUTH", "a", "b", "c"],
]


def shapes(r, i, proto):
    tag = "RESP%d" % proto
    hr, hi = r.send("HELLO", str(proto)), i.send("HELLO", str(proto))
    same_types(tag + " HELLO: the same keys, in order, and types", hr, hi)
    same(tag + " HELLO proto", pairs(hr)[2], pairs(hi)[2])
    exact_commands(r, i, tag, PLAIN)
    # Redis has 16 databases; idgen has only 0, and refuses the others as Redis refuses
    # those past its last.
    same(tag + " SELECT 1 (idgen)", ("error", "ERR DB index is out of range"),
         i.send("SELECT", "1"))
    r.send("SELECT", "0")
    cr, ci = r.send("CLIENT", "ID"), i.send("CLIENT", "ID")
    check(tag + " CLIENT ID is an integer", cr[0] == ci[0] == "int", "%r %r" % (cr, ci))
    cr, ci = r.send("CLIENT", "INFO"), i.send("CLIENT", "INFO")
    want = "verbatim" if proto == 3 else "bulk"
    check(tag + " CLIENT INFO type", cr[0] == ci[0] == want, "%r %r" % (cr, ci))
    fields = lambda t: dict(f.split("=", 1) for f in t[1].split())
    fr, fi = fields(cr), fields(ci)
    for key in ("id", "name", "db", "resp", "user", "cmd"):
        check("%s CLIENT INFO has %s=" % (tag, key), key in fi, ci[1])
    for key in ("db", "resp", "user", "cmd", "multi", "flags"):
        same("%s CLIENT INFO %s=" % (tag, key), fr.get(key), fi.get(key))
    ir, ii = r.send("INFO"), i.send("INFO")
    check(tag + " INFO type", ir[0] == ii[0] == want and ii[1].startswith("# Server\r\n"),
          "%r" % (ii,))
    ir, ii = r.send("INFO", "server"), i.send("INFO", "SERVER")
    check(tag + " INFO server: one section", ii[1].count("# ") == 1 and ir[0] == ii[0],
          "%r" % (ii,))
    cr, ci = r.send("COMMAND", "COUNT"), i.send("COMMAND", "COUNT")
    check(tag + " COMMAND COUNT", cr[0] == ci[0] == "int" and ci[1] >= 10, "%r" % (ci,))
    # COMMAND DOCS: a map of name to a map; idgen's keys are among Redis's, typed alike.
    for args in (["COMMAND", "DOCS", "ping"], ["COMMAND", "DOCS", "PING", "echo", "nosuch"]):
        dr, di = r.send(*args), i.send(*args)
        check(tag + " " + " ".join(args) + ": same names", [k for k, _ in pairs(dr)] ==
              [k for k, _ in pairs(di)], "%r %r" % (dr, di))
        for (name, docr), (_, doci) in zip(pairs(dr), pairs(di)):
            kr, ki = dict(pairs(docr)), dict(pairs(doci))
            check("%s COMMAND DOCS %s: keys among Redis's, same types" % (tag, name),
                  docr[0] == doci[0] and all(k in kr and kr[k][0] == v[0]
                                             for k, v in ki.items()), "%r %r" % (kr, ki))
    # COMMAND INFO: the ten fields of each entry, each of the type Redis gives.
    for args in (["COMMAND", "INFO", "ping", "echo"], ["COMMAND", "INFO", "ping", "nosuch"]):
        er, ei = r.send(*args), i.send(*args)
        types = lambda t: [[f[0] for f in e[1]] if e[0] == "array" else e[0] for e in t[1]]
        same(tag + " " + " ".join(args) + ": field types", types(er), types(ei))
        same(tag + " " + " ".join(args) + ": name, arity",
             [e[1][:2] for e in er[1] if e[0] == "array"],
             [e[1][:2] for e in ei[1] if e[0] == "array"])
    ar, ai = r.send("COMMAND"), i.send("COMMAND")
    check(tag + " COMMAND: an array of 10-field entries", ai[0] == ar[0] == "array" and
          all(e[0] == "array" and len(e[1]) == 10 for e in ai[1]), "%r" % (ai,)[:300])
    exact_commands(r, i, tag, [["RESET"], ["CLIENT", "GETNAME"], ["PING"], ["QUIT"]])


def with_token(rport, iport, token):
    r, i = Conn(rport), Conn(iport)
    exact_commands(r, i, "no AUTH yet:", [
        ["PING"], ["ECHO", "x"], ["CLIENT", "ID"], ["SELECT", "0"], ["COMMAND", "COUNT"],
        ["INFO"], ["FOO"], ["PING", "a", "b"], ["HELLO"], ["HELLO", "3"],
        ["HELLO", "3", "AUTH", "default", "wrong"], ["AUTH", "a", "b", "c"]])
    r.close(), i.close()
    r, i = Conn(rport), Conn(iport)
    exact_commands(r, i, "token:", [
        ["HELLO", "3", "AUTH", "bob", token], ["AUTH", token], ["PING"], ["RESET"], ["PING"]])
    hr = r.send("HELLO", "3", "AUTH", "default", token, "SETNAME", "nm")
    hi = i.send("HELLO", "3", "AUTH", "default", token, "SETNAME", "nm")
    same_types("HELLO 3 AUTH default token SETNAME nm", hr, hi)
    exact_commands(r, i, "token:", [["CLIENT", "GETNAME"], ["PING"], ["QUIT"]])


def without_token(rport, iport):
    for proto in (2, 3):
        shapes(Conn(rport), Conn(iport), proto)
    r, i = Conn(rport), Conn(iport)
    exact_commands(r, i, "no token:", [["AUTH", "x"], ["AUTH", "default", "x"],
                                       ["AUTH", "bob", "x"], ["PING"]])


def main():
    rport, iport = int(sys.argv[1]), int(sys.argv[2])
    if len(sys.argv) > 3:
        with_token(rport, iport, sys.argv[3])
    else:
        without_token(rport, iport)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        sys.exit(1)


main()
