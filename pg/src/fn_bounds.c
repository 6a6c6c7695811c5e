/* fn_bounds.c: IDs from a time: idgen_first_id(ts [, layout]) and idgen_last_id(ts
 * [, layout]), the smallest and the largest ID whose time is ts (issue 28), so that a
 * time range is a range of the primary key: WHERE id BETWEEN idgen_first_id(a) AND
 * idgen_last_id(b), with no created_at column. */
#include "idgen_pg.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(sql_idgen_first_id);
PG_FUNCTION_INFO_V1(sql_idgen_last_id);

/* timestamptz (µs since 2000-01-01) -> Unix ms, rounding down. */
static int64 unix_ms_of(TimestampTz ts) {
  int64 us = ts + (int64)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000000;
  return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

static Datum bound(FunctionCallInfo fcinfo, int last) {
  TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
  idgen_layout layout = idgen_pg_layout;
  if (PG_NARGS() > 1 && !PG_ARGISNULL(1)) {
    char *spec = text_to_cstring(PG_GETARG_TEXT_PP(1));
    char err[256];
    if (idgen_layout_parse(spec, strlen(spec), 0, &layout, err, sizeof err) < 0)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("idgen: invalid layout \"%s\"", spec), errdetail("%s", err)));
  }
  if (TIMESTAMP_NOT_FINITE(ts))
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("idgen: an infinite time has no ID")));
  int64 unix_ms = unix_ms_of(ts);
  uint64_t id = 0;
  int rc = last ? idgen_layout_last_id(&layout, unix_ms, &id)
                : idgen_layout_first_id(&layout, unix_ms, &id);
  if (rc < 0) {
    char from[32], to[32];
    idgen_format_time(layout.epoch_ms, from, sizeof from);
    idgen_format_time(idgen_layout_end_ms(&layout), to, sizeof to);
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("idgen: that time is %s layout %s's range",
                           rc == IDGEN_EBEFOREEPOCH ? "before" : "past",
                           layout.name[0] ? layout.name : "custom"),
                    errdetail("Its IDs run from %s to %s (excluded).", from, to)));
  }
  PG_RETURN_INT64((int64)id);
}

Datum sql_idgen_first_id(PG_FUNCTION_ARGS) {
  return bound(fcinfo, 0);
}

Datum sql_idgen_last_id(PG_FUNCTION_ARGS) {
  return bound(fcinfo, 1);
}
