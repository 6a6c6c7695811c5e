/* host.h: what the processes of one host share, whatever their user and state
 * directory: the state directory itself (state_dir.c) and host-wide claims, abstract Unix
 * sockets that one process at a time binds (claim.c). Used by the file, static and k8s
 * lease providers (src/lease) and by the segment file backend (src/segment). */
#ifndef IDGEN_HOST_H
#define IDGEN_HOST_H

#include <stddef.h>
#include <stdint.h>

/* ---- state_dir.c ---- */
/* The default state directory: $XDG_STATE_HOME/idgen, $HOME/.local/state/idgen for a
 * user, /var/lib/idgen for root. */
void idgen__default_state_dir(char *out, size_t outlen);
/* mkdir -p dir, fsyncing the parent of each directory it creates: 0 or a negated
 * errno. */
int idgen__mkdir_p(const char *dir);
/* mkdir -p dir and check that a file can be created in it. */
int idgen__state_dir_ready(const char *dir, char *err, size_t errlen);
/* fsyncs the directory that holds path (after creating path in it). */
int idgen__fsync_parent(const char *path);

/* ---- claim.c ---- */
/* The host-wide claim of a worker ID (claim.c): an abstract Unix socket
 * "idgen/<namespace>/worker/<N>" ("idgen/<namespace>/dc/<D>/worker/<N>" under datacenter
 * D >= 0) that one process at a time can bind, in one network namespace, whatever its
 * user and state directory; the kernel frees it with the holder's last descriptor. fd
 * is -1 when nothing is claimed. */
typedef struct idgen__claim {
  int fd;
} idgen__claim;
/* 0, -EADDRINUSE when another process holds it, or another negated errno. */
int idgen__claim_take(idgen__claim *c, const char *ns, int64_t dc, uint64_t worker);
void idgen__claim_drop(idgen__claim *c);
/* 1 if some process holds the claim now, 0 if not, negative errno. */
int idgen__claim_held(const char *ns, int64_t dc, uint64_t worker);
/* Who holds it, for a refusal: "pid 123 (state dir /x)", "pid 123 (uid ...; its state
 * dir is not readable here)", or "another process". */
void idgen__claim_holder(const char *ns, int64_t dc, uint64_t worker, char *out,
                         size_t outlen);
/* Closes the probes queued on a held claim (connects that learnt its pid), so that
 * its backlog never fills. */
void idgen__claim_drain(idgen__claim *c);
/* A claim by its whole name (cut to 106 bytes): 0, -EADDRINUSE, or a negated errno. */
int idgen__claim_take_named(idgen__claim *c, const char *name);
/* Who holds the claim name: 0 with its pid and uid; -ENOENT when nobody does; -EAGAIN
 * when someone does but its pid cannot be learnt; another negated errno. */
int idgen__claim_peer(const char *name, long *pid, long *uid);
/* A shared claim: slots "<base>/0" to "<base>/<slots-1>", one per process. Takes the
 * first free slot, then asks agree(ctx, pid) of the holder of every other one (1: it
 * uses the same thing). 0 with the slot held; -EADDRINUSE with *other set to a holder
 * that does not agree (-1: its pid is not known), holding nothing; -EUSERS when every
 * slot is taken; another negated errno. */
int idgen__claim_share(idgen__claim *c, const char *base, int slots,
                       int (*agree)(void *ctx, long pid), void *ctx, long *other);
/* From /proc/<pid>/fd (readable for the same user or root only): the target of a
 * descriptor that ends with suffix, suffix cut off, in out: 0, or -1 if none is seen. */
int idgen__proc_fd_find(long pid, const char *suffix, char *out, size_t outlen);
/* 1 if pid has a descriptor open on the inode (dev, ino), 0 if not, or a negated errno
 * when its descriptors cannot be seen (another user). */
int idgen__proc_fd_on(long pid, uint64_t dev, uint64_t ino);

#endif
