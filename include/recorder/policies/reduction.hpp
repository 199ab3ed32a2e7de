#pragma once
/// Reduction policies: what happens to a recorded value over many forward/backward passes (no libtorch).
///
/// | policy                            | memory per recorded tensor                   | result                                     | mergeable              | use it when                                      |
/// |-----------------------------------|----------------------------------------------|--------------------------------------------|------------------------|--------------------------------------------------|
/// | `reduce::KeepAll{max_bytes}`      | a copy per pass (cap: `max_bytes`, 0 = none) | `const std::vector<T>&`                    | yes: concatenates      | every pass matters, and there are few            |
/// | `reduce::Last`                    | one value                                    | `T`                                        | yes: takes the other's | only the latest pass matters                     |
/// | `reduce::Sum`                     | one value                                    | `T`                                        | yes: adds              | totals, e.g. gradients over a dataset            |
/// | `reduce::Mean`                    | one value                                    | `T` (sum / count)                          | yes: adds sums, counts | a plain average over a few passes                |
/// | `reduce::Moments{correction}`     | two values, in double                        | `MomentsResult<W>{mean, variance, count}`  | yes: Chan et al.       | mean and variance over many passes, or processes |
/// | `reduce::MinMax`                  | two values                                   | `MinMaxResult<T>{min, max}`                | yes                    | ranges, e.g. quantization calibration            |
/// | `reduce::AbsMax`                  | two values                                   | `T`: max(-min, max)                        | yes                    | symmetric quantization scales (amax)             |
/// | `reduce::Histogram{bins, lo, hi}` | `bins` 64-bit counts                         | `HistogramResult<H>{counts, lo, hi, bins}` | yes: adds counts       | distributions: dead or saturated units           |
/// | `reduce::Quantile{q}`             | a copy per pass                              | `QuantileResult<T>{q, value}` (`W` value)  | yes: concatenates      | robust timings, per-element medians of batches   |
/// | `reduce::custom(f)`               | one value (what `f` returns)                 | `T`                                        | no                     | anything else: torchfunc's `(acc, x) -> acc`     |
///
/// Every reduction is a small value type (its options are members), generic over the value
/// type `T` through `reduce::value_ops<T>`: arithmetic types here, `at::Tensor` with
/// `<recorder/tensor/value_ops.hpp>`. `W` is `value_ops<T>::wide_type` (double),
/// `H` its `histogram_type` (int64 counts). Each has `state<T>`, `init(x)`, `update(s, x)`,
/// `result(s)`, `count(s)` and, all but `custom`, `merge(s, other)` (`concepts.hpp`); states,
/// result structs and parameters describe their fields once (`fields.hpp`), which is all the
/// wire codec, Python saving and hover facts need. Results
/// are copies, independent of later passes, except `KeepAll`'s: a reference to the kept copies.
///
/// ```cpp
/// recorder::reduce::Moments r;
/// auto s = r.init(1.0);
/// r.update(s, 3.0);
/// auto m = r.result(s);  // m.mean == 2, m.variance == 2, m.count == 2
/// ```

#include <recorder/policies/reduction/abs_max.hpp>
#include <recorder/policies/reduction/concepts.hpp>
#include <recorder/policies/reduction/custom.hpp>
#include <recorder/policies/reduction/fields.hpp>
#include <recorder/policies/reduction/histogram.hpp>
#include <recorder/policies/reduction/keep_all.hpp>
#include <recorder/policies/reduction/last.hpp>
#include <recorder/policies/reduction/mean.hpp>
#include <recorder/policies/reduction/min_max.hpp>
#include <recorder/policies/reduction/moments.hpp>
#include <recorder/policies/reduction/quantile.hpp>
#include <recorder/policies/reduction/sum.hpp>
#include <recorder/policies/reduction/value_ops.hpp>
