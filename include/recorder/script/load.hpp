#pragma once
/// Loading a TorchScript model file, with an error that says what the file is when it is not one.

#include <recorder/file_error.hpp>

#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace recorder {

/// Thrown by `load_model` when a file cannot be traced as a TorchScript model. `what()` names
/// the file and says what it is instead (missing, a directory, a `state_dict` or tensor saved
/// with `torch.save`, not a PyTorch file at all, ...).
class ModelFileError : public FileError {
 public:
  ModelFileError(std::filesystem::path file, std::string message)
      : FileError(std::move(message), std::move(file)) {}
  const std::filesystem::path& file() const noexcept { return path(); }
};

namespace detail::script {

inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

/// "a dict of 122 tensors", "a tensor of shape [2, 3]", ... for what `torch.save` stored.
inline std::string describe_value(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    std::string s = "a tensor";
    if (t.defined()) {
      s += " of shape [";
      for (std::int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
      s += "]";
    }
    return s;
  }
  auto count_tensors = [](const auto& range) {
    std::size_t n = 0;
    for (const c10::IValue& e : range) n += e.isTensor() ? 1 : 0;
    return n;
  };
  if (v.isGenericDict()) {
    std::vector<c10::IValue> values;
    for (const auto& item : v.toGenericDict()) values.push_back(item.value());
    const std::size_t n = count_tensors(values);
    if (n == values.size() && n > 0)
      return "a dict of " + std::to_string(n) + " tensors (a state_dict?)";
    return "a dict of " + std::to_string(values.size()) + " entries";
  }
  if (v.isList()) {
    const auto list = v.toListRef();
    return "a list of " + std::to_string(list.size()) + " values (" +
           std::to_string(count_tensors(list)) + " tensors)";
  }
  if (v.isTuple()) {
    const auto& e = v.toTupleRef().elements();
    return "a tuple of " + std::to_string(e.size()) + " values (" +
           std::to_string(count_tensors(e)) + " tensors)";
  }
  return std::string("a value of type ") + v.tagKind();
}

/// The first bytes of a file, as printable text or hex, for an error message.
inline std::string preview(const std::string& bytes) {
  std::string s;
  bool text = true;
  for (char c : bytes)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') text = false;
  if (text) {
    for (char c : bytes) s += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    return "\"" + s + "\"";
  }
  static constexpr char hex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i) s += ' ';
    s += hex[(static_cast<unsigned char>(bytes[i]) >> 4) & 0xF];
    s += hex[static_cast<unsigned char>(bytes[i]) & 0xF];
  }
  return s;
}

/// The first class pickle `bytes` (protocol 2, as torch.save writes it) names at its top:
/// "collections.OrderedDict", "torchvision.models.resnet.ResNet"; "" when it starts otherwise.
inline std::string first_class(const std::string& bytes) {
  if (bytes.size() < 4 || static_cast<unsigned char>(bytes[0]) != 0x80 || bytes[2] != 'c')
    return {};
  const std::size_t module_end = bytes.find('\n', 3);
  if (module_end == std::string::npos) return {};
  const std::size_t name_end = bytes.find('\n', module_end + 1);
  if (name_end == std::string::npos) return {};
  return bytes.substr(3, module_end - 3) + "." +
         bytes.substr(module_end + 1, name_end - module_end - 1);
}

inline constexpr const char* export_hint =
    " Export the model with torch.jit.script(model).save(path) or "
    "torch.jit.trace(model, example_inputs).save(path).";

}  // namespace detail::script

/// Loads the TorchScript model in `file` (written by `torch.jit.save`, `ScriptModule.save` or
/// `torch::jit::Module::save`) onto the CPU. Anything else throws `ModelFileError` naming the
/// file and what it holds:
///
/// ```
/// recorder: 'resnet_sd.pt' is not a TorchScript model: it holds a dict of 122 tensors (a
/// state_dict?) saved with torch.save. Export the model with torch.jit.script(model).save(path) ...
/// ```
inline torch::jit::Module load_model(const std::filesystem::path& file) {
  namespace ds = detail::script;
  const std::string name = ds::quoted(file);
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status))
    throw ModelFileError(file, "recorder: cannot read " + name + ": no such file");
  if (std::filesystem::is_directory(status))
    throw ModelFileError(file,
                         "recorder: cannot read " + name + ": it is a directory, not a model file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ModelFileError(file, "recorder: cannot read " + name + ": permission denied");
  std::string head(16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  in.close();

  const std::string not_ts = "recorder: " + name + " is not a TorchScript model: ";
  if (head.empty()) throw ModelFileError(file, not_ts + "the file is empty");
  if (head.rfind("PK\x03\x04", 0) != 0) {
    if (static_cast<unsigned char>(head[0]) == 0x80)
      throw ModelFileError(
          file, not_ts + "it is a Python pickle (torch.save in the legacy, non-zip format)." +
                    ds::export_hint);
    throw ModelFileError(file, not_ts +
                                   "it is not a PyTorch file (a zip archive); it starts with " +
                                   ds::preview(head) + ".");
  }

  std::vector<std::string> records;
  std::string pickle;
  try {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    records = reader.getAllRecords();
    if (reader.hasRecord("data.pkl")) {
      const auto [data, size] = reader.getRecord("data.pkl");
      pickle.assign(static_cast<const char*>(data.get()), size);
    }
  } catch (const c10::Error& e) {
    throw ModelFileError(file, not_ts + "it is a zip archive PyTorch cannot read (" +
                                   e.what_without_backtrace() + ").");
  }
  bool code = false, data = false;
  std::size_t storages = 0;
  for (const std::string& r : records) {
    code = code || r.rfind("code/", 0) == 0 || r == "constants.pkl";
    data = data || r == "data.pkl";
    storages += r.rfind("data/", 0) == 0 ? 1 : 0;
  }
  if (!code) {
    if (!data) throw ModelFileError(file, not_ts + "it is a zip archive without PyTorch records.");
    std::string what;
    const std::string cls = ds::first_class(pickle);
    if (cls == "collections.OrderedDict") {
      what =
          "a collections.OrderedDict of " + std::to_string(storages) + " tensors (a state_dict?)";
    } else if (!cls.empty() && cls.rfind("torch._utils.", 0) != 0) {
      what = "a pickled " + cls +
             " object (torch.save of a whole module needs its Python class to load)";
    } else {
      try {
        std::ifstream bytes(file, std::ios::binary);
        std::vector<char> all((std::istreambuf_iterator<char>(bytes)),
                              std::istreambuf_iterator<char>());
        what = ds::describe_value(torch::jit::pickle_load(all));
      } catch (const std::exception&) {
        what = "a pickled Python object";
      }
    }
    throw ModelFileError(file,
                         not_ts + "it holds " + what + " saved with torch.save." + ds::export_hint);
  }
  try {
    return torch::jit::load(file.string());
  } catch (const c10::Error& e) {
    throw ModelFileError(file, "recorder: cannot load TorchScript model " + name + ": " +
                                   e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw ModelFileError(file, "recorder: cannot load TorchScript model " + name + ": " + e.what());
  }
}

}  // namespace recorder
