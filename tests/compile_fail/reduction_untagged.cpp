// EXPECT: recorder: not a reduction policy: add `using reduction_policy_tag = void;` to it
/// A reduction opts in with its tag: a struct with the right members but no tag is not one.
#include <recorder/policies/reduction/concepts.hpp>

#include <cstdint>
#include <string_view>

struct Count {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  using reduction_policy_tag = void;
#endif
  static constexpr std::string_view name = "count";
  static constexpr bool constant_memory = true;
  template <class T>
  using state = std::uint64_t;
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
