/* libc10c: the stream value type, as c10's Stream {device, id}.
 *
 * A stream names a queue of work on a device. Id 0 is always the device's default stream; other
 * ids are backend-defined (the CUDA backend fills them in). Values are 16 bytes, passed by value.
 */
#ifndef C10C_STREAM_H
#define C10C_STREAM_H

#include "common.h"
#include "device.h"

C10C_BEGIN_DECLS

typedef int64_t c10c_stream_id;

/* A stream: device and id, laid out as c10::Stream (device first, then 8-byte id). */
typedef struct c10c_stream {
  c10c_device device; /* the device the stream belongs to */
  c10c_stream_id id;  /* 0 = the device's default stream */
} c10c_stream;

/* c10's StreamData3, the form in which streams cross language boundaries (Python, DLPack). */
typedef struct c10c_stream_data3 {
  c10c_stream_id stream_id;
  c10c_device_index device_index;
  c10c_device_type device_type;
} c10c_stream_data3;

/* Longest string of c10c_stream_to_string, NUL included. */
enum c10c_stream_limit { C10C_STREAM_STRING_MAX = 96 };

/* Makes a stream on a device with an id (c10's Stream(UNSAFE, device, id)).
 * Errors: C10C_STATUS_NULL_POINTER, C10C_STATUS_INVALID_ARGUMENT for an invalid device type or
 * an index outside -1..127. */
C10C_API c10c_status c10c_stream_init(c10c_stream *out, c10c_device device, c10c_stream_id id);

/* The default stream of a device (id 0; c10's Stream(DEFAULT, device)).
 * Errors: as c10c_stream_init. */
C10C_API c10c_status c10c_stream_default(c10c_stream *out, c10c_device device);

/* Whether device and id are equal (c10's operator==). Errors: none. */
C10C_API bool c10c_stream_equal(c10c_stream a, c10c_stream b);

/* c10's Stream::pack3. Errors: none. */
C10C_API c10c_stream_data3 c10c_stream_pack3(c10c_stream s);

/* c10's Stream::unpack3: rebuilds a stream from its packed parts.
 * Errors: C10C_STATUS_NULL_POINTER; C10C_STATUS_ERROR "Expected isValidDeviceType(device_type)
 * to be true, but got false.  (Could this error message be improved?  ...)" for an invalid
 * device type (c10's check and message); C10C_STATUS_INVALID_ARGUMENT for an index below -1
 * (which c10 release builds keep). */
C10C_API c10c_status c10c_stream_unpack3(c10c_stream *out, c10c_stream_id stream_id,
                                         c10c_device_index device_index,
                                         c10c_device_type device_type);

/* A 64-bit hash: (uint8 type) << 56 | (uint8 index) << 48 | id & (2^48 - 1).
 * c10's Stream::hash sign-extends the 8-bit fields first, so an index of -1 sets the top 16 bits
 * and erases the device type (CPU/-1 and CUDA/-1 streams collide). This hash zero-extends
 * instead; it equals c10's whenever the index is >= 0. Errors: none. */
C10C_API uint64_t c10c_stream_hash(c10c_stream s);

/* c10's operator<<(Stream): "stream <id> on device <device>", e.g. "stream 0 on device cuda:0".
 * out receives at most out_size bytes including the NUL; C10C_STREAM_STRING_MAX always fits.
 * Errors: C10C_STATUS_NULL_POINTER (out, even with out_size 0), C10C_STATUS_INVALID_ARGUMENT
 * (invalid device), C10C_STATUS_BUFFER_TOO_SMALL (out holds the truncated string when out_size
 * > 0). */
C10C_API c10c_status c10c_stream_to_string(char *out, size_t out_size, c10c_stream s);

C10C_END_DECLS

#endif /* C10C_STREAM_H */
