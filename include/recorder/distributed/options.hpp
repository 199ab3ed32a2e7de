#pragma once
/// How a merge across ranks runs, what it cost, and how it fails (distributed.hpp). Torch-free.

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace recorder {

/// What one merge cost: collectives issued and bytes this rank sent and received.
struct MergeStats {
  std::size_t collectives = 0;
  std::size_t bytes_sent = 0;
  std::size_t bytes_received = 0;
};

/// How `merged_across` and `merge_across` merge.
struct MergeOptions {
  /// Unset: every rank gets the merged result. Set: only that rank does (the others get an
  /// empty recording from `merged_across`; `merge_across` leaves theirs as it is).
  std::optional<int> root{};
  /// `reduce::Last`: whose latest value wins. Unset: the root's, else rank 0's; a rank that
  /// recorded no value for a tensor gives way to the last rank, in rank order, that did.
  std::optional<int> last_rank{};
  /// When set, filled with what the merge cost.
  MergeStats* stats = nullptr;
};

/// How `gather_traces` gathers.
struct GatherOptions {
  int root = 0;  ///< the rank that gets every trace
  MergeStats* stats = nullptr;
};

/// A merge across ranks failed: the ranks hold different layers, reductions, shapes or
/// dtypes (thrown on every rank, with the same message), or a collective failed (a rank died,
/// the group timed out). The recording merged from is left as it was.
class MergeError : public std::runtime_error {
 public:
  MergeError(int rank, int world, const std::string& message)
      : std::runtime_error(message), rank_(rank), world_(world) {}
  int rank() const noexcept { return rank_; }    ///< the rank that threw
  int world() const noexcept { return world_; }  ///< the group's size

 private:
  int rank_;
  int world_;
};

}  // namespace recorder
