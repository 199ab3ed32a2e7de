/// Builds a tiny graph through the installed headers and checks what the views count.

#include <recorder/config.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/graph/views.hpp>

#include <cstdint>
#include <ranges>
#include <iostream>
#include <vector>

int main() {
  using recorder::NodeKind;
  recorder::Graph g;
  const std::vector<std::int64_t> shape{1, 4};

  recorder::ModuleInfo net_info;
  net_info.name = net_info.class_name = "Net";
  recorder::ModuleInfo fc_info;
  fc_info.path = fc_info.name = "fc";
  fc_info.class_name = "Linear";
  auto root = g.add_module(net_info);
  auto fc = g.add_module(fc_info);
  auto x = g.add_tensor(NodeKind::input, {}, 0, shape, "Float", "cpu", {}, "x");
  auto net = g.add_module_call(root, {}, 0, {x});
  auto lin = g.add_module_call(fc, net, 1, {x});
  auto h = g.add_tensor(NodeKind::tensor, lin, 1, shape, "Float", "cpu", lin);
  auto relu = g.add_function("relu", net, 1);
  auto y = g.add_tensor(NodeKind::output, net, 1, shape, "Float", "cpu", relu, "y");
  g.add_edge(x, lin);
  g.add_edge(lin, h);
  g.add_edge(h, relu);
  g.add_edge(relu, y);

  const auto tensors = recorder::views::count(g, NodeKind::tensor);
  const auto calls = std::ranges::distance(recorder::views::module_calls(g));
  const auto relus = std::ranges::distance(recorder::views::functions_named(g, "relu"));

  std::cout << "recorder " << recorder::version << ": " << g.size() << " nodes, " << g.edge_count()
            << " edges, " << calls << " module calls, " << tensors << " intermediate tensor, "
            << relus << " relu\n";

  const bool ok = g.size() == 6 && g.edge_count() == 4 && calls == 2 && tensors == 1 && relus == 1;
  if (!ok) std::cerr << "consumer: unexpected counts\n";
  return ok ? 0 : 1;
}
