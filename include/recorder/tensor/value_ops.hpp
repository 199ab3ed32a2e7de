#pragma once
/// `reduce::value_ops<at::Tensor>`: the reductions' arithmetic on tensors, detached and with autograd off (ATen core and per-op headers only).

#include <recorder/detail/reduce_loops.hpp>
#include <recorder/policies/reduction/value_ops.hpp>
#include <recorder/torch_version.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/histc.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::reduce {

namespace detail::tensor_values {

/// `x` as an input of a reduction step: detached when it requires grad (recorded gradients and
/// activations of a training forward do), so no step ever reaches the autograd graph.
inline at::Tensor detached(const at::Tensor& x) { return x.requires_grad() ? x.detach() : x; }

inline void require_defined(const at::Tensor& x) {
  if (!x.defined())
    throw std::invalid_argument("recorder: reduce: cannot reduce an undefined tensor");
}

inline std::string shape_string(at::IntArrayRef sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i != 0) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + ']';
}

/// Throws, before anything changes, unless `x` has `acc`'s shape. (libtorch's in-place ops
/// would broadcast an `x` of shape [8] into an `acc` of shape [4, 8] without a word.)
inline void check_shape(const at::Tensor& acc, const at::Tensor& x, const char* what) {
  require_defined(x);
  if (acc.sizes() != x.sizes())
    throw std::invalid_argument(
        std::string("recorder: reduce: shape mismatch: ") + what + " has shape " +
        shape_string(acc.sizes()) + " but the new value has shape " + shape_string(x.sizes()) +
        "; values combined elementwise (sum, mean, " + "moments, min_max) need one shape");
}

/// Makes `acc` the only owner of its storage before a step writes to it in place. A state
/// copied by value shares its tensors (at::Tensor is a handle); the copy takes its own storage
/// here, at its first write, so the two stay independent.
inline void own(at::Tensor& acc) {
  if (acc.use_count() != 1 || !acc.has_storage() || acc.storage().use_count() != 1 ||
      !acc.is_contiguous())
    acc = acc.clone(at::MemoryFormat::Contiguous);
}

/// A plain contiguous CPU buffer of `float` or `double`: the fused loops
/// (`detail/reduce_loops.hpp`) read and write it by pointer.
inline bool plain_cpu(const at::Tensor& t) {
  return t.device().is_cpu() && t.layout() == at::kStrided && t.has_storage() &&
         t.is_contiguous() && !t.is_conj() && !t.is_neg() &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble);
}

/// Calls `f(p)` with `p` the `S*` data of a `plain_cpu` tensor, `S` its element type.
template <class F>
void with_elements(const at::Tensor& t, F&& f) {
  if (t.scalar_type() == at::kFloat)
    f(t.data_ptr<float>());
  else
    f(t.data_ptr<double>());
}

}  // namespace detail::tensor_values

/// `value_ops` for `at::Tensor`: every step runs with autograd off on detached inputs, so
/// recorded activations and gradients that require grad never grow a graph, and every
/// accumulator is a contiguous tensor with storage of its own (`requires_grad() == false`, no
/// `grad_fn`). Steps that need one shape throw `std::invalid_argument` before changing
/// anything. Moments accumulate in double; histograms count in int64 on the CPU. Welford
/// updates, `min_max_into` and histograms of contiguous CPU float32/float64 inputs take the
/// single-pass loops of `detail/reduce_loops.hpp` (with AVX2 where the CPU has it;
/// benchmarks/bench_reduce compares them with the ATen formulations); anything else (other
/// dtypes, devices, strides) goes through ATen ops on the input's device. The loops run on the
/// calling thread: with libtorch 1.13's OpenMP backend (Debian's), `at::parallel_for` is a
/// `#pragma omp parallel` in its header, so it splits work only in translation units built
/// with `-fopenmp`, which a program including this header usually is not.
template <>
struct value_ops<at::Tensor> {
  using wide_type = at::Tensor;       ///< float64, the input's shape and device
  using histogram_type = at::Tensor;  ///< int64 of shape [bins], on the CPU

  /// Detached, contiguous, with storage of its own (a view's copy does not keep its base).
  static at::Tensor copy(const at::Tensor& x) {
    detail::tensor_values::require_defined(x);
    c10::NoGradGuard no_grad;
    const at::Tensor xd = detail::tensor_values::detached(x);
    return xd.layout() == at::kStrided ? xd.clone(at::MemoryFormat::Contiguous) : xd.clone();
  }

  /// Copies into `acc`'s own storage when shape, dtype and device match; else `acc = copy(x)`.
  static void assign(at::Tensor& acc, const at::Tensor& x) {
    detail::tensor_values::require_defined(x);
    if (acc.defined() && acc.sizes() == x.sizes() && acc.scalar_type() == x.scalar_type() &&
        acc.device() == x.device() && x.layout() == at::kStrided && acc.use_count() == 1 &&
        acc.has_storage() && acc.storage().use_count() == 1 && acc.is_contiguous()) {
      c10::NoGradGuard no_grad;
      acc.copy_(detail::tensor_values::detached(x));
    } else {
      acc = copy(x);
    }
  }

  static void add(at::Tensor& acc, const at::Tensor& x) {
    detail::tensor_values::check_shape(acc, x, "the sum");
    c10::NoGradGuard no_grad;
    detail::tensor_values::own(acc);
    acc.add_(detail::tensor_values::detached(x));
  }

  /// `acc / n`, a new tensor (integer tensors give floating ones, as `torch.div`).
  static at::Tensor divide(const at::Tensor& acc, double n) {
    c10::NoGradGuard no_grad;
    return acc.div(n);
  }

  static void min_into(at::Tensor& acc, const at::Tensor& x) { extreme_into(acc, x, /*min=*/true); }
  static void max_into(at::Tensor& acc, const at::Tensor& x) {
    extreme_into(acc, x, /*min=*/false);
  }

  /// `min_into(lo, x)` and `max_into(hi, x)`, in one pass over `x` when the three are plain
  /// CPU buffers of one dtype (float32 or float64); both shapes are checked first.
  static void min_max_into(at::Tensor& lo, at::Tensor& hi, const at::Tensor& x) {
    namespace tv = detail::tensor_values;
    tv::check_shape(lo, x, "the minimum");
    tv::check_shape(hi, x, "the maximum");
    c10::NoGradGuard no_grad;
    tv::own(lo);
    tv::own(hi);
    const at::Tensor xd = tv::detached(x);
    if (tv::plain_cpu(xd) && tv::plain_cpu(lo) && tv::plain_cpu(hi) &&
        lo.scalar_type() == xd.scalar_type() && hi.scalar_type() == xd.scalar_type()) {
      tv::with_elements(xd, [&](const auto* px) {
        using S = std::remove_cvref_t<decltype(*px)>;
        recorder::detail::loops::min_max(lo.data_ptr<S>(), hi.data_ptr<S>(), px,
                                         static_cast<std::size_t>(xd.numel()));
      });
      return;
    }
    at::minimum_out(lo, lo, xd);
    at::maximum_out(hi, hi, xd);
  }

  /// A float64 copy on `x`'s device. Complex tensors are refused.
  static at::Tensor widen(const at::Tensor& x) {
    detail::tensor_values::require_defined(x);
    if (x.is_complex())
      throw std::invalid_argument(
          "recorder: reduce: running moments of complex tensors are not supported");
    c10::NoGradGuard no_grad;
    at::Tensor w = at::empty(x.sizes(), x.options().dtype(at::kDouble));
    w.copy_(detail::tensor_values::detached(x));
    return w;
  }

  static at::Tensor zero_like(const at::Tensor& w) {
    c10::NoGradGuard no_grad;
    return at::zeros_like(w, at::MemoryFormat::Contiguous);
  }

  static void welford_update(at::Tensor& mean, at::Tensor& m2, const at::Tensor& x,
                             std::uint64_t n) {
    namespace tv = detail::tensor_values;
    tv::check_shape(mean, x, "the running mean");
    if (x.is_complex())
      throw std::invalid_argument(
          "recorder: reduce: running moments of complex tensors are not supported");
    c10::NoGradGuard no_grad;
    tv::own(mean);
    tv::own(m2);
    const at::Tensor xd = tv::detached(x);
    const double count = static_cast<double>(n);
    if (tv::plain_cpu(xd) && mean.device().is_cpu() && m2.device().is_cpu() &&
        mean.scalar_type() == at::kDouble && m2.scalar_type() == at::kDouble) {
      double* pm = mean.data_ptr<double>();
      double* pm2 = m2.data_ptr<double>();
      tv::with_elements(xd, [&](const auto* px) {
        recorder::detail::loops::welford(pm, pm2, px, static_cast<std::size_t>(xd.numel()), count);
      });
      return;
    }
    const at::Tensor xw = xd.to(mean.options());
    const at::Tensor delta = xw.sub(mean);
    mean.add_(delta.div(count));
    m2.addcmul_(delta, xw.sub(mean));
  }

  static void welford_merge(at::Tensor& mean, at::Tensor& m2, std::uint64_t n,
                            const at::Tensor& mean_b, const at::Tensor& m2_b, std::uint64_t n_b) {
    namespace tv = detail::tensor_values;
    if (n_b == 0) return;
    if (n == 0) {
      mean = copy(mean_b);
      m2 = copy(m2_b);
      return;
    }
    tv::check_shape(mean, mean_b, "the running mean");
    c10::NoGradGuard no_grad;
    const double na = static_cast<double>(n), nb = static_cast<double>(n_b), nab = na + nb;
    const at::Tensor mb = mean_b.to(mean.options());
    const at::Tensor delta = mb.sub(mean);
    tv::own(mean);
    tv::own(m2);
    mean.add_(delta, nb / nab);
    m2.add_(m2_b.to(m2.options()));
    m2.addcmul_(delta, delta, na * nb / nab);
  }

  /// `m2 / (n - correction)`; all NaN where `n <= correction`.
  static at::Tensor variance(const at::Tensor& m2, std::uint64_t n, std::int64_t correction) {
    c10::NoGradGuard no_grad;
    const double dof = static_cast<double>(n) - static_cast<double>(correction);
    if (!(dof > 0))
      return at::empty_like(m2, at::MemoryFormat::Contiguous)
          .fill_(std::numeric_limits<double>::quiet_NaN());
    return m2.div(dof);
  }

  static at::Tensor histogram_zero(std::size_t bins) {
    return at::zeros({static_cast<std::int64_t>(bins)}, at::TensorOptions().dtype(at::kLong));
  }

  /// Counts every element of `x` (any shape; floating, integer or bool) as the libtorch in use's
  /// `torch.histc` on a float64 copy of `x` would (its rounding at bin edges included:
  /// `histc_divides_first`), NaN left out.
  static void histogram_add(at::Tensor& counts, const at::Tensor& x, std::size_t bins, double lo,
                            double hi) {
    namespace tv = detail::tensor_values;
    tv::require_defined(x);
    const auto nbins = static_cast<std::int64_t>(bins);
    if (counts.dim() != 1 || counts.size(0) != nbins || counts.scalar_type() != at::kLong)
      throw std::invalid_argument("recorder: reduce: the histogram has " +
                                  tv::shape_string(counts.sizes()) + " counts, not [" +
                                  std::to_string(bins) + "]");
    if (x.is_complex())
      throw std::invalid_argument(
          "recorder: reduce: histograms of complex tensors are not supported");
    c10::NoGradGuard no_grad;
    const at::Tensor xd = tv::detached(x);
    if (tv::plain_cpu(xd) && counts.device().is_cpu()) {
      tv::own(counts);
      std::int64_t* pc = counts.data_ptr<std::int64_t>();
      tv::with_elements(xd, [&](const auto* px) {
        recorder::detail::loops::histogram(
            pc, px, static_cast<std::size_t>(xd.numel()), nbins, lo, hi,
            histc_divides_first ? recorder::detail::loops::HistcRule::divide_first
                                : recorder::detail::loops::HistcRule::multiply_first);
      });
      return;
    }
    // histc counts in the input's dtype: float64 counts are exact up to 2^53 per call. libtorch
    // 1.13's histc counts NaN in the first bin: NaN becomes -inf, which it leaves out.
    at::Tensor xw = xd.to(at::kDouble);
    if (xd.is_floating_point()) {
      constexpr double inf = std::numeric_limits<double>::infinity();
      xw = xw.nan_to_num(-inf, inf, -inf);
    }
    const at::Tensor h = at::histc(xw, nbins, lo, hi).to(counts.device(), at::kLong);
    tv::own(counts);
    counts.add_(h);
  }

  static void histogram_merge(at::Tensor& counts, const at::Tensor& other) {
    detail::tensor_values::check_shape(counts, other, "the histogram");
    c10::NoGradGuard no_grad;
    detail::tensor_values::own(counts);
    counts.add_(other.to(counts.device()));
  }

  /// The `q`-quantile of `values` element by element, in float64 on their device: what
  /// `torch.quantile(torch.stack(values).double(), q, dim=0)` gives, but a NaN sorts last (as
  /// for numbers: a quantile below the NaNs is a number). Every value needs the first one's
  /// shape; complex tensors are refused. Stacking and sorting take twice the values' memory.
  static at::Tensor quantile(std::span<const at::Tensor> values, double q) {
    namespace tv = detail::tensor_values;
    if (values.empty())
      throw std::invalid_argument("recorder: reduce: the quantile of no values is undefined");
    for (const at::Tensor& v : values) {
      tv::check_shape(values.front(), v, "the first value");
      if (v.is_complex())
        throw std::invalid_argument(
            "recorder: reduce: quantiles of complex tensors are not supported");
    }
    c10::NoGradGuard no_grad;
    std::vector<at::Tensor> wide;
    wide.reserve(values.size());
    for (const at::Tensor& v : values) wide.push_back(tv::detached(v).to(at::kDouble));
    // torch.sort places NaN after every number, as the numbers' quantile does.
    const at::Tensor sorted = std::get<0>(at::stack(wide, 0).sort(0));
    const double rank = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::int64_t>(rank);
    const std::int64_t hi = std::min<std::int64_t>(lo + 1, sorted.size(0) - 1);
    const double frac = rank - static_cast<double>(lo);
    const at::Tensor a = sorted.select(0, lo);
    if (frac == 0.0) return a.clone(at::MemoryFormat::Contiguous);
    return a.add(sorted.select(0, hi).sub(a), frac);
  }

  /// `acc = f(acc, x)` with autograd off on a detached `x`, `acc` first made the only owner of
  /// its storage; a result that shares `x`'s storage (or requires grad) is copied, so the state
  /// never aliases a recorded tensor.
  template <class F>
  static void apply(const F& f, at::Tensor& acc, const at::Tensor& x) {
    namespace tv = detail::tensor_values;
    tv::require_defined(x);
    c10::NoGradGuard no_grad;
    tv::own(acc);
    const at::Tensor xd = tv::detached(x);
    at::Tensor r = std::invoke(f, acc, xd);
    if (!r.defined())
      throw std::invalid_argument(
          "recorder: reduce::custom: the callable returned an undefined tensor");
    if (r.requires_grad() || (r.has_storage() && xd.has_storage() && r.is_alias_of(xd)))
      r = copy(r);
    acc = std::move(r);
  }

  /// `x.nbytes()`: what `copy(x)` takes.
  static std::size_t bytes(const at::Tensor& x) { return x.defined() ? x.nbytes() : 0; }

 private:
  // One extreme at a time (MinMax's merge): ATen's minimum/maximum, vectorized for the CPU it
  // runs on, read and write what one loop would.
  static void extreme_into(at::Tensor& acc, const at::Tensor& x, bool min) {
    namespace tv = detail::tensor_values;
    tv::check_shape(acc, x, min ? "the minimum" : "the maximum");
    c10::NoGradGuard no_grad;
    tv::own(acc);
    const at::Tensor xd = tv::detached(x);
    if (min)
      at::minimum_out(acc, acc, xd);
    else
      at::maximum_out(acc, acc, xd);
  }
};

}  // namespace recorder::reduce
