/* fn_snowflake.c: SQL functions of the shared Snowflake generator: idgen_next(),
 * idgen_next_batch(n), idgen_status(), idgen_layout(). */
#include "idgen_pg.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(sql_idgen_next);
PG_FUNCTION_INFO_V1(sql_idgen_next_batch);
PG_FUNCTION_INFO_V1(sql_idgen_status);
PG_FUNCTION_INFO_V1(sql_idgen_layout);

/* The hot path: one CAS in the library; anything else (not armed yet, a refusal) goes
 * the slow way, which waits or raises the ERROR. */
Datum sql_idgen_next(PG_FUNCTION_ARGS) {
  uint64_t id;
  (void)fcinfo;
  if (unlikely(!idgen_pg_gen) || unlikely(idgen_gen_next(idgen_pg_gen, &id) < 0))
    idgen_pg_issue(&id, 1);
  PG_RETURN_INT64((int64)id);
}

typedef struct batch_state {
  uint64_t *ids;
  int32 next, count;
} batch_state;

/* n IDs, reserved a time unit's run at a time (one CAS each), returned in order. */
Datum sql_idgen_next_batch(PG_FUNCTION_ARGS) {
  FuncCallContext *fctx;
  if (SRF_IS_FIRSTCALL()) {
    int32 n = PG_GETARG_INT32(0);
    if (n < 0)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("idgen_next_batch: n must be 0 or more, not %d", n)));
    fctx = SRF_FIRSTCALL_INIT();
    MemoryContext old = MemoryContextSwitchTo(fctx->multi_call_memory_ctx);
    batch_state *st = palloc0(sizeof *st);
    st->count = n;
    if (n > 0) {
      st->ids = palloc((Size)n * sizeof *st->ids);
      idgen_pg_issue(st->ids, (size_t)n);
    }
    MemoryContextSwitchTo(old);
    fctx->user_fctx = st;
  }
  fctx = SRF_PERCALL_SETUP();
  batch_state *st = fctx->user_fctx;
  if (st->next < st->count)
    SRF_RETURN_NEXT(fctx, Int64GetDatum((int64)st->ids[st->next++]));
  SRF_RETURN_DONE(fctx);
}

TimestampTz idgen_pg_timestamp(int64 unix_ms) {
  return (TimestampTz)(unix_ms - (int64)(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) *
                                     SECS_PER_DAY * 1000) *
         1000;
}

/* The columns of idgen_status(), in order. */
enum {
  ST_STATE,
  ST_LEASE,
  ST_PROVIDER,
  ST_WORKER,
  ST_HWM,
  ST_FLOOR,
  ST_CAP,
  ST_ISSUED,
  ST_REFUSAL,
  ST_REFUSED,
  ST_CLOCK_BACK,
  ST_SEQ_WAITS,
  ST_CAP_WAITS,
  ST_RENEWALS,
  ST_RENEWAL_FAILURES,
  ST_LEASE_LOST,
  ST_HWM_WRITES,
  ST_ACQUISITIONS,
  ST_LAST_ERROR,
  ST_PID,
  ST_COLUMNS
};

static void put_time(Datum *values, bool *nulls, int col, int64 unix_ms) {
  if (unix_ms <= 0 || unix_ms == IDGEN_NO_CAP)
    nulls[col] = true;
  else
    values[col] = TimestampTzGetDatum(idgen_pg_timestamp(unix_ms));
}

/* The lease worker's last status and the generator's counters, as one row. */
Datum sql_idgen_status(PG_FUNCTION_ARGS) {
  TupleDesc desc;
  if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
    elog(ERROR, "idgen_status: return type must be a row type");
  if (!idgen_pg_shm)
    idgen_pg_not_loaded();
  idgen_pg_status st;
  idgen_pg_status_get(&st);
  idgen_gen_stats gs;
  idgen_gen_stats_get(idgen_pg_gen, &gs);

  Datum values[ST_COLUMNS];
  bool nulls[ST_COLUMNS];
  memset(nulls, 0, sizeof nulls);
  values[ST_STATE] = CStringGetTextDatum(st.state);
  values[ST_LEASE] = CStringGetTextDatum(idgen_lease_kind_name(idgen_pg_lease.kind));
  values[ST_PROVIDER] = CStringGetTextDatum(st.lease);
  if (st.worker < 0)
    nulls[ST_WORKER] = true;
  else
    values[ST_WORKER] = Int64GetDatum(st.worker);
  put_time(values, nulls, ST_HWM, st.hwm_ms);
  put_time(values, nulls, ST_FLOOR, st.floor_ms);
  put_time(values, nulls, ST_CAP, gs.refusal ? 0 : gs.cap_ms);
  values[ST_ISSUED] = Int64GetDatum((int64)gs.issued);
  if (gs.refusal)
    values[ST_REFUSAL] = CStringGetTextDatum(idgen_strerror(gs.refusal));
  else
    nulls[ST_REFUSAL] = true;
  values[ST_REFUSED] = Int64GetDatum(
      (int64)(gs.refused_lease + gs.refused_cap + gs.refused_unarmed + gs.refused_forked));
  values[ST_CLOCK_BACK] = Int64GetDatum((int64)gs.clock_back);
  values[ST_SEQ_WAITS] = Int64GetDatum((int64)gs.seq_waits);
  values[ST_CAP_WAITS] = Int64GetDatum((int64)gs.cap_waits);
  values[ST_RENEWALS] = Int64GetDatum((int64)st.renewals);
  values[ST_RENEWAL_FAILURES] = Int64GetDatum((int64)st.renewal_failures);
  values[ST_LEASE_LOST] = Int64GetDatum((int64)st.lease_lost);
  values[ST_HWM_WRITES] = Int64GetDatum((int64)st.hwm_writes);
  values[ST_ACQUISITIONS] = Int64GetDatum((int64)st.acquisitions);
  if (st.last_error[0])
    values[ST_LAST_ERROR] = CStringGetTextDatum(st.last_error);
  else
    nulls[ST_LAST_ERROR] = true;
  if (st.pid)
    values[ST_PID] = Int32GetDatum(st.pid);
  else
    nulls[ST_PID] = true;
  PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/* The active layout as a spec that idgen.layout (and idgen --layout) reads back. */
Datum sql_idgen_layout(PG_FUNCTION_ARGS) {
  char spec[256];
  (void)fcinfo;
  if (idgen_layout_format(&idgen_pg_layout, spec, sizeof spec) < 0)
    elog(ERROR, "idgen_layout: the layout does not fit %zu bytes", sizeof spec);
  PG_RETURN_TEXT_P(cstring_to_text(spec));
}
