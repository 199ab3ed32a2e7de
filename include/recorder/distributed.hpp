#pragma once
/// Many processes, one recording: recordings, timings and traces merged across the ranks of a
/// c10d job (`merged_across`, `merge_across`, `gather_traces`, `gather_chrome_trace`).
///
/// Opt-in: include `<recorder/distributed.hpp>`. It needs only `c10d::ProcessGroup` (no gloo
/// headers: the library builds without `libgloo-dev`; the code that creates a
/// `ProcessGroupGloo` needs it). Every rank of the group calls the same merge, in the same
/// order as its other collectives.
///
/// ```
/// recorder::record::ForwardOutput<recorder::reduce::Moments> acts({"fc1", "fc2"});
/// ... every rank traces its shard of the data ...
/// auto all = recorder::merged_across(acts, *pg);              // on every rank
/// auto at_root = recorder::merged_across(acts, *pg, {.root = 0});  // rank 0 only
/// ```
///
/// How it works, whatever the number of layers: two collectives. (1) An allgather of a
/// fixed-size header (what is merged, the root, a fingerprint of the layers, reductions,
/// shapes and dtypes, the payload's size): it cannot mismatch, and when the fingerprints of
/// the ranks that recorded something differ, one more allgather of the descriptions lets every
/// rank throw the same `MergeError` naming the layer and what differs (instead of the crash or
/// 30-minute hang a mismatched collective gives). (2) An allgather (or a gather to the root) of
/// every rank's packed states, padded to the longest. Each receiving rank then folds the states
/// in rank order with the reduction's own `merge`: the result is deterministic and the same on
/// every rank, exact for counts, sums of integers, extremes and histograms, and Chan's formula
/// for `Moments` (as sound as a single process; never a sum of squares).

///
/// The parts: distributed/options.hpp (options, stats, `MergeError`), distributed/protocol.hpp
/// (the header and schema, torch-free), distributed/exchange.hpp (the c10d collectives and the
/// checks), distributed/state_codec.hpp (reduction states as bytes, from their described
/// fields; torch-free), distributed/tensor_codec.hpp (a tensor as bytes), distributed/merge.hpp
/// (the fold and the API).

#include <recorder/distributed/exchange.hpp>
#include <recorder/distributed/merge.hpp>
#include <recorder/distributed/options.hpp>
#include <recorder/distributed/protocol.hpp>
#include <recorder/distributed/state_codec.hpp>
#include <recorder/distributed/tensor_codec.hpp>
