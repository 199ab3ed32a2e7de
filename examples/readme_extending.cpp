#include <recorder/recorder.hpp>

#include <iostream>

// A render backend: any type with a static `render` and an `extension`.
struct EdgeList {
  static constexpr std::string_view extension = ".txt";
  static void render(const recorder::Trace& trace, const recorder::RenderOptions& options,
                     std::ostream& os) {
    const auto picture = recorder::visible_graph(trace.graph, options);
    for (const auto& e : picture.edges)
      os << trace.graph.label(picture.nodes[e.from].node) << " -> "
         << trace.graph.label(picture.nodes[e.to].node) << "\n";
  }
};
static_assert(recorder::render_backend<EdgeList>);

// A recording policy: a tag and what it records (later policies add hooks).
struct GraphOnly {
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
};
static_assert(recorder::recording_policy<GraphOnly>);

// A reduction policy: how a recorded tensor is folded over many forwards.
struct AbsMax {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "abs_max";
  static constexpr bool constant_memory = true;
  template <class T>
  struct state {
    T peak;
    std::uint64_t count = 0;
  };
  template <class T>
  state<T> init(const T& x) const {
    return {x.detach().abs(), 1};
  }
  template <class T>
  void update(state<T>& s, const T& x) const {
    s.peak = torch::maximum(s.peak, x.detach().abs());
    ++s.count;
  }
  template <class T>
  T result(const state<T>& s) const {
    return s.peak;
  }
  template <class T>
  std::uint64_t count(const state<T>& s) const {
    return s.count;
  }
};
static_assert(recorder::reduce::reduction<AbsMax, torch::Tensor>);

// An op the table does not cover, recorded as one function node.
struct ScaledImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(4, 4))};
  template <recorder::tensor_like T>
  T forward(T x) {
    T y = fc(x);
    return recorder::op(
        "erf", [](const torch::Tensor& t) { return torch::erf(t); }, y);
  }
};
TORCH_MODULE(Scaled);

int main() {
  Scaled model;
  auto trace = recorder::Tracer<GraphOnly>{}.run(model, torch::randn({2, 4}));
  recorder::render<EdgeList>(trace, {.depth = 1}, std::cout);

  recorder::record::ForwardOutput<AbsMax> peaks({"fc"});  // a handle: copies share the recording
  recorder::Tracer<recorder::record::ForwardOutput<AbsMax>> tracer({}, peaks);
  for (int i = 0; i < 3; ++i) tracer.run(model, torch::randn({2, 4}));
  std::cout << "fc: peak |output| " << peaks["fc"].result().sizes() << " over "
            << peaks["fc"].samples() << " forwards\n";
}
