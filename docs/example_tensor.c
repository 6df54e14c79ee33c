/* A tensor from C: made, filled, viewed, refused and freed with libc10c.
 *
 *   cc docs/example_tensor.c $(pkg-config --cflags --libs c10c) -o example_tensor
 *   ./example_tensor
 *
 * prints
 *
 *   t: sizes [2, 3], strides [3, 1]: 0 1 2 3 4 5
 *   t.T: sizes [3, 2], strides [1, 3], t.T[2][1] = 5
 *   t[:, 1:]: sizes [2, 2], storage offset 1, first element 1
 *   t.view(5, 5): shape '[5, 5]' is invalid for input of size 6
 *
 * Every function returns a c10c_status (0 is C10C_STATUS_OK) and writes its result through the
 * out-parameter that comes first; c10c_last_error_message() says why a call failed, in
 * PyTorch's words. Tensors are reference counted: each one this program makes is released once.
 * (The C suite builds and runs this file: tests/meson.build.) */
#include <stdio.h>

#include <c10c/c10c.h>

static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, c10c_last_error_message());
  return 1;
}

int main(void) {
  c10c_abi_info info = C10C_ABI_INFO_INIT; /* the library must match these headers */
  if (c10c_abi_check(&info) != C10C_STATUS_OK) return fail("abi");

  /* torch.empty(2, 3), filled with 0..5 through its data pointer */
  const int64_t sizes[] = {2, 3};
  c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10c_tensor *t = NULL;
  if (c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS))
    return fail("empty");
  float *data = c10c_tensor_data(t);
  for (int i = 0; i < 6; i++) data[i] = (float)i;
  const int64_t *st = c10c_tensor_strides(t);
  printf("t: sizes [%lld, %lld], strides [%lld, %lld]:", (long long)sizes[0], (long long)sizes[1],
         (long long)st[0], (long long)st[1]);
  for (int i = 0; i < 6; i++) printf(" %g", (double)data[i]);
  printf("\n");

  /* t.T: a view, sharing t's memory */
  c10c_tensor *tt = NULL;
  if (c10c_tensor_transpose(&tt, t, 0, 1)) return fail("transpose");
  const int64_t *vs = c10c_tensor_sizes(tt), *vst = c10c_tensor_strides(tt);
  const float *vd = c10c_tensor_data(tt);
  printf("t.T: sizes [%lld, %lld], strides [%lld, %lld], t.T[2][1] = %g\n", (long long)vs[0],
         (long long)vs[1], (long long)vst[0], (long long)vst[1],
         (double)vd[2 * vst[0] + 1 * vst[1]]);

  /* t[:, 1:]: a view at storage offset 1 */
  c10c_tensor *tail = NULL;
  if (c10c_tensor_slice(&tail, t, 1, 1, 3, 1)) return fail("slice");
  const float *td = c10c_tensor_data(tail); /* already at the view's first element */
  printf("t[:, 1:]: sizes [%lld, %lld], storage offset %lld, first element %g\n",
         (long long)c10c_tensor_sizes(tail)[0], (long long)c10c_tensor_sizes(tail)[1],
         (long long)c10c_tensor_storage_offset(tail), (double)td[0]);

  /* a view torch refuses: the status and torch's message */
  const int64_t bad[] = {5, 5};
  c10c_tensor *no = NULL;
  if (c10c_tensor_view(&no, t, bad, 2) != C10C_STATUS_OK)
    printf("t.view(5, 5): %s\n", c10c_last_error_message());

  /* each reference made above, released once (the memory goes with the last) */
  c10c_tensor_release(tail);
  c10c_tensor_release(tt);
  c10c_tensor_release(t);
  return 0;
}
