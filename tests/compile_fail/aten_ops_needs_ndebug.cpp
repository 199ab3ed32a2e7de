// EXPECT: recorder::record::AtenOps needs NDEBUG
/// record::AtenOps reads at::RecordFunction, whose layout differs without NDEBUG (libtorch is
/// built with it): a translation unit without NDEBUG is told so. The twin records the graph
/// only, which any build can.
#ifndef RECORDER_COMPILE_FAIL_TWIN
#undef NDEBUG
#endif
#include <recorder/tracer.hpp>

#include <torch/nn/modules/linear.h>

#ifdef RECORDER_COMPILE_FAIL_TWIN
using Policy = recorder::record::Structure;
#else
using Policy = recorder::record::AtenOps;
#endif

auto trace(torch::nn::Linear& fc, const at::Tensor& x) {
  return recorder::Tracer<Policy>{}.run(fc, x);
}
