/* Step detection (lib/memory/step_detect.h) on request streams of modelled training loops,
 * whose true step boundaries the model knows: the detector must find them from the requests
 * alone, and find none where nothing repeats. */
#include "harness.h"
#include "c10c/testing.h"
#include "step_detect.h"

/* A training loop's allocations: per step, `layers` identical layers, each allocating an
 * activation kept for the backward pass and a temporary freed at once; a loss; the backward
 * pass, layer by layer in reverse, allocating a gradient temporary and freeing the layer's
 * activation; an optimizer temporary. Optionally a first step that also allocates optimizer
 * state (persistent), as real loops do. The model feeds the detector and records which
 * allocation indices begin a step (truth) and which the detector said do (found). */
typedef struct loop_model {
  c10c__step_detector *d;
  uint64_t live, allocs;
  uint64_t truth[64], found[256];
  int ntruth, nfound;
  uint64_t live_at[4096]; /* blocks alive before each allocation */
} loop_model;

/* Whether allocation i is a place to cut steps: as few blocks alive before it as before the
 * last true step boundary (no temporary of a step spans it). The detector may cut at any such
 * place of the period (a loop's last temporary is freed before the next step's first
 * allocation: both sides of it are quiet). */
static bool quiet(const loop_model *m, uint64_t i) {
  return i < 4096 && m->live_at[i] == m->live_at[m->truth[m->ntruth - 1]];
}

static void alloc_(loop_model *m, size_t size, int64_t stream) {
  if (c10c__step_detector_feed(m->d, c10c__step_signature(size, stream), m->live) &&
      m->nfound < 256)
    m->found[m->nfound++] = m->allocs;
  if (m->allocs < 4096) m->live_at[m->allocs] = m->live;
  m->allocs++;
  m->live++;
}

static void free_(loop_model *m) { m->live--; }

static void step(loop_model *m, int layers, bool first) {
  if (m->ntruth < 64) m->truth[m->ntruth++] = m->allocs;
  if (first) { /* optimizer state, allocated once and kept */
    for (int l = 0; l < layers; l++) alloc_(m, 4096 * 512, 0);
  }
  alloc_(m, 512 * 7, 0); /* the input batch */
  for (int l = 0; l < layers; l++) {
    alloc_(m, 512 * 100, 0); /* activation (kept) */
    alloc_(m, 512 * 300, 0); /* temporary */
    free_(m);
    alloc_(m, 512 * 2, 0); /* a small bias temporary */
    free_(m);
  }
  alloc_(m, 512, 0); /* loss */
  for (int l = layers - 1; l >= 0; l--) {
    alloc_(m, 512 * 100, 0); /* grad temporary */
    free_(m);
    free_(m); /* the activation */
  }
  free_(m);               /* loss */
  free_(m);               /* input */
  alloc_(m, 512 * 50, 0); /* optimizer's temporary */
  free_(m);
}

static loop_model model(void) {
  loop_model m;
  memset(&m, 0, sizeof m);
  ASSERT_EQ(c10c__step_detector_new(&m.d), C10C_STATUS_OK);
  m.live = 10; /* parameters */
  return m;
}

TEST(a_training_loop_is_cut_at_its_step_boundaries) {
  loop_model m = model();
  for (int s = 0; s < 8; s++) step(&m, 12, s == 0);
  /* steps 1..7 are identical (step 0 also made the optimizer state): the period is found by
   * step 3 at the latest, each cut is a quiet place, one per step */
  ASSERT_TRUE(m.nfound >= 4);
  uint64_t period = m.truth[2] - m.truth[1];
  ASSERT_EQ(c10c__step_detector_period(m.d), period);
  ASSERT_TRUE(m.found[0] < m.truth[4]);
  for (int i = 0; i < m.nfound; i++) {
    if (!quiet(&m, m.found[i])) FAIL_AT("allocation %" PRIu64 " is no place to cut", m.found[i]);
    if (i > 0) ASSERT_EQ(m.found[i] - m.found[i - 1], period);
  }
  ASSERT_TRUE(m.found[m.nfound - 1] + period >= m.allocs);
  c10c__step_detector_destroy(m.d);
}

TEST(layers_that_repeat_inside_a_step_are_not_steps) {
  /* one long forward pass of 40 identical layers whose activations stay alive: the layer
   * period repeats 39 times but blocks pile up, so it is no step */
  loop_model m = model();
  alloc_(&m, 512 * 7, 0);
  for (int l = 0; l < 40; l++) {
    alloc_(&m, 512 * 100, 0);
    alloc_(&m, 512 * 300, 0);
    free_(&m);
    alloc_(&m, 512 * 2, 0);
    free_(&m);
  }
  ASSERT_EQ(m.nfound, 0);
  ASSERT_EQ(c10c__step_detector_period(m.d), 0);
  c10c__step_detector_destroy(m.d);
}

TEST(requests_that_never_repeat_have_no_steps) {
  loop_model m = model();
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 20000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    alloc_(&m, (size_t)(x % 1000 + 1) * 512, (int64_t)(x >> 60));
    if (x & 1) free_(&m);
  }
  ASSERT_EQ(m.nfound, 0);
  c10c__step_detector_destroy(m.d);
}

TEST(a_changed_step_ends_detection_and_the_new_pattern_is_found) {
  loop_model m = model();
  for (int s = 0; s < 5; s++) step(&m, 6, s == 0);
  ASSERT_TRUE(c10c__step_detector_period(m.d) > 0);
  int before = m.nfound;
  /* a different model (more layers) from here on: the old period breaks at once */
  m.ntruth = 0;
  for (int s = 0; s < 6; s++) step(&m, 9, false);
  ASSERT_TRUE(m.nfound > before);
  ASSERT_EQ(c10c__step_detector_period(m.d), m.truth[2] - m.truth[1]);
  for (int i = before; i < m.nfound; i++)
    if (!quiet(&m, m.found[i])) FAIL_AT("allocation %" PRIu64 " is no place to cut", m.found[i]);
  c10c__step_detector_destroy(m.d);
}

TEST(streams_are_part_of_a_request) {
  /* the same sizes alternating between two streams step to step: no period of one step */
  loop_model m = model();
  for (int s = 0; s < 6; s++) {
    int64_t stream = s % 2;
    for (int i = 0; i < 20; i++) {
      alloc_(&m, (size_t)(i + 1) * 512, stream);
      free_(&m);
    }
  }
  ASSERT_EQ(c10c__step_detector_period(m.d), 40);
  c10c__step_detector_destroy(m.d);
}

TEST(running_out_of_host_memory_stops_detection_cleanly) {
  for (int64_t k = 1; k < 40; k++) {
    loop_model m = model();
    c10c_testing_fail_allocation(k);
    for (int s = 0; s < 6; s++) step(&m, 12, s == 0);
    c10c_testing_fail_allocation(0);
    for (int i = 0; i < m.nfound; i++) /* whatever it found before giving up is right */
      ASSERT_TRUE(quiet(&m, m.found[i]));
    c10c__step_detector_reset(m.d); /* and it can start over */
    m.nfound = 0;
    for (int s = 0; s < 6; s++) step(&m, 12, false);
    ASSERT_TRUE(c10c__step_detector_period(m.d) > 0);
    c10c__step_detector_destroy(m.d);
  }
}

RUN_TESTS(T(a_training_loop_is_cut_at_its_step_boundaries),
          T(layers_that_repeat_inside_a_step_are_not_steps),
          T(requests_that_never_repeat_have_no_steps),
          T(a_changed_step_ends_detection_and_the_new_pattern_is_found),
          T(streams_are_part_of_a_request), T(running_out_of_host_memory_stops_detection_cleanly))
