#pragma once
/// RecorderTensor: an `at::Tensor` plus its node in the current recording; its ops record themselves.

#include <recorder/fwd.hpp>
#include <recorder/policies/recording.hpp>
#include <recorder/tensor/nested.hpp>
#include <recorder/tensor/ops_table.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/where.h>

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

/// A tensor the model code can be written against: `torch::Tensor` or a `RecorderTensor<P>`.
///
/// ```
/// template <recorder::tensor_like T>
/// T forward(T x) { return relu(fc(x)); }
/// ```
template <class T>
concept tensor_like = std::same_as<std::remove_cvref_t<T>, at::Tensor> || is_recorder_tensor_v<T>;

namespace detail {

struct NoRef {};

/// What a `RecorderTensor<P>` keeps besides its tensor: a node reference, or nothing when off.
template <class P>
using ref_t = std::conditional_t<P::records_graph, NodeRef, NoRef>;

struct adopt_t {
  explicit adopt_t() = default;
};
inline constexpr adopt_t adopt{};

/// Private access to `RecorderTensor` for the recording machinery.
struct Access {
  template <class P>
  static at::Tensor& tensor(RecorderTensor<P>& r) noexcept {
    return r.t_;
  }
  template <class P>
  static const ref_t<P>& ref(const RecorderTensor<P>& r) noexcept {
    return r.ref_;
  }
  template <class P>
  static void set_ref(RecorderTensor<P>& r, const ref_t<P>& ref) noexcept {
    r.ref_ = ref;
  }
};

/// A tensor operand: a `RecorderTensor<P>` or a plain `at::Tensor` (recorded as a constant or
/// parameter node). Only lives for the duration of one call.
template <recording_policy P>
class TensorArg {
 public:
  TensorArg(const RecorderTensor<P>& r) noexcept;      // NOLINT: implicit by design
  TensorArg(const at::Tensor& t) noexcept : t_(&t) {}  // NOLINT: implicit by design

  const at::Tensor& tensor() const noexcept { return *t_; }
  const ref_t<P>& ref() const noexcept { return ref_; }

 private:
  const at::Tensor* t_;
  [[no_unique_address]] ref_t<P> ref_{};
};

/// A list of traced tensors for `cat` and `stack`.
template <recording_policy P>
class TensorListArg {
 public:
  TensorListArg(const std::vector<RecorderTensor<P>>& v) { add(v.begin(), v.end()); }     // NOLINT
  TensorListArg(std::initializer_list<RecorderTensor<P>> v) { add(v.begin(), v.end()); }  // NOLINT

  at::TensorList tensors() const noexcept { return tensors_; }
  const std::vector<ref_t<P>>& refs() const noexcept { return refs_; }

 private:
  template <class It>
  void add(It first, It last) {
    tensors_.reserve(static_cast<std::size_t>(last - first));
    refs_.reserve(static_cast<std::size_t>(last - first));
    for (; first != last; ++first) {
      tensors_.push_back(first->tensor());
      refs_.push_back(Access::ref(*first));
    }
  }
  std::vector<at::Tensor> tensors_;
  std::vector<ref_t<P>> refs_;
};

template <class P>
const at::Tensor& unwrap(const TensorArg<P>& a) noexcept {
  return a.tensor();
}
template <class P>
at::TensorList unwrap(const TensorListArg<P>& a) noexcept {
  return a.tensors();
}
template <class T>
const T& unwrap(const T& x) noexcept {
  return x;
}

template <class P>
void collect(Session& s, const TensorArg<P>& a, std::vector<NodeId>& out) {
  out.push_back(operand_node(s, a.tensor(), a.ref()));
}
template <class P>
void collect(Session& s, const TensorListArg<P>& a, std::vector<NodeId>& out) {
  const at::TensorList ts = a.tensors();
  for (std::size_t i = 0; i < ts.size(); ++i) out.push_back(operand_node(s, ts[i], a.refs()[i]));
}
template <class T>
void collect(Session&, const T&, std::vector<NodeId>&) noexcept {}

template <class T>
inline constexpr bool always_false = false;

/// Wraps an op's result: each tensor becomes a `RecorderTensor<P>` with a node produced by `fn`
/// (when recording), nested tuples and vectors are rebuilt around them.
template <class P, class Out>
auto wrap(Session* s, NodeId fn, Out&& out) {
  auto one = [s, fn](auto&& t) {
    using T = std::remove_cvref_t<decltype(t)>;
    if constexpr (std::is_same_v<T, at::Tensor>) {
      if constexpr (P::records_graph) {
        if (s != nullptr) {
          const NodeId n = record_output(*s, fn, t);
          return RecorderTensor<P>(adopt, std::forward<decltype(t)>(t), s->ref(n));
        }
      }
      return RecorderTensor<P>(adopt, std::forward<decltype(t)>(t), ref_t<P>{});
    } else {
      static_assert(always_false<T>,
                    "recorder: a traced op returned a non-tensor leaf (a number, a string, ...): "
                    "recorder::op(name, f, args...) records callables that return tensors, or "
                    "tuples and vectors of them. For a value that is not a tensor, call f outside "
                    "the trace on plain tensors (`f(x.tensor())`), or return it as a tensor");
    }
  };
  return map_leaves(std::forward<Out>(out), one);
}

/// Runs `f(args...)`; if it throws, records the failure and rethrows it as a `TraceError`.
template <class F, class... A>
auto call_guarded(Session& s, std::string_view op, F& f, const A&... a) {
  try {
    return f(unwrap(a)...);
  } catch (...) {
    throw_failure(s, op);
  }
}

/// The core of every out-of-place traced op: compute with libtorch, then record one function
/// node with edges from its tensor operands and to its outputs. With recording off (or no
/// session) it is the plain libtorch call.
template <class P, class F, class... A>
auto invoke(std::string_view op, F f, const A&... a) {
  if constexpr (!P::records_graph) {
    return wrap<P>(nullptr, NodeId{}, f(unwrap(a)...));
  } else {
    Session* s = current_session();
    if (s == nullptr) return wrap<P>(nullptr, NodeId{}, f(unwrap(a)...));
    const std::uint64_t start = s->op_clock != nullptr ? ticks() : 0;
    auto out = call_guarded(*s, op, f, a...);
    const std::uint64_t end = s->op_clock != nullptr ? ticks() : 0;
    std::vector<NodeId>& ins = s->scratch;
    ins.clear();
    (collect(*s, a, ins), ...);
    const NodeId fn = record_function(*s, op, ins, false);
    if (s->op_clock != nullptr) s->op_clock->op(s->graph, fn, start, end);
    return wrap<P>(s, fn, std::move(out));
  }
}

/// The core of every in-place traced op: the op node consumes the tensor's current node and
/// the tensor's node advances to the op's output (as torchview does).
template <class P, class F, class... A>
RecorderTensor<P>& invoke_inplace(std::string_view op, RecorderTensor<P>& self, F f,
                                  const A&... a) {
  at::Tensor& t = Access::tensor(self);
  if constexpr (!P::records_graph) {
    f(t, unwrap(a)...);
    return self;
  } else {
    Session* s = current_session();
    if (s == nullptr) {
      f(t, unwrap(a)...);
      return self;
    }
    const std::uint64_t start = s->op_clock != nullptr ? ticks() : 0;
    try {
      f(t, unwrap(a)...);
    } catch (...) {
      throw_failure(*s, op);
    }
    const std::uint64_t end = s->op_clock != nullptr ? ticks() : 0;
    std::vector<NodeId>& ins = s->scratch;
    ins.clear();
    ins.push_back(operand_node(*s, t, Access::ref(self)));
    (collect(*s, a, ins), ...);
    const NodeId fn = record_function(*s, op, ins, true);
    if (s->op_clock != nullptr) s->op_clock->op(s->graph, fn, start, end);
    Access::set_ref(self, s->ref(record_output(*s, fn, t)));
    return self;
  }
}

}  // namespace detail

#define RECORDER_COMMA_LIST(...) __VA_OPT__(, ) __VA_ARGS__

/// A tensor that records every op applied to it into the thread's current recording.
///
/// It holds an `at::Tensor` by composition (it is not one): an op without a traced overload is
/// a compile error, never a silent escape from the trace. `.tensor()` is the explicit way out.
/// Ops come from the table in `ops_table.hpp`: methods (`x.view({2, -1})`), free functions
/// found by ADL (`relu(x)`, `matmul(a, b)`), operators, and in-place methods (`x.add_(y)`).
/// Operands may mix `RecorderTensor`s, plain tensors (recorded as constants or parameters) and
/// scalars. With `record::Off` every op compiles to the plain libtorch call.
template <class P>  // any P, checked below: a misuse names the missing part of recording_policy
class RecorderTensor {
  static_assert(check_recording_policy<P>());

 public:
  using policy_type = P;
  using Arg = detail::TensorArg<P>;
  using ListArg = detail::TensorListArg<P>;

  RecorderTensor() = default;
  RecorderTensor(detail::adopt_t, at::Tensor t, const detail::ref_t<P>& r) noexcept
      : t_(std::move(t)), ref_(r) {}

  /// The underlying tensor: the explicit way out of the traced world.
  const at::Tensor& tensor() const& noexcept { return t_; }
  at::Tensor tensor() && noexcept { return std::move(t_); }

  /// The node of this tensor in the recording it came from (invalid when not recorded).
  NodeId node() const noexcept {
    if constexpr (P::records_graph)
      return ref_.node;
    else
      return NodeId{};
  }

  // ---- metadata: read directly, never recorded -------------------------------------------
  at::IntArrayRef sizes() const { return t_.sizes(); }
  int64_t size(int64_t dim) const { return t_.size(dim); }
  int64_t dim() const { return t_.dim(); }
  int64_t numel() const { return t_.numel(); }
  at::ScalarType scalar_type() const { return t_.scalar_type(); }
  caffe2::TypeMeta dtype() const { return t_.dtype(); }
  at::Device device() const { return t_.device(); }
  at::TensorOptions options() const { return t_.options(); }
  bool defined() const { return t_.defined(); }
  bool requires_grad() const { return t_.requires_grad(); }

  // ---- traced methods --------------------------------------------------------------------
#define RECORDER_DEFINE_METHOD(name, params, args)                                         \
  auto name params const {                                                                 \
    return detail::invoke<P>(                                                              \
        #name, [](const at::Tensor& self_, const auto&... u) { return self_.name(u...); }, \
        Arg(*this) RECORDER_COMMA_LIST args);                                              \
  }
  RECORDER_METHOD_AND_FREE_OPS(RECORDER_DEFINE_METHOD)
  RECORDER_METHOD_OPS(RECORDER_DEFINE_METHOD)
#undef RECORDER_DEFINE_METHOD

#define RECORDER_DEFINE_INPLACE(name, params, args)                                          \
  RecorderTensor& name##_ params {                                                           \
    return detail::invoke_inplace<P>(#name, *this, [](at::Tensor& self_, const auto&... u) { \
      self_.name##_(u...);                                                                   \
    } RECORDER_COMMA_LIST args);                                                             \
  }
  RECORDER_INPLACE_CAPABLE_OPS(RECORDER_DEFINE_INPLACE)
#undef RECORDER_DEFINE_INPLACE

  /// `x[i]` is `x.select(0, i)`.
  RecorderTensor operator[](int64_t index) const { return select(0, index); }

  // ---- traced free functions, found by ADL ----------------------------------------------
#define RECORDER_DEFINE_FREE_VIA_METHOD(name, params, args)                                \
  friend auto name(Arg self RECORDER_COMMA_LIST params) {                                  \
    return detail::invoke<P>(                                                              \
        #name, [](const at::Tensor& self_, const auto&... u) { return self_.name(u...); }, \
        self RECORDER_COMMA_LIST args);                                                    \
  }
  RECORDER_METHOD_AND_FREE_OPS(RECORDER_DEFINE_FREE_VIA_METHOD)
#undef RECORDER_DEFINE_FREE_VIA_METHOD

#define RECORDER_DEFINE_FREE(name, params, args)                                                  \
  friend auto name(Arg self RECORDER_COMMA_LIST params) {                                         \
    return detail::invoke<P>(                                                                     \
        #name, [](const at::Tensor& self_, const auto&... u) { return ::at::name(self_, u...); }, \
        self RECORDER_COMMA_LIST args);                                                           \
  }
  RECORDER_FREE_OPS(RECORDER_DEFINE_FREE)
#undef RECORDER_DEFINE_FREE

#define RECORDER_DEFINE_LIST(name, params, args)                                         \
  friend RecorderTensor name(ListArg tensors RECORDER_COMMA_LIST params) {               \
    return detail::invoke<P>(                                                            \
        #name, [](at::TensorList ts, const auto&... u) { return ::at::name(ts, u...); }, \
        tensors RECORDER_COMMA_LIST args);                                               \
  }
  RECORDER_LIST_OPS(RECORDER_DEFINE_LIST)
#undef RECORDER_DEFINE_LIST

  friend RecorderTensor& relu_(RecorderTensor& x) { return x.relu_(); }

  // ---- operators (hidden friends) ------------------------------------------------------
#define RECORDER_DEFINE_OPERATOR(op, name, scalar_first)                                     \
  friend RecorderTensor operator op(Arg a, Arg b) {                                          \
    return detail::invoke<P>(                                                                \
        #name, [](const at::Tensor& x, const at::Tensor& y) { return x.name(y); }, a, b);    \
  }                                                                                          \
  friend RecorderTensor operator op(Arg a, const at::Scalar& b) {                            \
    return detail::invoke<P>(                                                                \
        #name, [](const at::Tensor& x, const at::Scalar& y) { return x.name(y); }, a, b);    \
  }                                                                                          \
  friend RecorderTensor operator op(const at::Scalar& a, Arg b) {                            \
    return detail::invoke<P>(                                                                \
        #name, [](const at::Scalar& x, const at::Tensor& y) { return scalar_first; }, a, b); \
  }                                                                                          \
  friend RecorderTensor& operator op##=(RecorderTensor& a, Arg b) { return a.name##_(b); }   \
  friend RecorderTensor& operator op##=(RecorderTensor& a, const at::Scalar& b) {            \
    return a.name##_(b);                                                                     \
  }
  RECORDER_DEFINE_OPERATOR(+, add, y.add(x))
  RECORDER_DEFINE_OPERATOR(*, mul, y.mul(x))
  RECORDER_DEFINE_OPERATOR(-, sub, ::at::empty_like(y, at::MemoryFormat::Preserve).fill_(x).sub_(y))
  RECORDER_DEFINE_OPERATOR(/, div, ::at::empty_like(y, at::MemoryFormat::Preserve).fill_(x).div_(y))
#undef RECORDER_DEFINE_OPERATOR

  friend RecorderTensor operator-(Arg a) {
    return detail::invoke<P>(
        "neg", [](const at::Tensor& x) { return x.neg(); }, a);
  }

 private:
  friend struct detail::Access;
  at::Tensor t_;
  [[no_unique_address]] detail::ref_t<P> ref_{};
};

#undef RECORDER_COMMA_LIST

template <recording_policy P>
detail::TensorArg<P>::TensorArg(const RecorderTensor<P>& r) noexcept
    : t_(&r.tensor()), ref_(Access::ref(r)) {}

/// `cat` over a braced list, for generic code: `recorder::cat({a, b}, 1)` works for
/// `torch::Tensor` and `RecorderTensor` alike.
template <tensor_like T>
std::remove_cvref_t<T> cat(std::initializer_list<T> ts, int64_t dim = 0) {
  if constexpr (is_recorder_tensor_v<T>)
    return cat(std::vector<std::remove_cvref_t<T>>(ts), dim);
  else
    return at::cat(ts, dim);
}
/// `stack` over a braced list; see `cat`.
template <tensor_like T>
std::remove_cvref_t<T> stack(std::initializer_list<T> ts, int64_t dim = 0) {
  if constexpr (is_recorder_tensor_v<T>)
    return stack(std::vector<std::remove_cvref_t<T>>(ts), dim);
  else
    return at::stack(ts, dim);
}

/// Brings a tensor made inside a generic forward (an initial RNN state from `torch::zeros`, a
/// mask) into `T`'s world: `t` itself for `torch::Tensor`; for a `RecorderTensor`, a tensor
/// recorded as a constant node (a parameter node if it is a leaf that requires grad).
///
/// ```
/// T hx = recorder::constant<T>(torch::zeros({batch, hidden}));
/// ```
template <tensor_like T>
std::remove_cvref_t<T> constant(at::Tensor t) {
  using R = std::remove_cvref_t<T>;
  if constexpr (!is_recorder_tensor_v<R>) {
    return t;
  } else {
    using P = typename R::policy_type;
    if constexpr (P::records_graph) {
      if (detail::Session* s = detail::current_session()) {
        const NodeId n = detail::operand_node(*s, t, detail::NodeRef{});
        return R(detail::adopt, std::move(t), s->ref(n));
      }
    }
    return R(detail::adopt, std::move(t), detail::ref_t<P>{});
  }
}

/// The plain tensor behind `x`: `x` itself for a `torch::Tensor`, `x.tensor()` otherwise.
template <tensor_like T>
const at::Tensor& plain(const T& x) noexcept {
  if constexpr (is_recorder_tensor_v<T>)
    return x.tensor();
  else
    return x;
}

}  // namespace recorder
