/* Tensor operations over the CUDA layer (include/c10c/cuda.h, cuda_host.h): the tensor-level
 * record_stream and non-blocking copies. They live here, above the CUDA allocators, so that the
 * allocators deal only in what they own (data pointers) and never call up into tensors. */
#include "c10c/cuda.h"
#include "c10c/cuda_host.h"
#include "c10c/storage.h"
#include "c10c/tensor.h"
#include "cuda_internal.h"
#include "internal.h"

/* ATen's record_stream_cuda: recordStream(self.storage().data_ptr(), stream). */
c10c_status c10c_tensor_record_stream(const c10c_tensor *tensor, c10c_stream stream) {
  C10C__CHECK_NOT_NULL(tensor);
  c10c_data_ptr data;
  c10c_status st = c10c_storage_data_ptr(&data, c10c_tensor_storage(tensor));
  if (st != C10C_STATUS_OK) return st;
  c10c_device device = c10c_tensor_device(tensor);
  if (device.type != C10C_DEVICE_TYPE_CUDA || device.index != stream.device.index) {
    void *handle = NULL;
    st = c10c_cuda_stream_handle(&handle, stream); /* the stream's own errors first */
    if (st != C10C_STATUS_OK) return st;
    return c10c__fail(C10C_STATUS_INVALID_ARGUMENT,
                      "record_stream: the tensor is on %s device %d, the stream on cuda:%d",
                      c10c_device_type_name(device.type, false), (int)device.index,
                      (int)stream.device.index);
  }
  return c10c_cuda_record_stream(&data, stream);
}

c10c_status c10c_tensor_copy_nonblocking_(c10c_tensor *dst, const c10c_tensor *src,
                                          bool non_blocking) {
  bool saved = c10c__copy_non_blocking;
  c10c__copy_non_blocking = non_blocking;
  c10c_status st = c10c_tensor_copy_(dst, src);
  c10c__copy_non_blocking = saved;
  return st;
}
