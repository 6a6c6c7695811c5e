/* idgen/opaque.h: opaque public IDs: a keyed permutation of the 63-bit IDs (FF1, NIST
 * SP 800-38G, on AES), so users see an ID that tells neither time, nor worker, nor
 * volume, and only the key turns it back. What it protects and what it does not:
 * docs/opaque.md.
 *
 * These functions live in their own library, libidgen-opaque (pkg-config idgen-opaque),
 * which needs OpenSSL's libcrypto; libidgen itself does not. This header names no
 * OpenSSL type, so including it (idgen.h does) costs C users nothing unless they call
 * it. */
#ifndef IDGEN_OPAQUE_H
#define IDGEN_OPAQUE_H

#include <stddef.h>
#include <stdint.h>

#include "idgen/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct idgen_opaque idgen_opaque;

/* Longest key, in bytes (AES-256). */
#define IDGEN_OPAQUE_KEY_MAX 32
/* Longest tweak, in bytes. */
#define IDGEN_OPAQUE_TWEAK_MAX 4096

/* Makes the permutation for one key and one tweak. key: 16 bytes (AES-128), 24
 * (AES-192) or 32 (AES-256); it is copied into OpenSSL's key schedule, and the caller
 * may wipe its own copy at once. tweak: tweaklen bytes taken as they are (NULL with
 * tweaklen 0 is the empty tweak), at most IDGEN_OPAQUE_TWEAK_MAX: two tweaks under one
 * key give unrelated permutations, so give each generator its own (idgen serve uses
 * the generator's name, "default" for the default one). The ID's 63 bits are FF1's
 * numeral string, radix 2, most significant bit first (STR_2^63 in the standard).
 * Errors: IDGEN_EINVAL (out NULL, a key of another length, tweak NULL with tweaklen >
 * 0, tweak too long), IDGEN_ENOMEM. Not thread-safe with uses of *out (there are none
 * yet). */
IDGEN_API int idgen_opaque_new(idgen_opaque **out, const uint8_t *key, size_t keylen,
                               const uint8_t *tweak, size_t tweaklen);

/* Wipes the key schedule and every value derived from the key, and frees. NULL is
 * fine. No other call may be using o. */
IDGEN_API void idgen_opaque_free(idgen_opaque *o);

/* The opaque form of id: another value in [0, 2^63 - 1], so it fits a signed 64-bit
 * column and prints in every codec (idgen/codec.h). The same (key, tweak, id) always
 * gives the same value, and different IDs give different values. IDGEN_EOVERFLOW if id
 * is 2^63 or more; IDGEN_EINVAL for a NULL argument; IDGEN_ENOMEM if OpenSSL cannot
 * allocate the per-call cipher context. *out is written only on success.
 * Thread-safe: any number of threads may call encode and decode on one o at once. Each
 * call takes one of 8 cipher contexts that o holds (one atomic exchange); a call that
 * finds all 8 taken copies one for itself, which costs about a third more (see
 * docs/benchmarks.md). */
IDGEN_API int idgen_opaque_encode(const idgen_opaque *o, uint64_t id, uint64_t *out);

/* The inverse: the ID whose opaque form is opaque. Every value below 2^63 decodes to
 * some ID (this is a permutation, not a signature): a caller that must refuse made-up
 * values checks that the ID exists. Errors and threads as idgen_opaque_encode. */
IDGEN_API int idgen_opaque_decode(const idgen_opaque *o, uint64_t opaque, uint64_t *id);

/* idgen_opaque_encode / idgen_opaque_decode of in[0..n) into out[0..n) (out may be in),
 * taking a cipher context once for the whole batch. Every
 * value is checked first: IDGEN_EOVERFLOW if one is 2^63 or more, IDGEN_EINVAL for a
 * NULL argument (n == 0 is fine), IDGEN_ENOMEM if the context cannot be had; out is
 * untouched after any of these. (AES failing part way, which OpenSSL does not do on a
 * ready context, would return IDGEN_ENOMEM with out partly written.) Thread-safe as the
 * single calls. */
IDGEN_API int idgen_opaque_encode_batch(const idgen_opaque *o, const uint64_t *in,
                                        uint64_t *out, size_t n);
IDGEN_API int idgen_opaque_decode_batch(const idgen_opaque *o, const uint64_t *in,
                                        uint64_t *out, size_t n);

/* Reads a key written as text: exactly 32 or 64 hex digits (a 128- or 256-bit key),
 * either case, optionally followed by one "\n" or "\r\n", and nothing else. Writes the
 * key into key[0..*keylen). Errors, in this order: IDGEN_EEMPTY (no characters),
 * IDGEN_ECHAR (a character that is not a hex digit, or anything after the newline),
 * IDGEN_ELENGTH (a number of digits other than 32 or 64), IDGEN_EINVAL (a NULL
 * argument). key is untouched on failure. Thread-safe. */
IDGEN_API int idgen_opaque_key_parse(const char *text, size_t len,
                                     uint8_t key[IDGEN_OPAQUE_KEY_MAX], size_t *keylen);

/* idgen_opaque_key_parse on the contents of the file at path (`idgen opaque keygen`
 * writes one). Errors: a negated errno from open/read (-ENOENT, -EACCES, ...),
 * IDGEN_ELENGTH for a file longer than any key text, else as idgen_opaque_key_parse.
 * The bytes read are wiped before it returns. Thread-safe. */
IDGEN_API int idgen_opaque_key_load(const char *path, uint8_t key[IDGEN_OPAQUE_KEY_MAX],
                                    size_t *keylen);

#ifdef __cplusplus
}
#endif
#endif
