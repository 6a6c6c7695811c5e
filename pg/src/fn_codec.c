/* fn_codec.c: SQL functions that read IDs without issuing any: idgen_time(id),
 * idgen_decode(id [, layout]) (the object of `idgen decode --json` as a row),
 * idgen_format(id, format) and idgen_parse(text [, format]). */
#include "idgen_pg.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(sql_idgen_time);
PG_FUNCTION_INFO_V1(sql_idgen_decode);
PG_FUNCTION_INFO_V1(sql_idgen_format);
PG_FUNCTION_INFO_V1(sql_idgen_parse);

/* The parts of id under layout, or an ERROR naming the layout. */
static void decompose(const idgen_layout *layout, int64 id, idgen_parts *parts) {
  int rc = id < 0 ? IDGEN_ESIGN : idgen_decompose(layout, (uint64_t)id, parts);
  if (rc < 0)
    ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                    errmsg("idgen: %lld is not an ID of layout %s: %s", (long long)id,
                           layout->name, idgen_strerror(rc))));
}

/* The time an ID was made, from its time field. IMMUTABLE as declared only while
 * idgen.layout stays the one the IDs were made under: see docs/postgres.md. */
Datum sql_idgen_time(PG_FUNCTION_ARGS) {
  idgen_parts parts;
  decompose(&idgen_pg_layout, PG_GETARG_INT64(0), &parts);
  PG_RETURN_TIMESTAMPTZ(idgen_pg_timestamp(parts.time_ms));
}

/* A layout argument (a preset or a spec), or the active layout when it is NULL. */
static void layout_arg(FunctionCallInfo fcinfo, int argno, idgen_layout *out) {
  if (PG_NARGS() <= argno || PG_ARGISNULL(argno)) {
    *out = idgen_pg_layout;
    return;
  }
  char *spec = text_to_cstring(PG_GETARG_TEXT_PP(argno));
  char err[256];
  if (idgen_layout_parse(spec, strlen(spec), 0, out, err, sizeof err) < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("idgen: invalid layout \"%s\"", spec), errdetail("%s", err)));
}

/* The layout's node fields by name, then the sequence: `idgen decode --json`'s
 * "fields" object. */
static Datum fields_json(const idgen_layout *layout, const idgen_parts *parts) {
  StringInfoData buf;
  initStringInfo(&buf);
  appendStringInfoChar(&buf, '{');
  for (unsigned i = 0, node = 0; i < layout->nfields; i++)
    if (layout->fields[i].kind == IDGEN_FIELD_NODE && node < IDGEN_LAYOUT_NODES_MAX)
      appendStringInfo(&buf, "\"%s\":%llu,", layout->fields[i].name,
                       (unsigned long long)parts->node[node++]);
  appendStringInfo(&buf, "\"sequence\":%llu}", (unsigned long long)parts->seq);
  return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

enum {
  DEC_ID,
  DEC_LAYOUT,
  DEC_TIME,
  DEC_TIME_MS,
  DEC_WORKER,
  DEC_SEQUENCE,
  DEC_FIELDS,
  DEC_N
};

Datum sql_idgen_decode(PG_FUNCTION_ARGS) {
  TupleDesc desc;
  if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
    elog(ERROR, "idgen_decode: return type must be a row type");
  if (PG_ARGISNULL(0))
    PG_RETURN_NULL();
  idgen_layout layout;
  layout_arg(fcinfo, 1, &layout);
  int64 id = PG_GETARG_INT64(0);
  idgen_parts parts;
  decompose(&layout, id, &parts);
  Datum values[DEC_N];
  bool nulls[DEC_N];
  memset(nulls, 0, sizeof nulls);
  values[DEC_ID] = Int64GetDatum(id);
  values[DEC_LAYOUT] = CStringGetTextDatum(layout.name);
  values[DEC_TIME] = TimestampTzGetDatum(idgen_pg_timestamp(parts.time_ms));
  values[DEC_TIME_MS] = Int64GetDatum(parts.time_ms);
  values[DEC_WORKER] = Int64GetDatum((int64)parts.worker);
  values[DEC_SEQUENCE] = Int64GetDatum((int64)parts.seq);
  values[DEC_FIELDS] = fields_json(&layout, &parts);
  PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

static idgen_format format_arg(text *arg) {
  char *name = text_to_cstring(arg);
  idgen_format format;
  if (idgen_format_parse(name, &format) < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("idgen: unknown format \"%s\"", name),
                    errhint("Formats: decimal, base62, base32, hex, friendly.")));
  return format;
}

Datum sql_idgen_format(PG_FUNCTION_ARGS) {
  int64 id = PG_GETARG_INT64(0);
  idgen_format format = format_arg(PG_GETARG_TEXT_PP(1));
  char out[IDGEN_FORMAT_MAX];
  int rc = idgen_id_format((uint64_t)id, format, &idgen_pg_layout, out, sizeof out);
  if (rc < 0)
    ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                    errmsg("idgen: %lld has no %s form: %s", (long long)id,
                           idgen_format_name(format), idgen_strerror(rc))));
  PG_RETURN_TEXT_P(cstring_to_text(out));
}

/* Any form, told apart by its shape as `idgen decode` does, or the one named. */
Datum sql_idgen_parse(PG_FUNCTION_ARGS) {
  if (PG_ARGISNULL(0))
    PG_RETURN_NULL();
  text *arg = PG_GETARG_TEXT_PP(0);
  const char *s = VARDATA_ANY(arg);
  size_t len = VARSIZE_ANY_EXHDR(arg);
  uint64_t id;
  int rc;
  if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
    rc = idgen_id_parse(s, len, format_arg(PG_GETARG_TEXT_PP(1)), &idgen_pg_layout, &id);
  else
    rc = idgen_id_parse_any(s, len, &idgen_pg_layout, &id, NULL);
  if (rc < 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                    errmsg("idgen: \"%s\" is not an ID: %s", text_to_cstring(arg),
                           idgen_strerror(rc))));
  PG_RETURN_INT64((int64)id);
}
