/* libc10c: tensor layouts and memory formats, as c10's Layout and MemoryFormat.
 *
 * Both are 8-bit integers with torch 2.13's c10 values, frozen for every 1.x. Names are c10's
 * (printed in messages) and torch's Python names ("strided", "channels_last").
 */
#ifndef C10C_LAYOUT_H
#define C10C_LAYOUT_H

#include "common.h"

C10C_BEGIN_DECLS

typedef int8_t c10c_layout;
enum c10c_layout_value {
  C10C_LAYOUT_STRIDED = 0,    /* Strided, torch.strided */
  C10C_LAYOUT_SPARSE = 1,     /* Sparse, torch.sparse_coo */
  C10C_LAYOUT_SPARSE_CSR = 2, /* SparseCsr, torch.sparse_csr */
  C10C_LAYOUT_MKLDNN = 3,     /* Mkldnn, torch._mkldnn */
  C10C_LAYOUT_SPARSE_CSC = 4, /* SparseCsc, torch.sparse_csc */
  C10C_LAYOUT_SPARSE_BSR = 5, /* SparseBsr, torch.sparse_bsr */
  C10C_LAYOUT_SPARSE_BSC = 6, /* SparseBsc, torch.sparse_bsc */
  C10C_LAYOUT_JAGGED = 7,     /* Jagged, torch.jagged */
  C10C_LAYOUT_COUNT = 8       /* c10's NumOptions */
};

typedef int8_t c10c_memory_format;
enum c10c_memory_format_value {
  C10C_MEMORY_FORMAT_CONTIGUOUS = 0,       /* Contiguous, torch.contiguous_format */
  C10C_MEMORY_FORMAT_PRESERVE = 1,         /* Preserve, torch.preserve_format */
  C10C_MEMORY_FORMAT_CHANNELS_LAST = 2,    /* ChannelsLast, torch.channels_last */
  C10C_MEMORY_FORMAT_CHANNELS_LAST_3D = 3, /* ChannelsLast3d, torch.channels_last_3d */
  C10C_MEMORY_FORMAT_COUNT = 4             /* c10's NumOptions */
};

/* Whether l is 0..7. Errors: none. */
C10C_API bool c10c_layout_is_valid(c10c_layout l);

/* c10's name of a layout ("Strided", "SparseCsr"), as in error messages.
 * Ownership: static string. Errors: NULL and C10C_STATUS_INVALID_ARGUMENT for an invalid value
 * ("Unknown layout"). */
C10C_API const char *c10c_layout_name(c10c_layout l);

/* torch's Python name without "torch." ("strided", "sparse_coo", "_mkldnn", "jagged").
 * Ownership: static string. Errors: as c10c_layout_name. */
C10C_API const char *c10c_layout_python_name(c10c_layout l);

/* Whether f is 0..3. Errors: none. */
C10C_API bool c10c_memory_format_is_valid(c10c_memory_format f);

/* c10's name of a memory format ("Contiguous", "ChannelsLast3d").
 * Ownership: static string. Errors: NULL and C10C_STATUS_INVALID_ARGUMENT for an invalid value
 * ("Unknown memory format"). */
C10C_API const char *c10c_memory_format_name(c10c_memory_format f);

/* torch's Python name without "torch." ("contiguous_format", "channels_last_3d").
 * Ownership: static string. Errors: as c10c_memory_format_name. */
C10C_API const char *c10c_memory_format_python_name(c10c_memory_format f);

C10C_END_DECLS

#endif /* C10C_LAYOUT_H */
