/* What the C tests take from POSIX, on Windows (mingw-w64): threads come from mingw's
 * winpthread (the tests link it; the library never does), and the few loader, file and
 * directory calls the tests make are mapped here onto Windows'. What cannot exist there (fork,
 * descriptor passing) is skipped by the tests themselves with SKIP_ON_WINDOWS. Included only
 * under _WIN32.
 */
#ifndef C10C_TEST_OS_COMPAT_H
#define C10C_TEST_OS_COMPAT_H

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <direct.h>
#include <io.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

/* dlopen(path, RTLD_NOW | RTLD_NOLOAD): the module if this process has it loaded, counted as
 * dlopen counts it, so that dlclose can release it. */
#define RTLD_NOW    2
#define RTLD_NOLOAD 4
static inline void *dlopen(const char *path, int flags) {
  if (path == NULL) return NULL;
  if (flags & RTLD_NOLOAD) {
    HMODULE m = NULL;
    return GetModuleHandleExA(0, path, &m) ? (void *)m : NULL;
  }
  return (void *)LoadLibraryA(path);
}
static inline void *dlsym(void *handle, const char *symbol) {
  FARPROC f = GetProcAddress((HMODULE)handle, symbol);
  void *p;
  memcpy(&p, &f, sizeof p);
  return p;
}
static inline int dlclose(void *handle) { return FreeLibrary((HMODULE)handle) ? 0 : -1; }

/* mkdtemp: a new directory from the template's XXXXXX */
static inline char *mkdtemp(char *template_) {
  for (int attempt = 0; attempt < 100; attempt++) {
    char *x = strstr(template_, "XXXXXX");
    if (x == NULL) return NULL;
    unsigned v = (unsigned)GetTickCount() * 2654435761u + (unsigned)_getpid() + (unsigned)attempt;
    for (int i = 0; i < 6; i++, v /= 26) x[i] = (char)('a' + v % 26);
    if (_mkdir(template_) == 0) return template_;
    memcpy(x, "XXXXXX", 6);
  }
  return NULL;
}

/* setenv over _putenv_s (overwrite always: the tests never ask otherwise) */
static inline int setenv(const char *name, const char *value, int overwrite) {
  (void)overwrite;
  return _putenv_s(name, value) == 0 ? 0 : -1;
}

/* posix_memalign over _aligned_malloc, whose blocks compat_aligned_free frees */
static inline int posix_memalign(void **out, size_t alignment, size_t size) {
  *out = _aligned_malloc(size, alignment);
  return *out != NULL ? 0 : 12 /* ENOMEM */;
}
#define compat_aligned_free _aligned_free

/* The directory for the tests' temporary files: %TEMP% (wine maps it into its prefix). */
static inline const char *compat_tmpdir(void) {
  const char *t = getenv("TEMP");
  return t != NULL ? t : ".";
}
#else
#define compat_aligned_free free
#endif /* _WIN32 */

/* Skips the rest of a test that needs what Windows lacks, saying why. */
#define SKIP_ON_WINDOWS(why)                 \
  printf("  skipped on Windows: %s\n", why); \
  return

#endif /* C10C_TEST_OS_COMPAT_H */
