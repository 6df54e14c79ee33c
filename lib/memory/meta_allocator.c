/* The meta device's allocator (ATen's MetaAllocator, registered for kMeta as c10's
 * REGISTER_ALLOCATOR does): every allocation, of any size, is a data pointer without data. A meta
 * storage has a size and no bytes, so a 2^40-byte meta tensor costs only its shell; every path
 * that reads or writes data refuses a meta tensor by its device type (lib/tensor). */
#include "allocator_internal.h"

static c10c_status meta_allocate(c10c_data_ptr *out, void *self, size_t nbytes, size_t alignment) {
  (void)self;
  (void)nbytes;
  (void)alignment;
  out->data = out->ctx = NULL; /* nothing to free: no deleter either */
  out->deleter = NULL;
  return C10C_STATUS_OK;
}

static c10c_allocator meta_allocator = {
    .obj = {.refcount = C10C__IMMORTAL_REF, .type = &c10c__immortal_type},
    .vt = {.struct_size = sizeof(c10c_allocator_vtable), .allocate = meta_allocate, .name = "meta"},
    .device_type = C10C_DEVICE_TYPE_META,
    .builtin = true,
};

C10C__AT_LOAD(register_meta) { c10c__allocator_register_builtin(&meta_allocator); }
