"""idgen_client: a thin ctypes binding of libidgen-client (include/idgen/client.h) for
Debian's /usr/bin/python3. Every rule (buffers, refills, failover, max_wait, max_age_ms,
fork) lives in the C library; this module only converts arguments and errors.

    from idgen_client import Client
    with Client("127.0.0.1:6380,127.0.0.1:6381", max_wait_ms=50) as c:
        one = c.next("orders")          # an int
        many = c.next_n("orders", 100)  # a list of ints

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


def _load():
    path = os.environ.get("IDGEN_CLIENT_LIB") or ctypes.util.find_library("idgen-client")
    lib = ctypes.CDLL(path or "libidgen-client.so")
    lib.idgen_client_options_init.argtypes = [ctypes.POINTER(_Options)]
    lib.idgen_client_new.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                     ctypes.POINTER(_Options), ctypes.c_char_p, ctypes.c_size_t]
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

    def __init__(self, servers, auth_token=None, **options):
        global _lib
        if _lib is None:
            _lib = _load()
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
        rc = _lib.idgen_client_new(ctypes.byref(handle), servers.encode(), ctypes.byref(opt),
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
