#pragma once
/// Merging across ranks (distributed.hpp): the packed states, their fold in rank order with the
/// reduction's own `merge`, and `merged_across`, `merge_across`, `gather_traces`,
/// `gather_chrome_trace`.

#include <recorder/capture/activations.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/detail/bytes.hpp>
#include <recorder/distributed/exchange.hpp>
#include <recorder/distributed/options.hpp>
#include <recorder/distributed/protocol.hpp>
#include <recorder/distributed/state_codec.hpp>
#include <recorder/distributed/tensor_codec.hpp>
#include <recorder/graph/codec.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/policies/reduction.hpp>
#include <recorder/render/chrome_trace.hpp>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

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
                  "describe its fields (static constexpr auto fields(), "
                  "policies/reduction/fields.hpp) or specialize recorder::state_codec<State> "
                  "(distributed/state_codec.hpp)");
  }
  return true;
}

/// Reaches the stores behind recording handles.
struct RecordingAccess {
  template <class R>
  static Store<R>& store(const record::Activations<R>& c) {
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
template <class R>
std::optional<std::vector<std::unique_ptr<LayerRecord<R>>>> merged_records(
    const record::Activations<R>& local, c10d::ProcessGroup& pg, const MergeOptions& o) {
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

/// `out` (an empty recording like `local`) given the merge of `local` over `pg`.
template <class R>
void merge_into(const record::Activations<R>& local, record::Activations<R>& out,
                c10d::ProcessGroup& pg, const MergeOptions& o) {
  auto records = merged_records(local, pg, o);
  out.data(local.data());
  if (records) RecordingAccess::store(out).replace_records(std::move(*records));
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
template <class R>
record::Activations<R> merged_across(const record::Activations<R>& local, c10d::ProcessGroup& pg,
                                     MergeOptions options = {}) {
  record::Activations<R> out(local.capture_point(), local.layers(), local.reduction());
  detail::merge_into(local, out, pg, options);
  return out;
}
/// The same for a `Capture<W, R>` (`ForwardOutput<R>`, ...): the merge is one of its type.
template <CapturePoint W, class R>
record::Capture<W, R> merged_across(const record::Capture<W, R>& local, c10d::ProcessGroup& pg,
                                    MergeOptions options = {}) {
  record::Capture<W, R> out(local.layers(), local.reduction());
  detail::merge_into(local, out, pg, options);
  return out;
}

/// `recording` replaced by its merge over every rank of `pg` (on the root only, with
/// `{.root = r}`); see `merged_across`. On error it is left as it was.
template <class R>
void merge_across(record::Activations<R>& recording, c10d::ProcessGroup& pg,
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
  detail::JsonWriter events(mine);
  events.begin_fragment(detail::chrome_events);
  detail::append_chrome_events(
      events, runs,
      "recorder: " + std::string(name) + " forward, rank " + std::to_string(ex.rank()),
      ex.rank() + 1);
  events.end_fragment();
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
  std::string out;
  detail::write_chrome_trace(out, base, name, [&](detail::JsonWriter& w) {
    for (const std::string& p : all) w.raw(std::string_view(p).substr(sizeof(std::int64_t)));
  });
  return out;
}

}  // namespace recorder
