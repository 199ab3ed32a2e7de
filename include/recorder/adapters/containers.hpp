#pragma once
/// Typed containers of traceable modules: `recorder::Sequential<H>` and `recorder::ModuleList<H>`.
///
/// `torch::nn::Sequential` erases its children's types (`AnyModule`), so it cannot hold a
/// module whose forward is a template. These containers hold `recorder::Module<H>` children,
/// registered as "0", "1", ... like libtorch's, and report the class names "Sequential" and
/// "ModuleList" so paths (`layer1.0.conv1`) and summaries read as torchvision's do.

#include <recorder/adapters/module.hpp>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace recorder {

/// A homogeneous list of submodules, iterated by the parent's forward.
template <class H>
class ModuleListImpl : public torch::nn::Module {
 public:
  ModuleListImpl() : torch::nn::Module("ModuleList") {}
  explicit ModuleListImpl(std::vector<H> items) : ModuleListImpl() {
    for (auto& h : items) push_back(std::move(h));
  }

  void push_back(H h) {
    items_.emplace_back(register_module(std::to_string(items_.size()), std::move(h)));
  }
  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }
  recorder::Module<H>& operator[](std::size_t i) { return items_.at(i); }
  auto begin() noexcept { return items_.begin(); }
  auto end() noexcept { return items_.end(); }

 private:
  std::vector<recorder::Module<H>> items_;
};

/// A homogeneous chain of submodules: `forward(x)` feeds each one's output to the next.
template <class H>
class SequentialImpl : public torch::nn::Module {
 public:
  SequentialImpl() : torch::nn::Module("Sequential") {}
  explicit SequentialImpl(std::vector<H> items) : SequentialImpl() {
    for (auto& h : items) push_back(std::move(h));
  }

  void push_back(H h) {
    items_.emplace_back(register_module(std::to_string(items_.size()), std::move(h)));
  }
  std::size_t size() const noexcept { return items_.size(); }
  recorder::Module<H>& operator[](std::size_t i) { return items_.at(i); }
  auto begin() noexcept { return items_.begin(); }
  auto end() noexcept { return items_.end(); }

  template <tensor_like T>
  T forward(T x) {
    for (auto& item : items_) x = item(std::move(x));
    return x;
  }

 private:
  std::vector<recorder::Module<H>> items_;
};

/// Holder of a `ModuleListImpl<H>` (like a `TORCH_MODULE`).
template <class H>
class ModuleList : public torch::nn::ModuleHolder<ModuleListImpl<H>> {
 public:
  using torch::nn::ModuleHolder<ModuleListImpl<H>>::ModuleHolder;
};

/// Holder of a `SequentialImpl<H>` (like a `TORCH_MODULE`).
template <class H>
class Sequential : public torch::nn::ModuleHolder<SequentialImpl<H>> {
 public:
  using torch::nn::ModuleHolder<SequentialImpl<H>>::ModuleHolder;
};

}  // namespace recorder
