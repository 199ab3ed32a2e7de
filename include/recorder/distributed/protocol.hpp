#pragma once
/// What the ranks of a merge send each other before their states (distributed.hpp): the
/// fixed-size header every rank sends first, and the schema (the description of what a rank
/// recorded) with its fingerprint and the first difference between two. Torch-free.

#include <recorder/detail/bytes.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace recorder::detail {

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

}  // namespace recorder::detail
