// EXPECT: recorder: a reduction needs `template <class T> using state = \.\.\.;`, a copyable type
/// A reduction names the state it keeps for each value type.
#include <recorder/policies/reduction/concepts.hpp>

#include <cstdint>
#include <string_view>

struct Count {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "count";
  static constexpr bool constant_memory = true;
#ifdef RECORDER_COMPILE_FAIL_TWIN
  template <class T>
  using state = std::uint64_t;
#endif
  template <class T>
  std::uint64_t init(const T&) const {
    return 1;
  }
  template <class T>
  void update(std::uint64_t& s, const T&) const {
    ++s;
  }
  std::uint64_t result(std::uint64_t s) const { return s; }
  std::uint64_t count(std::uint64_t s) const { return s; }
};

static_assert(recorder::reduce::check_reduction<Count, double>());
