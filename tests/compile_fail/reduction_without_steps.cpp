// EXPECT: recorder: a reduction needs const members `state<T> init\(const T&\)`, `void update\(state<T>&, const T&\)`
/// A reduction's steps are const members: non-const ones are named as missing.
#include <recorder/policies/reduction/concepts.hpp>

#include <cstdint>
#include <string_view>

#ifdef RECORDER_COMPILE_FAIL_TWIN
#define RECORDER_CONST const
#else
#define RECORDER_CONST
#endif

struct Count {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "count";
  static constexpr bool constant_memory = true;
  template <class T>
  using state = std::uint64_t;
  template <class T>
  std::uint64_t init(const T&) RECORDER_CONST {
    return 1;
  }
  template <class T>
  void update(std::uint64_t& s, const T&) RECORDER_CONST {
    ++s;
  }
  std::uint64_t result(std::uint64_t s) const { return s; }
  std::uint64_t count(std::uint64_t s) const { return s; }
};

static_assert(recorder::reduce::check_reduction<Count, double>());
