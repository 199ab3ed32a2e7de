// EXPECT: recorder::LayerAddress: a bare integer is ambiguous\. Write recorder::by_index\(5\)
/// A layer address is never a bare integer: it could mean an execution index or a label.
#include <recorder/graph/address.hpp>

#ifdef RECORDER_COMPILE_FAIL_TWIN
recorder::LayerAddress layer() { return recorder::by_index(5); }
#else
recorder::LayerAddress layer() { return 5; }
#endif
