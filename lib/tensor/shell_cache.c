/* Per-thread free lists of object shells.
 *
 * glibc's tcache makes malloc+free of a 144-byte shell cost about 20 ns, with an atomic counter of
 * the failure-injection hook on top; a thread-local stack costs a few. Each thread keeps at most
 * CAP shells per kind (a shell freed on another thread than the one that made it joins the freeing
 * thread's list, as in tcache). When a thread exits, a pthread key destructor frees its lists, and
 * shells freed after that (by later destructors) go straight back to the system. While the test
 * hook that fails allocations is armed the lists are bypassed, so a failure sweep still reaches the
 * real allocation. Under AddressSanitizer the lists are off: its quarantine of freed memory is
 * what finds a use after release (and LeakSanitizer ignores pointers stored in poisoned memory,
 * so poisoned cached shells would be reported as leaks).
 */
#include "shell_cache.h"

#include <stdint.h>

#include "os.h"
#include "sysmem.h"

#if defined(__SANITIZE_ADDRESS__)
#define C10C__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define C10C__ASAN 1
#endif
#endif
#ifdef C10C__ASAN
enum { CACHING_POSSIBLE = 0 };
#else
enum { CACHING_POSSIBLE = 1 };
#endif

enum { CAP = 64 };

typedef enum thread_state { FRESH, CACHING, EXITED } thread_state;

static _Thread_local void *heads[C10C__SHELL_KINDS] C10C__TLS_FAST;
static _Thread_local uint32_t counts[C10C__SHELL_KINDS] C10C__TLS_FAST;
static _Thread_local unsigned char state C10C__TLS_FAST; /* a thread_state */
static c10c__tls_key exit_key;
static c10c__once key_once = C10C__ONCE_INIT;
static bool key_ok;

static void thread_exit(void *arg) {
  (void)arg;
  state = EXITED;
  for (int k = 0; k < C10C__SHELL_KINDS; k++) {
    void *shell = heads[k];
    while (shell != NULL) {
      void *next = *(void **)shell;
      c10c__free(shell);
      shell = next;
    }
    heads[k] = NULL;
    counts[k] = 0;
  }
}

static void make_key(void) { key_ok = c10c__tls_key_create(&exit_key, thread_exit); }

/* A host that unloads libc10c must not have threads run thread_exit afterwards (as the CPU
 * caching allocator's key). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((destructor)) static void forget_key(void) {
  if (key_ok) c10c__tls_key_delete(exit_key);
}
#endif

/* Registers this thread for the exit hook; false when it cannot cache. */
static bool start_caching(void) {
  c10c__once_call(&key_once, make_key);
  if (!key_ok || !c10c__tls_set(exit_key, &state)) {
    state = EXITED; /* never cache on this thread */
    return false;
  }
  state = CACHING;
  return true;
}

void *c10c__shell_alloc(c10c__shell_kind kind, size_t size) {
  void *shell = heads[kind];
  if (shell != NULL && !c10c__failure_injection_armed()) {
    heads[kind] = *(void **)shell;
    counts[kind]--;
    return shell;
  }
  return c10c__malloc(size);
}

void c10c__shell_free(c10c__shell_kind kind, void *shell, size_t size) {
  (void)size;
  if (shell == NULL) return;
  if (!CACHING_POSSIBLE) {
    c10c__free(shell);
    return;
  }
  if (state != CACHING && (state == EXITED || !start_caching())) {
    c10c__free(shell);
    return;
  }
  if (counts[kind] >= CAP) {
    c10c__free(shell);
    return;
  }
  *(void **)shell = heads[kind];
  heads[kind] = shell;
  counts[kind]++;
}
