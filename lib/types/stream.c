/* Streams as values: construction, equality, c10's pack3/unpack3, a hash without c10's
 * sign-extension collision, and c10's printed form (c10/core/Stream.h/.cpp).
 */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

c10c_status c10c_stream_init(c10c_stream *out, c10c_device device, c10c_stream_id id) {
  C10C__CHECK_NOT_NULL(out);
  c10c_status st = c10c__check_device(device);
  if (st != C10C_STATUS_OK) return st;
  out->device = device;
  out->id = id;
  return C10C_STATUS_OK;
}

c10c_status c10c_stream_default(c10c_stream *out, c10c_device device) {
  return c10c_stream_init(out, device, 0);
}

bool c10c_stream_equal(c10c_stream a, c10c_stream b) {
  return c10c_device_equal(a.device, b.device) && a.id == b.id;
}

c10c_stream_data3 c10c_stream_pack3(c10c_stream s) {
  c10c_stream_data3 d = {s.id, s.device.index, s.device.type};
  return d;
}

c10c_status c10c_stream_unpack3(c10c_stream *out, c10c_stream_id stream_id,
                                c10c_device_index device_index, c10c_device_type device_type) {
  C10C__CHECK_NOT_NULL(out);
  /* c10's TORCH_CHECK(isValidDeviceType(device_type)), message and all */
  if (!c10c_device_type_is_valid(device_type))
    return c10c__fail(C10C_STATUS_ERROR,
                      "Expected isValidDeviceType(device_type) to be true, but got false.  (Could "
                      "this error message be improved?  If so, please report an enhancement "
                      "request to PyTorch.)");
  c10c_device device = {device_type, device_index};
  return c10c_stream_init(out, device, stream_id);
}

uint64_t c10c_stream_hash(c10c_stream s) {
  /* c10 shifts the sign-extended int8 fields; zero-extending keeps the device type intact when
   * the index is -1 and gives the same value as c10 for every index >= 0. */
  return ((uint64_t)(uint8_t)s.device.type << 56) | ((uint64_t)(uint8_t)s.device.index << 48) |
         ((uint64_t)s.id & ((UINT64_C(1) << 48) - 1));
}

c10c_status c10c_stream_to_string(char *out, size_t out_size, c10c_stream s) {
  C10C__CHECK_NOT_NULL(out);
  char device[C10C_DEVICE_STRING_MAX];
  c10c_status st = c10c_device_to_string(device, sizeof device, s.device);
  if (st != C10C_STATUS_OK) return st;
  int n = snprintf(out, out_size, "stream %" PRId64 " on device %s", s.id, device);
  if (n < 0 || (size_t)n >= out_size)
    return c10c__fail(C10C_STATUS_BUFFER_TOO_SMALL,
                      "c10c_stream_to_string: %zu bytes needed, the buffer has %zu",
                      (size_t)(n < 0 ? 0 : n) + 1, out_size);
  return C10C_STATUS_OK;
}
