#pragma once
/// `recorder::op(name, f, args...)`: records any callable as one function node.

#include <recorder/tensor/nested.hpp>
#include <recorder/tensor/unwrap.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

/// Calls `f` with every `RecorderTensor` argument unwrapped to its `at::Tensor` (and vectors of
/// them to vectors of tensors) and records one function node named `name`, with edges from those
/// arguments and to every tensor `f` returns. Use it for ops the table does not cover:
///
/// ```
/// auto y = recorder::op("erfinv", [](const at::Tensor& t) { return t.erfinv(); }, x);
/// ```
/// With only plain arguments it is just `f(args...)`.
template <class F, class... A>
auto op(std::string_view name, F&& f, A&&... args) {
  using P = detail::first_policy_t<A...>;
  if constexpr (std::is_void_v<P>) {
    return std::forward<F>(f)(std::forward<A>(args)...);
  } else {
    // Arguments are passed as lvalues: they are read again afterwards to record the operands.
    auto run = [&] { return std::forward<F>(f)(detail::to_plain(args)...); };
    if constexpr (P::records_graph) {
      if (detail::Session* s = detail::current_session()) {
        const std::string_view interned = s->intern(name);
        const std::uint64_t start = s->op_clock != nullptr ? detail::ticks() : 0;
        auto out = [&] {
          try {
            return run();
          } catch (...) {
            detail::throw_failure(*s, interned);
          }
        }();
        const std::uint64_t end = s->op_clock != nullptr ? detail::ticks() : 0;
        std::vector<NodeId> ins;
        (detail::collect_tree<P>(*s, args, ins), ...);
        const NodeId fn = detail::record_function(*s, interned, ins, false);
        if (s->op_clock != nullptr) s->op_clock->op(s->graph, fn, start, end);
        return detail::wrap<P>(s, fn, std::move(out));
      }
    }
    return detail::wrap<P>(nullptr, NodeId{}, run());
  }
}

}  // namespace recorder
