/* The portability layer's threads, dynamic loader and clocks on Windows (os.c has POSIX's):
 * slim reader/writer locks, one-time initialization, fiber-local storage (whose callbacks run
 * at thread exit, as a pthread key's destructor does), LoadLibrary, and the performance
 * counter. Only kernel32 is used: the library needs no winpthread or other runtime DLL.
 */
#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "os.h"

_Static_assert(sizeof(c10c__mutex) == sizeof(SRWLOCK), "c10c__mutex holds an SRWLOCK");
_Static_assert(sizeof(c10c__once) == sizeof(INIT_ONCE), "c10c__once holds an INIT_ONCE");
_Static_assert(sizeof(c10c__tls_key) == sizeof(DWORD), "c10c__tls_key holds an FLS index");

void c10c__mutex_init(c10c__mutex *m) { InitializeSRWLock((PSRWLOCK)m); }

void c10c__mutex_destroy(c10c__mutex *m) { (void)m; /* an SRWLOCK owns no resources */ }

void c10c__mutex_lock(c10c__mutex *m) { AcquireSRWLockExclusive((PSRWLOCK)m); }

void c10c__mutex_unlock(c10c__mutex *m) { ReleaseSRWLockExclusive((PSRWLOCK)m); }

/* InitOnceExecuteOnce's callback: the parameter carries the caller's function. A function
 * pointer cannot pass through void * in ISO C, so it travels in a struct. */
typedef struct {
  void (*fn)(void);
} once_fn;

static BOOL CALLBACK run_once(PINIT_ONCE once, PVOID parameter, PVOID *context) {
  (void)once, (void)context;
  ((const once_fn *)parameter)->fn();
  return TRUE;
}

void c10c__once_call(c10c__once *once, void (*fn)(void)) {
  once_fn call = {fn};
  InitOnceExecuteOnce((PINIT_ONCE)once, run_once, &call, NULL);
}

/* FlsAlloc takes a PFLS_CALLBACK_FUNCTION (void WINAPI (PVOID)), a pthread-style destructor is
 * void (void *) in the C calling convention: the same on x64, not on 32-bit Windows. So each
 * key's destructor is called through one of a few fixed callbacks, which also lets
 * c10c__tls_key_delete disarm it first: FlsFree runs the callback on every thread's value, where
 * pthread_key_delete runs no destructor (the library deletes its keys as it unloads, when those
 * callbacks must not run). Windows runs the callbacks when a thread exits, with the slot's value,
 * only when it is not NULL. The library makes four keys. */
enum { MAX_KEYS = 8 };
static void (*_Atomic destructors[MAX_KEYS])(void *);
static DWORD key_index[MAX_KEYS];
static _Atomic int keys_used;

static void call_destructor(int i, void *value) {
  void (*destructor)(void *) = atomic_load(&destructors[i]);
  if (destructor != NULL) destructor(value);
}

#define KEY_CALLBACK(i) \
  static void WINAPI key_callback_##i(PVOID value) { call_destructor(i, value); }
KEY_CALLBACK(0)
KEY_CALLBACK(1)
KEY_CALLBACK(2)
KEY_CALLBACK(3)
KEY_CALLBACK(4)
KEY_CALLBACK(5)
KEY_CALLBACK(6)
KEY_CALLBACK(7)
#undef KEY_CALLBACK

static PFLS_CALLBACK_FUNCTION const callbacks[MAX_KEYS] = {
    key_callback_0, key_callback_1, key_callback_2, key_callback_3,
    key_callback_4, key_callback_5, key_callback_6, key_callback_7,
};

bool c10c__tls_key_create(c10c__tls_key *key, void (*destructor)(void *)) {
  int i = atomic_fetch_add(&keys_used, 1);
  if (i >= MAX_KEYS) return false;
  atomic_store(&destructors[i], destructor);
  DWORD index = FlsAlloc(destructor != NULL ? callbacks[i] : NULL);
  if (index == FLS_OUT_OF_INDEXES) {
    atomic_store(&destructors[i], NULL);
    return false;
  }
  key_index[i] = index;
  *key = index;
  return true;
}

void c10c__tls_key_delete(c10c__tls_key key) {
  int n = atomic_load(&keys_used);
  for (int i = 0; i < n && i < MAX_KEYS; i++)
    if (key_index[i] == key) atomic_store(&destructors[i], NULL);
  FlsFree(key);
}

void *c10c__tls_get(c10c__tls_key key) { return FlsGetValue(key); }

bool c10c__tls_set(c10c__tls_key key, void *value) { return FlsSetValue(key, value) != 0; }

bool c10c__at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  (void)prepare, (void)parent, (void)child;
  return true; /* no fork on Windows */
}

void c10c__thread_yield(void) { SwitchToThread(); }

void *c10c__dl_open(const char *path, char *why, size_t why_size) {
  HMODULE library = LoadLibraryA(path);
  if (library == NULL && why_size > 0) {
    DWORD code = GetLastError();
    char text[256];
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code,
                             0, text, sizeof text, NULL);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) n--;
    text[n] = '\0';
    /* dlerror's form: the file, then why */
    snprintf(why, why_size, "%s: %s (Windows error %lu)", path, n > 0 ? text : "cannot load",
             (unsigned long)code);
  }
  return (void *)library;
}

void *c10c__dl_symbol(void *library, const char *symbol) {
  FARPROC f = GetProcAddress((HMODULE)library, symbol);
  void *p;
  memcpy(&p, &f, sizeof p); /* a function address as data, without a cast ISO C forbids */
  return p;
}

void c10c__dl_close(void *library) { FreeLibrary((HMODULE)library); }

const char *c10c__cuda_driver_name(void) { return "nvcuda.dll"; }

int64_t c10c__monotonic_us(void) {
  static _Atomic int64_t frequency;
  int64_t f = atomic_load_explicit(&frequency, memory_order_relaxed);
  if (f == 0) {
    LARGE_INTEGER q;
    QueryPerformanceFrequency(&q); /* never fails since Windows XP */
    f = q.QuadPart;
    atomic_store_explicit(&frequency, f, memory_order_relaxed);
  }
  LARGE_INTEGER now;
  QueryPerformanceCounter(&now);
  /* whole seconds and the rest apart, so that the product cannot overflow */
  int64_t t = now.QuadPart;
  return t / f * 1000000 + t % f * 1000000 / f;
}

int64_t c10c__realtime_us(void) {
  FILETIME ft;
  GetSystemTimePreciseAsFileTime(&ft);
  /* 100 ns units since 1601-01-01; 1970 is 11644473600 seconds later */
  int64_t t = (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
  return t / 10 - INT64_C(11644473600000000);
}

#else
/* ISO C forbids an empty translation unit */
typedef int c10c__os_win32_unused;
#endif
