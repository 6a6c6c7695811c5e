#!/usr/bin/python3
"""ff1_reference.py: FF1 (NIST SP 800-38G rev. 1, Algorithms 7 and 8) written a second
time, straight from the standard, with Python's big integers and the AES of Debian's
python3-cryptography: an implementation that shares no code with src/opaque/ff1.c, to
check idgen's opaque IDs against.

  ff1_reference.py selftest                        NIST samples 1-9
  ff1_reference.py encode|decode KEYHEX TWEAK ID...  63-bit IDs, radix 2, tweak as UTF-8

Run it with /usr/bin/python3 (Debian's python3-cryptography imports only there)."""
import math
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def aes_ecb(key):
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return lambda block: enc.update(block)


def num(digits, radix):
    x = 0
    for d in digits:
        x = x * radix + d
    return x


def str_m(x, m, radix):
    out = []
    for _ in range(m):
        out.append(x % radix)
        x //= radix
    return out[::-1]


def ff1(key, tweak, radix, digits, decrypt=False):
    aes = aes_ecb(key)
    n, t = len(digits), len(tweak)
    u = n // 2
    v = n - u
    a, b = list(digits[:u]), list(digits[u:])
    # ceil(v * log2(radix)) computed exactly: the bits of radix^v - 1
    bb = ((radix ** v - 1).bit_length() + 7) // 8
    d = 4 * math.ceil(bb / 4) + 4
    p = bytes([1, 2, 1]) + radix.to_bytes(3, "big") + bytes([10, u % 256]) \
        + n.to_bytes(4, "big") + t.to_bytes(4, "big")

    def prf(x):
        y = bytes(16)
        for i in range(0, len(x), 16):
            y = aes(bytes(c ^ e for c, e in zip(y, x[i:i + 16])))
        return y

    def y_of(i, half):
        q = tweak + bytes((-t - bb - 1) % 16) + bytes([i]) + num(half, radix).to_bytes(bb, "big")
        r = prf(p + q)
        s = r
        j = 1
        while len(s) < d:
            s += aes(bytes(c ^ e for c, e in zip(r, j.to_bytes(16, "big"))))
            j += 1
        return int.from_bytes(s[:d], "big")

    rounds = range(9, -1, -1) if decrypt else range(10)
    for i in rounds:
        m = u if i % 2 == 0 else v
        if decrypt:
            c = (num(b, radix) - y_of(i, a)) % radix ** m
            a, b = str_m(c, m, radix), a
        else:
            c = (num(a, radix) + y_of(i, b)) % radix ** m
            a, b = b, str_m(c, m, radix)
    return a + b


ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
NIST_KEY = bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94")
NIST = [
    (16, 10, "", "0123456789", "2433477484"),
    (16, 10, "39383736353433323130", "0123456789", "6124200773"),
    (16, 36, "3737373770717273373737", "0123456789abcdefghi", "a9tv40mll9kdu509eum"),
    (24, 10, "", "0123456789", "2830668132"),
    (24, 10, "39383736353433323130", "0123456789", "2496655549"),
    (24, 36, "3737373770717273373737", "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"),
    (32, 10, "", "0123456789", "6657667009"),
    (32, 10, "39383736353433323130", "0123456789", "1001623463"),
    (32, 36, "3737373770717273373737", "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"),
]


def selftest():
    for k, radix, tweak, pt, ct in NIST:
        digits = [ALPHABET.index(c) for c in pt]
        out = ff1(NIST_KEY[:k], bytes.fromhex(tweak), radix, digits)
        got = "".join(ALPHABET[x] for x in out)
        back = ff1(NIST_KEY[:k], bytes.fromhex(tweak), radix, out, decrypt=True)
        if got != ct or back != digits:
            sys.exit(f"ff1_reference: NIST sample failed: {got} != {ct}")
    print("ok: NIST FF1 samples 1-9")


def main(argv):
    if argv[1:2] == ["selftest"]:
        selftest()
        return
    if len(argv) < 5 or argv[1] not in ("encode", "decode"):
        sys.exit(__doc__)
    key, tweak = bytes.fromhex(argv[2]), argv[3].encode("utf-8")
    for text in argv[4:]:
        x = int(text)
        bits = [(x >> (62 - k)) & 1 for k in range(63)]
        out = ff1(key, tweak, 2, bits, decrypt=argv[1] == "decode")
        print(num(out, 2))


if __name__ == "__main__":
    main(sys.argv)
