/* test_server_callers.c: the Space-Saving tables of callers' names (server/callers.h):
 * names sanitized and capped, exact counts while a slot is free, the bound (each listed
 * count at least the true one and at most error_bound above it) over a stream of 10,000
 * names split between two tables, the replace-min step, a connection's cached slot after
 * its name was evicted, at most N + 1 series in /metrics, and a reader merging while the
 * owner counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "server/callers.h"

static void name_of(idgen__caller_name *n, const char *s) {
  idgen__caller_name_set(n, s, strlen(s));
}

/* The merged stat of s, or NULL if it is not among the top n. */
static const idgen__caller_stat *listed(const idgen__callers_top *top, const char *s) {
  for (size_t i = 0; i < top->n; i++)
    if (!strcmp(top->all[i].name, s))
      return &top->all[i];
  return NULL;
}

static void test_names(void **state) {
  (void)state;
  idgen__caller_name n;
  name_of(&n, "redis-py");
  assert_string_equal(n.s, "redis-py");
  name_of(&n, "");
  assert_string_equal(n.s, "-");
  name_of(&n, "other");
  assert_string_equal(n.s, "_other");
  name_of(&n, "others");
  assert_string_equal(n.s, "others");
  name_of(&n, "a\"b\\c\nd\re\tf\x7f\xc3\xa9 g");
  assert_string_equal(n.s, "a_b_c_d_e_f___ g");
  char big[10000];
  memset(big, 'x', sizeof big);
  idgen__caller_name_set(&n, big, sizeof big);
  assert_int_equal(n.len, IDGEN_CALLER_NAME_MAX);
  assert_int_equal(strlen(n.s), IDGEN_CALLER_NAME_MAX);
  idgen__caller_name m;
  idgen__caller_name_set(&m, big, IDGEN_CALLER_NAME_MAX);
  assert_int_equal(n.hash, m.hash);
}

/* While no table is full, every count is exact and the bound is 0. */
static void test_exact(void **state) {
  (void)state;
  idgen__callers *c;
  assert_int_equal(idgen__callers_new(&c, 2), 0);
  char s[16];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 40; i++) {
      idgen__caller_name n;
      snprintf(s, sizeof s, "n%d", i);
      name_of(&n, s);
      idgen__caller_ref ref = IDGEN__CALLER_REF_NONE;
      for (int j = 0; j <= i; j++)
        idgen__callers_count(idgen__callers_table_of(c, (size_t)k), &n, &ref, 1);
    }
  idgen__callers_top top;
  assert_int_equal(idgen__callers_merge(c, &top), 0);
  assert_int_equal(top.error_bound, 0);
  assert_int_equal(top.nall, 40);
  assert_int_equal(top.n, 40);
  assert_int_equal(top.total, 2 * 40 * 41 / 2);
  assert_int_equal(top.other, 0);
  assert_string_equal(top.all[0].name, "n39");
  for (int i = 0; i < 40; i++) {
    snprintf(s, sizeof s, "n%d", i);
    const idgen__caller_stat *st = listed(&top, s);
    assert_non_null(st);
    assert_int_equal(st->count, 2 * (i + 1));
    assert_int_equal(st->at_least, 2 * (i + 1));
  }
  idgen__callers_top_free(&top);
  idgen__callers_free(c);
}

/* A stream of 10,000 light names (1 to 3 requests each) and 4 heavy ones (2,000 each),
 * shuffled, over two tables: the heavy ones listed, every listed name within the bound,
 * the bound within the theory's total / N per table, the sums exact. */
#define LIGHT 10000
#define HEAVY 4
#define HEAVY_EACH 2000
static void test_bound(void **state) {
  (void)state;
  size_t n = 0, cap = LIGHT * 3 + HEAVY * HEAVY_EACH;
  int *stream = malloc(cap * sizeof *stream);
  uint64_t *truth = calloc(LIGHT + HEAVY, sizeof *truth);
  assert_non_null(stream);
  assert_non_null(truth);
  srand(7);
  for (int i = 0; i < LIGHT; i++)
    for (int j = 0, k = 1 + rand() % 3; j < k; j++)
      stream[n++] = i;
  for (int h = 0; h < HEAVY; h++)
    for (int j = 0; j < HEAVY_EACH; j++)
      stream[n++] = LIGHT + h;
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)rand() % i;
    int x = stream[i - 1];
    stream[i - 1] = stream[j];
    stream[j] = x;
  }
  idgen__callers *c;
  assert_int_equal(idgen__callers_new(&c, 2), 0);
  uint64_t per_table[2] = {0, 0};
  char s[32];
  for (size_t i = 0; i < n; i++) {
    idgen__caller_name nm;
    snprintf(s, sizeof s, stream[i] < LIGHT ? "light-%d" : "heavy-%d", stream[i]);
    name_of(&nm, s);
    idgen__caller_ref ref = IDGEN__CALLER_REF_NONE;
    size_t k = (size_t)rand() % 2;
    idgen__callers_count(idgen__callers_table_of(c, k), &nm, &ref, 1);
    per_table[k]++;
    truth[stream[i]]++;
  }
  idgen__callers_top top;
  assert_int_equal(idgen__callers_merge(c, &top), 0);
  assert_int_equal(top.total, n);
  assert_int_equal(top.n, IDGEN_CALLERS_N);
  assert_true(top.nall <= 2 * IDGEN_CALLERS_N);
  /* Space-Saving: a table's smallest counter is at most its stream / N. */
  assert_true(top.error_bound > 0);
  assert_true(top.error_bound <=
              per_table[0] / IDGEN_CALLERS_N + per_table[1] / IDGEN_CALLERS_N);
  uint64_t sum = 0;
  for (size_t i = 0; i < top.n; i++) {
    const idgen__caller_stat *st = &top.all[i];
    int id = atoi(st->name + 6); /* light-ID, heavy-ID */
    uint64_t f = truth[id];
    if (st->count < f || st->count > f + top.error_bound || st->at_least > f)
      fail_msg("%s: true %llu, listed %llu (at least %llu), bound %llu", st->name,
               (unsigned long long)f, (unsigned long long)st->count,
               (unsigned long long)st->at_least, (unsigned long long)top.error_bound);
    sum += st->count;
  }
  assert_int_equal(sum + top.other, n);
  for (int h = 0; h < HEAVY; h++) {
    snprintf(s, sizeof s, "heavy-%d", LIGHT + h);
    assert_non_null(listed(&top, s));
  }
  idgen__callers_top_free(&top);
  idgen__callers_free(c);
  free(stream);
  free(truth);
}

/* A full table, every counter 2 but one at 1: a new name takes that one, with count 2
 * and error 1; the others stay. */
static void test_replace_min(void **state) {
  (void)state;
  idgen__callers *c;
  assert_int_equal(idgen__callers_new(&c, 1), 0);
  idgen__callers_table *t = idgen__callers_table_of(c, 0);
  char s[16];
  for (int i = 0; i < IDGEN_CALLERS_N; i++) {
    idgen__caller_name n;
    snprintf(s, sizeof s, "n%d", i);
    name_of(&n, s);
    idgen__caller_ref ref = IDGEN__CALLER_REF_NONE;
    idgen__callers_count(t, &n, &ref, i == 37 ? 1 : 2);
  }
  idgen__caller_name fresh;
  name_of(&fresh, "fresh");
  idgen__caller_ref ref = IDGEN__CALLER_REF_NONE;
  idgen__callers_count(t, &fresh, &ref, 1);
  idgen__callers_top top;
  assert_int_equal(idgen__callers_merge(c, &top), 0);
  assert_int_equal(top.nall, IDGEN_CALLERS_N);
  assert_null(listed(&top, "n37"));
  const idgen__caller_stat *st = listed(&top, "fresh");
  assert_non_null(st);
  assert_int_equal(st->count, 2);
  assert_int_equal(st->at_least, 1);
  assert_int_equal(top.error_bound, 2);
  for (int i = 0; i < IDGEN_CALLERS_N; i++) {
    snprintf(s, sizeof s, "n%d", i);
    if (i != 37)
      assert_int_equal(listed(&top, s)->count, 2);
  }
  idgen__callers_top_free(&top);
  /* The cached slot of n0, taken since by another name: n0 counts where it is now. */
  idgen__caller_name n0, x;
  name_of(&n0, "n0");
  name_of(&x, "x");
  idgen__caller_ref r0 = IDGEN__CALLER_REF_NONE, rx = IDGEN__CALLER_REF_NONE;
  idgen__callers_count(t, &n0, &r0, 1); /* n0: 3, its slot cached */
  for (int i = 0; i < 200; i++) {
    char y[16];
    snprintf(y, sizeof y, "y%d", i);
    idgen__caller_name ny;
    name_of(&ny, y);
    idgen__caller_ref ry = IDGEN__CALLER_REF_NONE;
    idgen__callers_count(t, &ny, &ry, 1); /* churn: every counter climbs past 3 */
  }
  idgen__callers_count(t, &x, &rx, 1000);
  idgen__callers_count(t, &n0, &r0, 1);
  assert_int_equal(idgen__callers_merge(c, &top), 0);
  assert_true(listed(&top, "x")->count >= 1000);
  assert_true(listed(&top, "x")->at_least <= 1000);
  st = listed(&top, "n0");
  assert_non_null(st);
  assert_true(st->count >= 4);
  assert_true(st->at_least <= 4);
  idgen__callers_top_free(&top);
  idgen__callers_free(c);
}

/* 10,000 names over 3 tables, hostile ones among them: the metrics text has at most
 * N + 1 caller series, each a clean label. */
static void test_metrics_series(void **state) {
  (void)state;
  idgen__callers *c;
  assert_int_equal(idgen__callers_new(&c, 3), 0);
  char s[64];
  for (int i = 0; i < 10000; i++) {
    idgen__caller_name n;
    int len = snprintf(s, sizeof s, "c\"%d\\\n\x01\xff", i);
    idgen__caller_name_set(&n, s, (size_t)len);
    idgen__caller_ref ref = IDGEN__CALLER_REF_NONE;
    idgen__callers_count(idgen__callers_table_of(c, (size_t)i % 3), &n, &ref, 1);
  }
  idgen__buf b = {0};
  idgen__callers_render_metrics(c, &b);
  idgen__buf_addc(&b, 0);
  assert_false(b.failed);
  int series = 0;
  for (char *line = b.data; line && *line;) {
    char *nl = strchr(line, '\n');
    assert_non_null(nl);
    *nl = 0;
    if (!strncmp(line, "idgen_caller_requests_total{caller=\"", 36)) {
      series++;
      char *v = line + 36, *end = strchr(v, '"');
      assert_non_null(end);
      assert_int_equal(strncmp(end, "\"} ", 3), 0);
      for (char *p = v; p < end; p++)
        assert_true(*p >= ' ' && *p <= '~' && *p != '\\');
    }
    line = nl + 1;
  }
  assert_int_equal(series, IDGEN_CALLERS_N + 1);
  idgen__buf_free(&b);
  idgen__callers_free(c);
}

/* A reader merges while the owner counts and replaces: every name it reads is whole. */
static idgen__callers *shared;
static _Atomic int done;
static void *writer(void *arg) {
  (void)arg;
  idgen__callers_table *t = idgen__callers_table_of(shared, 0);
  char s[64];
  for (int i = 0; i < 200000; i++) {
    idgen__caller_name n;
    int id = i % 7 == 0 ? 1 : i;
    snprintf(s, sizeof s, "%08d-%0*d", id, 40, id);
    name_of(&n, s);
    idgen__caller_ref ref = IDGEN__CALLER_REF_NONE;
    idgen__callers_count(t, &n, &ref, 1);
  }
  atomic_store(&done, 1);
  return NULL;
}

static void test_concurrent_merge(void **state) {
  (void)state;
  assert_int_equal(idgen__callers_new(&shared, 1), 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, writer, NULL), 0);
  int merges = 0;
  while (!atomic_load(&done) || merges < 3) {
    idgen__callers_top top;
    assert_int_equal(idgen__callers_merge(shared, &top), 0);
    for (size_t i = 0; i < top.nall; i++) {
      const char *nm = top.all[i].name;
      char want[64];
      snprintf(want, sizeof want, "%08d-%0*d", atoi(nm), 40, atoi(nm));
      if (strcmp(nm, want))
        fail_msg("a torn name: %s", nm);
    }
    idgen__callers_top_free(&top);
    merges++;
  }
  pthread_join(th, NULL);
  idgen__callers_top top;
  assert_int_equal(idgen__callers_merge(shared, &top), 0);
  assert_int_equal(top.total, 200000);
  assert_string_equal(top.all[0].name, "00000001-0000000000000000000000000000000000000001");
  idgen__callers_top_free(&top);
  idgen__callers_free(shared);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),          cmocka_unit_test(test_exact),
      cmocka_unit_test(test_bound),          cmocka_unit_test(test_replace_min),
      cmocka_unit_test(test_metrics_series), cmocka_unit_test(test_concurrent_merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
