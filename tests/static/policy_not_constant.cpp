/// `recording_policy<P>` is false, not a hard error, when `P::records_graph` is not a
/// constant expression (a regression test: it used to be ill-formed with a nested requirement).
#include <recorder/policies/concepts.hpp>

namespace {
struct NotConstant {
  using recording_policy_tag = void;
  static inline bool records_graph = true;
};
}  // namespace

static_assert(!recorder::recording_policy<NotConstant>);
static_assert(!recorder::declares_records_graph<NotConstant>);
