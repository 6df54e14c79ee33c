// libc10c beside PyTorch's own c10 and ATen, in one process: nanoseconds to create and destroy a
// contiguous 2x3 float32 CPU tensor (raw c10: a StorageImpl and a TensorImpl as at::empty makes
// them, without the dispatcher; and at::empty itself), three views of it (view, transpose,
// narrow), and a reference retain+release (intrusive_ptr copy and destruction). Built and run by
// bench/run_libtorch.py against the torch wheel's headers and libraries.
#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

extern "C" {
#include "c10c/c10c.h"
}

#ifndef BENCH_TORCH_VERSION
#define BENCH_TORCH_VERSION "(version unknown)"
#endif

namespace {

constexpr int kCalls = 1000000;

template <typename F>
double best_ns(int rounds, F &&f) {
  double best = 1e300;
  for (int r = 0; r < rounds; r++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; i++) f();
    std::chrono::duration<double, std::nano> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / kCalls);
  }
  return best;
}

void row(const char *what, double ours, double c10, double aten) {
  std::printf("%-32s %9.1f %9.1f %9.1f   %5.2f  %5.2f\n", what, ours, c10, aten,
              c10 > 0 ? ours / c10 : 0.0, aten > 0 ? ours / aten : 0.0);
}

}  // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const int64_t sizes[2] = {2, 3}, shape[2] = {3, 2};
  const c10c_device cpu = {C10C_DEVICE_TYPE_CPU, -1};
  c10::InferenceMode no_autograd_keys(false);

  double ours_empty = best_ns(rounds, [&] {
    c10c_tensor *t;
    if (c10c_tensor_empty(&t, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS))
      std::abort();
    c10c_tensor_release(t);
  });
  // What at::detail::empty_generic does, without the dispatcher and the TensorOptions parsing.
  double c10_empty = best_ns(rounds, [&] {
    c10::Storage storage(c10::Storage::use_byte_size_t(), 24, c10::GetCPUAllocator(), true);
    auto t = c10::make_intrusive<c10::TensorImpl>(std::move(storage),
                                                  c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                  caffe2::TypeMeta::Make<float>());
    t->set_sizes_contiguous(c10::IntArrayRef(sizes, 2));
  });
  double aten_empty = best_ns(rounds, [&] { auto t = at::empty({2, 3}); });

  c10c_tensor *base;
  if (c10c_tensor_empty(&base, sizes, 2, C10C_DTYPE_FLOAT32, cpu, C10C_MEMORY_FORMAT_CONTIGUOUS))
    return 1;
  at::Tensor tbase = at::empty({2, 3});
  double ours_view = best_ns(rounds, [&] {
    c10c_tensor *v;
    if (c10c_tensor_view(&v, base, shape, 2)) std::abort();
    c10c_tensor_release(v);
  });
  double aten_view = best_ns(rounds, [&] { auto v = tbase.view({3, 2}); });
  double ours_transpose = best_ns(rounds, [&] {
    c10c_tensor *v;
    if (c10c_tensor_transpose(&v, base, 0, 1)) std::abort();
    c10c_tensor_release(v);
  });
  double aten_transpose = best_ns(rounds, [&] { auto v = tbase.transpose(0, 1); });
  double ours_narrow = best_ns(rounds, [&] {
    c10c_tensor *v;
    if (c10c_tensor_narrow(&v, base, 1, 1, 2)) std::abort();
    c10c_tensor_release(v);
  });
  double aten_narrow = best_ns(rounds, [&] { auto v = tbase.narrow(1, 1, 2); });
  double ours_rr = best_ns(rounds, [&] { c10c_tensor_release(c10c_tensor_retain(base)); });
  double c10_rr =
      best_ns(rounds, [&] { c10::intrusive_ptr<c10::TensorImpl> copy = tbase.getIntrusivePtr(); });
  c10c_tensor_release(base);

  std::printf("torch %s (libtorch from the wheel), libc10c %s; ns per call, best of %d\n",
              BENCH_TORCH_VERSION, c10c_version_string(), rounds);
  std::printf("%-32s %9s %9s %9s   %5s  %5s\n", "operation", "libc10c", "c10", "ATen", "/c10",
              "/ATen");
  row("empty 2x3 float32 + destroy", ours_empty, c10_empty, aten_empty);
  row("view(3, 2) + destroy", ours_view, 0, aten_view);
  row("transpose(0, 1) + destroy", ours_transpose, 0, aten_transpose);
  row("narrow(1, 1, 2) + destroy", ours_narrow, 0, aten_narrow);
  row("retain + release", ours_rr, c10_rr, 0);
  return 0;
}
