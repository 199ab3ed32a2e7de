// EXPECT: recorder::where: the predicate must be callable as bool\(const recorder::Graph&, recorder::NodeId call\)
/// `where` takes a predicate on (graph, call): a predicate on something else is named as such.
#include <recorder/graph/address.hpp>

#ifdef RECORDER_COMPILE_FAIL_TWIN
recorder::LayerAddress layer() {
  return recorder::where(
      [](const recorder::Graph& g, recorder::NodeId c) { return g.module_of(c).leaf; }, "leaves");
}
#else
recorder::LayerAddress layer() {
  return recorder::where([](int depth) { return depth > 1; }, "deep");
}
#endif
