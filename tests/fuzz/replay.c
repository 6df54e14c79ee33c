/* The main of a fuzz harness in an ordinary build: feeds every file named on the command line
 * (directories: every file in them, in name order) to LLVMFuzzerTestOneInput once, so that the
 * kept corpus and the inputs of every bug found are replayed by `meson test` without clang. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replayed;

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return 1;
  }
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (bigger == NULL) free(buf);
      buf = bigger;
    }
  }
  fclose(f);
  if (buf == NULL) {
    fprintf(stderr, "%s: out of memory\n", path);
    return 1;
  }
  /* A private copy of exactly n bytes, so ASan sees a read past the input as one. */
  uint8_t *exact = malloc(n ? n : 1);
  if (exact == NULL) {
    free(buf);
    return 1;
  }
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  replayed++;
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *path) {
  DIR *d = opendir(path);
  if (d == NULL) {
    perror(path);
    return 1;
  }
  char **names = NULL;
  size_t count = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (count == cap) {
      char **bigger = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
      if (bigger == NULL) break;
      names = bigger;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[count] = malloc(len);
    if (names[count] == NULL) break;
    snprintf(names[count++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  qsort(names, count, sizeof *names, by_name);
  int failures = 0;
  for (size_t i = 0; i < count; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) failures += replay_file(names[i]);
    free(names[i]);
  }
  free(names);
  return failures;
}

int main(int argc, char **argv) {
  int failures = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      failures++;
    } else {
      failures += S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]);
    }
  }
  printf("replayed %d inputs\n", replayed);
  return failures != 0;
}
