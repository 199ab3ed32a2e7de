#pragma once
/// A tracer's records of the modules its last trace registered, copied by the next trace of
/// the same module tree instead of describing each module again.

#include <recorder/adapters/own_parameters.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/tensor/session.hpp>

#include <torch/nn/module.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace recorder::detail {

/// What registering a module (`module_id`, adapters/module_core.hpp) finds depends only on the
/// module tree (which objects, under which names, with which parameters) and on the
/// registrations before it in the trace: a module's path is learnt from the first parent that
/// registers it. So a tracer keeps the registrations of a trace, in order, with a snapshot of
/// the tree at its start. A later trace whose tree equals the snapshot, and whose modules are
/// registered in the same order from the same parents, copies the records. At the first
/// registration that differs, or of a module outside the tree (not registered below the root,
/// so the snapshot says nothing of it), it reads the tree and goes on as if it had registered every
/// module itself (`stop_following` in module_core.hpp), and its registrations replace the kept
/// ones from there.
///
/// The snapshot holds, for each module of the tree in `Module::apply`'s order:
/// - its address, its type, and a weak reference to it, so that a module freed and another made
///   at its address is not taken for it. A module not owned by a `shared_ptr` (a root made on
///   the stack) is compared by type and `name()` as well;
/// - its qualified name;
/// - its own parameters: names, TensorImpls (so tied weights stay tied), shapes and
///   `requires_grad`.
///
/// Display attributes live in a module's options, which can change in place, so they are read
/// again at every registration.
///
/// Records are kept from a tracer's second trace on, so a tracer made for one trace pays
/// nothing. A forward that changes the module tree while it runs, differently from one trace
/// to the next (registers a module, or changes a parameter, depending on its input), is not
/// seen.
///
/// One trace uses the records at a time (`Lend`); a second trace of the same tracer meanwhile
/// (on another thread) registers its modules itself.
class ModuleRecords {
 public:
  /// One registered module, in the order of registration (its index is its `ModuleId`).
  struct Registration {
    const void* module = nullptr;
    const void* parent = nullptr;  ///< the module whose call registered it; null for the root
    bool leaf = true;
    /// In the root's tree (so the snapshot vouches for it). A module called but not registered
    /// below the root is not: copying stops at it.
    bool in_tree = false;
    std::uint64_t attributes = 0;  ///< which attribute reader applies (module_core.hpp)
    ModuleInfo info{};             ///< as registered, before any call
  };

  ModuleRecords() = default;
  /// A copy of a tracer starts without records: they describe the original's last trace.
  ModuleRecords(const ModuleRecords&) noexcept {}
  ModuleRecords& operator=(const ModuleRecords& other) noexcept {
    if (this != &other && !busy_.load()) forget();
    return *this;
  }

  /// RAII: lends the records to session `s` for one trace, from the tracer's second trace on,
  /// unless another trace is using them. The session's list of module objects is lent too, and
  /// kept for the next trace, so that it is not allocated again (allocating its ~1 KB made
  /// glibc consolidate every small block the last trace freed).
  class Lend {
   public:
    Lend(ModuleRecords& r, Session& s) noexcept
        : records_(r.busy_.exchange(true) ? nullptr : &r), session_(&s) {
      if (records_ == nullptr) return;
      records_->mode_ = Mode::waiting;
      if (records_->traces_++ == 0) return;
      s.module_records = records_;
      if (s.module_objects.empty()) s.module_objects.swap(records_->objects_room_);
    }
    ~Lend() {
      if (records_ == nullptr) return;
      if (session_->module_records == records_) {
        session_->module_objects.clear();
        records_->objects_room_.swap(session_->module_objects);
      }
      records_->mode_ = Mode::waiting;
      records_->busy_.store(false);
    }
    Lend(const Lend&) = delete;
    Lend& operator=(const Lend&) = delete;

   private:
    ModuleRecords* records_;
    Session* session_;
  };

  /// Called when the root module `root` is registered: true when the tree equals the snapshot,
  /// so that the registrations are copied; else the trace's registrations will be kept.
  bool follow(const torch::nn::Module& root) {
    if (snapshot_.matches(root)) {
      mode_ = Mode::following;
      return true;
    }
    mode_ = Mode::logging;
    registrations_.clear();
    index_ = IdMap{};
    snapshot_ = Snapshot{};
    return false;
  }
  /// Takes the snapshot of `root`'s tree, whose parameters count `total` and `trainable`
  /// (each tensor once), when the trace's registrations are being kept.
  void remember(const torch::nn::Module& root, std::uint64_t total, std::uint64_t trainable,
                std::uint64_t bytes) {
    if (mode_ != Mode::logging) return;
    snapshot_.take(root);
    snapshot_.total_params = total;
    snapshot_.trainable_params = trainable;
    snapshot_.param_bytes = bytes;
  }
  bool following() const noexcept { return mode_ == Mode::following; }
  /// The kept registration `index` when it registered `module` from `parent` as `leaf`.
  const Registration* next(std::size_t index, const void* module, const void* parent,
                           bool leaf) noexcept {
    if (index >= registrations_.size()) return nullptr;
    const Registration& r = registrations_[index];
    if (r.module != module || r.parent != parent || r.leaf != leaf || !r.in_tree) return nullptr;
    ++copied_;
    return &r;
  }
  /// The index of `module`'s registration, if kept. While a trace follows the records, its
  /// first registrations are theirs, so this is the module's `ModuleId` when below their count
  /// (the trace keeps no table of its own).
  std::optional<std::size_t> index_of(const void* module) const noexcept {
    const std::uint64_t* i = index_.find(IdMap::key_of(module));
    return i == nullptr ? std::nullopt : std::optional<std::size_t>(*i);
  }
  /// Ends following after `kept` registrations: the trace registers the rest itself.
  void stop_following(std::size_t kept) {
    registrations_.resize(kept);
    index_ = IdMap{};
    for (std::size_t i = 0; i < kept; ++i)
      index_.try_emplace(IdMap::key_of(registrations_[i].module), i);
    mode_ = Mode::logging;
  }
  /// Keeps a registration the trace made itself.
  void log(const void* module, const void* parent, bool leaf, bool in_tree,
           std::uint64_t attributes, const ModuleInfo& info) {
    if (mode_ != Mode::logging) return;
    registrations_.push_back(Registration{module, parent, leaf, in_tree, attributes, info});
    index_.try_emplace(IdMap::key_of(module), registrations_.size() - 1);
  }
  const Registration& registration(std::size_t i) const { return registrations_.at(i); }

  std::uint64_t total_params() const noexcept { return snapshot_.total_params; }
  std::uint64_t trainable_params() const noexcept { return snapshot_.trainable_params; }
  std::uint64_t param_bytes() const noexcept { return snapshot_.param_bytes; }
  /// Module occurrences in the snapshot's tree.
  std::size_t tree_size() const noexcept { return snapshot_.modules.size(); }
  /// The kept registrations.
  std::size_t size() const noexcept { return registrations_.size(); }
  /// Registrations copied so far, over all traces (for tests and benchmarks).
  std::uint64_t copied() const noexcept { return copied_; }

 private:
  enum class Mode : std::uint8_t { waiting, following, logging };

  struct Snapshot {
    struct Module {
      const void* object = nullptr;
      const std::type_info* type = nullptr;
      std::weak_ptr<const torch::nn::Module> owner{};
      bool owned = false;           ///< `owner` was set: compare liveness, not `name()`
      std::uint32_t name_end = 0;   ///< its qualified name ends here in `text`...
      std::uint32_t class_end = 0;  ///< ... followed by its `name()`, when not owned
      std::uint32_t params_end = 0;
    };
    struct Param {
      const void* impl = nullptr;
      std::uint32_t key_end = 0;    ///< in `text`
      std::uint32_t shape_end = 0;  ///< in `shapes`
      bool requires_grad = false;
    };
    std::vector<Module> modules;
    std::vector<Param> params;
    std::string text;  ///< qualified names, `name()`s and parameter names, one after the other
    std::vector<std::int64_t> shapes;
    std::uint64_t total_params = 0;
    std::uint64_t trainable_params = 0;
    std::uint64_t param_bytes = 0;

    void take(const torch::nn::Module& root) {
      root.apply([this](const std::string& name, const torch::nn::Module& m) {
        Module e;
        e.object = &m;
        e.type = &typeid(m);
        e.owner = m.weak_from_this();
        e.owned = !e.owner.expired();
        text += name;
        e.name_end = static_cast<std::uint32_t>(text.size());
        if (!e.owned) text += m.name();
        e.class_end = static_cast<std::uint32_t>(text.size());
        for_each_own_parameter(m, [this](const std::string& key, const at::Tensor& p) {
          text += key;
          const auto sizes = p.sizes();
          shapes.insert(shapes.end(), sizes.begin(), sizes.end());
          params.push_back(Param{p.unsafeGetTensorImpl(), static_cast<std::uint32_t>(text.size()),
                                 static_cast<std::uint32_t>(shapes.size()), p.requires_grad()});
        });
        e.params_end = static_cast<std::uint32_t>(params.size());
        modules.push_back(std::move(e));
      });
    }

    bool matches(const torch::nn::Module& root) const {
      if (modules.empty() || modules.front().object != &root) return false;
      std::size_t i = 0, param = 0, text_at = 0, shape_at = 0;
      bool same = true;
      auto next_text = [&](std::uint32_t end) {
        const std::string_view s = std::string_view(text).substr(text_at, end - text_at);
        text_at = end;
        return s;
      };
      root.apply([&](const std::string& name, const torch::nn::Module& m) {
        if (!same) return;
        if (i == modules.size()) {
          same = false;
          return;
        }
        const Module& e = modules[i++];
        same = e.object == &m && *e.type == typeid(m) && next_text(e.name_end) == name &&
               (e.owned ? !e.owner.expired() : next_text(e.class_end) == m.name());
        text_at = e.class_end;
        for_each_own_parameter(m, [&](const std::string& key, const at::Tensor& p) {
          if (!same || param == e.params_end) {
            same = false;
            return;
          }
          const Param& q = params[param++];
          const auto sizes = p.sizes();
          same = q.impl == p.unsafeGetTensorImpl() && q.requires_grad == p.requires_grad() &&
                 next_text(q.key_end) == key && q.shape_end - shape_at == sizes.size() &&
                 std::equal(sizes.begin(), sizes.end(), shapes.begin() + shape_at);
          shape_at = q.shape_end;
        });
        same = same && param == e.params_end;
      });
      return same && i == modules.size();
    }
  };

  void forget() noexcept {
    snapshot_ = Snapshot{};
    registrations_.clear();
    index_ = IdMap{};
    std::vector<const void*>().swap(objects_room_);
    traces_ = 0;
    copied_ = 0;
  }

  std::atomic<bool> busy_{false};
  Mode mode_ = Mode::waiting;
  std::uint64_t traces_ = 0;
  std::uint64_t copied_ = 0;
  Snapshot snapshot_;
  std::vector<Registration> registrations_;
  IdMap index_;                            ///< module object -> index in `registrations_`
  std::vector<const void*> objects_room_;  ///< empty, with capacity: a session's `module_objects`
};

}  // namespace recorder::detail
