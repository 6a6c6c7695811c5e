/* log.h: one line per event (startup, lease, clock, errors) to stderr or a file. */
#ifndef IDGEN_SERVER_LOG_H
#define IDGEN_SERVER_LOG_H

/* path NULL or "" or "-": stderr. Returns 0 or -errno. */
int idgen__log_open(const char *path);
/* Reopens the file (after rotation; SIGHUP). Safe to call from any thread. */
int idgen__log_reopen(void);
void idgen__log_close(void);
/* The lowest level written: "debug", "info" (the default), "warn". Returns 0, or -1 for
 * another name (the level unchanged). Safe to call from any thread. */
int idgen__log_set_level(const char *level);
/* 1 if debug lines are written: check it before building one. */
int idgen__log_debug_on(void);
/* level: "debug", "info", "warn", "error"; a line below the level set is dropped. Writes
 * "<ISO time> <level> <event> <message>\n". */
void idgen__log(const char *level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
