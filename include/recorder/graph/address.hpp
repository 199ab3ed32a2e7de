#pragma once
/// Layer addresses: one value that selects module calls of a trace (label, path, class, ...).
///
/// Five ways to name a layer, all usable wherever a layer is selected:
///
/// | spelling                      | selects                                               |
/// |-------------------------------|-------------------------------------------------------|
/// | `"2-3"`, `{2, 3}`             | torchinfo's depth-index label: depth 2, 3rd call there |
/// | `"layer1.0.conv1"`            | every call of the module with that registered path    |
/// | `"layer1.0.relu#1"`           | one call of it: `#k` is the 0-based call index         |
/// | `""`, `"<root>"`              | the root call                                          |
/// | `by_path("2-3")`              | a path, even one that looks like a label               |
/// | `by_class("Conv2d")`          | every call of a module of that class                   |
/// | `by_index(5)`                 | the 6th module call in call order (0-based, root excluded) |
/// | `where(pred)`                 | every call for which `pred(graph, call)` is true       |
/// | `all_layers()`                | every call below the root                              |
///
/// A string matching `^\d+-\d+$` is a depth-index label, any other string is a path.
/// `matches(address, facts)` is what each selector means, for one call; `resolve` gives the
/// calls of a graph it matches, in call order; an address that matches nothing throws
/// `UnknownLayer`, whose message lists the nearest valid addresses.
///
/// **A module called several times.** A bare path selects every call of its module, as
/// torchfunc records every call of a hooked module. Each call stays its own layer, addressed
/// alone as `path#0`, `path#1`, ... (`path_address`): that is its row in the summary (with its
/// own depth-index label), its record's key in an activation recording (one record per call,
/// never merged: calls may differ in shape) and its key in saved files. Looking a recording
/// up by the bare path (`acts["fc"]`), like `resolve_one(g, "fc")`, throws `AmbiguousLayer`
/// naming the per-call keys ("fc#0, fc#1"). A module called once has the bare path as key.

#include <recorder/graph/graph.hpp>
#include <recorder/graph/views.hpp>

#include <algorithm>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace recorder {

/// The selectors a `LayerAddress` holds, one per way of naming a layer.
namespace address {

/// torchinfo's depth-index label `depth-index` (`CallData::depth_index` at node depth `depth`).
struct Label {
  std::int64_t depth;
  std::int64_t index;
};

/// A registered module path ("" is the root); with `call`, only that call (0-based).
struct Path {
  std::string path;
  std::optional<std::uint32_t> call;
};

/// A module class name as `ModuleInfo::class_name` spells it ("Conv2d").
struct Class {
  std::string name;
};

/// The position of a call among all module calls but the root, in call order, 0-based.
struct Index {
  std::size_t index;
};

/// A user predicate over module calls; `description` is what `to_string` prints.
struct Predicate {
  std::function<bool(const Graph&, NodeId)> test;
  std::string description;
};

}  // namespace address

/// A predicate usable with `where`: callable as `bool(const Graph&, NodeId call)`.
template <class F>
concept layer_predicate =
    std::copy_constructible<std::decay_t<F>> && std::predicate < const std::decay_t<F>
&, const Graph&, NodeId > ;

/// Selects module calls of a trace; see the table at the top of this header.
///
/// Needs nothing but its spelling; it is resolved against a `Graph` by `resolve`.
/// Example: `resolve(trace.graph, "layer1.0.conv1")`, `resolve_one(g, {3, 18})`.
class LayerAddress {
 public:
  using Selector = std::variant<address::Label, address::Path, address::Class, address::Index,
                                address::Predicate>;

  /// The root call.
  LayerAddress() : selector_(address::Path{}) {}

  /// Parses `"2-3"` as a depth-index label, anything else as a path (`"layer1.0.relu#1"`).
  LayerAddress(std::string_view spelling) : selector_(parse(spelling)) {}  // NOLINT: implicit
  LayerAddress(const char* spelling) : LayerAddress(std::string_view(spelling)) {}         // NOLINT
  LayerAddress(const std::string& spelling) : LayerAddress(std::string_view(spelling)) {}  // NOLINT

  /// The depth-index label `depth-index`: `{2, 3}` is `"2-3"`.
  LayerAddress(std::int64_t depth, std::int64_t index)  // NOLINT: implicit, for `{2, 3}`
      : selector_(address::Label{depth, index}) {}

  /// Any selector, spelled out: `LayerAddress(address::Class{"Conv2d"})`.
  explicit LayerAddress(Selector s) : selector_(std::move(s)) {}

  /// A bare integer is a predictable mistake: it could mean an execution index or a label.
  template <std::integral I>
  LayerAddress(I) {  // NOLINT
    static_assert(sizeof(I) == 0,
                  "recorder::LayerAddress: a bare integer is ambiguous. Write "
                  "recorder::by_index(5) for the 6th module call (0-based, root excluded), or "
                  "{2, 3} / \"2-3\" for torchinfo's depth-index label.");
  }
  LayerAddress(std::nullptr_t) = delete;

  const Selector& selector() const noexcept { return selector_; }

  /// The parse rule of the string constructor: `^\d+-\d+$` is a label, else a path.
  static Selector parse(std::string_view s) {
    if (auto label = parse_label(s)) return *label;
    if (s == "<root>") return address::Path{};
    address::Path p;
    const auto hash = s.rfind('#');
    if (hash != std::string_view::npos && hash + 1 < s.size() && all_digits(s.substr(hash + 1))) {
      std::uint32_t call = std::numeric_limits<std::uint32_t>::max();
      const auto tail = s.substr(hash + 1);
      std::from_chars(tail.data(), tail.data() + tail.size(), call);  // too large: never matches
      p.call = call;
      s = s.substr(0, hash);
      if (s == "<root>") s = {};
    }
    p.path = std::string(s);
    return p;
  }

 private:
  static bool all_digits(std::string_view s) noexcept {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  static std::int64_t to_int(std::string_view s) noexcept {
    std::int64_t v = std::numeric_limits<std::int64_t>::max();  // too large: never matches
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  }
  static std::optional<address::Label> parse_label(std::string_view s) {
    const auto dash = s.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto d = s.substr(0, dash);
    const auto i = s.substr(dash + 1);
    if (!all_digits(d) || !all_digits(i)) return std::nullopt;
    return address::Label{to_int(d), to_int(i)};
  }

  Selector selector_;
};

/// The address of every call of the module with registered path `path`, even one that looks
/// like a depth-index label. Example: `by_path("2-3")` (a module registered as "2-3").
inline LayerAddress by_path(std::string path, std::optional<std::uint32_t> call = std::nullopt) {
  return LayerAddress(address::Path{std::move(path), call});
}

/// Every call of a module of class `class_name`. Example: `by_class("BatchNorm2d")`.
inline LayerAddress by_class(std::string class_name) {
  return LayerAddress(address::Class{std::move(class_name)});
}

/// The module call at position `index` (0-based) in call order, the root excluded.
/// Example: `by_index(0)` is the first layer the root calls (torchinfo's `1-1` row).
inline LayerAddress by_index(std::size_t index) { return LayerAddress(address::Index{index}); }

/// Every call for which `pred(graph, call)` is true; `description` names it in messages.
/// Example: `where([](const Graph& g, NodeId c) { return g.module_of(c).leaf; }, "leaves")`.
template <class F>
LayerAddress where(F&& pred, std::string description = "<predicate>") {
  static_assert(layer_predicate<F>,
                "recorder::where: the predicate must be callable as "
                "bool(const recorder::Graph&, recorder::NodeId call), e.g. "
                "where([](const Graph& g, NodeId c) { return g.module_of(c).leaf; })");
  if constexpr (layer_predicate<F>) {
    return LayerAddress(address::Predicate{
        std::function<bool(const Graph&, NodeId)>(std::forward<F>(pred)), std::move(description)});
  } else {
    return LayerAddress{};
  }
}

/// Every module call below the root (torchfunc records every submodule when given no layer).
/// Example: `record::ForwardOutput<reduce::Mean> outs({recorder::all_layers()})`.
inline LayerAddress all_layers() {
  return where([](const Graph& g, NodeId c) { return g.node(c).parent.valid(); }, "all layers");
}

namespace detail::address {

/// `std::visit(f, s)` for a selector, as a switch: the same calls for a fraction of what
/// `std::visit`'s dispatch tables cost to compile.
template <class F>
decltype(auto) visit(F&& f, const LayerAddress::Selector& s) {
  switch (s.index()) {
    case 0:
      return f(*std::get_if<0>(&s));
    case 1:
      return f(*std::get_if<1>(&s));
    case 2:
      return f(*std::get_if<2>(&s));
    case 3:
      return f(*std::get_if<3>(&s));
    default:
      return f(*std::get_if<4>(&s));
  }
}
static_assert(std::variant_size_v<LayerAddress::Selector> == 5, "visit: one case per selector");

}  // namespace detail::address

/// The canonical spelling: "2-3", "layer1.0.relu#1", "<root>", `by_class("Conv2d")`,
/// `by_index(5)`, `where(<description>)`, `by_path("2-3")` for a path that looks like a label.
inline std::string to_string(const LayerAddress& a) {
  struct Visitor {
    std::string operator()(const address::Label& l) const {
      return std::to_string(l.depth) + '-' + std::to_string(l.index);
    }
    std::string operator()(const address::Path& p) const {
      const bool looks_like_label =
          std::holds_alternative<address::Label>(LayerAddress::parse(p.path));
      std::string s = p.path.empty() ? std::string("<root>") : p.path;
      if (looks_like_label || p.path == "<root>") {
        s = "by_path(\"" + p.path + "\"";
        if (p.call) s += ", " + std::to_string(*p.call);
        return s + ')';
      }
      if (p.call) s += '#' + std::to_string(*p.call);
      return s;
    }
    std::string operator()(const address::Class& c) const { return "by_class(\"" + c.name + "\")"; }
    std::string operator()(const address::Index& i) const {
      return "by_index(" + std::to_string(i.index) + ')';
    }
    std::string operator()(const address::Predicate& p) const {
      return "where(" + p.description + ')';
    }
  };
  return detail::address::visit(Visitor{}, a.selector());
}

inline std::ostream& operator<<(std::ostream& os, const LayerAddress& a) {
  return os << to_string(a);
}

/// Thrown when an address matches no module call. `what()` names the address and lists the
/// nearest valid addresses, also given by `suggestions()` (nearest first, deterministic). When
/// several addresses of one selection match nothing, one `UnknownLayer` names each, on one line
/// (`unknown()` has them all; `address()` and `suggestions()` are the first's).
class UnknownLayer : public std::invalid_argument {
 public:
  UnknownLayer(std::string address, std::string reason, std::vector<std::string> suggestions,
               std::string_view suggestion_heading = "nearest")
      : UnknownLayer(
            std::vector<Entry>{Entry{std::move(address), std::move(reason), std::move(suggestions),
                                     std::string(suggestion_heading)}}) {}

  /// Several unknown addresses as one error (`each` in selection order, at least one).
  explicit UnknownLayer(const std::vector<UnknownLayer>& each) : UnknownLayer(entries_of(each)) {}

  /// One address that matched nothing: why, and the valid addresses near it.
  struct Entry {
    std::string address;
    std::string reason;
    std::vector<std::string> suggestions;
    std::string heading;
  };

  /// The address as `to_string` spells it (the first, when there are several).
  const std::string& address() const noexcept { return entries_->front().address; }
  /// Valid addresses near the unknown one (the first, when there are several).
  const std::vector<std::string>& suggestions() const noexcept {
    return entries_->front().suggestions;
  }
  /// Every unknown address, in selection order.
  const std::vector<Entry>& unknown() const noexcept { return *entries_; }

  /// `what()` with every address and suggestion as `spell` writes it: a front end whose users
  /// write addresses in their own syntax (the command line's `class:Conv2d` for
  /// `by_class("Conv2d")`) gives `spell(canonical) -> theirs`.
  template <class Spell>
  std::string message(Spell spell) const {
    std::vector<Entry> spelled = *entries_;
    for (Entry& e : spelled) {
      e.address = spell(e.address);
      for (std::string& s : e.suggestions) s = spell(s);
      // Addresses the reason names ("by_index(0) to by_index(31)").
      for (std::size_t at = e.reason.find("by_"); at != std::string::npos;
           at = e.reason.find("by_", at + 1)) {
        const std::size_t close = e.reason.find(')', at);
        if (close == std::string::npos) break;
        const std::string mine = spell(e.reason.substr(at, close + 1 - at));
        e.reason.replace(at, close + 1 - at, mine);
      }
    }
    return describe(spelled);
  }

 private:
  explicit UnknownLayer(std::vector<Entry> entries)
      : std::invalid_argument(describe(entries)),
        entries_(std::make_shared<const std::vector<Entry>>(std::move(entries))) {}

  static std::vector<Entry> entries_of(const std::vector<UnknownLayer>& each) {
    std::vector<Entry> out;
    for (const UnknownLayer& e : each)
      out.insert(out.end(), e.unknown().begin(), e.unknown().end());
    return out;
  }
  /// "reason; nearest: a, b" for one entry.
  static std::string explain(const Entry& e) {
    std::string s = e.reason;
    if (!e.suggestions.empty()) {
      s += "; " + e.heading + ": ";
      for (std::size_t i = 0; i < e.suggestions.size(); ++i)
        s += (i != 0 ? ", " : "") + e.suggestions[i];
    }
    return s;
  }
  static std::string describe(const std::vector<Entry>& entries) {
    if (entries.size() == 1)
      return "recorder: unknown layer '" + entries[0].address + "': " + explain(entries[0]);
    std::string s = "recorder: " + std::to_string(entries.size()) + " unknown layers: ";
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i != 0) s += i + 1 == entries.size() ? " and " : ", ";
      s += "'" + entries[i].address + "' (" + explain(entries[i]) + ")";
    }
    return s;
  }
  std::shared_ptr<const std::vector<Entry>> entries_;
};

/// Thrown by `resolve_one` when an address matches more than one call; `what()` lists them.
class AmbiguousLayer : public std::invalid_argument {
 public:
  AmbiguousLayer(const std::string& what, std::vector<NodeId> matches)
      : std::invalid_argument(what),
        matches_(std::make_shared<const std::vector<NodeId>>(std::move(matches))) {}

  /// Every matching call, in call order.
  const std::vector<NodeId>& matches() const noexcept { return *matches_; }

 private:
  std::shared_ptr<const std::vector<NodeId>> matches_;
};

namespace detail::address {

/// Levenshtein distance (insertions, deletions, substitutions each cost 1).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// `candidates` sorted by edit distance to `target`, ties by name; duplicates dropped.
inline std::vector<std::string> nearest(std::string_view target,
                                        std::vector<std::string> candidates, std::size_t limit) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  scored.reserve(candidates.size());
  for (auto& c : candidates) scored.emplace_back(edit_distance(target, c), std::move(c));
  std::sort(scored.begin(), scored.end());  // (distance, name): equal names end up adjacent
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < limit; ++i)
    out.push_back(std::move(scored[i].second));
  return out;
}

/// The up-to-`limit` indices in `valid` nearest `index` (ties: lower first), ascending.
inline std::vector<std::int64_t> nearest_indices(std::vector<std::int64_t> valid,
                                                 std::int64_t index, std::size_t limit) {
  const auto dist = [index](std::int64_t v) {
    return v > index ? static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(index)
                     : static_cast<std::uint64_t>(index) - static_cast<std::uint64_t>(v);
  };
  std::sort(valid.begin(), valid.end(), [&](std::int64_t x, std::int64_t y) {  // a total order
    return dist(x) != dist(y) ? dist(x) < dist(y) : x < y;
  });
  if (valid.size() > limit) valid.resize(limit);
  std::sort(valid.begin(), valid.end());
  return valid;
}

inline std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) s += ", ";
    s += items[i];
  }
  return s;
}

/// How many valid addresses an `UnknownLayer` suggests, nearest first.
inline constexpr std::size_t suggestion_limit = 5;
/// How many matches an `AmbiguousLayer` message lists before "and N more".
inline constexpr std::size_t ambiguity_limit = 10;

/// The message of an `AmbiguousLayer`: "recorder: layer 'fc' is ambiguous: 2 <what> match: a,
/// b", the first `ambiguity_limit` of `matches` listed.
inline std::string ambiguity_message(const LayerAddress& a, std::string_view what,
                                     const std::vector<std::string>& matches) {
  std::string s = "recorder: layer '" + to_string(a) +
                  "' is ambiguous: " + std::to_string(matches.size()) + ' ' + std::string(what) +
                  " match: ";
  for (std::size_t i = 0; i < matches.size() && i < ambiguity_limit; ++i)
    s += (i != 0 ? ", " : "") + matches[i];
  if (matches.size() > ambiguity_limit)
    s += ", and " + std::to_string(matches.size() - ambiguity_limit) + " more";
  return s;
}

// Why an address matched nothing, and the valid addresses near it: one `unknown` per selector.
// What each selector matches is `recorder::matches`, alone.

[[noreturn]] inline void unknown(const Graph& g, const recorder::address::Label& l,
                                 const std::string& spelled) {
  std::vector<std::int64_t> depths;
  for (NodeId c : views::module_calls(g)) depths.push_back(g.call(c).table_depth);
  std::sort(depths.begin(), depths.end());
  depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
  if (depths.empty()) throw UnknownLayer(spelled, "the trace has no module calls", {});
  const bool depth_known = std::binary_search(depths.begin(), depths.end(), l.depth);
  const std::int64_t depth = depth_known ? l.depth : nearest_indices(depths, l.depth, 1).front();
  std::vector<std::int64_t> indices;
  for (NodeId c : views::module_calls(g))
    if (g.call(c).table_depth == depth) indices.push_back(g.call(c).depth_index);
  std::sort(indices.begin(), indices.end());
  std::vector<std::string> labels;
  for (std::int64_t v : nearest_indices(indices, l.index, suggestion_limit))
    labels.push_back(std::to_string(depth) + '-' + std::to_string(v));
  std::string reason;
  if (depth_known) {
    reason = "depth " + std::to_string(depth) + " has labels " + std::to_string(depth) + '-' +
             std::to_string(indices.front()) + " to " + std::to_string(depth) + '-' +
             std::to_string(indices.back());
  } else {
    std::vector<std::string> ds;
    for (std::int64_t d : depths) ds.push_back(std::to_string(d));
    reason = "no module call at depth " + std::to_string(l.depth) + "; valid depths: " + join(ds);
  }
  throw UnknownLayer(spelled, reason, std::move(labels));
}

[[noreturn]] inline void unknown(const Graph& g, const recorder::address::Path& p,
                                 const std::string& spelled) {
  if (p.call) {
    std::vector<std::string> valid;
    for (NodeId c : views::module_calls(g))
      if (g.module_of(c).path == p.path) valid.push_back(path_address(g, c));
    if (!valid.empty()) {
      const std::string name = p.path.empty() ? std::string("<root>") : "'" + p.path + "'";
      const std::string times =
          std::to_string(valid.size()) + (valid.size() == 1 ? " time" : " times");
      throw UnknownLayer(spelled, "module " + name + " was called " + times, std::move(valid),
                         "valid");
    }
  }
  std::vector<std::string> paths;
  for (const ModuleInfo& m : g.modules())
    if (!m.path.empty() && m.calls > 0) paths.push_back(m.path);
  if (p.path.empty())
    throw UnknownLayer(spelled, "the trace has no root call",
                       nearest(p.path, std::move(paths), suggestion_limit));
  // A module's own name without the path to it ("mlp" for blocks.0.mlp, blocks.1.mlp, ...):
  // every path ending in it, then the class or classes of those modules.
  std::vector<std::string> named;
  std::vector<std::string> classes;
  for (const ModuleInfo& m : g.modules()) {
    if (m.calls == 0 || m.path.size() <= p.path.size() ||
        m.path.compare(m.path.size() - p.path.size(), p.path.size(), p.path) != 0 ||
        m.path[m.path.size() - p.path.size() - 1] != '.')
      continue;
    named.push_back(m.path);
    const std::string cls = to_string(by_class(m.class_name));
    if (std::find(classes.begin(), classes.end(), cls) == classes.end()) classes.push_back(cls);
  }
  if (!named.empty()) {
    named.insert(named.end(), classes.begin(), classes.end());
    throw UnknownLayer(spelled, "no module has this path", named, "modules of that name");
  }
  throw UnknownLayer(spelled, "no module has this path",
                     nearest(p.path, std::move(paths), suggestion_limit));
}

[[noreturn]] inline void unknown(const Graph& g, const recorder::address::Class& c,
                                 const std::string& spelled) {
  std::vector<std::string> classes;
  for (const ModuleInfo& m : g.modules())
    if (m.calls > 0) classes.push_back(m.class_name);
  throw UnknownLayer(spelled, "no module of this class was called",
                     nearest(c.name, std::move(classes), std::numeric_limits<std::size_t>::max()),
                     "classes present");
}

[[noreturn]] inline void unknown(const Graph& g, const recorder::address::Index&,
                                 const std::string& spelled) {
  std::size_t n = 0;
  for (NodeId c : views::module_calls(g)) n += g.node(c).parent.valid() ? 1 : 0;
  if (n == 0) throw UnknownLayer(spelled, "the trace has no module calls below the root", {});
  const std::string last = "by_index(" + std::to_string(n - 1) + ')';
  throw UnknownLayer(spelled,
                     "the trace has " + std::to_string(n) + " module call" + (n == 1 ? "" : "s") +
                         " below the root, by_index(0) to " + last,
                     {last});
}

[[noreturn]] inline void unknown(const Graph&, const recorder::address::Predicate&,
                                 const std::string& spelled) {
  throw UnknownLayer(spelled, "no module call satisfies the predicate", {});
}

}  // namespace detail::address

/// What an address can be matched against without a whole trace: one module call's facts.
/// Filled by `facts_of` while recording (the call is known as it opens), or kept by a
/// recording that outlives its trace (then `graph` is null and `where(...)` matches nothing).
struct CallFacts {
  std::string_view path;         ///< `ModuleInfo::path` ("" for the root)
  std::string_view class_name;   ///< `ModuleInfo::class_name`
  std::uint32_t call_index = 0;  ///< `CallData::call_index`
  std::int64_t depth = 0;        ///< `CallData::table_depth`, torchinfo's (0 for the root)
  std::int64_t depth_index = 0;  ///< `CallData::depth_index`
  std::size_t position = 0;      ///< place among the calls below the root (`by_index`)
  const Graph* graph = nullptr;  ///< for `where(...)`; null when no graph is at hand
  NodeId call{};
};

/// The facts of module call `call` of `g`; `position` is its place among the calls below the
/// root, in call order (0-based; the root's is 0 and never matches `by_index`).
inline CallFacts facts_of(const Graph& g, NodeId call, std::size_t position) {
  const ModuleInfo& m = g.module_of(call);
  const auto& c = g.call(call);
  return CallFacts{m.path,        m.class_name, c.call_index, c.table_depth,
                   c.depth_index, position,     &g,           call};
}

/// True when address `a` selects the call described by `f` (what `resolve` would return it
/// for). Example: `matches("layer1.0.relu#1", facts_of(g, call, n))`.
inline bool matches(const LayerAddress& a, const CallFacts& f) {
  struct Visitor {
    const CallFacts& f;
    bool operator()(const address::Label& l) const {
      return f.depth == l.depth && f.depth_index == l.index;
    }
    bool operator()(const address::Path& p) const {
      return f.path == p.path && (!p.call || f.call_index == *p.call);
    }
    bool operator()(const address::Class& c) const { return f.class_name == c.name; }
    bool operator()(const address::Index& x) const { return f.depth > 0 && f.position == x.index; }
    bool operator()(const address::Predicate& p) const {
      return f.graph != nullptr && p.test && p.test(*f.graph, f.call);
    }
  };
  return detail::address::visit(Visitor{f}, a.selector());
}

/// The module calls `a` selects, in call order: every call `matches` selects, its position
/// counted among the calls below the root. Throws `UnknownLayer` when there are none.
/// Example: `resolve(g, "layer1.0.relu")` gives both calls of that ReLU.
inline std::vector<NodeId> resolve(const Graph& g, const LayerAddress& a) {
  std::vector<NodeId> found;
  std::size_t position = 0;
  for (NodeId c : views::module_calls(g)) {
    const bool below_root = g.node(c).parent.valid();
    if (matches(a, facts_of(g, c, below_root ? position++ : 0))) found.push_back(c);
  }
  if (found.empty())
    detail::address::visit([&](const auto& sel) { detail::address::unknown(g, sel, to_string(a)); },
                           a.selector());
  return found;
}

/// The one module call `a` selects. Throws `UnknownLayer` when there is none and
/// `AmbiguousLayer` (listing the matches) when there are several.
/// Example: `resolve_one(g, "layer1.0.relu#1")`, `resolve_one(g, {3, 18})`.
inline NodeId resolve_one(const Graph& g, const LayerAddress& a) {
  auto found = resolve(g, a);
  if (found.size() == 1) return found.front();
  std::vector<std::string> names;
  for (NodeId c : found) names.push_back(path_address(g, c) + " (" + depth_index_label(g, c) + ')');
  throw AmbiguousLayer(detail::address::ambiguity_message(a, "calls", names), std::move(found));
}

}  // namespace recorder
