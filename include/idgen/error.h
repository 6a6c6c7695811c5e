/* idgen/error.h: error codes shared by every part of libidgen. */
#ifndef IDGEN_ERROR_H
#define IDGEN_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(IDGEN_BUILDING)
#define IDGEN_API __attribute__((visibility("default")))
#else
#define IDGEN_API
#endif

/* Every call returns 0 (or a count) on success and a negative code on failure; on
 * failure its outputs are untouched. System errors are negated errno values (-ENOENT,
 * ...); idgen's own codes lie below -1000, so the two ranges never meet. */
#define IDGEN_ERRORS(X)                                                                    \
  X(EINVAL, -1001, "invalid argument")                                                     \
  X(ENOMEM, -1002, "out of memory")                                                        \
  X(EBUFSIZE, -1003, "output buffer too small")                                            \
  X(ELAYOUT, -1010, "invalid layout")                                                      \
  X(ERANGE, -1011, "value does not fit its field")                                         \
  X(ETIMEEND, -1012, "time field exhausted: the layout's end date has passed")             \
  X(EBEFOREEPOCH, -1013, "time is before the layout's epoch")                              \
  X(ECLOCKBACK, -1020, "clock moved backwards")                                            \
  X(ELEASE, -1021, "worker lease lost or expired: not issuing")                            \
  X(ECAP, -1022, "high-water mark cap reached: not issuing")                               \
  X(ENOTARMED, -1023, "no worker ID held: not issuing")                                    \
  X(EEXHAUSTED, -1024, "no values left in this millisecond")                               \
  X(EFORKED, -1025, "used in a forked child: arm it again in this process")                \
  X(EEMPTY, -1030, "empty input")                                                          \
  X(ELENGTH, -1031, "wrong length")                                                        \
  X(ECHAR, -1032, "invalid character")                                                     \
  X(EOVERFLOW, -1033, "value out of range")                                                \
  X(ESIGN, -1034, "sign not allowed")                                                      \
  X(EFORMAT, -1035, "malformed input")                                                     \
  X(EVERSION, -1036, "wrong UUID version or variant")                                      \
  X(ENOWORKER, -1040, "all worker IDs are taken")                                          \
  X(EUNAVAIL, -1041, "coordination service unavailable")                                   \
  X(ECONFLICT, -1042, "lost a race for a worker ID")                                       \
  X(EPROTO, -1043, "unexpected reply from the coordination service")                       \
  X(ECLOCKSKEW, -1044, "local clock disagrees with the fleet")                             \
  X(ETIMEDOUT, -1045, "timed out")                                                         \
  X(ENOPROVIDER, -1046, "lease provider not in this program (etcd: link libidgen-etcd)")   \
  X(EBACKEND, -1050, "segment backend unavailable and no buffered numbers left")          \
  X(EPERIOD, -1051, "segment period cannot be entered: the clock is in none it can issue in")

enum {
#define IDGEN_ERROR_ENUM(name, value, text) IDGEN_##name = (value),
  IDGEN_ERRORS(IDGEN_ERROR_ENUM)
#undef IDGEN_ERROR_ENUM
};

/* A sentence for the code: idgen's own or a negated errno. Never NULL; thread-safe. */
IDGEN_API const char *idgen_strerror(int err);
/* The code's name, "IDGEN_ELEASE" or "ENOENT". Never NULL; thread-safe. */
IDGEN_API const char *idgen_err_name(int err);

#ifdef __cplusplus
}
#endif
#endif
