/// Compile-only checks of the module adapter concepts: which holders are composite, leaf,
/// Sequential, or fit no adapter (needs torch/nn).
#include <boost/test/unit_test.hpp>

#include <recorder/adapters/module.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <torch/nn/modules/linear.h>

#include <string>

namespace {

using RG = recorder::RecorderTensor<recorder::record::Structure>;
using RO = recorder::RecorderTensor<recorder::record::Off>;

struct BlockImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(4, 4))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return relu(fc(x));
  }
};
TORCH_MODULE(Block);

struct PairImpl : torch::nn::Module {  // composite with two tensor arguments
  template <recorder::tensor_like T>
  T forward(T a, T b) {
    return a + b;
  }
};
TORCH_MODULE(Pair);

struct NamedImpl : torch::nn::Module {  // fits no adapter
  at::Tensor forward(const std::string& name);
};
TORCH_MODULE(Named);

using recorder::composite_module;
using recorder::leaf_module;
using recorder::sequential_module;
using recorder::traceable_module;
using Linear = torch::nn::Linear;

// A leaf: its forward takes torch::Tensor.
static_assert(leaf_module<Linear, RG>);
static_assert(leaf_module<Linear, const RG&>);
static_assert(!composite_module<Linear, RG>);
static_assert(!composite_module<Linear, const RG&>);
static_assert(traceable_module<Linear, RG>);
static_assert(leaf_module<Linear, RO>);
static_assert(!sequential_module<Linear>);

// A composite: its forward is templated on the tensor type (also callable with plain tensors).
static_assert(composite_module<Block, RG>);
static_assert(composite_module<Block, const RG&>);
static_assert(composite_module<Block, RO>);
static_assert(composite_module<Block, at::Tensor>);
static_assert(traceable_module<Block, RG>);
static_assert(!sequential_module<Block>);
static_assert(composite_module<Pair, RG, RG>);
static_assert(!composite_module<Pair, RG>);  // arity matters
static_assert(!leaf_module<Pair, RG>);

// Sequential is walked.
static_assert(sequential_module<torch::nn::Sequential>);
static_assert(traceable_module<torch::nn::Sequential, RG>);

// Neither.
static_assert(!composite_module<Named, RG>);
static_assert(!leaf_module<Named, RG>);
static_assert(!traceable_module<Named, RG>);
static_assert(!traceable_module<Linear, int>);

// A recorder::Module holder is called like the module: plain in, plain out; traced in, traced out.
static_assert(
    std::is_same_v<decltype(std::declval<recorder::Module<Linear>&>()(std::declval<at::Tensor>())),
                   at::Tensor>);
static_assert(std::is_same_v<
              decltype(std::declval<recorder::Module<Linear>&>()(std::declval<const RG&>())), RG>);
static_assert(std::is_same_v<
              decltype(std::declval<recorder::Module<Block>&>()(std::declval<const RG&>())), RG>);
static_assert(
    std::is_same_v<decltype(std::declval<recorder::Module<Block>&>()(std::declval<at::Tensor>())),
                   at::Tensor>);

}  // namespace

BOOST_AUTO_TEST_CASE(module_concepts_compile) { BOOST_TEST(true); }
