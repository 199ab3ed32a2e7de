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

#include <recorder/capture/activations.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/detail/bytes.hpp>
#include <recorder/distributed/state_codec.hpp>
#include <recorder/graph/codec.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/policies/reduction.hpp>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

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

namespace detail {

/// What a rank merges, as the header says.
enum class MergeKind : std::int64_t { recording = 1, timing = 2, trace = 3, chrome_trace = 4 };

inline std::string_view to_string(MergeKind k) {
  switch (k) {
    case MergeKind::recording:
      return "a recording";
    case MergeKind::timing:
      return "a timing";
    case MergeKind::trace:
      return "a trace (gather_traces)";
    case MergeKind::chrome_trace:
      return "a Chrome trace (gather_chrome_trace)";
  }
  return "something else";
}

/// The fixed-size header every rank sends first (int64 fields).
struct MergeHeader {
  static constexpr std::int64_t magic = 0x7265636f72646572;  // "recorder"
  static constexpr std::int64_t version = 1;
  enum Field : std::size_t {
    f_magic,
    f_version,
    f_kind,
    f_root,       ///< -1: every rank
    f_last,       ///< `Last`'s rank, -1: default
    f_reduction,  ///< fingerprint of the reduction's name and parameters
    f_entries,
    f_schema_hash,
    f_schema_bytes,
    f_payload_bytes,
    f_count
  };
  std::array<std::int64_t, f_count> v{};
  std::int64_t operator[](Field f) const { return v[f]; }

  /// A header of this version: what is merged, to which root (-1: every rank), `Last`'s rank
  /// (-1: default) and the payload's size; the schema fields stay 0 unless set.
  static MergeHeader make(MergeKind kind, std::int64_t root, std::int64_t last,
                          std::size_t payload_bytes) {
    MergeHeader h;
    h.v[f_magic] = magic;
    h.v[f_version] = version;
    h.v[f_kind] = static_cast<std::int64_t>(kind);
    h.v[f_root] = root;
    h.v[f_last] = last;
    h.v[f_payload_bytes] = static_cast<std::int64_t>(payload_bytes);
    return h;
  }
};

inline std::int64_t as_int64(std::uint64_t h) { return std::bit_cast<std::int64_t>(h); }

/// A recording's description, entry after entry: what every rank that recorded something must
/// share. `slots[i]` unset: tensor `i` was never recorded here (it matches anything).
struct SchemaEntry {
  std::string key;
  std::string kind;  ///< the module's class; "call"/"op" for a timing key
  std::vector<std::optional<std::string>> slots;
};

/// A rank's description: its reduction ("moments(correction=1)"), then its entries.
struct Schema {
  std::string reduction;
  std::vector<SchemaEntry> entries;
};

inline std::string encode_schema(const Schema& schema) {
  ByteWriter w;
  w.text(schema.reduction);
  w.u64(schema.entries.size());
  for (const SchemaEntry& e : schema.entries) {
    w.text(e.key);
    w.text(e.kind);
    w.u64(e.slots.size());
    for (const auto& s : e.slots) {
      w.number<std::uint8_t>(s ? 1 : 0);
      if (s) w.text(*s);
    }
  }
  return w.take();
}

inline Schema decode_schema(std::string_view bytes) {
  ByteReader r(bytes, "merge schema");
  Schema out;
  out.reduction = std::string(r.text());
  out.entries.resize(r.count(8));
  for (SchemaEntry& e : out.entries) {
    e.key = std::string(r.text());
    e.kind = std::string(r.text());
    e.slots.resize(r.count(1));
    for (auto& s : e.slots)
      if (r.number<std::uint8_t>() != 0) s = std::string(r.text());
  }
  return out;
}

/// The fingerprint of a schema; absent slots are left out, so ranks that recorded the same
/// tensors agree (a rank missing a gradient only costs the full comparison).
inline std::uint64_t schema_hash(const std::vector<SchemaEntry>& entries) {
  std::uint64_t h = fnv1a64("schema");
  for (const SchemaEntry& e : entries) {
    h = fnv1a64(e.key, fnv1a64("\x01", h));
    h = fnv1a64(e.kind, fnv1a64("\x02", h));
    for (std::size_t i = 0; i < e.slots.size(); ++i)
      if (e.slots[i]) h = fnv1a64(*e.slots[i], fnv1a64(std::to_string(i) + '\x04', h));
  }
  return h;
}

inline std::string quoted_key(const std::string& k) { return "'" + k + "'"; }

/// The first difference between `ref` (rank `a`'s schema) and `other` (rank `b`'s), spelled
/// for the error; empty when they merge (absent tensors match anything).
inline std::string schema_difference(const std::vector<SchemaEntry>& ref, int a,
                                     const std::vector<SchemaEntry>& other, int b,
                                     std::string_view layer_word) {
  const std::string ra = "rank " + std::to_string(a), rb = "rank " + std::to_string(b);
  const std::size_t n = std::min(ref.size(), other.size());
  for (std::size_t i = 0; i < n; ++i) {
    const SchemaEntry& x = ref[i];
    const SchemaEntry& y = other[i];
    if (x.key != y.key)
      return std::string(layer_word) + " " + std::to_string(i + 1) + " is " + quoted_key(x.key) +
             " on " + ra + " but " + quoted_key(y.key) + " on " + rb;
    if (x.kind != y.kind)
      return std::string(layer_word) + " " + quoted_key(x.key) + " is a " + x.kind + " on " + ra +
             " but a " + y.kind + " on " + rb;
    for (std::size_t s = 0; s < std::min(x.slots.size(), y.slots.size()); ++s)
      if (x.slots[s] && y.slots[s] && *x.slots[s] != *y.slots[s])
        return std::string(layer_word) + " " + quoted_key(x.key) + " records tensor " +
               std::to_string(s) + " as " + *x.slots[s] + " on " + ra + " but as " + *y.slots[s] +
               " on " + rb;
  }
  if (ref.size() != other.size()) {
    const bool a_longer = ref.size() > other.size();
    const SchemaEntry& extra = a_longer ? ref[n] : other[n];
    return std::string(layer_word) + " " + quoted_key(extra.key) + " is recorded on " +
           (a_longer ? ra : rb) + " but not on " + (a_longer ? rb : ra) + " (" +
           std::to_string(ref.size()) + " against " + std::to_string(other.size()) + ")";
  }
  return {};
}

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

/// One entry of a rank's packed states: its description bytes (a `RecordInfo`, a timing key)
/// and a state per tensor.
template <class S>
struct PackedEntry {
  std::string info;
  std::vector<std::optional<S>> slots;
};

template <class S>
void encode_entries(ByteWriter& w, const std::vector<std::string>& infos,
                    const std::vector<std::vector<const S*>>& slots) {
  w.u64(infos.size());
  for (std::size_t i = 0; i < infos.size(); ++i) {
    w.text(infos[i]);
    w.u64(slots[i].size());
    for (const S* s : slots[i]) {
      w.number<std::uint8_t>(s ? 1 : 0);
      if (s) state_codec<S>::encode(w, *s);
    }
  }
}

template <class S>
std::vector<PackedEntry<S>> decode_entries(std::string_view bytes) {
  ByteReader r(bytes, "merge payload");
  std::vector<PackedEntry<S>> out(r.count(8));
  for (PackedEntry<S>& e : out) {
    e.info = std::string(r.text());
    e.slots.resize(r.count(1));
    for (auto& s : e.slots)
      if (r.number<std::uint8_t>() != 0) s.emplace(state_codec<S>::decode(r));
  }
  return out;
}

/// Folds every rank's entries, in rank order, with `reduction.merge`: entry `i` of the result
/// has the description of the first rank that has entries. For `reduce::Last`, rank `last`
/// comes last, so its value wins where it has one.
template <class R, class S>
std::vector<PackedEntry<S>> fold_ranks(const R& reduction, const std::vector<std::string>& payloads,
                                       int last) {
  std::vector<std::vector<PackedEntry<S>>> ranks;
  for (const std::string& p : payloads) ranks.push_back(decode_entries<S>(p));
  std::vector<std::size_t> order(ranks.size());
  for (std::size_t r = 0; r < order.size(); ++r) order[r] = r;
  if constexpr (std::is_same_v<R, reduce::Last>) {
    if (last >= 0) {
      order.erase(order.begin() + last);
      order.push_back(static_cast<std::size_t>(last));
    }
  }
  std::vector<PackedEntry<S>> out;
  for (const auto& entries : ranks) {
    if (entries.empty()) continue;
    for (const PackedEntry<S>& e : entries) out.push_back({e.info, {}});
    break;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::size_t slots = 0;
    for (const auto& entries : ranks)
      if (i < entries.size()) slots = std::max(slots, entries[i].slots.size());
    out[i].slots.resize(slots);
    for (std::size_t s = 0; s < slots; ++s) {
      std::optional<S>& acc = out[i].slots[s];
      for (const std::size_t r : order) {
        if (i >= ranks[r].size() || s >= ranks[r][i].slots.size() || !ranks[r][i].slots[s])
          continue;
        S& state = *ranks[r][i].slots[s];
        if (!acc)
          acc.emplace(std::move(state));
        else
          reduction.merge(*acc, state);
      }
    }
  }
  return out;
}

/// The whole exchange for one recording or timing: headers, the schema check, the payloads,
/// the fold. Returns the merged entries (empty on a rank that does not receive them).
template <class R, class S>
std::optional<std::vector<PackedEntry<S>>> exchange_and_fold(
    c10d::ProcessGroup& pg, const MergeOptions& o, MergeKind kind, const R& reduction,
    const Schema& schema, const std::vector<std::string>& infos,
    const std::vector<std::vector<const S*>>& slots, std::string_view what,
    std::string_view layer_word) {
  Exchange ex(pg, o.stats);
  const std::string schema_bytes = encode_schema(schema);
  ByteWriter payload;
  encode_entries(payload, infos, slots);

  MergeHeader mine = MergeHeader::make(kind, o.root ? *o.root : -1, o.last_rank ? *o.last_rank : -1,
                                       payload.size());
  mine.v[MergeHeader::f_reduction] = as_int64(fnv1a64(schema.reduction));
  mine.v[MergeHeader::f_entries] = static_cast<std::int64_t>(schema.entries.size());
  mine.v[MergeHeader::f_schema_hash] = as_int64(schema_hash(schema.entries));
  mine.v[MergeHeader::f_schema_bytes] = static_cast<std::int64_t>(schema_bytes.size());
  const std::vector<MergeHeader> headers = ex.headers(mine);
  check_headers(ex, headers);
  check_schemas(ex, headers, schema_bytes, what, layer_word);

  const std::vector<std::string> all =
      ex.payloads(headers, payload.bytes(), o.root ? *o.root : -1, "the packed states");
  if (all.empty()) return std::nullopt;  // not the root
  const int last = o.last_rank ? *o.last_rank : (o.root ? *o.root : 0);
  return fold_ranks<R, S>(reduction, all, last);
}

/// `static_assert`s naming why `R`'s states over `T` cannot be merged across processes.
template <class R>
inline constexpr bool is_custom_reduction = false;
template <class F>
inline constexpr bool is_custom_reduction<reduce::Custom<F>> = true;

template <class R, class T>
consteval bool check_mergeable_across() {
  constexpr bool is_custom = is_custom_reduction<R>;
  static_assert(!is_custom,
                "recorder: merge_across: reduce::custom(f) is not mergeable: nothing says f is "
                "associative, so states of several ranks cannot be combined. Record with a "
                "mergeable reduction (Sum, Mean, Moments, MinMax, Histogram, Last, KeepAll) to "
                "merge across ranks");
  if constexpr (!is_custom) {
    static_assert(reduce::mergeable_reduction<R, T>,
                  "recorder: merge_across: the reduction is not mergeable "
                  "(reduce::mergeable_reduction): give it `void merge(state&, const state&) "
                  "const`");
    static_assert(has_state_codec<reduce::state_t<R, T>>,
                  "recorder: merge_across: the reduction's state has no byte encoding: "
                  "specialize recorder::state_codec<State> (distributed/state_codec.hpp)");
  }
  return true;
}

/// Reaches the stores behind recording handles.
struct RecordingAccess {
  template <CapturePoint W, class R>
  static Store<R>& store(const record::Capture<W, R>& c) {
    return *c.store_;
  }
  template <class R>
  static TimingStore<R>& store(const record::Timing<R>& t) {
    return *t.store_;
  }
};

inline std::string encode_info(const RecordInfo& r) {
  ByteWriter w;
  w.text(r.key);
  w.text(r.path);
  w.text(r.class_name);
  w.text(r.label);
  w.number(r.call_index);
  w.i64(r.depth);
  w.i64(r.depth_index);
  w.u64(r.position);
  return w.take();
}

inline RecordInfo decode_info(std::string_view bytes) {
  ByteReader r(bytes, "layer description");
  RecordInfo info;
  info.key = std::string(r.text());
  info.path = std::string(r.text());
  info.class_name = std::string(r.text());
  info.label = std::string(r.text());
  info.call_index = r.number<std::uint32_t>();
  info.depth = r.i64();
  info.depth_index = r.i64();
  info.position = static_cast<std::size_t>(r.u64());
  return info;
}

/// The merged records of `local` (null on a rank that gets none).
template <CapturePoint W, class R>
std::optional<std::vector<std::unique_ptr<LayerRecord<R>>>> merged_records(
    const record::Capture<W, R>& local, c10d::ProcessGroup& pg, const MergeOptions& o) {
  static_assert(check_mergeable_across<R, at::Tensor>());
  using S = reduce::state_t<R, at::Tensor>;
  const R& reduction = local.reduction();
  Schema schema{describe_reduction(reduction), {}};
  std::vector<std::string> infos;
  std::vector<std::vector<const S*>> slots;
  for (const auto& rec : local.records()) {
    SchemaEntry e{rec->key, rec->class_name, {}};
    std::vector<const S*> states;
    for (std::size_t i = 0; i < rec->tensors(); ++i) {
      const S* s = rec->find_state(i);
      states.push_back(s);
      e.slots.push_back(s ? std::optional<std::string>(describe_state<R>(*s)) : std::nullopt);
    }
    schema.entries.push_back(std::move(e));
    infos.push_back(encode_info(*rec));
    slots.push_back(std::move(states));
  }
  auto merged = exchange_and_fold<R, S>(pg, o, MergeKind::recording, reduction, schema, infos,
                                        slots, "recording", "layer");
  if (!merged) return std::nullopt;
  std::vector<std::unique_ptr<LayerRecord<R>>> records;
  for (PackedEntry<S>& e : *merged)
    records.push_back(
        std::make_unique<LayerRecord<R>>(decode_info(e.info), reduction, std::move(e.slots)));
  return records;
}

/// A timing's merged keys and states (null on a rank that gets none).
template <class R>
struct MergedTiming {
  std::vector<std::string> keys, op_keys;
  std::vector<reduce::state_t<R, double>> states, op_states;
};

template <class R>
std::optional<MergedTiming<R>> merged_timing(const record::Timing<R>& local, c10d::ProcessGroup& pg,
                                             const MergeOptions& o) {
  static_assert(check_mergeable_across<R, double>());
  using S = reduce::state_t<R, double>;
  const TimingStore<R>& store = RecordingAccess::store(local);
  Schema schema{describe_reduction(store.reduction()), {}};
  std::vector<std::string> infos;
  std::vector<std::vector<const S*>> slots;
  const auto add = [&](const std::vector<std::string>& keys, const std::vector<S>& states,
                       std::string_view kind) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      schema.entries.push_back({keys[i], std::string(kind), {std::string()}});
      infos.push_back(std::string(kind) + ':' + keys[i]);
      slots.push_back({&states[i]});
    }
  };
  add(store.keys(), store.states(), "call");
  add(store.op_keys(), store.op_states(), "op");
  auto merged = exchange_and_fold<R, S>(pg, o, MergeKind::timing, store.reduction(), schema, infos,
                                        slots, "timing", "timed key");
  if (!merged) return std::nullopt;
  MergedTiming<R> out;
  for (PackedEntry<S>& e : *merged) {
    const bool op = e.info.starts_with("op:");
    std::string key = e.info.substr(op ? 3 : 5);
    if (e.slots.empty() || !e.slots[0]) continue;  // cannot happen: every key has a state
    (op ? out.op_keys : out.keys).push_back(std::move(key));
    (op ? out.op_states : out.states).push_back(std::move(*e.slots[0]));
  }
  return out;
}

}  // namespace detail

/// `local` merged over every rank of `pg`: a new recording (the same layers and reduction)
/// whose layers hold the states of all ranks, folded in rank order. Every rank of `pg` must
/// call it. With `{.root = r}`, only rank `r` gets the merged recording and the others an
/// empty one. `local` is left as it is, so recording can go on and a later merge does not count
/// twice. A rank that recorded nothing contributes nothing.
///
/// Throws `MergeError` (on every rank alike) when ranks that recorded something hold
/// different layers, reductions, shapes or dtypes, or when a collective fails; a
/// `reduce::KeepAll` whose merged values pass its `max_bytes` throws `CapacityExceeded`.
/// `reduce::custom` does not compile: it is not mergeable.
template <CapturePoint W, class R>
record::Capture<W, R> merged_across(const record::Capture<W, R>& local, c10d::ProcessGroup& pg,
                                    MergeOptions options = {}) {
  auto records = detail::merged_records(local, pg, options);
  record::Capture<W, R> out(local.layers(), local.reduction());
  out.data(local.data());
  if (records) detail::RecordingAccess::store(out).replace_records(std::move(*records));
  return out;
}

/// `recording` replaced by its merge over every rank of `pg` (on the root only, with
/// `{.root = r}`); see `merged_across`. On error it is left as it was.
template <CapturePoint W, class R>
void merge_across(record::Capture<W, R>& recording, c10d::ProcessGroup& pg,
                  MergeOptions options = {}) {
  auto records = detail::merged_records(recording, pg, options);
  if (records) detail::RecordingAccess::store(recording).replace_records(std::move(*records));
}

/// A timing whose keys hold the durations of every rank, reduced together (`result(key)`,
/// `samples(key)`, `call_times`); its `runs()` are empty (runs stay per process: render each
/// rank's Chrome trace). Same rules as for recordings.
template <class R>
record::Timing<R> merged_across(const record::Timing<R>& local, c10d::ProcessGroup& pg,
                                MergeOptions options = {}) {
  auto merged = detail::merged_timing(local, pg, options);
  record::Timing<R> out(detail::RecordingAccess::store(local).reduction());
  if (merged)
    detail::RecordingAccess::store(out).replace_reduced(
        std::move(merged->keys), std::move(merged->states), std::move(merged->op_keys),
        std::move(merged->op_states));
  return out;
}

/// `timing`'s reduced durations replaced by their merge over every rank (its runs stay).
template <class R>
void merge_across(record::Timing<R>& timing, c10d::ProcessGroup& pg, MergeOptions options = {}) {
  auto merged = detail::merged_timing(timing, pg, options);
  if (merged)
    detail::RecordingAccess::store(timing).replace_reduced(
        std::move(merged->keys), std::move(merged->states), std::move(merged->op_keys),
        std::move(merged->op_states));
}

/// Every rank's trace, in rank order, on rank `options.root` (0 by default); an empty vector
/// on the others. Render them side by side: a rank whose forward took another path shows a
/// graph that differs. Every rank of `pg` must call it.
inline std::vector<Trace> gather_traces(const Trace& trace, c10d::ProcessGroup& pg,
                                        GatherOptions options = {}) {
  detail::Exchange ex(pg, options.stats);
  const std::string bytes = encode_trace(trace);
  using H = detail::MergeHeader;
  const H mine = H::make(detail::MergeKind::trace, options.root, -1, bytes.size());
  const std::vector<H> headers = ex.headers(mine);
  detail::check_headers(ex, headers);
  if (headers[0][H::f_root] < 0)
    ex.fail("gather_traces needs a root rank (GatherOptions::root), not " +
            std::to_string(headers[0][H::f_root]));
  std::vector<Trace> out;
  for (const std::string& bytes_of_rank : ex.payloads(headers, bytes, options.root, "the traces"))
    out.push_back(decode_trace(bytes_of_rank));
  return out;
}

/// Every rank's timed runs (`record::Timing::runs()`) as one Chrome/Perfetto trace, on rank
/// `options.root` (an empty string on the others): rank r is process r + 1, named
/// "recorder: <name> forward, rank r", with its runs laid out as `chrome_trace_json` lays them,
/// from 0 (so run k of every rank lines up; `baseTimeNanoseconds` is the earliest rank's first
/// run). PyTorch's profiler writes a file per rank; this is one file with a track per rank.
/// Every rank of `pg` must call it.
inline std::string gather_chrome_trace(const std::vector<TimedRun>& runs, std::string_view name,
                                       c10d::ProcessGroup& pg, GatherOptions options = {}) {
  detail::Exchange ex(pg, options.stats);
  // The payload: this rank's first run's start (8 bytes), then its events.
  std::string mine(sizeof(std::int64_t), '\0');
  const std::int64_t epoch = runs.empty() ? 0 : runs.front().epoch_ns;
  std::memcpy(mine.data(), &epoch, sizeof epoch);
  detail::append_chrome_events(
      mine, runs, "recorder: " + std::string(name) + " forward, rank " + std::to_string(ex.rank()),
      ex.rank() + 1);
  using H = detail::MergeHeader;
  const std::vector<H> headers =
      ex.headers(H::make(detail::MergeKind::chrome_trace, options.root, -1, mine.size()));
  detail::check_headers(ex, headers);
  if (headers[0][H::f_root] < 0)
    ex.fail("gather_chrome_trace needs a root rank (GatherOptions::root), not " +
            std::to_string(headers[0][H::f_root]));
  const std::vector<std::string> all = ex.payloads(headers, mine, options.root, "the runs");
  if (all.empty()) return {};
  std::int64_t base = 0;
  for (const std::string& p : all) {
    std::int64_t e = 0;
    std::memcpy(&e, p.data(), sizeof e);
    if (e != 0 && (base == 0 || e < base)) base = e;
  }
  std::string out = detail::chrome_trace_head(base, name);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (r > 0) out += ",\n";
    out.append(all[r], sizeof(std::int64_t));
  }
  out += detail::chrome_trace_tail;
  return out;
}

}  // namespace recorder
