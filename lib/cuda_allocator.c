/* CUDA memory without caching (cuMemAlloc_v2 / cuMemFree_v2 on the owning device), and byte
 * copies between host and device memory. The caching engine of issue 6 will sit on the same
 * driver calls; until then this is PyTorch's PYTORCH_NO_CUDA_MEMORY_CACHING=1 behaviour. */
#include <stdio.h>

#include "allocator_internal.h"
#include "cuda_internal.h"
#include "internal.h"
#include "sysmem.h"

typedef struct cuda_block {
  CUdeviceptr ptr;
  c10c_device_index device;
} cuda_block;

/* Runs the rest of a call with device's context current, then restores the thread's device. */
static c10c_status restore(c10c_status st) {
  c10c_status back = c10c__cuda_activate(c10c__cuda_current());
  return st != C10C_STATUS_OK ? st : back;
}

static void cuda_free(void *ctx) {
  cuda_block *b = ctx;
  /* a failure here has no caller to report to; the driver keeps its own accounting */
  if (c10c__cuda_activate(b->device) == C10C_STATUS_OK) {
    c10c__cuda.cuMemFree(b->ptr);
    restore(C10C_STATUS_OK);
  }
  c10c__free(b);
}

/* torch's format_size: "20.00 MiB" */
static void format_size(char *out, size_t size, double bytes) {
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
  if (u == 0)
    snprintf(out, size, "%.0f %s", bytes, units[u]);
  else
    snprintf(out, size, "%.2f %s", bytes, units[u]);
}

static c10c_status cuda_allocate(void *self, size_t nbytes, size_t alignment, c10c_data_ptr *out) {
  (void)self, (void)alignment; /* the driver aligns to 256 bytes */
  c10c_device_index device = c10c__cuda_current();
  c10c_status st = c10c__cuda_activate(device);
  if (st != C10C_STATUS_OK) return st;
  out->device = (c10c_device){C10C_DEVICE_TYPE_CUDA, device};
  if (nbytes == 0) return C10C_STATUS_OK;
  cuda_block *b = c10c__malloc(sizeof *b);
  if (b == NULL) return c10c__fail(C10C_STATUS_OUT_OF_MEMORY, "out of memory (host) for a block");
  CUresult r = c10c__cuda.cuMemAlloc(&b->ptr, nbytes);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_bytes = 0, total = 0;
    c10c__cuda.cuMemGetInfo(&free_bytes, &total);
    char want[32], cap[32], avail[32];
    format_size(want, sizeof want, (double)nbytes);
    format_size(cap, sizeof cap, (double)total);
    format_size(avail, sizeof avail, (double)free_bytes);
    c10c__free(b);
    return c10c__fail(C10C_STATUS_OUT_OF_MEMORY,
                      "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s "
                      "of which %s is free.",
                      want, (int)device, cap, avail);
  }
  st = c10c__cuda_check(r, "cuMemAlloc_v2");
  if (st != C10C_STATUS_OK) {
    c10c__free(b);
    return st;
  }
  b->device = device;
  out->data = (void *)(uintptr_t)b->ptr;
  out->ctx = b;
  out->deleter = cuda_free;
  return C10C_STATUS_OK;
}

static c10c_allocator cuda_allocator = {
    .obj = {.refcount = C10C__IMMORTAL_REF, .type = &c10c__immortal_type},
    .vt = {.struct_size = sizeof(c10c_allocator_vtable),
           .allocate = cuda_allocate,
           .name = "cuda_native"},
    .device_type = C10C_DEVICE_TYPE_CUDA,
    .builtin = true,
};

c10c_allocator *c10c__cuda_allocator(void) { return &cuda_allocator; }

c10c_status c10c__cuda_memcpy(void *dst, c10c_device_index dst_device, const void *src,
                              c10c_device_index src_device, size_t bytes) {
  if (bytes == 0) return C10C_STATUS_OK;
  c10c_device_index device = dst_device >= 0 ? dst_device : src_device;
  c10c_status st = c10c__cuda_activate(device);
  if (st != C10C_STATUS_OK) return st;
  CUresult r;
  const char *call;
  if (dst_device >= 0 && src_device >= 0)
    r = c10c__cuda.cuMemcpyDtoD((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes),
    call = "cuMemcpyDtoD_v2";
  else if (dst_device >= 0)
    r = c10c__cuda.cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes), call = "cuMemcpyHtoD_v2";
  else
    r = c10c__cuda.cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes), call = "cuMemcpyDtoH_v2";
  return restore(c10c__cuda_check(r, call));
}

c10c_status c10c__cuda_memzero(void *dst, c10c_device_index device, size_t bytes) {
  if (bytes == 0) return C10C_STATUS_OK;
  c10c_status st = c10c__cuda_activate(device);
  if (st != C10C_STATUS_OK) return st;
  return restore(c10c__cuda_check(c10c__cuda.cuMemsetD8((CUdeviceptr)(uintptr_t)dst, 0, bytes),
                                  "cuMemsetD8_v2"));
}
