/* config_file.c: the YAML of `idgen serve --config` into generator entries, through
 * libyaml's document loader (aliases share a node, so no input can make it expand). */
#include "server/config_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

typedef struct reader {
  const char *path;
  yaml_document_t *doc;
  char *err;
  size_t errlen;
} reader;

static int fail(reader *r, const yaml_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(reader *r, const yaml_node_t *at, const char *fmt, ...) {
  int n = at ? snprintf(r->err, r->errlen, "%s:%zu: ", r->path, at->start_mark.line + 1)
             : snprintf(r->err, r->errlen, "%s: ", r->path);
  if (n >= 0 && (size_t)n < r->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static yaml_node_t *node(reader *r, int index) {
  return yaml_document_get_node(r->doc, index);
}

static const char *scalar(const yaml_node_t *n) {
  return (const char *)n->data.scalar.value;
}

/* A key must be a plain string; writes it (shown safely) into what for messages. */
static int key_of(reader *r, const yaml_node_t *k, const char *where, char *out,
                  size_t outlen) {
  if (!k || k->type != YAML_SCALAR_NODE)
    return fail(r, k, "%s: a key must be a string", where);
  size_t len = k->data.scalar.length;
  if (len == 0 || len >= outlen || strlen(scalar(k)) != len)
    return fail(r, k, "%s: key '%.40s' is empty, too long or holds a NUL byte", where,
                scalar(k));
  memcpy(out, scalar(k), len + 1);
  return 0;
}

/* A list of scalars into o->items. */
static int read_list(reader *r, const char *where, yaml_node_t *v, idgen__config_option *o) {
  size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  o->items = calloc(n ? n : 1, sizeof *o->items);
  if (!o->items)
    return fail(r, v, "out of memory");
  for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
       it++) {
    yaml_node_t *item = node(r, *it);
    if (!item || item->type != YAML_SCALAR_NODE ||
        strlen(scalar(item)) != item->data.scalar.length)
      return fail(r, item ? item : v, "%s.%s: want a list of names", where, o->key);
    if (!(o->items[o->nitems] = strdup(scalar(item))))
      return fail(r, item, "out of memory");
    o->nitems++;
  }
  return 0;
}

/* section is "generators" or "tokens" (whose options may be lists). */
static int read_entry(reader *r, const char *section, const char *name, yaml_node_t *value,
                      idgen__config_entry *e) {
  char where[IDGEN_CONFIG_KEY_MAX + 16];
  int lists = !strcmp(section, "tokens");
  snprintf(where, sizeof where, "%s.%s", section, name);
  if (value->type == YAML_SCALAR_NODE && value->data.scalar.length == 0)
    return fail(r, value, "%s: no options (it needs %s at least)", where,
                lists ? "a file" : "a kind");
  if (value->type != YAML_MAPPING_NODE)
    return fail(r, value, "%s: want a mapping of options (kind: ..., ...)", where);
  size_t n = (size_t)(value->data.mapping.pairs.top - value->data.mapping.pairs.start);
  e->options = calloc(n ? n : 1, sizeof *e->options);
  if (!e->options)
    return fail(r, value, "out of memory");
  for (yaml_node_pair_t *p = value->data.mapping.pairs.start;
       p < value->data.mapping.pairs.top; p++) {
    idgen__config_option *o = &e->options[e->noptions];
    yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
    if (key_of(r, k, where, o->key, sizeof o->key) < 0)
      return -1;
    for (size_t i = 0; i < e->noptions; i++)
      if (!strcmp(e->options[i].key, o->key))
        return fail(r, k, "%s.%s: given twice (first on line %d)", where, o->key,
                    e->options[i].line);
    o->line = (int)k->start_mark.line + 1;
    if (lists && v && v->type == YAML_SEQUENCE_NODE) {
      e->noptions++;
      if (read_list(r, where, v, o) < 0)
        return -1;
      continue;
    }
    if (!v || v->type != YAML_SCALAR_NODE)
      return fail(r, v ? v : k, "%s.%s: want a single value, not a %smapping", where,
                  o->key, lists ? "" : "list or a ");
    if (strlen(scalar(v)) != v->data.scalar.length)
      return fail(r, v, "%s.%s: the value holds a NUL byte", where, o->key);
    o->value = strdup(scalar(v));
    if (!o->value)
      return fail(r, v, "out of memory");
    e->noptions++;
  }
  return 0;
}

/* The mapping under "generators:" or "tokens:" into *entries. */
static int read_section(reader *r, const char *section, yaml_node_t *map,
                        idgen__config_entry **entries, size_t *nentries) {
  if (map->type == YAML_SCALAR_NODE && map->data.scalar.length == 0)
    return 0; /* "generators:" with nothing under it */
  if (map->type != YAML_MAPPING_NODE)
    return fail(r, map, "%s: want a mapping of names to %s", section, section);
  size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
  *entries = calloc(n ? n : 1, sizeof **entries);
  if (!*entries)
    return fail(r, map, "out of memory");
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
       p++) {
    idgen__config_entry *e = &(*entries)[*nentries];
    char name[IDGEN_CONFIG_KEY_MAX + 1];
    yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
    if (key_of(r, k, section, name, sizeof name) < 0)
      return -1;
    for (size_t i = 0; i < *nentries; i++)
      if (!strcmp((*entries)[i].name, name))
        return fail(r, k, "%s.%s: given twice (first on line %d)", section, name,
                    (*entries)[i].line);
    e->name = strdup(name);
    if (!e->name)
      return fail(r, k, "out of memory");
    e->line = (int)k->start_mark.line + 1;
    (*nentries)++;
    if (!v || read_entry(r, section, name, v, e) < 0)
      return v ? -1 : fail(r, k, "%s.%s: no value", section, name);
  }
  return 0;
}

static int read_document(reader *r, idgen__config_file *out) {
  yaml_node_t *root = yaml_document_get_root_node(r->doc);
  if (!root)
    return 0; /* an empty file: no generators beyond the flags' default */
  if (root->type != YAML_MAPPING_NODE)
    return fail(r, root, "want a mapping with the key 'generators'");
  int first_line = 0; /* of "generators:", which may be empty: no entries to tell */
  for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
       p < root->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(r, p->key), *v = node(r, p->value);
    char key[IDGEN_CONFIG_KEY_MAX];
    if (key_of(r, k, "top level", key, sizeof key) < 0)
      return -1;
    int is_tokens = !strcmp(key, "tokens");
    if (strcmp(key, "generators") && !is_tokens)
      return fail(r, k, "%s: unknown key (the file holds 'generators' and 'tokens')", key);
    int *seen = is_tokens ? &out->tokens_line : &first_line;
    if (*seen)
      return fail(r, k, "%s: given twice (first on line %d)", key, *seen);
    *seen = (int)k->start_mark.line + 1;
    if (!v)
      return fail(r, k, "%s: no value", key);
    if (is_tokens ? read_section(r, "tokens", v, &out->tokens, &out->ntokens)
                  : read_section(r, "generators", v, &out->entries, &out->nentries))
      return -1;
  }
  return 0;
}

/* The whole file, NUL-terminated; NULL with err set. */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return NULL;
  }
  char *buf = malloc(IDGEN_CONFIG_FILE_MAX_BYTES + 1);
  size_t n = buf ? fread(buf, 1, IDGEN_CONFIG_FILE_MAX_BYTES + 1, f) : 0;
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad || n > IDGEN_CONFIG_FILE_MAX_BYTES) {
    snprintf(err, errlen, "%s: %s", path,
             !buf  ? "out of memory"
             : bad ? "cannot read it"
                   : "larger than 1 MiB");
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

static int yaml_error(const yaml_parser_t *parser, const char *path, char *err,
                      size_t errlen) {
  yaml_mark_t m = parser->problem_mark;
  snprintf(err, errlen, "%s:%zu:%zu: YAML: %s%s%s", path, m.line + 1, m.column + 1,
           parser->problem ? parser->problem : "cannot parse", parser->context ? " " : "",
           parser->context ? parser->context : "");
  return -1;
}

int idgen__config_file_read(const char *path, idgen__config_file *out, char *err,
                            size_t errlen) {
  memset(out, 0, sizeof *out);
  size_t len = 0;
  char *text = slurp(path, &len, err, errlen);
  if (!text)
    return -1;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    snprintf(err, errlen, "%s: out of memory", path);
    free(text);
    return -1;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  yaml_document_t doc;
  int rc = -1;
  if (!yaml_parser_load(&parser, &doc)) {
    yaml_error(&parser, path, err, errlen);
  } else {
    reader r = {path, &doc, err, errlen};
    rc = read_document(&r, out);
    yaml_document_delete(&doc);
  }
  /* One document only: a second one would be ignored otherwise. */
  if (rc == 0 && !yaml_parser_load(&parser, &doc)) {
    rc = yaml_error(&parser, path, err, errlen);
  } else if (rc == 0) {
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root) {
      snprintf(err, errlen, "%s:%zu: a second YAML document: keep one", path,
               root->start_mark.line + 1);
      rc = -1;
    }
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&parser);
  free(text);
  if (rc < 0)
    idgen__config_file_free(out);
  return rc;
}

static void free_entries(idgen__config_entry *entries, size_t n) {
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < entries[i].noptions; j++) {
      idgen__config_option *o = &entries[i].options[j];
      free(o->value);
      for (size_t k = 0; k < o->nitems; k++)
        free(o->items[k]);
      free(o->items);
    }
    free(entries[i].options);
    free(entries[i].name);
  }
  free(entries);
}

void idgen__config_file_free(idgen__config_file *f) {
  free_entries(f->entries, f->nentries);
  free_entries(f->tokens, f->ntokens);
  memset(f, 0, sizeof *f);
}
