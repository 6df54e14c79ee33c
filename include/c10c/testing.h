/* libc10c: hooks for tests. Not for production use: they make the library fail on purpose.
 *
 * Failure injection: with a countdown k > 0, the k-th memory request the library makes from now on
 * (its own bookkeeping and every request to the system for tensor bytes) fails as if the system
 * were out of memory, and so do none after it until the countdown is set again. Tests sweep
 * k = 1, 2, ... over an operation until it succeeds, checking every failure is clean.
 */
#ifndef C10C_TESTING_H
#define C10C_TESTING_H

#include "common.h"

C10C_BEGIN_DECLS

/* Makes the k-th following internal memory request fail (k = 0 turns injection off). Process-wide.
 * Errors: none. */
C10C_API void c10c_testing_fail_allocation(int64_t k);

/* How many internal memory requests were made since the process started. Errors: none. */
C10C_API int64_t c10c_testing_allocation_count(void);

C10C_END_DECLS

#endif /* C10C_TESTING_H */
