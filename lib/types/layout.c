/* Layouts and memory formats: validation and names (c10/core/Layout.h, MemoryFormat.h, and the
 * Python names torch gives them).
 */
#include "internal.h"

static const char *const layout_names[C10C_LAYOUT_COUNT] = {
    "Strided", "Sparse", "SparseCsr", "Mkldnn", "SparseCsc", "SparseBsr", "SparseBsc", "Jagged"};
static const char *const layout_python_names[C10C_LAYOUT_COUNT] = {
    "strided",    "sparse_coo", "sparse_csr", "_mkldnn",
    "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged"};

static const char *const memory_format_names[C10C_MEMORY_FORMAT_COUNT] = {
    "Contiguous", "Preserve", "ChannelsLast", "ChannelsLast3d"};
static const char *const memory_format_python_names[C10C_MEMORY_FORMAT_COUNT] = {
    "contiguous_format", "preserve_format", "channels_last", "channels_last_3d"};

bool c10c_layout_is_valid(c10c_layout l) { return l >= 0 && l < C10C_LAYOUT_COUNT; }

static const char *layout_lookup(const char *const *names, c10c_layout l) {
  if (!c10c_layout_is_valid(l)) {
    c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown layout %d", (int)l);
    return NULL;
  }
  return names[l];
}

const char *c10c_layout_name(c10c_layout l) { return layout_lookup(layout_names, l); }

const char *c10c_layout_python_name(c10c_layout l) { return layout_lookup(layout_python_names, l); }

bool c10c_memory_format_is_valid(c10c_memory_format f) {
  return f >= 0 && f < C10C_MEMORY_FORMAT_COUNT;
}

static const char *memory_format_lookup(const char *const *names, c10c_memory_format f) {
  if (!c10c_memory_format_is_valid(f)) {
    /* c10 prints "Unknown memory format " for values it does not know. */
    c10c__fail(C10C_STATUS_INVALID_ARGUMENT, "Unknown memory format %d", (int)f);
    return NULL;
  }
  return names[f];
}

const char *c10c_memory_format_name(c10c_memory_format f) {
  return memory_format_lookup(memory_format_names, f);
}

const char *c10c_memory_format_python_name(c10c_memory_format f) {
  return memory_format_lookup(memory_format_python_names, f);
}
