#pragma once
/// Single-pass loops over contiguous float32/float64 buffers for the reductions on tensors: Welford updates, fused minimum and maximum, histograms (no libtorch).
///
/// Each entry point is a plain function on pointers. On x86-64 with GCC or Clang it runs an
/// AVX2 version when the CPU has AVX2 (checked once, at run time), whatever flags the
/// including program was built with; elsewhere, a portable loop. Both do the same arithmetic:
/// the same results (histograms exactly; Welford's update unless the including program lets
/// the compiler contract its portable loop into FMAs, ~1 ulp per step).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

// The AVX2 versions are written with GCC's vector extensions (which Clang shares) and two
// `__builtin_ia32_*` builtins rather than <immintrin.h>, whose declarations cost every
// including translation unit ~0.5 s and ~100 MB with GCC 12.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define RECORDER_LOOPS_X86 1
#define RECORDER_LOOPS_AVX2 __attribute__((target("avx2")))
#else
#define RECORDER_LOOPS_X86 0
#endif

namespace recorder::detail::loops {

#if RECORDER_LOOPS_X86
/// The CPU has AVX2 (asked once per process).
inline bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

using f32x4 = float __attribute__((vector_size(16)));
using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = std::int32_t __attribute__((vector_size(32)));
using f64x4 = double __attribute__((vector_size(32)));
using i64x4 = std::int64_t __attribute__((vector_size(32)));

/// `V` from `sizeof(V)` bytes at `p`, unaligned.
template <class V, class S>
RECORDER_LOOPS_AVX2 inline V load(const S* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class V, class S>
RECORDER_LOOPS_AVX2 inline void store(S* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}
#endif

// ---- Welford ------------------------------------------------------------------------------------

/// `delta = x - mean; mean += delta / count; m2 += delta * (x - mean)` for `n` elements, with
/// one division per call.
template <class S>
void welford_portable(double* __restrict mean, double* __restrict m2, const S* __restrict x,
                      std::size_t n, double inv_count) {
  for (std::size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    const double delta = v - mean[i];
    const double m = mean[i] + delta * inv_count;
    mean[i] = m;
    m2[i] += delta * (v - m);
  }
}

#if RECORDER_LOOPS_X86
/// Four elements of `x` from `p` as doubles.
template <class S>
RECORDER_LOOPS_AVX2 inline f64x4 load_wide(const S* p) {
  if constexpr (sizeof(S) == sizeof(float))
    return __builtin_convertvector(load<f32x4>(p), f64x4);
  else
    return load<f64x4>(p);
}

/// `welford_portable`, four doubles per step (`S`: float or double).
template <class S>
RECORDER_LOOPS_AVX2 inline void welford_avx2(double* mean, double* m2, const S* x, std::size_t n,
                                             double inv_count) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const f64x4 v = load_wide(x + i);
    const f64x4 mu = load<f64x4>(mean + i);
    const f64x4 delta = v - mu;
    const f64x4 m = mu + delta * inv_count;
    store(mean + i, m);
    store(m2 + i, load<f64x4>(m2 + i) + delta * (v - m));
  }
  welford_portable(mean + i, m2 + i, x + i, n - i, inv_count);
}
#endif

/// One Welford step over `n` elements: `count` values including `x`.
template <class S>
void welford(double* mean, double* m2, const S* x, std::size_t n, double count) {
  const double inv_count = 1.0 / count;
#if RECORDER_LOOPS_X86
  if (cpu_has_avx2()) return welford_avx2(mean, m2, x, n, inv_count);
#endif
  welford_portable(mean, m2, x, n, inv_count);
}

// ---- minimum and maximum ------------------------------------------------------------------------

/// `lo = minimum(lo, x)`, `hi = maximum(hi, x)` in one pass; NaN propagates (a NaN in `x` or
/// already in `lo`/`hi` stays), as `torch.minimum`/`torch.maximum`.
template <class S>
void min_max_portable(S* __restrict lo, S* __restrict hi, const S* __restrict x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const S v = x[i];
    const bool nan = v != v;
    lo[i] = (v < lo[i] || nan) ? v : lo[i];
    hi[i] = (v > hi[i] || nan) ? v : hi[i];
  }
}

#if RECORDER_LOOPS_X86
// A vector of 8 floats (4 doubles) is written back only when one of its elements changes:
// after n passes over values of one distribution about 2/n of the elements still do, so a
// long recording mostly reads `lo` and `hi` and writes nothing.
template <class V, class M, class S>
RECORDER_LOOPS_AVX2 inline void min_max_vectors(S* lo, S* hi, const S* x, std::size_t n) {
  constexpr std::size_t width = sizeof(V) / sizeof(S);
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    const V v = load<V>(x + i), l = load<V>(lo + i), h = load<V>(hi + i);
    const M nan = v != v;
    const M below = (v < l) | nan;
    const M above = (v > h) | nan;
    const V any = reinterpret_cast<V>(below | above);
    bool unchanged;
    if constexpr (width == 8)
      unchanged = __builtin_ia32_vtestzps256(any, any);  // _mm256_testz_ps: no sign bit set
    else
      unchanged = __builtin_ia32_vtestzpd256(any, any);
    if (!unchanged) [[unlikely]] {
      store(lo + i, below ? v : l);
      store(hi + i, above ? v : h);
    }
  }
  min_max_portable(lo + i, hi + i, x + i, n - i);
}

RECORDER_LOOPS_AVX2 inline void min_max_avx2(float* lo, float* hi, const float* x, std::size_t n) {
  min_max_vectors<f32x8, i32x8>(lo, hi, x, n);
}

RECORDER_LOOPS_AVX2 inline void min_max_avx2(double* lo, double* hi, const double* x,
                                             std::size_t n) {
  min_max_vectors<f64x4, i64x4>(lo, hi, x, n);
}
#endif

template <class S>
void min_max(S* lo, S* hi, const S* x, std::size_t n) {
#if RECORDER_LOOPS_X86
  if (cpu_has_avx2()) return min_max_avx2(lo, hi, x, n);
#endif
  min_max_portable(lo, hi, x, n);
}

// ---- histograms ---------------------------------------------------------------------------------

/// How `torch.histc` computes an element's bin, in double: libtorch 1.13 divides by the range
/// first, `(v - lo) / (hi - lo) * bins`; PyTorch 2.0 and later multiply by the bin count first,
/// `(v - lo) * bins / (hi - lo)` (pytorch#87832, which made the CPU agree with CUDA). The two
/// differ only for values within rounding of a bin edge: -0.3 of [-1.5, 1.5] in 10 bins is bin 3
/// one way and bin 4 the other. `recorder::histc_divides_first` (torch_version.hpp) says which
/// the libtorch in use does.
enum class HistcRule : std::uint8_t { divide_first, multiply_first };

/// The bin of `v` in `bins` equal-width bins over `[lo, hi]` (`v` in `[lo, hi]`): `torch.histc`'s
/// expression in double, rounding included.
inline std::int64_t histc_bin(double v, double lo, double hi, std::int64_t bins,
                              HistcRule rule = HistcRule::multiply_first) {
  const double b = static_cast<double>(bins);
  auto pos = static_cast<std::int64_t>(rule == HistcRule::divide_first ? (v - lo) / (hi - lo) * b
                                                                       : (v - lo) * b / (hi - lo));
  return pos >= bins ? bins - 1 : pos;
}

/// Every element of `x` counted with `histc_bin`, one division per element (float64 inputs,
/// and bins the float32 loop does not take).
template <class S>
void histogram_exact(std::int64_t* counts, const S* x, std::size_t n, std::int64_t bins, double lo,
                     double hi, HistcRule rule = HistcRule::multiply_first) {
  for (std::size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    if (!(v >= lo && v <= hi)) continue;  // outside, or NaN
    ++counts[histc_bin(v, lo, hi, bins, rule)];
  }
}

/// The float32 histogram loop's constants, computed once per call. It bins in float:
/// `a = (v - lo_f) * scale + 1`, clamped to `[0.5, bins + 1.5]`, then truncated, so slot 0
/// holds what lies below `lo` (and NaN), slots 1 to `bins` the bins, slot `bins + 1` what lies
/// above `hi`. `a - 1` is within `slack` of `histc`'s exact position (`(v - lo) / (hi - lo) *
/// bins` or `(v - lo) * bins / (hi - lo)`, `HistcRule`), so the slot is exact unless an integer
/// lies within `slack` of `a`; those elements
/// (about 2 slack of them, 1e-4 at 64 bins over [-4, 4]) are binned again with `histc_bin`.
///
/// The bound, with u = 2^-24: rounding lo, v - lo_f, scale and the product costs
/// u (1.0001 scale |lo| + 3.001 bins), histc's own rounding 2^-51 bins, the `+ 1`
/// u (bins + 2), `f - 0.5` in the edge test 2^-25; 8u (scale |lo| + bins) covers them all.
struct FloatBins {
  float lo_f, scale, top, slack;  ///< `top`: `bins + 1.5`
  std::int32_t bins;
  double lo, hi;
  HistcRule rule;

  /// False when float32 arithmetic cannot bound the bins tightly (bounds beyond float range,
  /// more than 2^20 bins, a scale outside [2^-126, 2^100], a slack of a quarter bin or more).
  static bool make(std::int64_t bins, double lo, double hi, FloatBins& out,
                   HistcRule rule = HistcRule::multiply_first) {
    constexpr double fmax = std::numeric_limits<float>::max();
    if (bins < 1 || bins > (1 << 20) || !(std::abs(lo) < fmax / 2) || !(std::abs(hi) < fmax / 2))
      return false;
    const double scale = static_cast<double>(bins) / (hi - lo);
    out.lo = lo;
    out.hi = hi;
    out.rule = rule;
    out.bins = static_cast<std::int32_t>(bins);
    out.lo_f = static_cast<float>(lo);
    out.scale = static_cast<float>(scale);
    out.top = static_cast<float>(bins) + 1.5f;
    if (!(out.scale >= std::numeric_limits<float>::min() && out.scale <= 0x1p100f)) return false;
    const double slack = std::ldexp(scale * std::abs(lo) + static_cast<double>(bins), -21);
    out.slack = static_cast<float>(slack);
    return slack < 0.25;
  }

  /// The exact slot of `v`: `histc_bin(v) + 1` in range, 0 outside or NaN.
  std::int32_t exact_slot(float v) const {
    const double d = static_cast<double>(v);
    if (!(d >= lo && d <= hi)) return 0;
    return static_cast<std::int32_t>(histc_bin(d, lo, hi, bins, rule)) + 1;
  }
};

/// `FloatBins::exact_slot` of the elements whose float slot is in doubt, remembering the last
/// one: a value repeated on a bin edge (zeros in the middle of `[-4, 4]`, after a ReLU) costs
/// one division, not one per element.
struct Recheck {
  float value = std::numeric_limits<float>::quiet_NaN();
  std::int32_t slot = 0;

  std::int32_t operator()(float v, const FloatBins& b) {
    if (!(v == value)) {
      value = v;
      slot = b.exact_slot(v);
    }
    return slot;
  }
};

/// Slots of one block, portable.
inline void float_slots_portable(std::int32_t* slot, const float* x, std::size_t n,
                                 const FloatBins& b, Recheck& again) {
  for (std::size_t j = 0; j < n; ++j) {
    const float a = (x[j] - b.lo_f) * b.scale + 1.0f;
    float c = a >= 0.5f ? a : 0.5f;  // NaN too
    c = c <= b.top ? c : b.top;
    const auto k = static_cast<std::int32_t>(c);
    const float f = c - static_cast<float>(k);  // exact: c and k are close
    slot[j] = std::abs(f - 0.5f) >= 0.5f - b.slack ? again(x[j], b) : k;
  }
}

#if RECORDER_LOOPS_X86
RECORDER_LOOPS_AVX2 inline void float_slots_avx2(std::int32_t* slot, const float* x, std::size_t n,
                                                 const FloatBins& b, Recheck& again) {
  const f32x8 lo_f = f32x8{} + b.lo_f, scale = f32x8{} + b.scale, one = f32x8{} + 1.0f;
  const f32x8 half = f32x8{} + 0.5f, top = f32x8{} + b.top, edge = f32x8{} + (0.5f - b.slack);
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const f32x8 v = load<f32x8>(x + j);
    const f32x8 a = (v - lo_f) * scale + one;
    f32x8 c = a > half ? a : half;  // (maxps) NaN too
    c = c < top ? c : top;          // (minps)
    const i32x8 k = __builtin_convertvector(c, i32x8);
    const f32x8 f = c - __builtin_convertvector(k, f32x8);  // exact: c and k are close
    const f32x8 off = reinterpret_cast<f32x8>(reinterpret_cast<i32x8>(f - half) & 0x7fffffff);
    const i32x8 doubt = off >= edge;
    store(slot + j, k);
    const int bits = __builtin_ia32_movmskps256(reinterpret_cast<f32x8>(doubt));
    if (bits != 0) [[unlikely]] {
      // Lanes holding the value last rechecked take its slot at once; the others one by one.
      const i32x8 known = doubt & (v == again.value);
      store(slot + j, known ? i32x8{} + again.slot : k);
      const int rest = bits & ~__builtin_ia32_movmskps256(reinterpret_cast<f32x8>(known));
      for (auto r = static_cast<unsigned>(rest); r != 0; r &= r - 1) {
        const std::size_t e = j + static_cast<std::size_t>(__builtin_ctz(r));
        slot[e] = again(x[e], b);
      }
    }
  }
  float_slots_portable(slot + j, x + j, n - j, b, again);
}
#endif

/// Counts `slot[0..n)` into four tables of `stride` 32-bit counters, so that consecutive
/// equal slots do not wait on each other's store.
inline void count_slots(std::uint32_t* tables, std::size_t stride, const std::int32_t* slot,
                        std::size_t n) {
  std::uint32_t* t0 = tables;
  std::uint32_t* t1 = tables + stride;
  std::uint32_t* t2 = tables + 2 * stride;
  std::uint32_t* t3 = tables + 3 * stride;
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    ++t0[slot[j]];
    ++t1[slot[j + 1]];
    ++t2[slot[j + 2]];
    ++t3[slot[j + 3]];
  }
  for (; j < n; ++j) ++t0[slot[j]];
}

/// Adds `torch.histc`'s counts of `x` (`bins` equal-width bins over `[lo, hi]`, `hi` in the
/// last, outside and NaN not counted) to `counts`: the same counts as `histogram_exact`.
inline void histogram(std::int64_t* counts, const float* x, std::size_t n, std::int64_t bins,
                      double lo, double hi, HistcRule rule = HistcRule::multiply_first) {
  FloatBins b{};
  if (!FloatBins::make(bins, lo, hi, b, rule))
    return histogram_exact(counts, x, n, bins, lo, hi, rule);
  const auto stride = static_cast<std::size_t>(bins) + 2;
  constexpr std::size_t block = 256, on_stack = 4 * 1026;  // up to 1,024 bins on the stack
  std::uint32_t stack_tables[on_stack];
  std::unique_ptr<std::uint32_t[]> heap;
  std::uint32_t* tables = stack_tables;
  if (4 * stride > on_stack) {
    heap = std::make_unique<std::uint32_t[]>(4 * stride);
    tables = heap.get();
  }
  std::int32_t slot[block];
  Recheck again;
#if RECORDER_LOOPS_X86
  const bool avx2 = cpu_has_avx2();
#endif
  constexpr std::size_t chunk = std::size_t{1} << 30;  // the 32-bit counters cannot overflow
  for (std::size_t start = 0; start < n; start += chunk) {
    const std::size_t end = std::min(n, start + chunk);
    std::memset(tables, 0, 4 * stride * sizeof(std::uint32_t));
    for (std::size_t i = start; i < end; i += block) {
      const std::size_t m = std::min(block, end - i);
#if RECORDER_LOOPS_X86
      if (avx2)
        float_slots_avx2(slot, x + i, m, b, again);
      else
#endif
        float_slots_portable(slot, x + i, m, b, again);
      count_slots(tables, stride, slot, m);
    }
    for (std::size_t k = 1; k + 1 < stride; ++k)
      counts[k - 1] += static_cast<std::int64_t>(tables[k]) + tables[stride + k] +
                       tables[2 * stride + k] + tables[3 * stride + k];
  }
}

inline void histogram(std::int64_t* counts, const double* x, std::size_t n, std::int64_t bins,
                      double lo, double hi, HistcRule rule = HistcRule::multiply_first) {
  histogram_exact(counts, x, n, bins, lo, hi, rule);
}

}  // namespace recorder::detail::loops

#undef RECORDER_LOOPS_AVX2
#undef RECORDER_LOOPS_X86
