"""idgen_client: a thin ctypes binding of libidgen-client (include/idgen/client.h) for
Debian's /usr/bin/python3. Every rule (buffers, refills, failover, max_wait, max_age_ms,
fork) lives in the C library; this module only converts arguments and errors.

    from idgen_client import Client
    with Client("127.0.0.1:6380,127.0.0.1:6381", max_wait_ms=50) as c:
        one = c.next("orders")          # an int
        many = c.next_n("orders", 100)  # a list of ints

Over TLS (`idgen serve --tls-cert/--tls-key`), the fields of idgen_client_tls:

    Client("10.0.0.1:6380", tls_ca="ca.pem")                  # the server verified by ca.pem
    Client("10.0.0.1:6380", tls_ca="ca.pem", tls_cert="client.pem", tls_key="client.key")
    Client("10.0.0.1:6380", tls=True)                          # the system's CA store
    Client("10.0.0.1:6380", tls_ca="ca.pem", tls_server_name="ids.internal")

Client.server_error(i) is why server i last failed ("" if it answers), e.g. the TLS
reason of a refused handshake.

The library is found by $IDGEN_CLIENT_LIB (a path), else as libidgen-client.so.
"""
import ctypes
import ctypes.util
import os

__all__ = ["Client", "IdgenError", "Unavailable"]


class IdgenError(Exception):
    """A negative IDGEN_E* code of the library: .code, .name, and the message."""

    def __init__(self, code, name, message):
        super().__init__("%s: %s" % (name, message))
        self.code = code
        self.name = name


class Unavailable(IdgenError):
    """IDGEN_EUNAVAIL: no ID within max_wait_ms."""


class _Options(ctypes.Structure):
    _fields_ = [
        ("auth_token", ctypes.c_char_p),
        ("max_wait_ms", ctypes.c_int64),
        ("max_age_ms", ctypes.c_int64),
        ("refill_period_ms", ctypes.c_int64),
        ("timeout_ms", ctypes.c_int64),
        ("backoff_ms", ctypes.c_int64),
        ("min_batch", ctypes.c_uint64),
        ("max_batch", ctypes.c_uint64),
        ("max_array", ctypes.c_uint64),
        ("low_water_pct", ctypes.c_int),
        ("clock", ctypes.c_void_p),
    ]


class _Tls(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("ca_file", ctypes.c_char_p),
        ("cert_file", ctypes.c_char_p),
        ("key_file", ctypes.c_char_p),
        ("server_name", ctypes.c_char_p),
    ]


_TLS_KEYS = {"tls_ca": "ca_file", "tls_cert": "cert_file", "tls_key": "key_file",
             "tls_server_name": "server_name"}


def _load():
    path = os.environ.get("IDGEN_CLIENT_LIB") or ctypes.util.find_library("idgen-client")
    lib = ctypes.CDLL(path or "libidgen-client.so")
    lib.idgen_client_options_init.argtypes = [ctypes.POINTER(_Options)]
    lib.idgen_client_new.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                     ctypes.POINTER(_Options), ctypes.c_char_p, ctypes.c_size_t]
    lib.idgen_client_new_tls.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                         ctypes.POINTER(_Options), ctypes.POINTER(_Tls),
                                         ctypes.c_char_p, ctypes.c_size_t]
    lib.idgen_client_server_error.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                              ctypes.c_char_p, ctypes.c_size_t]
    lib.idgen_client_next.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                      ctypes.POINTER(ctypes.c_uint64)]
    lib.idgen_client_next_n.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                        ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    lib.idgen_client_name_error.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                            ctypes.c_size_t]
    lib.idgen_client_free.argtypes = [ctypes.c_void_p]
    return lib


_lib = None
# include/idgen/error.h, the codes the client returns.
_NAMES = {-1001: "IDGEN_EINVAL", -1002: "IDGEN_ENOMEM", -1041: "IDGEN_EUNAVAIL"}


class Client:
    """A libidgen-client handle; thread-safe like the C one (next, next_n)."""

    _c = None

    def __init__(self, servers, auth_token=None, tls=False, tls_ca=None, tls_cert=None,
                 tls_key=None, tls_server_name=None, **options):
        global _lib
        if _lib is None:
            _lib = _load()
        given = {"tls_ca": tls_ca, "tls_cert": tls_cert, "tls_key": tls_key,
                 "tls_server_name": tls_server_name}
        t = None
        if tls or any(v is not None for v in given.values()):
            t = _Tls()
            t.struct_size = ctypes.sizeof(_Tls)
            for key, value in given.items():
                if value is not None:
                    setattr(t, _TLS_KEYS[key], os.fsencode(value))
        opt = _Options()
        _lib.idgen_client_options_init(ctypes.byref(opt))
        for key, value in options.items():
            if key not in dict(_Options._fields_) or key in ("clock", "auth_token"):
                raise TypeError("unknown option %r" % key)
            setattr(opt, key, value)
        if auth_token is not None:
            opt.auth_token = auth_token.encode()
        err = ctypes.create_string_buffer(256)
        handle = ctypes.c_void_p()
        rc = _lib.idgen_client_new_tls(ctypes.byref(handle), servers.encode(),
                                       ctypes.byref(opt), ctypes.byref(t) if t else None,
                                       err, len(err))
        if rc < 0:
            raise IdgenError(rc, _NAMES.get(rc, str(rc)), err.value.decode())
        self._c = handle

    def _error(self, rc, name):
        why = ctypes.create_string_buffer(256)
        _lib.idgen_client_name_error(self._c, name, why, len(why))
        cls = Unavailable if rc == -1041 else IdgenError
        return cls(rc, _NAMES.get(rc, str(rc)), why.value.decode() or "no ID")

    def next(self, name):
        out = ctypes.c_uint64()
        bname = name.encode()
        rc = _lib.idgen_client_next(self._c, bname, ctypes.byref(out))
        if rc < 0:
            raise self._error(rc, bname)
        return out.value

    def next_n(self, name, n):
        out = (ctypes.c_uint64 * n)()
        bname = name.encode()
        rc = _lib.idgen_client_next_n(self._c, bname, out, n)
        if rc < 0:
            raise self._error(rc, bname)
        return list(out)

    def server_error(self, i):
        """Why server i (0-based, in the order given) last failed; "" if it answers."""
        why = ctypes.create_string_buffer(256)
        _lib.idgen_client_server_error(self._c, i, why, len(why))
        return why.value.decode()

    def close(self):
        if self._c:
            _lib.idgen_client_free(self._c)
            self._c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if _lib is not None:
            self.close()
