#pragma once
/// The chain of tiny ops both benchmark programs time: one source for `at::Tensor` and
/// `RecorderTensor<P>`, so the per-op numbers of bench_ops and bench_models measure the same work.

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/relu.h>

namespace bench {

/// How many ops one chain runs.
inline constexpr int chain_ops = 1000;

/// `x + 1`, `relu(x)`, `x * 0.5`, repeated `chain_ops` times. `(x + 1) * 0.5` converges to 1,
/// so the values stay normal (no denormals, no infinities).
template <class T>
T chain(T x) {
  for (int i = 0; i < chain_ops; ++i) {
    switch (i % 3) {
      case 0:
        x = x + 1;
        break;
      case 1:
        x = relu(x);
        break;
      default:
        x = x * 0.5;
        break;
    }
  }
  return x;
}

}  // namespace bench
