#pragma once
/// Saving recordings for Python's `torch.load` (one file, or one file per layer) and loading
/// them back in C++.
///
/// A recording is saved as a dict from layer key to its result, in the format `torch.save` writes,
/// holding nothing `torch.load`'s `weights_only=True` (its default from PyTorch 2.6) refuses: a
/// tensor for `Sum`, `Mean`, `Last`, `AbsMax` and custom reductions, a list of tensors for
/// `KeepAll`, a dict of its fields for `Moments` (`mean`, `variance`, `count`), `MinMax` (`min`,
/// `max`), `Histogram` (`counts`, `lo`, `hi`, `bins`) and `Quantile` (`quantile`, a float64
/// tensor). A layer with several tensors gets one key per tensor: `"lstm:0"`, `"lstm:1"`, ...
/// Every tensor written is contiguous and owns its storage (the reductions copy what they
/// keep), so a view never drags its whole storage into the file.
///
/// ```python
/// d = torch.load("inputs.pt")      # {"fc2": tensor(...), "fc3": tensor(...)}
/// ```

#include <recorder/capture/activations.hpp>
#include <recorder/detail/atomic_file.hpp>
#include <recorder/detail/escape.hpp>

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/ivalue.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

inline c10::IValue to_ivalue(const at::Tensor& t) { return t; }
/// A plain list: libtorch pickles a typed `List[Tensor]` with the global
/// `torch.jit._pickle.build_tensorlist`, which `weights_only` unpickling refuses.
inline c10::IValue to_ivalue(const std::vector<at::Tensor>& ts) {
  c10::impl::GenericList list(c10::AnyType::get());
  list.reserve(ts.size());
  for (const at::Tensor& t : ts) list.push_back(t);
  return list;
}
inline c10::IValue to_ivalue(double v) { return v; }
template <std::integral I>
c10::IValue to_ivalue(I v) {
  return static_cast<std::int64_t>(v);
}
/// A result struct (`MomentsResult`, ...): a dict of its fields.
template <reduce::described Result>
c10::IValue to_ivalue(const Result& r) {
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  reduce::for_each_field(r, [&d](std::string_view name, const auto& value) {
    d.insert(std::string(name), to_ivalue(value));
  });
  return d;
}

/// `(key, value)` for every recorded tensor of `acts`, in record order.
template <class Acts>
std::vector<std::pair<std::string, c10::IValue>> recorded_items(const Acts& acts) {
  std::vector<std::pair<std::string, c10::IValue>> items;
  for (const auto& rec : acts.records()) {
    if (rec->samples() == 0) continue;  // selected, but nothing arrived (gradients before backward)
    for (std::size_t i = 0; i < rec->tensors(); ++i) {
      c10::IValue v;
      try {
        v = to_ivalue(rec->result(i));
      } catch (const std::out_of_range&) {
        continue;  // a tensor slot never filled (a gradient that did not arrive)
      }
      items.emplace_back(rec->tensors() == 1 ? rec->key : rec->key + ':' + std::to_string(i),
                         std::move(v));
    }
  }
  return items;
}

/// `value` in the zip format `torch.save` writes (`data.pkl` and one `data/<i>` record per
/// tensor, as `torch::pickle_save` lays them out), pickled without type tags: libtorch's
/// `pickle_save` wraps every dict and list in `torch.jit._pickle.restore_type_tag`, a global
/// that `torch.load`'s `weights_only` unpickler (the default from PyTorch 2.6) refuses.
/// What is left are the globals it allows: `torch._utils._rebuild_tensor_v2`, storages,
/// `collections.OrderedDict`.
inline std::vector<char> pickle_for_python(const c10::IValue& value) {
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&pickle](const char* bytes, std::size_t n) {
        pickle.insert(pickle.end(), bytes, bytes + n);
      },
      nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> out;
  caffe2::serialize::PyTorchStreamWriter writer([&out](const void* data, std::size_t n) {
    const char* bytes = static_cast<const char*>(data);
    out.insert(out.end(), bytes, bytes + n);
    return n;
  });
  // The pickle names each tensor's storage by its index among the tensors it pushed.
  const std::vector<at::Tensor>& tensors = pickler.tensorData();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const torch::jit::WriteableTensorData data = torch::jit::getWriteableTensorData(tensors[i]);
    writer.writeRecord("data/" + std::to_string(i), data.data(), data.sizeInBytes());
  }
  writer.writeRecord("data.pkl", pickle.data(), pickle.size());
  writer.writeEndOfFile();
  return out;
}

/// Writes `value` pickled as `torch.save` does, atomically (`write_file_atomically`).
inline void write_pickle(const c10::IValue& value, const std::filesystem::path& file) {
  const std::vector<char> bytes = pickle_for_python(value);
  write_file_atomically(file, std::string_view(bytes.data(), bytes.size()));
}

/// A list whose elements are all tensors, as the `List[Tensor]` it was before saving: files
/// carry no type tags (`pickle_for_python`), so the unpickler gives a `List[Any]`.
inline c10::IValue typed(const c10::IValue& v) {
  if (!v.isList() || v.isTensorList()) return v;
  const c10::List<c10::IValue> list = v.toList();
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& e : list) {
    if (!e.isTensor()) return v;
    tensors.push_back(e.toTensor());
  }
  return c10::List<at::Tensor>(tensors);
}

}  // namespace detail

/// Reads a file written by `torch.save`/`torch::pickle_save` (or `recorder::save`).
/// Throws `FileError` naming the file when it cannot be read or parsed.
inline c10::IValue load_pickle(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in || std::filesystem::is_directory(file)) {
    const int err = std::filesystem::is_directory(file) ? EISDIR : ENOENT;
    throw FileError(file, "read", std::generic_category().message(err));
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return torch::jit::pickle_load(bytes);
  } catch (const c10::Error& e) {
    throw FileError(file, "read",
                    std::string("it is not a pickled value: ") + e.what_without_backtrace());
  }
}

/// Loads a file written by `recorder::save`: layer key -> value (`.toTensor()`, `.toList()`,
/// `.toGenericDict()`). Throws `FileError` when the file holds no string-keyed dict.
inline std::map<std::string, c10::IValue> load_recording(const std::filesystem::path& file) {
  const c10::IValue v = load_pickle(file);
  if (!v.isGenericDict())
    throw FileError(file, "read", "it holds a " + std::string(v.tagKind()) + ", not a dict");
  std::map<std::string, c10::IValue> out;
  for (const auto& item : v.toGenericDict()) {
    if (!item.key().isString()) throw FileError(file, "read", "it is a dict with non-string keys");
    out.emplace(item.key().toStringRef(), detail::typed(item.value()));
  }
  return out;
}

/// Saves `acts` as one file: a dict from layer key to result, loadable with `torch.load`.
/// The write is atomic: `file` is replaced whole or left as it was (then a `FileError` names
/// it; its folder must exist). Example: `recorder::save(inputs, "inputs.pt")`.
template <class R>
void save(const record::Activations<R>& acts, const std::filesystem::path& file) {
  detail::check_parent_folder(file);
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  for (auto& [key, value] : detail::recorded_items(acts)) d.insert(key, std::move(value));
  detail::write_pickle(d, file);
}

/// Saves `acts` as one file per layer key in `folder` (created if missing; its parent folder
/// must exist, as for every writer: `FileError` otherwise), as torchfunc does:
/// `<folder>/<key>.pt`, each holding that layer's result. Keys are made safe file names
/// (`detail::sanitize_filename`: a module called `../x` writes `___x.pt` inside `folder`);
/// two keys that sanitize alike get `~2`, `~3` suffixes. Returns key -> file written.
template <class R>
std::map<std::string, std::filesystem::path> save_per_layer(const record::Activations<R>& acts,
                                                            const std::filesystem::path& folder) {
  detail::check_parent_folder(folder, "create folder");
  std::error_code ec;
  std::filesystem::create_directory(folder, ec);
  if (ec || !std::filesystem::is_directory(folder))
    throw FileError(folder, "create folder",
                    ec ? ec.message() : std::generic_category().message(EEXIST));
  std::map<std::string, std::filesystem::path> written;
  std::set<std::string> used;
  for (auto& [key, value] : detail::recorded_items(acts)) {
    const std::string base = detail::sanitize_filename(key, 190);
    std::string name = base;
    for (int n = 2; !used.insert(name).second; ++n) name = base + '~' + std::to_string(n);
    const std::filesystem::path file = folder / (name + ".pt");
    detail::write_pickle(value, file);
    written.emplace(key, file);
  }
  return written;
}

}  // namespace recorder
