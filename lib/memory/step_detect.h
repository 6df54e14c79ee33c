/* Finding steps in a stream of allocation requests, for planning when the host marks none.
 *
 * Training and inference loops repeat the same requests every step. The detector is fed one
 * signature per allocation (its rounded size and stream, hashed) with the number of blocks
 * alive just before it, and says when an allocation begins a new step:
 * - a K-gram (the last C10C__STEP_WINDOW signatures) seen before proposes a period p, the
 *   distance to its last sighting; a longer proposal replaces one being confirmed (layers
 *   repeat inside a step, but K-grams seen once per step, such as its first, propose the step);
 * - the period is confirmed when the next p requests equal the p before them and as many blocks
 *   are alive at the end of that period as at its start (a step returns to where it began; the
 *   forward passes of successive layers do not, their activations stay alive);
 * - the boundary is placed, within the confirmed period, before the allocation with the fewest
 *   blocks alive (a step's temporaries are gone there);
 * - from then on every p-th allocation from that phase begins a step, while each request equals
 *   the one p before it; a request that does not ends the detection and the search starts over.
 * O(1) per request (amortized); memory proportional to the requests seen, bounded (a ring of
 * 2 x C10C__STEP_MAX_PERIOD signatures, 2 MiB, and a table of K-grams, at most 16 MiB when
 * nothing repeats for that long); longer steps are not found. Not thread-safe (the engine's lock
 * covers it). */
#ifndef C10C_STEP_DETECT_H
#define C10C_STEP_DETECT_H

#include "internal.h"

enum {
  C10C__STEP_WINDOW = 8,          /* K: signatures per K-gram; also the shortest period */
  C10C__STEP_MAX_PERIOD = 1 << 17 /* the longest period found */
};

typedef struct c10c__step_detector c10c__step_detector;

/* A detector with no history. Errors: C10C_STATUS_OUT_OF_MEMORY. */
c10c_status c10c__step_detector_new(c10c__step_detector **out);

/* Frees it; NULL does nothing. */
void c10c__step_detector_destroy(c10c__step_detector *d);

/* Forgets everything (a host that marks steps itself, a change of settings). */
void c10c__step_detector_reset(c10c__step_detector *d);

/* The signature of a request. */
uint64_t c10c__step_signature(size_t rounded_size, int64_t stream);

/* Feeds one allocation (live: blocks alive before it); true when a step begins with it. When
 * host memory runs out the detector stops finding steps (and says so by returning false). */
bool c10c__step_detector_feed(c10c__step_detector *d, uint64_t signature, uint64_t live);

/* The confirmed period (0 while none). */
size_t c10c__step_detector_period(const c10c__step_detector *d);

#endif /* C10C_STEP_DETECT_H */
