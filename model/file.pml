/* file.pml: the file provider's fence (file.c, record.c) with the rules of the edges
 * issue for a worker file removed while held, checked by SPIN.
 *
 * Processes on one host claim worker-0 by locking the inode its path names (an open
 * file description lock, dropped by the kernel when the process dies), keep the HWM
 * inside that inode, and issue timestamps at their clocks. The host's time advances in
 * ticks; each process's clock is that time plus the wall-clock offset when it started
 * (CLOCK_MONOTONIC anchored to the wall clock), so a wall-clock step back reaches only
 * processes started after it. An operator removes the file while it is held; processes
 * pause between any two steps, crash, restart and stop. The rules checked:
 *   - before every HWM write the holder checks that the path still names its inode (and
 *     that the inode is still linked); if not, it stops raising its cap and gives the
 *     ID up;
 *   - a process that finds no file creates it and issues nothing until its clock is
 *     past now + AHEAD + INTERVAL.
 * The property: no two process incarnations issue the same timestamp on worker 0.
 *
 * Mutations, each of which must yield a counterexample (scripts/model.sh runs them):
 *   MUT_NO_INODE_CHECK  the HWM write without the path-names-my-inode check
 *   MUT_NO_FRESH_WAIT   a fresh file read as HWM 0 (main before the edges issue)
 * Faults outside the rules' assumptions, each of which yields a counterexample too:
 *   BACK > INTERVAL     the wall clock steps back by more than one HWM interval
 *   STALE_COPY          the path is replaced by a copy of an older record (a restore)
 */

#ifndef N
#define N 3 /* processes on the host */
#endif
#ifndef TMAX
#define TMAX 5 /* the host's time runs 0..TMAX */
#endif
#ifndef AHEAD
#define AHEAD 1 /* cap = clock + AHEAD */
#endif
#ifndef INTERVAL
#define INTERVAL 1 /* one HWM interval */
#endif
#ifndef BACK
#define BACK 1 /* the one wall-clock step back, in ticks */
#endif
#ifndef REMOVES
#define REMOVES 1 /* times the operator removes (or replaces) worker-0 */
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef STOPS
#define STOPS 1
#endif
#define IMAX (REMOVES + 2) /* inodes ever created */

/* process states */
#define ACQ 0   /* no lock */
#define WAIT 1  /* locked; clock not yet past the floor */
#define HELD 2  /* armed */
#define GONE 3  /* gave the ID up, or stopped: the keeper does nothing more (a process
                 * that gave up and tried again is one more process: N covers it) */

/* ---- the host ---------------------------------------------------------------------- */
byte now;               /* the host's monotonic time */
byte woff = BACK;       /* the wall clock's offset from it; a step back lowers it */
bool stepped;
byte path;              /* the inode worker-0 names; 0: no such file */
byte ninode;
byte ihwm[IMAX + 1];    /* the HWM record in each inode */
bool iempty[IMAX + 1];  /* created, no record written yet */
bool ilinked[IMAX + 1]; /* some path still names it */
byte ilock[IMAX + 1];   /* its lock holder + 1; 0: unlocked */
byte removes, crashes, stops;

/* ---- the processes ----------------------------------------------------------------- */
byte st[N];
byte off[N];            /* wall offset when it started: its clock is now + off */
byte fd[N];             /* the inode it holds locked; 0: none */
byte fl[N];             /* the floor: it issues only above it */
byte hw[N];             /* the last HWM it wrote */
byte pend[N];           /* a cap checked against the path, not yet written; 0: none */
bool armed[N];
byte gcap[N], gnext[N];
bool wat[N];
hidden byte name[N];    /* for trails: process * 10 + incarnation */
#define WHO(p) 'A' + name[p] / 10, name[p] % 10
#define CLK(p) (now + off[p])

bool watched;
byte watch_ts;
byte p, i;

/* gen.c reserve(): at the clock, or, under the logical policy with the clock behind
 * the state word, at the word's next unit; at or below the cap */
#define TS(p) (CLK(p) > gnext[p] -> CLK(p) : gnext[p])
inline issue() {
  i = TS(p);
  printf("%c%d issues timestamp %d\n", WHO(p), i);
  assert(!(watched && !wat[p] && watch_ts == i));
  if :: !watched -> watched = true; wat[p] = true; watch_ts = i :: true fi;
  gnext[p] = i + 1; i = 0
}

/* open worker-0 (creating it if there is none), lock it, read the record */
inline acquiring() {
  if
  :: path == 0 && ninode < IMAX ->
    ninode++; path = ninode; iempty[path] = true; ilinked[path] = true;
    ilock[path] = p + 1; fd[p] = path; st[p] = WAIT;
#ifdef MUT_NO_FRESH_WAIT
    fl[p] = 0;
#else
    fl[p] = CLK(p) + AHEAD + INTERVAL; /* no history: wait past any old holder's cap */
#endif
    hw[p] = fl[p];
    printf("%c%d creates worker-0 (inode %d), floor %d\n", WHO(p), path, fl[p])
  :: path != 0 && ilock[path] == 0 && !iempty[path] ->
    ilock[path] = p + 1; fd[p] = path; st[p] = WAIT; fl[p] = ihwm[path]; hw[p] = fl[p];
    printf("%c%d locks worker-0 (inode %d), HWM %d\n", WHO(p), path, fl[p])
  :: else /* locked by another process, or a record left empty: corrupt, refused */
  fi
}

/* before the write: cap = clock + ahead, never below a HWM written; the path check */
inline check() {
  i = (CLK(p) + AHEAD > hw[p] -> CLK(p) + AHEAD : hw[p]);
#ifdef MUT_NO_INODE_CHECK
  pend[p] = i
#else
  if
  :: path == fd[p] && ilinked[fd[p]] -> pend[p] = i
  :: else -> /* worker-0 is not our inode any more: stop raising the cap, give it up */
    printf("%c%d finds worker-0 is not its inode: gives the ID up\n", WHO(p));
    ilock[fd[p]] = 0; fd[p] = 0; st[p] = GONE
  fi;
#endif
  i = 0
}

/* pwrite + fdatasync to the locked inode, then the cap rises (or the arm) */
inline write_then_cap() {
  ihwm[fd[p]] = pend[p]; iempty[fd[p]] = false; hw[p] = pend[p];
  printf("%c%d writes HWM %d to inode %d\n", WHO(p), pend[p], fd[p]);
  if
  :: st[p] == WAIT ->
    armed[p] = true; gcap[p] = pend[p];
    if :: gnext[p] <= fl[p] -> gnext[p] = fl[p] + 1 :: else fi;
    st[p] = HELD
  :: else -> if :: gcap[p] < pend[p] -> gcap[p] = pend[p] :: else fi
  fi;
  pend[p] = 0
}

/* idgen_keeper_stop in the fixed order: generator stopped, last issued read, final
 * HWM written to the locked inode, lock closed */
inline stopping() {
  printf("%c%d stops\n", WHO(p));
  armed[p] = false;
  if
  :: st[p] == HELD && fd[p] != 0 ->
    ihwm[fd[p]] = (gnext[p] > fl[p] + 1 -> gnext[p] - 1 : fl[p]); iempty[fd[p]] = false
  :: else
  fi;
  if :: fd[p] != 0 -> ilock[fd[p]] = 0 :: else fi;
  fd[p] = 0; pend[p] = 0; st[p] = GONE
}

/* kill -9 and a new process: the kernel drops the lock; the new clock is anchored to
 * the wall clock as it is now */
inline crash() {
  printf("%c%d crashes\n", WHO(p));
  if :: fd[p] != 0 -> ilock[fd[p]] = 0 :: else fi;
  st[p] = ACQ; off[p] = woff; fd[p] = 0; fl[p] = 0; hw[p] = 0; pend[p] = 0;
  armed[p] = false; gcap[p] = 0; gnext[p] = 0; wat[p] = false; name[p] = name[p] + 1
}

inline step() {
  if
  :: armed[p] && TS(p) <= gcap[p] -> issue()
  :: st[p] == ACQ -> acquiring()
  :: (st[p] == WAIT && CLK(p) > fl[p] || st[p] == HELD) && pend[p] == 0 -> check()
  :: pend[p] != 0 && st[p] != GONE -> write_then_cap()
  :: st[p] != GONE && stops < STOPS -> stops++; stopping()
  :: crashes < CRASHES -> crashes++; crash()
  :: else
  fi
}

active proctype world() {
  atomic {
    /* worker-0 exists, from an earlier run: HWM 0 */
    ninode = 1; path = 1; ilinked[1] = true;
    i = 0;
    do :: i < N -> name[i] = i * 10 + 1; off[i] = woff; i++ :: else -> break od;
    i = 0
  }
end:
  do
  :: atomic { if :: p = 0 :: N > 1 -> p = 1 :: N > 2 -> p = 2 fi; step(); p = 0 }
  :: atomic { now < TMAX -> now++; printf("time %d\n", now) }
  :: atomic { !stepped -> printf("the wall clock steps back %d\n", BACK); stepped = true;
      woff = woff - BACK }
  :: atomic {
      path != 0 && removes < REMOVES -> removes++;
      printf("the operator removes worker-0 (inode %d)\n", path);
      ilinked[path] = false;
#ifdef STALE_COPY
      /* ... and puts back a copy of an older record: a restore from a backup */
      select(i : 0 .. ihwm[path]);
      ninode++; path = ninode; ilinked[path] = true; ihwm[path] = i; i = 0;
      printf("the operator restores worker-0 (inode %d) with HWM %d\n", path, ihwm[path])
#else
      path = 0
#endif
    }
  od
}
