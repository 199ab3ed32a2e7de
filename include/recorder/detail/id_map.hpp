#pragma once
/// The library's hash tables: `IdMap` (64-bit key -> 64-bit value), `IdTable<T>` (key -> T,
/// kept in a vector) and `StringIds` (byte string -> dense id). Torch-free.
///
/// Why not `std::unordered_map`: every distinct `std::unordered_map<K, V>` (or `std::map`) a
/// header uses costs each translation unit that includes it 4-6 MB of compiler memory and
/// about 0.05 s (measured over `<torch/torch.h>` with g++ 12 -O3, `-ftime-report`), whether or
/// not the TU calls that code; the recorder used 18 such types. `IdMap` and `StringIds` are
/// ordinary classes, parsed once and never instantiated per use; `IdTable<T>` adds only a
/// `std::vector<T>`. Ids, pointers and packed pairs of 32-bit ids all fit
/// in the 64-bit key and value. Neither table erases; both are open-addressed (linear probing,
/// at most half full), so a lookup is one or two cache lines.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder::detail {

/// A hash map from 64-bit keys to 64-bit values. Every key is valid (0 and ~0 included).
/// A value pointer is valid until the next insertion.
class IdMap {
 public:
  /// The value stored for `key`, or null.
  std::uint64_t* find(std::uint64_t key) noexcept {
    if (size_ == 0) return nullptr;
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      if (!used_[i]) return nullptr;
      if (slots_[i].key == key) return &slots_[i].value;
    }
  }
  const std::uint64_t* find(std::uint64_t key) const noexcept {
    return const_cast<IdMap*>(this)->find(key);
  }
  bool contains(std::uint64_t key) const noexcept { return find(key) != nullptr; }

  /// Stores `value` for `key` unless `key` is present. Returns the stored value (the old one
  /// when present) and whether this call inserted it.
  std::pair<std::uint64_t*, bool> try_emplace(std::uint64_t key, std::uint64_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = slot_of(key);
    for (; used_[i]; i = (i + 1) & mask_)
      if (slots_[i].key == key) return {&slots_[i].value, false};
    used_[i] = 1;
    slots_[i] = Slot{key, value};
    ++size_;
    return {&slots_[i].value, true};
  }
  /// Adds `key` (as a set); true when it was not there.
  bool insert(std::uint64_t key) { return try_emplace(key, 0).second; }

  /// Makes room for `n` keys in all, so that inserting them does not grow the table again.
  void reserve(std::size_t n) {
    std::size_t slots = slots_.empty() ? 16 : slots_.size();
    while (2 * n > slots) slots *= 2;
    if (slots > slots_.size()) rehash(slots);
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  /// A key made of two 32-bit halves, as the library packs (from, to) pairs of ids.
  static constexpr std::uint64_t pair_key(std::uint32_t high, std::uint32_t low) noexcept {
    return (std::uint64_t{high} << 32) | low;
  }
  static std::uint64_t key_of(const void* p) noexcept {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
  }

 private:
  struct Slot {
    std::uint64_t key;
    std::uint64_t value;
  };
  // splitmix64's finalizer: every key bit moves the slot (pointers are 16-aligned, packed ids
  // differ in their low halves).
  std::size_t slot_of(std::uint64_t k) const noexcept {
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    k ^= k >> 31;
    return static_cast<std::size_t>(k) & mask_;
  }
  void grow() { rehash(slots_.empty() ? 16 : 2 * slots_.size()); }
  void rehash(std::size_t slots) {
    std::vector<Slot> old_slots(slots);
    std::vector<std::uint8_t> old_used(slots, 0);
    old_slots.swap(slots_);
    old_used.swap(used_);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (std::size_t i = 0; i < old_slots.size(); ++i)
      if (old_used[i]) try_emplace(old_slots[i].key, old_slots[i].value);
  }

  std::vector<Slot> slots_;
  std::vector<std::uint8_t> used_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

/// Values of type `T` by key (an id, or an object's address), kept in insertion order: an
/// `IdMap` to the index in a `std::vector<T>`, so a `T` costs a vector, not a hash table.
/// A `T*` is valid until the next insertion; values never move otherwise.
template <class T>
class IdTable {
 public:
  T* find(std::uint64_t key) noexcept {
    const std::uint64_t* i = index_.find(key);
    return i == nullptr ? nullptr : &values_[*i];
  }
  const T* find(std::uint64_t key) const noexcept { return const_cast<IdTable*>(this)->find(key); }
  T* find(const void* object) noexcept { return find(IdMap::key_of(object)); }
  const T* find(const void* object) const noexcept { return find(IdMap::key_of(object)); }

  /// Makes the value of `key` from `args` unless `key` is present. Returns the stored value
  /// and whether this call made it. If making it throws, nothing is stored.
  template <class... A>
  std::pair<T*, bool> try_emplace(std::uint64_t key, A&&... args) {
    if (T* v = find(key)) return {v, false};
    values_.emplace_back(std::forward<A>(args)...);
    try {
      index_.try_emplace(key, values_.size() - 1);
    } catch (...) {
      values_.pop_back();
      throw;
    }
    return {&values_.back(), true};
  }
  template <class... A>
  std::pair<T*, bool> try_emplace(const void* object, A&&... args) {
    return try_emplace(IdMap::key_of(object), std::forward<A>(args)...);
  }

  std::size_t size() const noexcept { return values_.size(); }
  bool empty() const noexcept { return values_.empty(); }
  /// Makes room for `n` values in all.
  void reserve(std::size_t n) {
    index_.reserve(n);
    values_.reserve(n);
  }

 private:
  IdMap index_;
  std::vector<T> values_;
};

/// Dense ids for byte strings: the first string seen gets 0, the next new one 1, and so on
/// (any bytes: a name, or the bytes of a vector of integers used as a key). Exact: strings
/// whose hashes collide get different ids.
class StringIds {
 public:
  /// The id of `s`, and whether this call gave it (true the first time `s` is seen).
  std::pair<std::uint32_t, bool> id(std::string_view s) { return id(s, hash(s)); }
  /// The same, with the hash given (every call for one string must give the same hash; tests
  /// give equal hashes to different strings to check that they still get different ids).
  std::pair<std::uint32_t, bool> id(std::string_view s, std::uint64_t hash) {
    // Probe the hash, then re-hashes of it, until `s` or a free key: a string is stored under
    // the first key of its sequence that no other string held, so lookups find it the same way.
    for (std::uint64_t h = hash;; h = hash_step(h)) {
      const auto [v, fresh] = ids_.try_emplace(h, ends_.size());
      if (fresh) {
        bytes_.append(s);
        ends_.push_back(bytes_.size());
        return {static_cast<std::uint32_t>(*v), true};
      }
      if (at(static_cast<std::uint32_t>(*v)) == s) return {static_cast<std::uint32_t>(*v), false};
    }
  }
  /// The string of id `i` (valid until the next new string).
  std::string_view at(std::uint32_t i) const noexcept {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  std::size_t size() const noexcept { return ends_.size(); }

 private:
  static std::uint64_t hash(std::string_view s) noexcept {  // FNV-1a
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return h;
  }
  static std::uint64_t hash_step(std::uint64_t h) noexcept {
    return (h + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
  }

  IdMap ids_;                      // probe key -> id
  std::string bytes_;              // every string, end to end
  std::vector<std::size_t> ends_;  // per id: where its bytes end
};

}  // namespace recorder::detail
