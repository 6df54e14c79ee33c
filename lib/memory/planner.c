/* The offline memory planner and plan files (see planner.h). */
#include "planner.h"

#include "c10c/replay.h"

c10c_status c10c_plan_make(uint64_t *out_arena_bytes, uint64_t *out_offsets, const char *path,
                           int32_t device, size_t count, const uint64_t *sizes,
                           const int64_t *streams, const uint64_t *begins, const uint64_t *ends) {
  (void)out_offsets, (void)path, (void)device, (void)count, (void)sizes, (void)streams,
      (void)begins, (void)ends;
  C10C__CHECK_NOT_NULL(out_arena_bytes);
  return c10c__fail(C10C_STATUS_NOT_IMPLEMENTED, "c10c_plan_make: not implemented yet");
}
