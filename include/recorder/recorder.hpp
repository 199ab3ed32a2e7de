#pragma once
/// Umbrella header: libtorch, the traced tensor, module adapters, the tracer, activation
/// recording and every renderer. Two features have headers of their own, each adding a part of
/// libtorch that costs every translation unit including it: tracing TorchScript models
/// (`<recorder/script.hpp>`, which includes this one) and saving recordings
/// (`<recorder/capture/save.hpp>`, libtorch's pickler).

#include <torch/torch.h>

#include <recorder/config.hpp>
#include <recorder/error.hpp>
#include <recorder/file_error.hpp>
#include <recorder/fwd.hpp>
#include <recorder/graph/address.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/graph/mult_adds.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/graph/views.hpp>
#include <recorder/policies/concepts.hpp>
#include <recorder/policies/recording.hpp>
#include <recorder/policies/reduction.hpp>
#include <recorder/render/call_times.hpp>
#include <recorder/render/concepts.hpp>
#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/mermaid.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/dot_styler.hpp>
#include <recorder/render/summary.hpp>
#include <recorder/render/summary_options.hpp>
#include <recorder/render/svg.hpp>
#include <recorder/render/time_dot.hpp>
#include <recorder/render/visible.hpp>
#include <recorder/observe/observer.hpp>
#include <recorder/tensor/op.hpp>
#include <recorder/tensor/recorder_tensor.hpp>
#include <recorder/capture/activations.hpp>
#include <recorder/adapters/containers.hpp>
#include <recorder/adapters/module.hpp>
#include <recorder/front/tracer.hpp>
