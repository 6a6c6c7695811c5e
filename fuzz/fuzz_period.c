/* fuzz_period.c: libFuzzer target for issue 28's parsers: arbitrary bytes as a TIME of
 * `idgen at` (then its bounds under snowflake, uuidv7 and ulid), and, split at the first
 * newline, as a period generator's format template and a text to read back under it
 * (the first byte picks the period and the digits). None may crash or read past the end;
 * a text that parses must make itself again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/time_arg.h"
#include "segment/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  char *text = malloc(size);
  if (!text)
    return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  int64_t ms;
  if (idgen__time_arg_parse(text, size - 1, INT64_C(1796083200000), &ms) == 0) {
    idgen_layout l;
    char out[64], err[256];
    idgen_layout_preset("snowflake", &l);
    for (int s = 0; s < 3; s++)
      idgen__bound_text((idgen__bound_scheme)s, &l, ms, data[0] & 1, out, sizeof out, err,
                        sizeof err);
  }
  char *nl = strchr(text, '\n');
  if (nl) {
    *nl = '\0';
    idgen__seg_format f;
    char err[256];
    idgen__period_kind p = (idgen__period_kind)(1 + data[0] % 3);
    unsigned digits = 1 + (data[0] >> 2) % 10;
    if (idgen__seg_format_compile(&f, text, "orders", p, digits, err, sizeof err) == 0) {
      uint64_t v, period, n;
      const char *t = nl + 1;
      if (idgen__seg_format_parse(&f, t, strlen(t), &v, &period, &n) == 0) {
        char again[IDGEN_SEG_FORMAT_MAX + 64];
        int len = idgen__seg_format_text(&f, v, again, sizeof again);
        if (len < 0 || strcmp(again, t))
          abort();
      }
    }
  }
  free(text);
  return 0;
}
