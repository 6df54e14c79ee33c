// Exposes c10's default CPU allocator (libc10 from the torch wheel) to the C benchmark through
// a C ABI. Built by bench/run_alloc.py when torch is installed; not part of libc10c.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

extern "C" void *c10_shim_alloc(size_t n, void **ctx, void (**deleter)(void *)) {
  c10::DataPtr p = c10::GetDefaultCPUAllocator()->allocate(n);
  void *data = p.get();
  *deleter = p.get_deleter();
  *ctx = p.release_context();
  return data;
}

extern "C" void c10_shim_free(void *ctx, void (*deleter)(void *)) {
  if (ctx != nullptr && deleter != nullptr) deleter(ctx);
}
