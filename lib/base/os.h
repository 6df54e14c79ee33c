/* The operating system's threads, dynamic loader and clocks behind one interface (see os.c and
 * os_win32.c), with sysmem.h (memory) and shm.h (shareable memory, files, processes) the whole
 * portability layer: nothing above lib/base includes an operating system header or calls one
 * (tests/check_layers.py). POSIX threads on Linux and macOS, with the calls inline so that a lock
 * costs what it did before the layer existed; on Windows, slim reader/writer locks, one-time
 * initialization and fiber-local storage (whose callbacks run at thread exit, as a pthread key's
 * destructor does). Atomics are C11's <stdatomic.h> or the compiler's __atomic builtins, which
 * every supported compiler (gcc, clang, zig cc, mingw-w64 gcc) has; they need no layer. */
#ifndef C10C_OS_H
#define C10C_OS_H

#include "internal.h"

#if defined(_WIN32)
/* SRWLOCK and INIT_ONCE are one pointer, zero when unused: no <windows.h> here. */
typedef struct {
  void *opaque;
} c10c__mutex;
#define C10C__MUTEX_INIT \
  { NULL }
typedef struct {
  void *opaque;
} c10c__once;
#define C10C__ONCE_INIT \
  { NULL }
typedef unsigned long c10c__tls_key; /* a fiber-local storage index (DWORD) */

void c10c__mutex_init(c10c__mutex *m);
void c10c__mutex_destroy(c10c__mutex *m);
void c10c__mutex_lock(c10c__mutex *m);
void c10c__mutex_unlock(c10c__mutex *m);
void c10c__once_call(c10c__once *once, void (*fn)(void));
#else
#include <pthread.h>
typedef pthread_mutex_t c10c__mutex;
#define C10C__MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
typedef pthread_once_t c10c__once;
#define C10C__ONCE_INIT  PTHREAD_ONCE_INIT
typedef pthread_key_t c10c__tls_key;

/* A mutex that is not recursive; lock and unlock cannot fail when used correctly. */
static inline void c10c__mutex_init(c10c__mutex *m) { pthread_mutex_init(m, NULL); }
static inline void c10c__mutex_destroy(c10c__mutex *m) { pthread_mutex_destroy(m); }
static inline void c10c__mutex_lock(c10c__mutex *m) { pthread_mutex_lock(m); }
static inline void c10c__mutex_unlock(c10c__mutex *m) { pthread_mutex_unlock(m); }
/* Runs fn exactly once per once, every caller returning after it has run. */
static inline void c10c__once_call(c10c__once *once, void (*fn)(void)) { pthread_once(once, fn); }
#endif

/* A thread-local slot whose destructor runs with the thread's value (when not NULL) as the
 * thread exits. Create returns false when the system has no slot left. */
bool c10c__tls_key_create(c10c__tls_key *key, void (*destructor)(void *));
void c10c__tls_key_delete(c10c__tls_key key);
void *c10c__tls_get(c10c__tls_key key);
/* false when the system cannot store the value (no memory) */
bool c10c__tls_set(c10c__tls_key key, void *value);

/* Handlers around fork() (pthread_atfork); false when they cannot be registered. Systems
 * without fork (Windows) register nothing and return true. */
bool c10c__at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void));

/* Gives the processor to another thread (sched_yield, SwitchToThread). */
void c10c__thread_yield(void);

/* The dynamic loader. c10c__dl_open loads the library at path (a file name alone is searched
 * the system's way), resolving its symbols now and keeping them local; NULL on failure with the
 * loader's reason in why (NUL-terminated, cut to why_size). */
void *c10c__dl_open(const char *path, char *why, size_t why_size);
/* The address of symbol in library, or NULL. */
void *c10c__dl_symbol(void *library, const char *symbol);
void c10c__dl_close(void *library);
/* The CUDA driver's file name on this system: libcuda.so.1 (Linux), nvcuda.dll (Windows), and
 * on macOS, which has had no CUDA driver since CUDA 10.2, a name that is never found, so CUDA
 * reports itself unavailable. */
const char *c10c__cuda_driver_name(void);

/* Microseconds since an arbitrary fixed point (monotonic), and since 1970-01-01 UTC. */
int64_t c10c__monotonic_us(void);
int64_t c10c__realtime_us(void);

#endif /* C10C_OS_H */
