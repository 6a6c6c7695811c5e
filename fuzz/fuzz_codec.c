/* fuzz_codec.c: libFuzzer target: arbitrary bytes into every 64-bit ID parser; what
 * parses must be the one canonical text of its value (format gives it back, up to case
 * where a form ignores case) and parse again to the same value. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "idgen.h"

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond))                                                                           \
      __builtin_trap();                                                                    \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static idgen_layout layouts[8];
static size_t nlayouts;

static void init_layouts(void) {
  const char *const *names = idgen_layout_preset_names();
  for (size_t i = 0; names[i] && nlayouts < sizeof layouts / sizeof layouts[0]; i++)
    if (idgen_layout_preset(names[i], &layouts[nlayouts]) == 0)
      nlayouts++;
}

static int case_blind(idgen_format f) {
  return f == IDGEN_FORMAT_BASE32 || f == IDGEN_FORMAT_HEX;
}

/* text parsed as f under l gave id: check it is canonical and round-trips. */
static void check_parsed(const char *text, size_t len, idgen_format f,
                         const idgen_layout *l, uint64_t id) {
  char out[IDGEN_FORMAT_MAX];
  CHECK(id <= INT64_MAX);
  int n = idgen_id_format(id, f, l, out, sizeof out);
  CHECK(n > 0 && (size_t)n == len);
  CHECK(case_blind(f) ? strncasecmp(out, text, len) == 0 : memcmp(out, text, len) == 0);
  uint64_t again = ~id;
  CHECK(idgen_id_parse(out, (size_t)n, f, l, &again) == 0 && again == id);
}

/* An ID value: every form writes it and reads it back. */
static void check_value(uint64_t id) {
  char out[IDGEN_FORMAT_MAX];
  for (int f = IDGEN_FORMAT_DECIMAL; f <= IDGEN_FORMAT_HEX; f++) {
    int n = idgen_id_format(id, (idgen_format)f, NULL, out, sizeof out);
    CHECK(n > 0);
    uint64_t back = ~id;
    CHECK(idgen_id_parse(out, (size_t)n, (idgen_format)f, NULL, &back) == 0 && back == id);
  }
  for (size_t i = 0; i < nlayouts; i++) {
    int n = idgen_id_format(id, IDGEN_FORMAT_FRIENDLY, &layouts[i], out, sizeof out);
    if (n < 0) { /* only an ID with bits outside the layout has no friendly form */
      idgen_parts p;
      CHECK(n == IDGEN_ERANGE && idgen_decompose(&layouts[i], id, &p) < 0);
      continue;
    }
    uint64_t back = ~id;
    CHECK(idgen_id_parse(out, (size_t)n, IDGEN_FORMAT_FRIENDLY, &layouts[i], &back) == 0 &&
          back == id);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!nlayouts)
    init_layouts();
  const char *text = (const char *)data;
  uint64_t id;
  for (int f = IDGEN_FORMAT_DECIMAL; f <= IDGEN_FORMAT_HEX; f++) {
    id = 0;
    if (idgen_id_parse(text, size, (idgen_format)f, NULL, &id) == 0)
      check_parsed(text, size, (idgen_format)f, NULL, id);
    else
      CHECK(id == 0); /* untouched on failure */
  }
  for (size_t i = 0; i < nlayouts; i++) {
    id = 0;
    if (idgen_id_parse(text, size, IDGEN_FORMAT_FRIENDLY, &layouts[i], &id) == 0)
      check_parsed(text, size, IDGEN_FORMAT_FRIENDLY, &layouts[i], id);
    else
      CHECK(id == 0);
    idgen_format which = (idgen_format)-1;
    id = 0;
    if (idgen_id_parse_any(text, size, &layouts[i], &id, &which) == 0)
      check_parsed(text, size, which, &layouts[i], id);
    else
      CHECK(id == 0 && which == (idgen_format)-1);
  }
  /* The bytes as a value, too. */
  uint64_t v = 0;
  memcpy(&v, data, size < sizeof v ? size : sizeof v);
  check_value(v & INT64_MAX);
  return 0;
}
