/* fence.pml: idgen's worker-ID leases and fenced high-water marks, checked by SPIN.
 *
 * N holders claim worker IDs from an etcd-like store, fence their HWM writes with their
 * lease, and issue timestamps from generators capped by those HWMs. What the fence
 * argument (docs/leases.md) claims not to depend on is left to the adversary: leases
 * expire at any moment, clocks read anything, deadlines pass at any moment, holders
 * pause between any two steps, crash and restart, stop; replies are lost after the
 * store applied a request; a HWM write its client gave up on is applied later, after
 * later ones; the store loses quorum. The property, checked at every issue: no two
 * holder incarnations issue the same (worker, timestamp).
 * model/README.md says what follows the code, where the model differs, and the bounds.
 *
 * Mutations, each of which must yield a counterexample (scripts/model.sh runs them):
 *   MUT_NO_FENCE      the HWM write without its compare LEASE(worker key) == our lease
 *   MUT_NO_REV        the HWM write without its compare MOD(HWM key) == the revision
 *                     its holder last saw
 *   MUT_CLAIM_NO_HWM  the claim does not read the HWM; it is read with the worker list
 *   MUT_CAP_EARLY     the cap raised before the HWM write succeeds
 *   MUT_STOP_RACE     keeper_stop disarms the generator first, a keeper step in flight
 *                     re-arms it, and the final HWM is written while it can still issue
 *
 * ZK: the ZooKeeper provider (src/lease/zookeeper.c) instead of etcd's. A lease is a
 * session, a worker key its ephemeral node, the HWM key's revision the HWM node's
 * version. Its HWM write is a setData at the version last seen, with no compare on the
 * worker node (FENCE is true); a refused one reads the worker node's ephemeralOwner and
 * retries once only when it is ours. Its claim is one multi that creates the worker
 * node and sets the HWM node, unchanged, at the version just read: a write landing.
 * With ZK, MUT_NO_REV (setData at any version) must yield a counterexample, and so must
 *   MUT_ZK_NO_BUMP    the claim's multi does not set the HWM node (its version stays)
 */

/* ---- bounds (spin -DNAME=value) ---------------------------------------------------- */
#ifndef N
#define N 3 /* holders: processes that compete for the worker IDs (at most 4) */
#endif
#ifndef W
#define W 1 /* worker IDs (at most 2) */
#endif
#ifndef VMAX
#define VMAX 3 /* timestamps, caps and HWMs take the values 0..VMAX (at most 6) */
#endif
#ifndef AHEAD
#define AHEAD 0 /* the first cap after a claim is above floor + AHEAD */
#endif
#ifndef CRASHES
#define CRASHES 1 /* kill -9 and restart, all holders together */
#endif
#ifndef STOPS
#define STOPS 1 /* graceful stops (idgen_keeper_stop), all holders together */
#endif
#ifndef OUTAGES
#define OUTAGES 1 /* times the store loses quorum */
#endif
#ifndef LATES
#define LATES 1 /* HWM writes that arrive late (after later ones), all holders together */
#endif
#define LATE_APPLY (LATES > 0)

/* request results, as the keeper sees them */
#define OK 0
#define ELEASE 1   /* the lease is gone, or the fence compare failed */
#define EUNAVAIL 2 /* no quorum, or the reply was lost after the store applied it */
#define EMOVED 3   /* the HWM key's revision compare failed, the fence held (a retry) */

/* keeper states (keeper.c), and CLAIM: a free worker ID listed, its claim next */
#define ACQ 0
#define CLAIM 1
#define WAIT 2
#define HELD 3
#define LOST 4
#define DONE 5 /* idgen_keeper_stop has returned */

/* the generator (gen.c): armed, or its refusal */
#define ARMED 0
#define NOTARMED 1
#define REFUSED 2 /* its deadline passed (IDGEN_ELEASE): sticky until re-armed */
#define STOPPED 3 /* stopped for good by idgen_keeper_stop */

/* what a worker key is bound to: nothing, a lease no keeper holds any more (its holder
 * crashed, or lost the reply to its revoke), or holder k's lease */
#define NOKEY 0
#define ORPHAN 1
#define OWNER(k) ((k) + 2)

/* ---- the store: etcd's leases, keys bound to leases, transactions ------------------ */
bool up = true; /* quorum */
byte wk[W];     /* /workers/<w> */
byte hwm[W];    /* /hwm/<w>: persistent, bound to no lease */

/* ---- the holders: one record each, kept sorted (see canon) ------------------------- */
byte st[N];     /* keeper state */
bool lv[N];     /* the keeper holds a lease, alive in the store */
bool sreq[N];   /* keeper_stop called, not yet done (MUT_STOP_RACE only) */
byte w[N];      /* the worker ID listed or held */
byte fl[N];     /* the HWM the claim read: the floor */
byte hw[N];     /* the last HWM this keeper wrote (keeper.c hwm_ms) */
bool rseen[N];  /* the HWM key's revision this keeper last saw (etcd.c hwm_revision) is
                 * still the key's: no write has landed on it since */
byte gst[N];    /* the generator: ARMED, NOTARMED, REFUSED, STOPPED */
byte gw[N];     /* its worker */
byte gcap[N];   /* its cap */
byte gnext[N];  /* the lowest timestamp its state word lets it issue */
bool wat[N];    /* this incarnation made the watched issue */
#if LATE_APPLY
byte late[N];   /* a HWM write its client gave up on, still on its way; 0: none */
byte latew[N];  /* its worker */
bool lorph[N];  /* its lease is now the orphan bound to latew (else: the holder's) */
bool lseen[N];  /* the revision it compares is still the HWM key's */
#endif
hidden byte name[N]; /* for trails only: holder * 10 + incarnation, moved with records */
#define WHO(k) 'A' + name[k] / 10, name[k] % 10

byte crashes, stops, outages, lates;

/* ---- the property: one (worker, timestamp), chosen at its first issue -------------- */
bool watched;
byte watch_w, watch_ts;

/* scratch, zero between steps (not hidden: spin -t must replay what pan did) */
byte h, i, j, tmp, cap, rc, ts;
int ka, kb;

#if defined(MUT_NO_FENCE) || defined(ZK)
#define FENCE(k) true
#else
#define FENCE(k) (wk[w[k]] == OWNER(k)) /* compare: LEASE(worker key) == our lease */
#endif
/* Revisions are etcd's global counter: every write that lands makes a new one, so "the
 * revision k saw is the key's" is exactly "nothing landed on it since k saw it": a bit,
 * cleared for everyone when a write lands, set for k when a reply tells k the revision. */
/* A refused HWM write with the fence held: etcd's failure read both keys, ZooKeeper's
 * looks at the worker node's ephemeralOwner. */
#ifdef ZK
#define MOVED_OURS(k) (wk[w[k]] == OWNER(k))
#else
#define MOVED_OURS(k) true
#endif

#ifdef MUT_NO_REV
#define REV(k) true
#define LATE_REV(k) true
#else
#define REV(k) rseen[k]         /* compare: MOD(HWM key) == the revision k saw */
#define LATE_REV(k) lseen[k]    /* the same compare, in a write that arrives late */
#endif

/* ---- the store's side of a lease --------------------------------------------------- */

/* Holder k's lease expired or was revoked: the keys bound to it go with it. */
inline lease_gone(k) {
  lv[k] = false;
  i = 0;
  do
  :: i < W -> if :: wk[i] == OWNER(k) -> wk[i] = NOKEY :: else fi; i++
  :: else -> break
  od;
#if LATE_APPLY
  if :: !lorph[k] -> late[k] = 0; latew[k] = 0; lseen[k] = false :: else fi;
#endif
  i = 0
}

/* Holder k's keeper lets its lease go without the store knowing (a revoke lost, a
 * crash): a key bound to it stays bound, to a lease no keeper holds, until it expires. */
inline lease_orphaned(k) {
  lv[k] = false;
  i = 0;
  do
  :: i < W ->
#if LATE_APPLY
    if :: wk[i] == OWNER(k) && !lorph[k] && latew[k] == i && late[k] != 0 -> lorph[k] = true
    :: else fi;
#endif
    if :: wk[i] == OWNER(k) -> wk[i] = ORPHAN :: else fi; i++
  :: else -> break
  od;
#if LATE_APPLY
  if :: !lorph[k] -> late[k] = 0; latew[k] = 0; lseen[k] = false :: else fi;
#endif
  i = 0
}

inline orphan_gone(x) {
  wk[x] = NOKEY;
#if LATE_APPLY
  i = 0;
  do
  :: i < N -> if :: lorph[i] && latew[i] == x -> late[i] = 0; latew[i] = 0; lorph[i] = false;
                    lseen[i] = false
             :: else fi; i++
  :: else -> break
  od;
  i = 0
#endif
}

/* etcd.c revoke(): the store drops the lease, or the request is lost */
inline revoke(k) {
  if
  :: lv[k] && up -> lease_gone(k)
  :: lv[k] -> lease_orphaned(k)
  :: else
  fi
}

/* A write lands on the HWM key of worker x: a new revision, which nobody has seen. */
inline hwm_lands(x, value) {
  hwm[x] = value;
  i = 0;
  do
  :: i < N ->
    if :: w[i] == x -> rseen[i] = false :: else fi;
#if LATE_APPLY
    if :: late[i] != 0 && latew[i] == x -> lseen[i] = false :: else fi;
#endif
    i++
  :: else -> break
  od;
  i = 0
}

/* One transaction of etcd.c fenced_put(): compare LEASE(worker key) == our lease and
 * MOD(HWM key) == the revision we saw; put the HWM key; the failure reads both keys. */
inline hwm_txn(k, value) {
  if
  :: up && FENCE(k) && REV(k) ->
    hwm_lands(w[k], value);
    if
    :: rc = OK; rseen[k] = true; /* the reply's revision */
      printf("%c%d writes HWM %d for worker %d: ok\n", WHO(k), value, w[k])
    :: rc = EUNAVAIL;
      printf("%c%d writes HWM %d for worker %d: applied, the reply is lost\n", WHO(k), value,
             w[k])
    fi
  :: up && !FENCE(k) -> rc = ELEASE;
    printf("%c%d writes HWM %d for worker %d: refused (not its lease)\n", WHO(k), value, w[k])
  :: up && FENCE(k) && !REV(k) && MOVED_OURS(k) -> rc = EMOVED; rseen[k] = true; /* read */
    printf("%c%d writes HWM %d for worker %d: refused (the HWM key moved)\n", WHO(k), value,
           w[k])
  :: up && FENCE(k) && !REV(k) && !MOVED_OURS(k) -> rc = ELEASE;
    printf("%c%d writes HWM %d for worker %d: refused (moved, not its node)\n", WHO(k), value,
           w[k])
  :: !up -> rc = EUNAVAIL;
    printf("%c%d writes HWM %d for worker %d: no answer\n", WHO(k), value, w[k])
#if LATE_APPLY
  :: lv[k] && late[k] == 0 && lates < LATES ->
    late[k] = value; latew[k] = w[k]; lorph[k] = false; lseen[k] = REV(k); rc = EUNAVAIL;
    lates++;
    printf("%c%d writes HWM %d for worker %d: no answer (still on its way)\n", WHO(k), value,
           w[k])
#endif
  fi
}

/* etcd.c fenced_put(): the transaction; when the HWM key moved under our lease, once
 * more at the revision the failure read, with the higher of our value and the one it
 * read (the HWM never goes down on a retry). The retry is in the same atomic step; what
 * could come between the two (a write landing, quorum lost, the retry lost) ends it
 * without a write, as its last branch does. */
inline write_hwm(k, value) {
  hwm_txn(k, value);
  if
  :: rc == EMOVED ->
    if
    :: hwm[w[k]] > value -> hwm_txn(k, hwm[w[k]])
    :: hwm[w[k]] <= value -> hwm_txn(k, value)
    :: rc = EUNAVAIL
    fi
  :: else
  fi
}

/* the smallest worker ID with no key, into j (W: none) */
inline smallest_free() {
  j = 0;
  do :: j < W && wk[j] != NOKEY -> j++ :: else -> break od
}

/* ---- the generator (gen.c) --------------------------------------------------------- */

/* An armed generator issues any timestamp from its state word's next unit up to its
 * cap: its clock reads anything, and under the logical policy it issues at the state
 * word when the clock is behind. Its deadline may pass at any moment. */
inline issue(k) {
  select(ts : gnext[k] .. gcap[k]);
  printf("%c%d issues worker %d, timestamp %d\n", WHO(k), gw[k], ts);
  assert(!(watched && !wat[k] && watch_w == gw[k] && watch_ts == ts));
  if
  :: !watched -> watched = true; wat[k] = true; watch_w = gw[k]; watch_ts = ts
  :: true
  fi;
  gnext[k] = ts + 1
}

inline generator(k) {
  if
  :: gst[k] == ARMED && gnext[k] <= gcap[k] -> issue(k)
  :: gst[k] == ARMED ->
    printf("%c%d's generator passes its deadline\n", WHO(k));
    gst[k] = REFUSED; gw[k] = 0; gcap[k] = 0
  :: else
  fi
}

/* idgen_gen_arm(worker, floor = the HWM the claim read, cap, deadline); under
 * MUT_STOP_RACE a keeper_stop in flight disarmed it just before */
inline arm(k) {
#ifdef MUT_STOP_RACE
  if
  :: stops < STOPS && !sreq[k] ->
    printf("keeper_stop on %c%d disarms its generator\n", WHO(k));
    stops++; sreq[k] = true
  :: true
  fi;
#endif
  printf("%c%d arms worker %d, floor %d, cap %d\n", WHO(k), w[k], fl[k], cap);
  gw[k] = w[k]; gcap[k] = cap;
  if :: gnext[k] <= fl[k] -> gnext[k] = fl[k] + 1 :: else fi; /* raise_floor */
  gst[k] = ARMED
}

/* ---- the keeper (keeper.c) with the etcd provider (etcd.c): one inline per state --- */

/* keeper.c do_hwm(): cap = clock + ahead, never below a HWM we wrote; the fenced
 * write. The clock reads anything, so the cap is any value from the lowest the code
 * allows: the last HWM written or, after a claim, where the clock is past the floor,
 * above floor + ahead. */
#define LOWEST_CAP(k) (hw[k] > fl[k] -> hw[k] : fl[k] + 1 + AHEAD)
#define CAN_HWM(k) (LOWEST_CAP(k) <= VMAX)
inline do_hwm(k) {
  select(cap : LOWEST_CAP(k) .. VMAX);
#ifdef MUT_CAP_EARLY
  if :: st[k] == HELD && gcap[k] < cap -> gcap[k] = cap :: else fi;
#endif
  write_hwm(k, cap);
  if :: rc == OK -> hw[k] = cap :: else fi
}

/* keeper.c lose(): disarm; win an ID again (the lease is revoked there) */
inline lose(k) {
  printf("%c%d loses worker %d\n", WHO(k), w[k]);
  gst[k] = NOTARMED; gw[k] = 0; gcap[k] = 0;
  st[k] = ACQ; w[k] = 0; fl[k] = 0; hw[k] = 0; rseen[k] = false
}

/* keeper.c acquire() -> etcd_acquire(): revoke a lease from before a loss, grant a
 * new one, list the worker keys, pick the smallest free ID */
inline acquiring(k) {
  revoke(k);
  if
  :: up ->
    lv[k] = true;
    smallest_free();
    if
    :: j < W ->
      st[k] = CLAIM; w[k] = j;
#ifdef MUT_CLAIM_NO_HWM
      fl[k] = hwm[j]; /* read with the list, before the claim */
#endif
      printf("%c%d lists worker %d as free\n", WHO(k), j)
    :: else -> revoke(k) /* all worker IDs taken */
    fi
  :: else
  fi
}

/* the claim, one transaction: compare CREATE(worker key) == 0; put it bound to our
 * lease; read the HWM, and its revision: our first HWM write's compare */
inline claiming(k) {
  if
  :: up && lv[k] && wk[w[k]] == NOKEY ->
    wk[w[k]] = OWNER(k);
#ifndef MUT_CLAIM_NO_HWM
    fl[k] = hwm[w[k]];
#endif
#if defined(ZK) && !defined(MUT_ZK_NO_BUMP)
    hwm_lands(w[k], hwm[w[k]]); /* the multi's setData: the version moves */
#endif
    if
    :: printf("%c%d claims worker %d, HWM %d\n", WHO(k), w[k], fl[k]);
      hw[k] = fl[k]; rseen[k] = true; st[k] = WAIT
    :: printf("%c%d claims worker %d; the reply is lost\n", WHO(k), w[k]);
      revoke(k); st[k] = ACQ; w[k] = 0; fl[k] = 0
    fi
  :: up && lv[k] && wk[w[k]] != NOKEY -> /* lost a race: list again */
    smallest_free();
    if
    :: j < W -> w[k] = j;
#ifdef MUT_CLAIM_NO_HWM
      fl[k] = hwm[j];
#endif
    :: else -> revoke(k); st[k] = ACQ; w[k] = 0; fl[k] = 0
    fi
  :: else -> /* our new lease expired already, or no quorum */
    revoke(k); st[k] = ACQ; w[k] = 0; fl[k] = 0
  fi
}

inline waiting(k) {
  if
  :: up && !lv[k] -> lose(k) /* keepalive: the lease is gone */
  :: lose(k) /* the deadline passed while waiting */
  :: CAN_HWM(k) -> /* the clock is past the floor */
    do_hwm(k);
    if
    :: rc == ELEASE -> lose(k)
    :: rc == OK -> arm(k); st[k] = HELD
    :: else
    fi
  fi
}

inline held(k) {
  if
  :: up && !lv[k] -> lose(k) /* keepalive: the lease is gone */
  :: gst[k] == REFUSED -> /* the generator stopped at its deadline: still ours? */
    gst[k] = NOTARMED; st[k] = LOST
  :: CAN_HWM(k) ->
    do_hwm(k);
    if
    :: rc == ELEASE -> lose(k)
    :: rc == OK && gcap[k] < cap -> gcap[k] = cap /* idgen_gen_set_cap */
    :: else
    fi
  :: else
  fi
}

/* a keepalive and a fenced write prove the lease is still ours; then arm again */
inline lost(k) {
  if
  :: up && !lv[k] -> st[k] = ACQ; w[k] = 0; fl[k] = 0; hw[k] = 0; rseen[k] = false
  :: up && lv[k] && CAN_HWM(k) ->
    do_hwm(k);
    if
    :: rc == ELEASE -> st[k] = ACQ; w[k] = 0; fl[k] = 0; hw[k] = 0; rseen[k] = false
    :: rc == OK -> arm(k); st[k] = HELD
    :: else
    fi
  :: else
  fi
}

/* idgen_keeper_stop, in the fixed order: the keeper thread has finished its step; the
 * generator stops for good, then what it issued is read, then the final HWM is
 * written (last issued, at least the floor), then the ID is released. Under
 * MUT_STOP_RACE the generator was only disarmed, when stop was called. */
inline stopping(k) {
#ifndef MUT_STOP_RACE
  gst[k] = STOPPED; gw[k] = 0; gcap[k] = 0;
#endif
  cap = (st[k] == HELD -> (gnext[k] > fl[k] + 1 -> gnext[k] - 1 : fl[k]) : 0);
  if
  :: cap > 0 -> printf("%c%d stops\n", WHO(k)); write_hwm(k, cap)
  :: else -> printf("%c%d stops\n", WHO(k))
  fi;
  revoke(k);
  st[k] = DONE; sreq[k] = false; w[k] = 0; fl[k] = 0; hw[k] = 0; rseen[k] = false
}

/* kill -9 and a new process: a new keeper and generator, a clock that reads anything;
 * the lease stays in the store until it expires */
inline crash(k) {
  printf("%c%d crashes\n", WHO(k));
  if :: lv[k] -> lease_orphaned(k) :: else fi;
  st[k] = ACQ; sreq[k] = false; w[k] = 0; fl[k] = 0; hw[k] = 0; rseen[k] = false;
  gst[k] = NOTARMED; gw[k] = 0; gcap[k] = 0; gnext[k] = 0; wat[k] = false;
  name[k] = name[k] + 1
}

/* One step of holder k: its generator, its keeper, or its operator. */
inline step(k) {
  if
  :: gst[k] == ARMED -> generator(k)
  :: sreq[k] -> stopping(k)
  :: !sreq[k] && st[k] == ACQ -> acquiring(k)
  :: !sreq[k] && st[k] == CLAIM -> claiming(k)
  :: !sreq[k] && st[k] == WAIT -> waiting(k)
  :: !sreq[k] && st[k] == HELD -> held(k)
  :: !sreq[k] && st[k] == LOST -> lost(k)
#ifdef MUT_STOP_RACE
  :: !sreq[k] && st[k] != DONE && stops < STOPS ->
    printf("keeper_stop on %c%d disarms its generator\n", WHO(k));
    stops++; sreq[k] = true; gst[k] = NOTARMED; gw[k] = 0; gcap[k] = 0
#else
  :: st[k] != DONE && stops < STOPS -> stops++; stopping(k)
#endif
  :: crashes < CRASHES -> crashes++; crash(k)
  :: else
  fi
}

/* ---- symmetry: holders are alike, so states that differ by an order of the records
 * are one state; after every step the records are sorted ----------------------------- */
#if LATE_APPLY
#define LATE_KEY(k) (((late[k] * 2 + latew[k]) * 2 + lorph[k]) * 2 + lseen[k])
#else
#define LATE_KEY(k) 0
#endif
#define OWNS(k, x) (x < W && wk[x] == OWNER(k))
#define KEY(k) (((((((((((((st[k] * 2 + lv[k]) * 2 + sreq[k]) * 2 + w[k]) * 8 + fl[k]) * 8 + \
  hw[k]) * 4 + gst[k]) * 2 + gw[k]) * 8 + gcap[k]) * 8 + gnext[k]) * 2 + wat[k]) * 2 + \
  rseen[k]) * 4 + OWNS(k, 0) * 2 + OWNS(k, 1)) * 64 + LATE_KEY(k))

#define SWAP(a, x, y) tmp = a[x]; a[x] = a[y]; a[y] = tmp
inline swap(x, y) {
  SWAP(st, x, y); SWAP(lv, x, y); SWAP(sreq, x, y); SWAP(w, x, y); SWAP(fl, x, y);
  SWAP(hw, x, y); SWAP(gst, x, y); SWAP(gw, x, y); SWAP(gcap, x, y); SWAP(gnext, x, y);
  SWAP(wat, x, y); SWAP(rseen, x, y); SWAP(name, x, y);
#if LATE_APPLY
  SWAP(late, x, y); SWAP(latew, x, y); SWAP(lorph, x, y); SWAP(lseen, x, y);
#endif
  tmp = 0;
  do
  :: tmp < W ->
    if :: wk[tmp] == OWNER(x) -> wk[tmp] = OWNER(y) :: wk[tmp] == OWNER(y) -> wk[tmp] = OWNER(x)
    :: else fi;
    tmp++
  :: else -> break
  od;
  tmp = 0
}

inline canon() {
  d_step {
  h = 0;
  do
  :: h < N - 1 ->
    j = 0;
    do
    :: j < N - 1 - h ->
      ka = KEY(j); kb = KEY(j + 1);
      if :: ka > kb -> swap(j, j + 1) :: else fi;
      j++
    :: else -> break
    od;
    h++
  :: else -> break
  od;
  h = 0; j = 0; ka = 0; kb = 0
  }
}

/* ---- the world: one step of one holder, or of the store, at a time ----------------- */

/* Any holder; of two with equal records only the first, whose steps lead to the same
 * states as the other's once sorted. */
#define PICK \
  if \
  :: h = 0 \
  :: N > 1 && KEY(1 % N) != KEY(0) -> h = 1 \
  :: N > 2 && KEY(2 % N) != KEY(1 % N) -> h = 2 \
  :: N > 3 && KEY(3 % N) != KEY(2 % N) -> h = 3 \
  fi
active proctype world() {
  atomic {
    i = 0;
    do :: i < N -> name[i] = i * 10 + 1; st[i] = ACQ; gst[i] = NOTARMED; i++
    :: else -> break od;
    i = 0
  }
end:
  do
  :: atomic {
      PICK;
      step(h);
      canon(); cap = 0; rc = 0; ts = 0
    }
  :: atomic {
      /* a lease expires: any lease, at any moment (a TTL against clocks that read
       * anything) */
      up ->
      PICK;
      if
      :: lv[h] -> printf("%c%d's lease expires\n", WHO(h));
        lease_gone(h)
      :: wk[0] == ORPHAN -> printf("the orphan lease on worker 0 expires\n"); orphan_gone(0)
      :: W > 1 && wk[W - 1] == ORPHAN -> orphan_gone(W - 1)
      :: else
      fi;
      canon()
    }
  :: atomic { up && outages < OUTAGES -> printf("the store loses quorum\n");
      up = false; outages++ }
  :: atomic { !up -> printf("the store has quorum again\n"); up = true }
#if LATE_APPLY
  :: atomic {
      /* a HWM write its client gave up on reaches the store now, compares and all */
      PICK;
      if
      :: late[h] != 0 ->
        if
        :: up && LATE_REV(h) && ((!lorph[h] && wk[latew[h]] == OWNER(h)) ||
                                 (lorph[h] && wk[latew[h]] == ORPHAN)) ->
          printf("%c%d's late HWM write %d lands\n", WHO(h), late[h]);
          hwm_lands(latew[h], late[h])
        :: else ->
          printf("%c%d's late HWM write %d arrives: refused\n", WHO(h), late[h])
        fi;
        late[h] = 0; latew[h] = 0; lorph[h] = false; lseen[h] = false
      :: else
      fi;
      canon()
    }
#endif
  od
}
