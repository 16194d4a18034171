/*
 * spur_sets.c — a scavenge computed from survivor sets, without the
 * Cheney scan (spur.c calls it first, and scans when it declines).
 *
 * Reachability at a collection is known: an object is live iff its Merlin
 * death is after the clock.  A scavenge that tenures nothing (every
 * survivor younger than tenure - 1, all of them fitting the survivor
 * space) copies exactly the young objects still live plus those dead
 * remembered objects keep (nepotism), and nothing it does depends on the
 * order of its copies: old space gets nothing, and the next Cheney scan
 * orders the survivors afresh from the roots.  So it needs no scan of the
 * survivors' slots (slot loads, multi-store searches, the targets' state
 * bytes), only the survivor space's list and eden's live objects, found
 * through the input's lists of long-lived objects (prepare.c).
 */
#include "spur_state.h"

/* spur_evacuate_by_sets: adds o's young targets that are dead and not yet
 * added to the survivors; false when one would be tenured. */
static bool add_dead_targets(spur *s, uint32_t o, uint64_t *bytes, bool *tenures) {
  const eph_sim_input *in = s->r.in;
  for (uint64_t g = in->slot_start[o]; g < in->slot_start[o + 1]; g++) {
    uint32_t x = slot_value(s, g);
    if (x == SIM_NONE || s->r.death[x] > s->r.clock || !in_from_space(s, x) || (s->space[x] & SPECIAL)) continue;
    unsigned age = (s->space[x] & AGE_MASK) >> AGE_SHIFT; /* eden's: 0 */
    *bytes += in->size[x];
    s->space[x] |= SPECIAL;
    simvec_push(&s->r, &s->future, x);
    *tenures = age + 1 >= (unsigned)s->p->tenure_age;
    if (*tenures || *bytes > s->sp.surv_cap) return false;
  }
  return true;
}

bool spur_eden_live(spur *s, size_t i, size_t hi, simvec *out, uint64_t *bytes, uint64_t cap) {
  const eph_sim_input *in = s->r.in;
  uint64_t t = s->r.clock;
  while (i < hi) {
    if (i % SIM_BLOCK2 == 0 && i + SIM_BLOCK2 <= hi && in->death_max2[i / SIM_BLOCK2] <= t) {
      i += SIM_BLOCK2;
    } else if (i % SIM_BLOCK1 == 0 && i + SIM_BLOCK1 <= hi && in->death_max1[i / SIM_BLOCK1] <= t) {
      i += SIM_BLOCK1;
    } else if (!spur_take_if_live(s, t, (uint32_t)i++, out, bytes, cap)) {
      return false;
    }
  }
  return true;
}

/* The first entry of list[0..n) not below o. */
static size_t list_lower_bound(const uint32_t *list, size_t n, size_t o) {
  size_t a = 0, b = n;
  while (a < b) {
    size_t mid = a + (b - a) / 2;
    if (list[mid] < o) a = mid + 1;
    else b = mid;
  }
  return a;
}

/* The first object of [lo, hi) born after `when`. */
static size_t born_after(const eph_sim_input *in, size_t lo, size_t hi, uint64_t when) {
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (in->birth[mid] <= when) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Eden's survivors, by death (find_live_eden, onto s->future with their
 * bytes; false once those pass the survivor space).  Of the objects born
 * more than SIM_LONG[k] bytes before the clock only those on the input's
 * long_lived[k] list can survive: the level that leaves the fewest objects
 * to look at is read from its list up to that point, the rest object by
 * object (skipping blocks that died whole). */
static bool eden_survivors(spur *s, uint64_t *bytes) {
  const eph_sim_input *in = s->r.in;
  size_t lo = s->eden_lo, hi = s->next;
  uint64_t t = s->r.clock;
  size_t best_cost = hi - lo, best_cut = lo, best_from = 0, best_to = 0;
  int best = -1;
  for (int k = 0; k < SIM_LONG_LEVELS && lo < hi; k++) {
    if (t < SIM_LONG[k] || in->birth[lo] > t - SIM_LONG[k]) break;
    size_t cut = born_after(in, lo, hi, t - SIM_LONG[k]);
    size_t from = list_lower_bound(in->long_lived[k], in->nlong_lived[k], lo);
    size_t to = from + list_lower_bound(in->long_lived[k] + from, in->nlong_lived[k] - from, cut);
    size_t cost = 2 * (to - from) + (hi - cut); /* a listed object costs about two scanned */
    if (cost < best_cost) best_cost = cost, best_cut = cut, best_from = from, best_to = to, best = k;
  }
  for (size_t a = best_from; a < best_to; a++)
    if (!spur_take_if_live(s, t, in->long_lived[best][a], &s->future, bytes, s->sp.surv_cap)) return false;
  return spur_eden_live(s, best_cut, hi, &s->future, bytes, s->sp.surv_cap);
}

/* spur_state.h.  The survivors are gathered first (the survivor space's
 * live objects, eden's, then nepotism's), checked, and only then made the
 * new survivor space: their ages go up, the dead's state bytes to zero,
 * and the remembered set is rebuilt as evacuate_young does. */
bool spur_evacuate_by_sets(spur *s, bool *tenures) {
  const eph_sim_input *in = s->r.in;
  unsigned tenure_age = (unsigned)s->p->tenure_age;
  *tenures = true;
  if (!s->graph || tenure_age <= 1) return false;
  *tenures = false;
  uint64_t t = s->r.clock;
  const uint64_t *death = s->r.death;
  uint64_t bytes = 0, cap = s->sp.surv_cap;
  bool ok = true;
  s->future.len = 0;
  for (size_t i = 0; i < s->past.len && ok; i++) {
    uint32_t o = s->past.v[i];
    if (death[o] <= t) continue;
    unsigned age = (s->space[o] & AGE_MASK) >> AGE_SHIFT;
    bytes += in->size[o];
    *tenures = age + 1 >= tenure_age;
    ok = !*tenures && bytes <= cap;
    simvec_push(&s->r, &s->future, o);
  }
  if (!ok || !eden_survivors(s, &bytes)) return false;
  /* Nepotism: young objects only dead remembered objects still reach,
   * marked by SPECIAL (which no young object has otherwise) until the end. */
  size_t nepotism_from = s->future.len;
  for (size_t i = 0; i < s->remset.len && ok; i++) {
    uint32_t o = s->remset.v[i];
    if (death[o] > t) continue; /* what it points to is live: counted */
    size_t w = s->future.len;
    ok = add_dead_targets(s, o, &bytes, tenures);
    while (ok && w < s->future.len) ok = add_dead_targets(s, s->future.v[w++], &bytes, tenures);
  }
  if (!ok || s->r.nomem) {
    for (size_t i = nepotism_from; i < s->future.len; i++) s->space[s->future.v[i]] &= (uint8_t)~SPECIAL;
    s->future.len = 0;
    return false;
  }
  /* Committed: the dead of the survivor space go, the survivors age. */
  for (size_t i = 0; i < s->past.len; i++) {
    uint32_t o = s->past.v[i];
    if (death[o] <= t && !(s->space[o] & SPECIAL)) s->space[o] = 0;
  }
  uint64_t slots = 0;
  for (size_t i = 0; i < s->future.len; i++) {
    uint32_t o = s->future.v[i];
    unsigned age = (s->space[o] & AGE_MASK) >> AGE_SHIFT; /* eden's: 0 */
    if (age < MAX_AGE) age++;
    s->space[o] = (uint8_t)(age << AGE_SHIFT | SP_PAST);
    slots += in->slot_start[o + 1] - in->slot_start[o];
  }
  s->r.cur.objects += s->future.len;
  s->r.cur.copied += bytes;
  s->r.cur.slots += slots;
  s->r.cur.remembered_scanned = s->remset.len;
  s->r.cur.remembered_slots += spur_rebuild_remset(s, SP_PAST);
  spur_flip(s, bytes);
  return true;
}
