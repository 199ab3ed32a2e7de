/// Compile-only checks of the tensor and policy concepts (positive and negative cases).
/// The value is in compiling: the test body is trivial.
#define BOOST_TEST_MODULE static_checks
#include <boost/test/unit_test.hpp>

#include <recorder/fwd.hpp>
#include <recorder/policies/concepts.hpp>
#include <recorder/policies/recording.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <type_traits>

namespace {

using recorder::recording_policy;
using recorder::tensor_like;
namespace record = recorder::record;
using RG = recorder::RecorderTensor<record::Structure>;
using RO = recorder::RecorderTensor<record::Off>;

// ---- tensor_like -----------------------------------------------------------------------
static_assert(tensor_like<at::Tensor>);
static_assert(tensor_like<const at::Tensor&>);
static_assert(tensor_like<RG>);
static_assert(tensor_like<const RG&>);
static_assert(tensor_like<RO>);
static_assert(!tensor_like<int>);
static_assert(!tensor_like<double>);
static_assert(!tensor_like<at::Scalar>);
static_assert(!tensor_like<c10::optional<at::Tensor>>);
static_assert(!tensor_like<std::vector<at::Tensor>>);
static_assert(!tensor_like<std::vector<RG>>);

// ---- is_recorder_tensor_v --------------------------------------------------------------
static_assert(recorder::is_recorder_tensor_v<RG>);
static_assert(recorder::is_recorder_tensor_v<const RG&>);
static_assert(recorder::is_recorder_tensor_v<RG&&>);
static_assert(recorder::is_recorder_tensor_v<RO>);
static_assert(!recorder::is_recorder_tensor_v<at::Tensor>);
static_assert(!recorder::is_recorder_tensor_v<int>);
static_assert(!recorder::is_recorder_tensor_v<RG*>);

// ---- recording_policy --------------------------------------------------------------------
struct NoTag {  // has records_graph, but never opted in
  static constexpr bool records_graph = true;
};
struct TagOnly {  // opted in, but says nothing about the graph
  using recording_policy_tag = void;
};
struct NotBool {  // records_graph is not convertible to bool
  using recording_policy_tag = void;
  struct Opaque {};
  static constexpr Opaque records_graph{};
};
struct Custom {  // the example of concepts.hpp
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
};

static_assert(recording_policy<record::Structure>);
static_assert(recording_policy<record::Off>);
static_assert(recording_policy<Custom>);
static_assert(recording_policy<record::All<record::Structure, record::Off>>);
static_assert(recording_policy<record::All<record::Off>>);
static_assert(recording_policy<record::All<>>);
static_assert(!recording_policy<int>);
static_assert(!recording_policy<void>);
static_assert(!recording_policy<NoTag>);
static_assert(!recorder::tagged_recording_policy<NoTag>);
static_assert(recorder::declares_records_graph<NoTag>);
static_assert(!recording_policy<TagOnly>);
static_assert(recorder::tagged_recording_policy<TagOnly>);
static_assert(!recorder::declares_records_graph<TagOnly>);
static_assert(!recording_policy<NotBool>);
// The checker Tracer and RecorderTensor call: true for every model (what it says for a type
// that is not one: tests/compile_fail/recording_policy_*.cpp, tracer_not_a_policy.cpp, ...).
static_assert(recorder::check_recording_policy<record::Structure>() &&
              recorder::check_recording_policy<record::Off>() &&
              recorder::check_recording_policy<record::AtenOps>() &&
              recorder::check_recording_policy<Custom>() &&
              recorder::check_recording_policy<record::All<record::Structure, record::Off>>());

static_assert(record::Structure::records_graph);
static_assert(!record::Off::records_graph);
static_assert(record::All<record::Structure, record::Off>::records_graph);
static_assert(record::All<record::Off, record::Structure>::records_graph);
static_assert(!record::All<record::Off>::records_graph);
static_assert(!record::All<>::records_graph);
static_assert(record::All<record::Structure, record::Off>::has<record::Structure>);
static_assert(record::All<record::Structure, record::Off>::has<record::Off>);
static_assert(!record::All<record::Off>::has<record::Structure>);
static_assert(std::is_same_v<record::combine_t<record::Structure>, record::Structure>);
static_assert(std::is_same_v<record::combine_t<record::Structure, record::Off>,
                             record::All<record::Structure, record::Off>>);
static_assert(std::is_empty_v<record::Structure> && std::is_empty_v<record::Off>);

// ---- RecorderTensor is a wrapper, never an at::Tensor ------------------------------------
static_assert(!std::is_convertible_v<RG, at::Tensor>);
static_assert(!std::is_convertible_v<const RG&, const at::Tensor&>);
static_assert(!std::is_convertible_v<RO, at::Tensor>);
static_assert(!std::is_base_of_v<at::Tensor, RG>);
static_assert(!std::is_base_of_v<at::Tensor, RO>);
static_assert(!std::is_convertible_v<at::Tensor, RG>);  // entering the trace is explicit too
static_assert(!std::is_convertible_v<RG, RO> && !std::is_convertible_v<RO, RG>);
static_assert(!std::is_convertible_v<RG, at::Scalar>);
static_assert(std::is_same_v<RG::policy_type, record::Structure>);
static_assert(std::is_same_v<decltype(std::declval<const RG&>().tensor()), const at::Tensor&>);
static_assert(std::is_same_v<decltype(std::declval<RG&&>().tensor()), at::Tensor>);
static_assert(std::is_nothrow_move_constructible_v<RG>);
static_assert(std::is_copy_constructible_v<RG> && std::is_default_constructible_v<RG>);

// record::Off costs nothing beyond the tensor; Graph adds a node reference.
static_assert(sizeof(RO) == sizeof(at::Tensor));
static_assert(sizeof(RG) > sizeof(at::Tensor));

// ---- what ops return ---------------------------------------------------------------------
static_assert(std::is_same_v<decltype(relu(std::declval<const RG&>())), RG>);
static_assert(std::is_same_v<decltype(std::declval<const RG&>() + 1.0), RG>);
static_assert(
    std::is_same_v<decltype(std::declval<const RG&>() * std::declval<const at::Tensor&>()), RG>);
static_assert(std::is_same_v<decltype(std::declval<RG&>() += 1.0), RG&>);
static_assert(std::is_same_v<decltype(std::declval<RG&>().relu_()), RG&>);
static_assert(
    std::is_same_v<decltype(max(std::declval<const RG&>(), int64_t{1})), std::tuple<RG, RG>>);
static_assert(std::is_same_v<decltype(std::declval<const RG&>().chunk(2)), std::vector<RG>>);
static_assert(
    std::is_same_v<decltype(recorder::cat({std::declval<RG>(), std::declval<RG>()})), RG>);
static_assert(std::is_same_v<decltype(recorder::cat({std::declval<at::Tensor>()})), at::Tensor>);
static_assert(std::is_same_v<decltype(relu(std::declval<const RO&>())), RO>);
static_assert(
    std::is_same_v<decltype(recorder::plain(std::declval<const RG&>())), const at::Tensor&>);

}  // namespace

BOOST_AUTO_TEST_CASE(concepts_compile) { BOOST_TEST(true); }
