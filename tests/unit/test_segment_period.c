/* test_segment_period.c: time-scoped segment sequences (issue 28) on a fake clock over a
 * midnight: each period its own key from 1, the old period's blocks dropped, no number
 * handed out outside its period, a clock back across midnight refused, a full period
 * refused; periods and timezones (Europe/Berlin's DST) computed right. */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "fake_clock.h"
#include "segment/segment.h"

#define MS INT64_C(1000000)
/* 2026-11-30T23:59:59.000Z */
#define BEFORE_MIDNIGHT_NS (INT64_C(1796083199000) * MS)

/* A backend in memory with one counter per key, and a log of the keys started. */
typedef struct keys_backend {
  idgen__segment_backend base;
  char keys[8][IDGEN_SEGMENT_NAME_MAX + 1];
  uint64_t max[8];
  int nkeys, starts, fetches;
  char last_fetch[IDGEN_SEGMENT_NAME_MAX + 1];
} keys_backend;

static int key_index(keys_backend *k, const char *key) {
  for (int i = 0; i < k->nkeys; i++)
    if (!strcmp(k->keys[i], key))
      return i;
  return -1;
}

static int kb_init(idgen__segment_backend *b, const char *key, uint64_t step,
                   uint64_t start_after, int force) {
  (void)force; /* the recorded highest is checked per backend (issue 35) */
  keys_backend *k = (keys_backend *)b;
  (void)step, (void)start_after;
  k->starts++;
  if (key_index(k, key) >= 0)
    return 1;
  if (k->nkeys == 8)
    return idgen__segment_why(b, -3, "keys_backend: 8 keys already");
  snprintf(k->keys[k->nkeys], sizeof k->keys[0], "%s", key);
  k->max[k->nkeys++] = 0;
  return 0;
}

static int kb_fetch(idgen__segment_backend *b, const char *key, uint64_t step,
                    uint64_t floor, idgen__segment_block *out) {
  keys_backend *k = (keys_backend *)b;
  (void)floor;
  k->fetches++;
  snprintf(k->last_fetch, sizeof k->last_fetch, "%s", key);
  int i = key_index(k, key);
  if (i < 0)
    return idgen__segment_why(b, -2, "no key %s", key);
  k->max[i] += step;
  *out = (idgen__segment_block){k->max[i], step, 1};
  return 0;
}

static void kb_free(idgen__segment_backend *b) {
  (void)b;
}

static const idgen__segment_backend_class kb_class = {"keys",  kb_init, kb_fetch,
                                                      kb_free, NULL,    NULL, NULL};

typedef struct fixture {
  keys_backend k;
  idgen_clock_fake clock;
  idgen__tz *tz;
  idgen__segment *seg;
} fixture;

static void make(fixture *f, idgen__period_kind period, const char *zone, unsigned digits,
                 int64_t t_ns) {
  memset(&f->k, 0, sizeof f->k);
  f->k.base.vtable = &kb_class;
  idgen_clock_fake_init(&f->clock, t_ns);
  char err[256];
  assert_int_equal(idgen__tz_load(zone, &f->tz, err, sizeof err), 0);
  idgen__segment_config c;
  idgen__segment_config_init(&c, "orders", &f->k.base, &f->clock.base);
  c.step = 10;
  c.max_step = 10;
  c.prefetch_pct = 0; /* the next block is fetched at once: one is always buffered */
  c.manual = 1;
  c.retry_ns = 100 * MS;
  c.period = period;
  c.tz = f->tz;
  c.period_digits = digits;
  int rc = idgen__segment_new(&f->seg, &c, err, sizeof err);
  if (rc)
    print_error("new: %s\n", err);
  assert_int_equal(rc, 0);
}

static void done(fixture *f) {
  idgen__segment_free(f->seg);
  idgen__tz_free(f->tz);
}

static uint64_t next(fixture *f) {
  uint64_t v = 0;
  assert_int_equal(idgen__segment_next(f->seg, &v), 0);
  return v;
}

static void test_midnight(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "UTC", 6, BEFORE_MIDNIGHT_NS);
  assert_true(next(&f) == UINT64_C(20261130000001));
  assert_true(next(&f) == UINT64_C(20261130000002));
  idgen__segment_run_fetcher(f.seg); /* the buffered block of 20261130: 11-20 */
  idgen__segment_stats st;
  idgen__segment_stats_get(f.seg, &st);
  assert_true(st.next_left == 10);
  assert_string_equal(f.k.last_fetch, "orders:20261130");
  /* 999 ms later: still the 30th. */
  idgen_clock_fake_advance(&f.clock, 999 * MS);
  assert_true(next(&f) == UINT64_C(20261130000003));
  /* Midnight: the 1st of December starts at 1, under its own key. The first call
   * reserves 4, finds it outside its period and burns it; the period change then drops
   * the 30th's current block (5-10) and its buffered one (11-20) at once, rather than
   * burning them one call at a time. */
  idgen_clock_fake_advance(&f.clock, 1 * MS);
  assert_true(next(&f) == UINT64_C(20261201000001));
  assert_string_equal(f.k.keys[1], "orders:20261201");
  idgen__segment_stats_get(f.seg, &st);
  assert_true(st.period == 20261201);
  assert_true(st.period_burnt == 1);
  assert_true(st.period_dropped == 6 + 10);
  assert_true(next(&f) == UINT64_C(20261201000002));
  /* A batch across the next midnight: none of it has the old date after it. */
  idgen_clock_fake_set(&f.clock, (INT64_C(1796169600000) - 1) * MS); /* 23:59:59.999 */
  uint64_t batch[4];
  assert_int_equal(idgen__segment_next_batch(f.seg, batch, 2), 2);
  assert_true(batch[0] == UINT64_C(20261201000003));
  idgen_clock_fake_advance(&f.clock, MS);
  assert_int_equal(idgen__segment_next_batch(f.seg, batch, 4), 4);
  assert_true(batch[0] == UINT64_C(20261202000001) && batch[3] == UINT64_C(20261202000004));
  done(&f);
}

/* Numbers reserved before midnight and checked after are burnt, not handed out with the
 * old date: the fake clock moves on every read, so each reservation's check runs later
 * than its CAS. */
static void test_checked_after_the_reservation(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "UTC", 6, BEFORE_MIDNIGHT_NS + 999 * MS);
  assert_true(next(&f) / 1000000 == 20261130 || next(&f) / 1000000 == 20261201);
  f.clock.auto_advance_ns = MS / 2;
  for (int i = 0; i < 40; i++) {
    int64_t before = idgen_clock_now_ns(&f.clock.base);
    uint64_t v = next(&f);
    int64_t after = idgen_clock_now_ns(&f.clock.base);
    (void)before;
    /* The number's day is the day of a clock read between the call's start and end. */
    uint64_t day = v / 1000000;
    assert_true(day == 20261130 || day == 20261201);
    if (day == 20261130)
      assert_true(after - MS / 2 < INT64_C(1796083200000) * MS + MS);
  }
  done(&f);
}

static void test_clock_back_across_midnight(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "UTC", 6, BEFORE_MIDNIGHT_NS + 1000 * MS);
  assert_true(next(&f) == UINT64_C(20261201000001));
  idgen_clock_fake_advance(&f.clock, -2000 * MS); /* back to the 30th */
  uint64_t v = 0;
  assert_int_equal(idgen__segment_next(f.seg, &v), IDGEN_ECLOCKBACK);
  assert_true(v == 0);
  /* Back on the 1st: the number reserved while the clock was behind was burnt. */
  idgen_clock_fake_advance(&f.clock, 2000 * MS);
  assert_true(next(&f) == UINT64_C(20261201000003));
  done(&f);
}

static void test_full_period(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_MONTH, "UTC", 1, BEFORE_MIDNIGHT_NS); /* 1-9 a month */
  for (uint64_t i = 1; i <= 9; i++)
    assert_true(next(&f) == UINT64_C(202611) * 10 + i);
  uint64_t v = 0;
  assert_int_equal(idgen__segment_next(f.seg, &v), IDGEN_EBACKEND);
  char why[256];
  idgen__segment_last_error(f.seg, why, sizeof why);
  assert_non_null(strstr(why, "period 202611 is full"));
  /* No block more is leased for a full period: each would be burnt (issue 35). */
  int fetches = f.k.fetches;
  for (int i = 0; i < 5; i++) {
    idgen_clock_fake_advance(&f.clock, 150 * MS); /* past the retry pause */
    idgen__segment_run_fetcher(f.seg);
    assert_int_equal(idgen__segment_next(f.seg, &v), IDGEN_EBACKEND);
  }
  assert_int_equal(f.k.fetches, fetches);
  idgen_clock_fake_advance(&f.clock, 1000 * MS); /* December */
  assert_true(next(&f) == UINT64_C(2026121));
  done(&f);
}

/* Berlin: midnight of 1 December is 23:00Z the day before (CET, +1); of 1 July 22:00Z
 * (CEST, +2). The 30 November 23:30Z is 1 December in Berlin. */
static void test_timezone(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "Europe/Berlin", 6, (INT64_C(1796081400000)) * MS);
  assert_true(next(&f) == UINT64_C(20261201000001));
  done(&f);
  idgen__tz *tz;
  char err[128];
  assert_int_equal(idgen__tz_load("Europe/Berlin", &tz, err, sizeof err), 0);
  uint64_t n;
  int64_t start, end;
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_DAY, tz, INT64_C(1796081400000), &n, &start, &end), 0);
  assert_true(n == 20261201 && start == INT64_C(1796079600000) && end == start + 86400000);
  /* 2026-07-01T12:00Z: the day began 2026-06-30T22:00Z. */
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_DAY, tz, INT64_C(1782907200000), &n, &start, &end), 0);
  assert_true(n == 20260701 && start == INT64_C(1782856800000));
  /* 29 March 2026 has 23 hours in Berlin (clocks go forward at 02:00 CET). */
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_DAY, tz, INT64_C(1774785600000), &n, &start, &end), 0);
  assert_true(n == 20260329 && end - start == 23 * INT64_C(3600000));
  /* A year, a month. */
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_YEAR, tz, INT64_C(1782907200000), &n, &start, &end),
      0);
  assert_true(n == 2026 && start == INT64_C(1767222000000));
  assert_int_equal(
      idgen__period_of(IDGEN__PERIOD_MONTH, tz, INT64_C(1782907200000), &n, &start, &end),
      0);
  assert_true(n == 202607 && end == INT64_C(1785535200000));
  idgen__tz_free(tz);
  assert_int_equal(idgen__tz_load("Mars/Olympus", &tz, err, sizeof err), IDGEN_EINVAL);
  assert_non_null(strstr(err, "Mars/Olympus"));
  assert_int_equal(idgen__tz_load("../etc/passwd", &tz, err, sizeof err), IDGEN_EINVAL);
}

/* Santiago, 2026-09-06: 23:59:59 -04 is followed by 01:00:00 -03 (04:00Z), so the 6th
 * starts at 01:00 and the 5th ends at 04:00Z, not at a local midnight that does not
 * exist (before issue 35 the 5th ended at 03:00Z, before the instants it held). */
static void test_day_starting_at_one(void **state) {
  (void)state;
  static const struct {
    const char *zone;
    int64_t at_ms, start_ms, end_ms;
    uint64_t day;
  } cases[] = {
      /* 23:30 local the day before the jump; the day before has 24 h, from 04:00Z */
      {"America/Santiago", INT64_C(1788665400000), INT64_C(1788580800000),
       INT64_C(1788667200000), 20260905},
      {"America/Havana", INT64_C(1772944200000), INT64_C(1772859600000),
       INT64_C(1772946000000), 20260307},
      {"Atlantic/Azores", INT64_C(1774744200000), INT64_C(1774659600000),
       INT64_C(1774746000000), 20260328},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    idgen__tz *tz;
    char err[128];
    assert_int_equal(idgen__tz_load(cases[i].zone, &tz, err, sizeof err), 0);
    uint64_t n;
    int64_t start, end;
    assert_int_equal(
        idgen__period_of(IDGEN__PERIOD_DAY, tz, cases[i].at_ms, &n, &start, &end), 0);
    if (n != cases[i].day || start != cases[i].start_ms || end != cases[i].end_ms)
      fail_msg("%s: day %llu [%lld, %lld), want %llu [%lld, %lld)", cases[i].zone,
               (unsigned long long)n, (long long)start, (long long)end,
               (unsigned long long)cases[i].day, (long long)cases[i].start_ms,
               (long long)cases[i].end_ms);
    /* The next day starts at 01:00 local: 23 hours long. */
    assert_int_equal(idgen__period_of(IDGEN__PERIOD_DAY, tz, end, &n, &start, &end), 0);
    assert_true(n == cases[i].day + 1 && end - start == 23 * INT64_C(3600000));
    idgen__tz_free(tz);
  }
}

/* A clock that runs a day ahead at every read: each check after a reservation finds a
 * new period. A call refuses after a few changes (IDGEN_EPERIOD, the reason said) rather
 * than leasing block after block; before issue 35 it looped while keys lasted. */
static void test_period_changes_bounded(void **state) {
  (void)state;
  fixture f;
  make(&f, IDGEN__PERIOD_DAY, "UTC", 6, BEFORE_MIDNIGHT_NS);
  f.clock.auto_advance_ns = 86400000 * MS;
  uint64_t v = 0, range_first, range_count, range_stride, batch[3];
  assert_int_equal(idgen__segment_next(f.seg, &v), IDGEN_EPERIOD);
  assert_true(v == 0);
  char why[256];
  idgen__segment_last_error(f.seg, why, sizeof why);
  assert_non_null(strstr(why, "the period changed 4 times in one call"));
  assert_true(f.k.fetches <= 4);
  int fetches = f.k.fetches;
  assert_int_equal(idgen__segment_next_batch(f.seg, batch, 3), IDGEN_EPERIOD);
  assert_int_equal(
      idgen__segment_next_range(f.seg, 3, &range_first, &range_count, &range_stride),
      IDGEN_EPERIOD);
  assert_true(f.k.fetches - fetches <= 8);
  assert_string_equal(idgen_err_name(IDGEN_EPERIOD), "IDGEN_EPERIOD");
  done(&f);
}

/* ---- Every zone of the system's tzdata, 2026-2030 ---------------------------------- */

#define Y2026_MS INT64_C(1767225600000) /* 2026-01-01T00:00Z */
#define Y2031_MS INT64_C(1924992000000) /* 2031-01-01T00:00Z */

typedef struct zone_walk {
  const char *dir;
  size_t dirlen;
  dev_t dev[2048];
  ino_t ino[2048];
  size_t nseen, zones, periods, samples;
} zone_walk;

static zone_walk *walk;

/* The number of the period after the one numbered n. */
static uint64_t successor(idgen__period_kind kind, uint64_t n) {
  int y, m, d;
  assert_int_equal(idgen__period_date(kind, n, &y, &m, &d), 0);
  if (kind == IDGEN__PERIOD_YEAR)
    return n + 1;
  if (kind == IDGEN__PERIOD_MONTH)
    return m == 12 ? (uint64_t)(y + 1) * 100 + 1 : n + 1;
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int last = days[m - 1] + (m == 2 && y % 4 == 0 && (y % 100 || y % 400 == 0));
  if (d < last)
    return n + 1;
  return m == 12 ? (uint64_t)(y + 1) * 10000 + 101 : (uint64_t)y * 10000 + (uint64_t)(m + 1) * 100 + 1;
}

/* The instant t in period (n, start, end): period_of says so, the same bounds, and the
 * day is the one the C library's localtime gives (TZ set to the zone). */
static void expect_in(const char *zone, idgen__period_kind kind, const idgen__tz *tz,
                      int64_t t, uint64_t n, int64_t start, int64_t end) {
  uint64_t got;
  int64_t s, e;
  int rc = idgen__period_of(kind, tz, t, &got, &s, &e);
  walk->samples++;
  if (rc || got != n || s != start || e != end || !(s <= t && t < e))
    fail_msg("%s %s at %lld: rc %d period %llu [%lld, %lld), want %llu [%lld, %lld)", zone,
             idgen__period_name(kind), (long long)t, rc, (unsigned long long)got,
             (long long)s, (long long)e, (unsigned long long)n, (long long)start,
             (long long)end);
  if (kind == IDGEN__PERIOD_DAY) {
    time_t secs = (time_t)(t >= 0 ? t / 1000 : -((-t + 999) / 1000));
    struct tm tm;
    assert_non_null(localtime_r(&secs, &tm));
    uint64_t libc = (uint64_t)(tm.tm_year + 1900) * 10000 + (uint64_t)(tm.tm_mon + 1) * 100 +
                    (uint64_t)tm.tm_mday;
    if (libc != n)
      fail_msg("%s at %lld: day %llu, the C library says %llu", zone, (long long)t,
               (unsigned long long)n, (unsigned long long)libc);
  }
}

/* One zone, one kind: from the period holding 2026-01-01T00:00Z to the one holding
 * 2031-01-01T00:00Z, each period's end is the next one's start, the next one's number
 * is the next number, and every period is a non-empty interval; each bound ±1 ms and
 * ±1 s and each transition ±1 s lie in the period that holds them. */
static void zone_tiles(const char *zone, const idgen__tz *tz, idgen__period_kind kind) {
  uint64_t n;
  int64_t start, end;
  assert_int_equal(idgen__period_of(kind, tz, Y2026_MS - 2 * 86400000, &n, &start, &end), 0);
  int64_t tr = idgen__tz_next_transition_s(tz, start / 1000 - 2);
  while (start <= Y2031_MS) {
    if (end <= start)
      fail_msg("%s %s %llu: empty [%lld, %lld)", zone, idgen__period_name(kind),
               (unsigned long long)n, (long long)start, (long long)end);
    const int64_t near[] = {start, start + 1, start + 1000, end - 1000, end - 1};
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++)
      if (near[i] >= start && near[i] < end)
        expect_in(zone, kind, tz, near[i], n, start, end);
    for (; tr < INT64_MAX / 2 && tr * 1000 + 1000 < end;
         tr = idgen__tz_next_transition_s(tz, tr)) /* each transition ±1 s inside */
      for (int64_t t = tr * 1000 - 1000; t <= tr * 1000 + 1000; t += 1000)
        if (t >= start && t < end)
          expect_in(zone, kind, tz, t, n, start, end);
    uint64_t n2;
    int64_t s2, e2;
    assert_int_equal(idgen__period_of(kind, tz, end, &n2, &s2, &e2), 0);
    if (s2 != end || n2 != successor(kind, n))
      fail_msg("%s %s %llu [%lld, %lld) is followed by %llu [%lld, %lld)", zone,
               idgen__period_name(kind), (unsigned long long)n, (long long)start,
               (long long)end, (unsigned long long)n2, (long long)s2, (long long)e2);
    if (s2 - 1 >= start)
      expect_in(zone, kind, tz, s2 - 1, n, start, end);
    n = n2, start = s2, end = e2;
    walk->periods++;
  }
}

/* The zones: every TZif file under the tz directory (a file starting "TZif"; so not
 * zone.tab, iso3166.tab, tzdata.zi, leapseconds, leap-seconds.list), once per file
 * (links and the copies posixrules and localtime are the same inode), not under posix/
 * (the same files again) nor right/ (leap-second times: not the clock's). */
static int zone_file(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  const char *name = path + walk->dirlen + 1;
  if (type == FTW_D && ftw->level == 1 && (!strcmp(name, "posix") || !strcmp(name, "right")))
    return FTW_SKIP_SUBTREE;
  if (type != FTW_F)
    return FTW_CONTINUE;
  for (size_t i = 0; i < walk->nseen; i++)
    if (walk->dev[i] == st->st_dev && walk->ino[i] == st->st_ino)
      return FTW_CONTINUE;
  FILE *f = fopen(path, "rb");
  char magic[4] = {0};
  size_t got = f ? fread(magic, 1, 4, f) : 0;
  if (f)
    fclose(f);
  if (got != 4 || memcmp(magic, "TZif", 4))
    return FTW_CONTINUE;
  assert_true(walk->nseen < sizeof walk->ino / sizeof walk->ino[0]);
  walk->dev[walk->nseen] = st->st_dev;
  walk->ino[walk->nseen++] = st->st_ino;
  idgen__tz *tz;
  char err[256];
  if (idgen__tz_load(name, &tz, err, sizeof err))
    fail_msg("%s: %s", name, err);
  char tzvar[600];
  snprintf(tzvar, sizeof tzvar, ":%s", path);
  setenv("TZ", tzvar, 1);
  tzset();
  zone_tiles(name, tz, IDGEN__PERIOD_DAY);
  zone_tiles(name, tz, IDGEN__PERIOD_MONTH);
  zone_tiles(name, tz, IDGEN__PERIOD_YEAR);
  idgen__tz_free(tz);
  walk->zones++;
  return FTW_CONTINUE;
}

static void test_every_zone_tiles(void **state) {
  (void)state;
  static zone_walk w;
  const char *env = getenv("TZDIR");
  w.dir = env && *env ? env : "/usr/share/zoneinfo";
  w.dirlen = strlen(w.dir);
  walk = &w;
  assert_int_equal(nftw(w.dir, zone_file, 32, FTW_PHYS | FTW_ACTIONRETVAL), 0);
  unsetenv("TZ");
  tzset();
  print_message("%zu zones, %zu periods, %zu instants checked\n", w.zones, w.periods,
                w.samples);
  assert_true(w.zones > 300); /* the tz database is there (tzdata) */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_midnight),
      cmocka_unit_test(test_checked_after_the_reservation),
      cmocka_unit_test(test_clock_back_across_midnight),
      cmocka_unit_test(test_full_period),
      cmocka_unit_test(test_timezone),
      cmocka_unit_test(test_day_starting_at_one),
      cmocka_unit_test(test_period_changes_bounded),
      cmocka_unit_test(test_every_zone_tiles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
