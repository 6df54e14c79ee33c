/* Build-time generator of pyc10/_dispatch_keys.py: c10's DispatchKey as a static Python IntEnum
 * whose member names and values come from libc10c itself, so type checkers know every member
 * and the numbers are never typed twice. Usage: gen_dispatch_keys OUTPUT.py */
#include <stdio.h>

#include "c10c/c10c.h"

/* Writes the member for key k: c10's name, except that the six per-backend block placeholders
 * (which c10 prints as "Undefined", "QuantizedUndefined", ...) get their enum names
 * StartOf<Functionality>Backends, as torch._C.DispatchKey has them. c10's EndOf<Functionality>
 * Backends names are no keys of their own but the block's last key (its Meta key, Meta being the
 * last backend component: EndOfDenseBackends = Meta = 64), so they follow that key as aliases,
 * as in torch._C.DispatchKey (DispatchKey.EndOfDenseBackends == DispatchKey.Meta, named "Meta").
 * The EndOfFunctionalityKeys sentinel is no member (torch._C.DispatchKey has none either). */
static void write_member(FILE *f, c10c_dispatch_key k) {
  if (k == C10C_DISPATCH_KEY_END_OF_FUNCTIONALITY_KEYS) return;
  bool in_blocks =
      k >= C10C_DISPATCH_KEY_START_OF_DENSE_BACKENDS && k <= C10C_DISPATCH_KEY_AUTOGRAD_META;
  if (in_blocks && c10c_dispatch_key_to_backend(k) == C10C_BACKEND_COMPONENT_INVALID)
    fprintf(f, "    StartOf%sBackends = %u\n",
            c10c_dispatch_key_name(c10c_dispatch_key_to_functionality(k)), (unsigned)k);
  else
    fprintf(f, "    %s = %u\n", c10c_dispatch_key_name(k), (unsigned)k);
  if (in_blocks && c10c_dispatch_key_to_backend(k) == C10C_BACKEND_COMPONENT_META)
    fprintf(f, "    EndOf%sBackends = %u\n",
            c10c_dispatch_key_name(c10c_dispatch_key_to_functionality(k)), (unsigned)k);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: gen_dispatch_keys OUTPUT.py\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "w");
  if (f == NULL) {
    perror(argv[1]);
    return 1;
  }
  fprintf(
      f,
      "\"\"\"c10's DispatchKey (generated from libc10c at build time; do not edit).\"\"\"\n\n"
      "import enum\n\n__all__ = [\"DispatchKey\"]\n\n\n"
      "class DispatchKey(enum.IntEnum):\n"
      "    \"\"\"A dispatch key: c10's DispatchKey, with c10's names and numeric values.\"\"\"\n\n"
      "    __module__ = \"pyc10\"\n\n");
  for (c10c_dispatch_key k = 0; k < C10C_DISPATCH_KEY_COUNT; k++) write_member(f, k);
  return fclose(f) == 0 ? 0 : 1;
}
