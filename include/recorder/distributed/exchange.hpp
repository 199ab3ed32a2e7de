#pragma once
/// The collectives of a merge over a `c10d::ProcessGroup` (distributed.hpp): every failure a
/// `MergeError` naming what was exchanged, and the checks every rank makes alike on the headers
/// and schemas it received.

#include <recorder/distributed/options.hpp>
#include <recorder/distributed/protocol.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace recorder::detail {

/// The ranks' collectives, each failure turned into a `MergeError` naming what was exchanged.
class Exchange {
 public:
  Exchange(c10d::ProcessGroup& pg, MergeStats* stats)
      : pg_(pg), rank_(pg.getRank()), world_(pg.getSize()), stats_(stats) {
    if (stats_) *stats_ = MergeStats{};
  }
  int rank() const noexcept { return rank_; }
  int world() const noexcept { return world_; }

  [[noreturn]] void fail(const std::string& message) const {
    throw MergeError(rank_, world_,
                     "recorder: merge across ranks (rank " + std::to_string(rank_) + " of " +
                         std::to_string(world_) + "): " + message);
  }

  std::vector<MergeHeader> headers(const MergeHeader& mine) {
    at::Tensor in = at::empty({MergeHeader::f_count}, at::TensorOptions().dtype(at::kLong));
    std::memcpy(in.data_ptr(), mine.v.data(), sizeof mine.v);
    const std::vector<at::Tensor> out = allgather_tensor(in, "the headers");
    std::vector<MergeHeader> all(out.size());
    for (std::size_t r = 0; r < out.size(); ++r)
      std::memcpy(all[r].v.data(), out[r].data_ptr(), sizeof all[r].v);
    return all;
  }

  /// Every rank's `mine`, padded to `max` bytes on the way.
  std::vector<std::string> allgather(std::string_view mine, std::size_t max,
                                     std::string_view what) {
    const std::vector<at::Tensor> out = allgather_tensor(padded(mine, max), what);
    std::vector<std::string> all;
    for (const at::Tensor& t : out)
      all.emplace_back(static_cast<const char*>(t.data_ptr()), static_cast<std::size_t>(t.numel()));
    return all;
  }

  /// Every rank's payload (`root` < 0), or on `root` only, each as long as its header says:
  /// sent padded to the longest, cut back on arrival. Empty on a rank that receives nothing.
  std::vector<std::string> payloads(const std::vector<MergeHeader>& headers, std::string_view mine,
                                    int root, std::string_view what) {
    const std::size_t max = longest(headers, MergeHeader::f_payload_bytes);
    std::vector<std::string> all =
        root >= 0 ? gather(mine, max, root, what) : allgather(mine, max, what);
    for (std::size_t r = 0; r < all.size(); ++r)
      all[r].resize(static_cast<std::size_t>(headers[r][MergeHeader::f_payload_bytes]));
    return all;
  }

  /// The largest value of `field` over the ranks' headers (a size).
  static std::size_t longest(const std::vector<MergeHeader>& headers, MergeHeader::Field field) {
    std::size_t n = 0;
    for (const MergeHeader& h : headers) n = std::max(n, static_cast<std::size_t>(h[field]));
    return n;
  }

  /// On `root`, every rank's `mine` (padded to `max`); elsewhere nothing.
  std::vector<std::string> gather(std::string_view mine, std::size_t max, int root,
                                  std::string_view what) {
    std::vector<at::Tensor> in{padded(mine, max)};
    std::vector<std::vector<at::Tensor>> out;
    if (rank_ == root) {
      out.emplace_back();
      for (int r = 0; r < world_; ++r) out[0].push_back(at::empty_like(in[0]));
    }
    c10d::GatherOptions o;
    o.rootRank = root;
    run(what, [&] { pg_.gather(out, in, o)->wait(); });
    count(in[0], rank_ == root ? world_ : 0);
    std::vector<std::string> all;
    if (rank_ == root)
      for (const at::Tensor& t : out[0])
        all.emplace_back(static_cast<const char*>(t.data_ptr()),
                         static_cast<std::size_t>(t.numel()));
    return all;
  }

 private:
  static at::Tensor padded(std::string_view bytes, std::size_t max) {
    at::Tensor t = at::zeros({static_cast<std::int64_t>(std::max<std::size_t>(max, 1))},
                             at::TensorOptions().dtype(at::kByte));
    if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
    return t;
  }

  std::vector<at::Tensor> allgather_tensor(const at::Tensor& in, std::string_view what) {
    std::vector<at::Tensor> inputs{in};
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < world_; ++r) out[0].push_back(at::empty_like(in));
    run(what, [&] { pg_.allgather(out, inputs)->wait(); });
    count(in, world_);
    return out[0];
  }

  void count(const at::Tensor& in, int received) {
    if (!stats_) return;
    ++stats_->collectives;
    stats_->bytes_sent += in.nbytes();
    stats_->bytes_received += in.nbytes() * static_cast<std::size_t>(received);
  }

  template <class F>
  void run(std::string_view what, F&& f) {
    try {
      f();
    } catch (const c10::Error& e) {
      fail(failed(what, e.what_without_backtrace()));
    } catch (const std::exception& e) {
      fail(failed(what, e.what()));
    }
  }
  static std::string failed(std::string_view what, std::string_view why) {
    return "exchanging " + std::string(what) +
           " failed (did a rank die, leave the merge or time out?): " + std::string(why);
  }

  c10d::ProcessGroup& pg_;
  int rank_;
  int world_;
  MergeStats* stats_;
};

/// The header checks every rank makes alike: same kind, version, root, `Last` rank and
/// reduction; roots in range. Throws the same `MergeError` on every rank.
inline void check_headers(Exchange& ex, const std::vector<MergeHeader>& h) {
  const auto rank = [](std::size_t r) { return "rank " + std::to_string(r); };
  for (std::size_t r = 0; r < h.size(); ++r)
    if (h[r][MergeHeader::f_magic] != MergeHeader::magic ||
        h[r][MergeHeader::f_version] != MergeHeader::version)
      ex.fail(rank(r) +
              " is not running a recorder merge of this version (another collective at the "
              "same time?)");
  const auto root_text = [](std::int64_t root) {
    return root < 0 ? std::string("every rank") : "root " + std::to_string(root);
  };
  for (std::size_t r = 1; r < h.size(); ++r) {
    if (h[r][MergeHeader::f_kind] != h[0][MergeHeader::f_kind])
      ex.fail(rank(0) + " is merging " +
              std::string(to_string(static_cast<MergeKind>(h[0][MergeHeader::f_kind]))) + " but " +
              rank(r) + " " +
              std::string(to_string(static_cast<MergeKind>(h[r][MergeHeader::f_kind]))));
    if (h[r][MergeHeader::f_root] != h[0][MergeHeader::f_root])
      ex.fail(rank(0) + " merges to " + root_text(h[0][MergeHeader::f_root]) + " but " + rank(r) +
              " to " + root_text(h[r][MergeHeader::f_root]));
    if (h[r][MergeHeader::f_last] != h[0][MergeHeader::f_last])
      ex.fail(rank(0) + " and " + rank(r) + " ask for reduce::Last's value of different ranks");
  }
  const std::int64_t world = static_cast<std::int64_t>(h.size());
  for (const MergeHeader::Field f : {MergeHeader::f_root, MergeHeader::f_last}) {
    const std::int64_t v = h[0][f];
    if (v >= world || v < -1)
      ex.fail(std::string(f == MergeHeader::f_root ? "root" : "last_rank") + " " +
              std::to_string(v) + " is not a rank of this group of " + std::to_string(world));
  }
}

/// After the headers: when the reductions differ, or the fingerprints of the ranks that hold
/// something, exchanges the descriptions and throws, on every rank, the first difference.
inline void check_schemas(Exchange& ex, const std::vector<MergeHeader>& h, const std::string& mine,
                          std::string_view what, std::string_view layer_word) {
  int first = -1;
  bool differ = false;
  for (std::size_t r = 0; r < h.size(); ++r) {
    if (h[r][MergeHeader::f_reduction] != h[0][MergeHeader::f_reduction]) differ = true;
    if (h[r][MergeHeader::f_entries] == 0) continue;
    if (first < 0)
      first = static_cast<int>(r);
    else if (h[r][MergeHeader::f_schema_hash] !=
             h[static_cast<std::size_t>(first)][MergeHeader::f_schema_hash])
      differ = true;
  }
  if (!differ) return;
  const std::vector<std::string> all = ex.allgather(
      mine, Exchange::longest(h, MergeHeader::f_schema_bytes), "the layer descriptions");
  std::vector<Schema> schemas;
  for (const std::string& bytes : all) schemas.push_back(decode_schema(bytes));
  for (std::size_t r = 1; r < schemas.size(); ++r)
    if (schemas[r].reduction != schemas[0].reduction)
      ex.fail("rank 0 merges values reduced by " + schemas[0].reduction + " but rank " +
              std::to_string(r) + " values reduced by " + schemas[r].reduction +
              ": every rank must record with the same reduction and parameters");
  if (first < 0) return;
  const Schema& ref = schemas[static_cast<std::size_t>(first)];
  for (std::size_t r = static_cast<std::size_t>(first) + 1; r < schemas.size(); ++r) {
    if (h[r][MergeHeader::f_entries] == 0) continue;
    const std::string diff =
        schema_difference(ref.entries, first, schemas[r].entries, static_cast<int>(r), layer_word);
    if (!diff.empty())
      ex.fail("the ranks' " + std::string(what) + "s differ: " + diff +
              ". Every rank that recorded something must record the same " +
              std::string(layer_word) +
              "s, in the same order, with the same reduction, shapes "
              "and dtypes");
  }
}

}  // namespace recorder::detail
