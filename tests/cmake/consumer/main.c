/* Prints the library's version and a tensor made through it: what the CMake consumer test
 * expects from both the shared and the static link. */
#include <stdio.h>

#include <c10c/c10c.h>

int main(void) {
  c10c_abi_info info = C10C_ABI_INFO_INIT;
  if (c10c_abi_check(&info) != C10C_STATUS_OK) {
    fprintf(stderr, "%s\n", c10c_last_error_message());
    return 1;
  }
  const int64_t sizes[2] = {2, 3};
  c10c_tensor *t = NULL;
  if (c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, (c10c_device){C10C_DEVICE_TYPE_CPU, -1},
                        C10C_MEMORY_FORMAT_CONTIGUOUS) != C10C_STATUS_OK) {
    fprintf(stderr, "%s\n", c10c_last_error_message());
    return 1;
  }
  printf("c10c %s: %s tensor of %lld elements\n", c10c_version_string(),
         c10c_dtype_name(c10c_tensor_dtype(t)), (long long)c10c_tensor_numel(t));
  c10c_tensor_release(t);
  return 0;
}
