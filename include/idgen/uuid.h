/* idgen/uuid.h: the 128-bit schemes: UUIDv7 and UUIDv4 (RFC 9562) and ULID, with
 * strict text and binary codecs. */
#ifndef IDGEN_UUID_H
#define IDGEN_UUID_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/clock.h"
#include "idgen/error.h"
#include "idgen/random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A UUID as its 16 bytes in network (big-endian) order: b[0] is the first byte of the
 * text form. Passed and returned by value. Byte order = text order = time order (v7). */
typedef struct idgen_uuid {
  uint8_t b[16];
} idgen_uuid;

/* A ULID as its 16 bytes, big-endian: 48-bit Unix ms, then 80 random bits. */
typedef struct idgen_ulid {
  uint8_t b[16];
} idgen_ulid;

#define IDGEN_UUID_TEXT_LEN 36                      /* 8-4-4-4-12, without the NUL */
#define IDGEN_ULID_TEXT_LEN 26                      /* Crockford base32, without the NUL */
#define IDGEN_UUID_MAX_MS ((int64_t)0xFFFFFFFFFFFF) /* largest 48-bit Unix ms */

/* ---- UUIDv7 ----------------------------------------------------------------------
 *
 * Layout (RFC 9562 §5.7): unix_ts_ms (48) | ver = 7 (4) | rand_a (12) | var = 10 (2) |
 * rand_b (62).
 *
 * Monotonicity (RFC 9562 §6.2): idgen uses Method 3 for rand_a and Method 2 for rand_b.
 *   - rand_a holds the sub-millisecond fraction of the clock, floor(ns_in_ms * 4096 /
 *     10^6) (steps of ~244 ns). Together with the ms this is a 60-bit "tick".
 *   - On a new tick, rand_b is 61 random bits under a zero guard bit (the top bit of
 *     rand_b), so a run of increments cannot overflow at once.
 *   - When the clock's tick is not above the last one issued (same tick, or the clock
 *     stepped back), the generator reuses the last tick and adds to rand_b a random
 *     increment in [1, 2^32] (Method 2: values stay unguessable). If rand_b would pass
 *     2^62 - 1 (after at least 2^29 values in one tick), it moves to the next tick, as
 *     the RFC allows, and starts a fresh rand_b.
 * Why Method 3 rather than a Method 1 counter in rand_a: the fraction orders values of
 * different generators (processes, hosts) at ~244 ns rather than 1 ms; a counter in
 * rand_a would leave only 11 random bits there and, by its value, leak how many IDs a
 * millisecond saw; with the counter in rand_b the generator never runs out in a tick
 * (2^29 or more values per 244 ns), so it never drifts ahead of the clock under load.
 * The RFC's own Appendix A.6 example (017f22e2-79b0-7cc3-98c4-dc0c0c07398f) is exactly
 * what this generator makes for a clock at 0x017F22E279B0 ms + 797.7 µs and random
 * bytes 18 c4 dc 0c 0c 07 39 8f.
 *
 * Random use: every value takes exactly 8 bytes from the source, read as a big-endian
 * u64 r: on a new tick rand_b = r & (2^61 - 1); otherwise increment = 1 + (r >> 32).
 *
 * Values from one generator strictly increase (as bytes, so as text), across threads
 * and clock steps back: while the clock is behind, the generator keeps counting on the
 * last tick. After fork(), the child's copy of a generator moves to the tick after the
 * last one with a fresh rand_b, so parent and child do not issue the same values. */
typedef struct idgen_uuid7_gen idgen_uuid7_gen;

typedef struct idgen_uuid7_config {
  idgen_clock *clock;   /* required; must outlive the generator (Unix ns) */
  idgen_random *random; /* required; must outlive the generator */
} idgen_uuid7_config;

/* Creates a v7 generator. IDGEN_EINVAL for a NULL out, config, clock or random;
 * IDGEN_ENOMEM. */
IDGEN_API int idgen_uuid7_new(idgen_uuid7_gen **out, const idgen_uuid7_config *config);
/* Frees; NULL is fine. No other call may be running on it. */
IDGEN_API void idgen_uuid7_free(idgen_uuid7_gen *gen);

/* Issues one UUIDv7, greater than every value this generator issued before.
 * Thread-safe (a short mutex section; the clock and random source are read outside
 * it). Errors: IDGEN_ERANGE if the clock is before 1970 (or, in theory, if the last
 * tick of 48-bit ms is used up: a Unix-ns clock ends in 2262, long before 10889), or
 * an error of the random source. *out is untouched on failure. */
IDGEN_API int idgen_uuid7_next(idgen_uuid7_gen *gen, idgen_uuid *out);

/* Issues n increasing UUIDv7 into out[0..n) with one clock read and one lock (random
 * bytes are fetched 64 values at a time). Returns n, or a negative error if none was
 * issued; if the random source fails part-way, returns how many were issued
 * (out[0..count) are valid). Thread-safe: a concurrent caller's values fall before or
 * after the whole batch. */
IDGEN_API int64_t idgen_uuid7_next_batch(idgen_uuid7_gen *gen, idgen_uuid *out, size_t n);

/* Builds the v7 of one tick without any state: unix_ns gives unix_ts_ms and the rand_a
 * fraction, rand_b's low 62 bits fill rand_b. IDGEN_ERANGE if unix_ns is out of range. */
IDGEN_API int idgen_uuid7_from_parts(int64_t unix_ns, uint64_t rand_b, idgen_uuid *out);

/* The Unix ms of a v7 (its first 48 bits). IDGEN_EVERSION if u is not version 7 with
 * the RFC variant; *unix_ms untouched then. Thread-safe. */
IDGEN_API int idgen_uuid7_time_ms(idgen_uuid u, int64_t *unix_ms);

/* The smallest (last = 0) or largest (last = 1) UUIDv7 whose time is unix_ms: version
 * and variant set, every other bit after the 48-bit time zero or one. IDGEN_EBEFOREEPOCH
 * before 1970, IDGEN_ETIMEEND past IDGEN_UUID_MAX_MS. Thread-safe. */
IDGEN_API int idgen_uuid7_bound(int64_t unix_ms, int last, idgen_uuid *out);

/* ---- UUIDv4 ---------------------------------------------------------------------- */

/* One UUIDv4: 16 bytes from random, then version 4 and variant 10 set (122 random
 * bits). Thread-safe if the source is (the system source is). Errors: IDGEN_EINVAL for
 * NULL arguments, or the source's error; *out untouched on failure. */
IDGEN_API int idgen_uuid4(idgen_random *random, idgen_uuid *out);
/* n UUIDv4 into out[0..n) with one fill of 16 * n bytes. Returns n or a negative error
 * (out's contents then unspecified but never returned as values). */
IDGEN_API int64_t idgen_uuid4_batch(idgen_random *random, idgen_uuid *out, size_t n);

/* ---- Any UUID: fields, text, bytes ----------------------------------------------- */

typedef enum idgen_uuid_variant {
  IDGEN_UUID_VARIANT_NCS = 0,       /* 0xxx: reserved, NCS backward compatibility */
  IDGEN_UUID_VARIANT_RFC = 2,       /* 10xx: RFC 9562 (and 4122) */
  IDGEN_UUID_VARIANT_MICROSOFT = 6, /* 110x: reserved, Microsoft */
  IDGEN_UUID_VARIANT_FUTURE = 7,    /* 111x: reserved for the future (and the Max UUID) */
} idgen_uuid_variant;

/* The version nibble (top 4 bits of byte 6), 0..15. Thread-safe. */
IDGEN_API int idgen_uuid_version(idgen_uuid u);
/* The variant, from the top bits of byte 8. Thread-safe. */
IDGEN_API idgen_uuid_variant idgen_uuid_variant_of(idgen_uuid u);
/* "ncs", "rfc9562", "microsoft", "future". Never NULL. */
IDGEN_API const char *idgen_uuid_variant_name(idgen_uuid_variant variant);
/* memcmp order: <0, 0, >0. For v7 (and ULID bytes) this is time order. */
IDGEN_API int idgen_uuid_compare(idgen_uuid a, idgen_uuid b);

/* Writes the canonical text, 36 lowercase chars 8-4-4-4-12 plus a NUL, into out.
 * Returns 36, or IDGEN_EBUFSIZE if outlen < 37 (out untouched). Thread-safe. */
IDGEN_API int idgen_uuid_format(idgen_uuid u, char *out, size_t outlen);

/* Parses s[0..len) (no NUL needed). Accepts exactly the canonical form: 36 chars,
 * '-' at offsets 8, 13, 18 and 23 and a hex digit everywhere else; each hex digit may
 * be upper or lower case (RFC 9562 §4: case-insensitive on input), so mixed case is
 * accepted too. Nothing else: no braces, no "urn:uuid:", no 32-digit form without
 * hyphens, no surrounding space. Any version and variant is accepted (check with
 * idgen_uuid_version). Errors: IDGEN_EEMPTY (len 0), IDGEN_ELENGTH (len != 36),
 * IDGEN_EFORMAT (a hyphen missing from its place, or one where a digit belongs),
 * IDGEN_ECHAR (any other non-hex character). *out untouched on failure. Thread-safe. */
IDGEN_API int idgen_uuid_parse(const char *s, size_t len, idgen_uuid *out);

/* Copies 16 raw bytes (network order) into *out: IDGEN_ELENGTH unless len == 16. The
 * reverse is u.b itself. */
IDGEN_API int idgen_uuid_from_bytes(const void *bytes, size_t len, idgen_uuid *out);

/* ---- ULID ------------------------------------------------------------------------
 *
 * Per the ULID spec: 48-bit Unix ms + 80 random bits, written as 26 chars of Crockford
 * base32 (0-9 A-Z without I L O U), upper case. Plain mode: every value is the clock's
 * ms + 10 fresh random bytes (unordered within a ms). Monotonic mode (the spec's
 * "monotonicity"): within the same ms the 80 random bits are the last value's + 1;
 * when they would overflow, the generator returns IDGEN_EEXHAUSTED (as the spec
 * requires) and keeps refusing until the clock reaches a later ms. Beyond the spec, a
 * monotonic generator also stays monotonic when the clock steps back: it keeps the
 * last ms and counts on. After fork(), a monotonic generator's child copy moves to the
 * next ms with fresh random bits. Every value takes exactly 10 random bytes, except a
 * monotonic value in a ms already used, which takes none. */
typedef struct idgen_ulid_gen idgen_ulid_gen;

typedef struct idgen_ulid_config {
  idgen_clock *clock;   /* required; must outlive the generator (Unix ns) */
  idgen_random *random; /* required; must outlive the generator */
  int monotonic;        /* 0: plain; 1: monotonic */
} idgen_ulid_config;

/* Creates a ULID generator. IDGEN_EINVAL for NULL out, config, clock or random;
 * IDGEN_ENOMEM. */
IDGEN_API int idgen_ulid_new(idgen_ulid_gen **out, const idgen_ulid_config *config);
/* Frees; NULL is fine. No other call may be running on it. */
IDGEN_API void idgen_ulid_free(idgen_ulid_gen *gen);

/* Issues one ULID. Thread-safe (monotonic mode takes a short mutex; plain mode none).
 * Errors: IDGEN_EEXHAUSTED (monotonic: the 80 bits of this ms are used up),
 * IDGEN_ERANGE (clock before 1970), or the source's error. *out untouched on failure. */
IDGEN_API int idgen_ulid_next(idgen_ulid_gen *gen, idgen_ulid *out);
/* Issues n ULIDs into out[0..n) (increasing in monotonic mode) with one clock read.
 * Returns n, or a negative error if none was issued; if some were issued before
 * IDGEN_EEXHAUSTED, returns how many (out[0..count) are valid). Thread-safe. */
IDGEN_API int64_t idgen_ulid_next_batch(idgen_ulid_gen *gen, idgen_ulid *out, size_t n);

/* The Unix ms of a ULID (its first 48 bits). Thread-safe. */
IDGEN_API int64_t idgen_ulid_time_ms(idgen_ulid u);

/* The smallest (last = 0) or largest (last = 1) ULID whose time is unix_ms: the 80
 * random bits all zero or all one. Errors as idgen_uuid7_bound. Thread-safe. */
IDGEN_API int idgen_ulid_bound(int64_t unix_ms, int last, idgen_ulid *out);

/* Writes the 26 upper-case chars plus a NUL. Returns 26 or IDGEN_EBUFSIZE (outlen <
 * 27; out untouched). Thread-safe. */
IDGEN_API int idgen_ulid_format(idgen_ulid u, char *out, size_t outlen);

/* Parses exactly 26 chars of Crockford base32 from s[0..len), either case. Maps nothing
 * silently: I, L, O and U (which Crockford's decoders often read as 1, 1, 0 and V) are
 * rejected like any other character outside the alphabet. Errors: IDGEN_EEMPTY,
 * IDGEN_ELENGTH (len != 26), IDGEN_ECHAR (a character outside the alphabet),
 * IDGEN_EOVERFLOW (above 7ZZZZZZZZZZZZZZZZZZZZZZZZZ, i.e. 128 bits: first char > 7).
 * *out untouched on failure. Thread-safe. */
IDGEN_API int idgen_ulid_parse(const char *s, size_t len, idgen_ulid *out);

/* Copies 16 raw bytes into *out: IDGEN_ELENGTH unless len == 16. */
IDGEN_API int idgen_ulid_from_bytes(const void *bytes, size_t len, idgen_ulid *out);

#ifdef __cplusplus
}
#endif
#endif
