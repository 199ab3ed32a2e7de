#pragma once
/// Loading a TorchScript model file, with an error that says what the file is when it is not one.

#include <recorder/export/archive.hpp>
#include <recorder/file_error.hpp>
#include <recorder/torch_version.hpp>

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
#include <string_view>
#include <system_error>
#include <utility>
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

/// Thrown by `load_model` when a TorchScript file calls an op the libtorch in use does not have,
/// such as every `nn.MultiheadAttention` and `nn.Transformer*` scripted by PyTorch 2.x, which calls
/// `aten::scaled_dot_product_attention`, on libtorch 1.13. PyTorch reads files older versions
/// wrote, never the other way round. `what()` is one line naming the file, the op, the libtorch in
/// use and, where the archive tells, the PyTorch that saved it:
///
/// ```
/// recorder: 'encoder.pt' was saved by a newer PyTorch (2.1 or later) than the libtorch in use
/// (1.13): it calls aten::scaled_dot_product_attention, which libtorch 1.13 does not have. Trace
/// it with libtorch 2.5 or later (recorder supports both), or save it with PyTorch 1.13
/// ```
class NewerModelError : public ModelFileError {
 public:
  NewerModelError(std::filesystem::path file, std::string op, std::string saved_by,
                  std::string message)
      : ModelFileError(std::move(file), std::move(message)),
        op_(std::move(op)),
        saved_by_(std::move(saved_by)) {}
  /// The op this libtorch lacks, "aten::scaled_dot_product_attention"; empty when the JIT named
  /// no op (the file uses another construct this libtorch lacks).
  const std::string& op() const noexcept { return op_; }
  /// The oldest PyTorch that writes this archive's records, "2.1"; empty when it cannot tell.
  const std::string& saved_by() const noexcept { return saved_by_; }

 private:
  std::string op_;
  std::string saved_by_;
};

namespace detail::script {

inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

/// The op of a TorchScript compile error "Unknown builtin op: aten::name." (its first such
/// line); empty when the message names none.
inline std::string unknown_op(std::string_view message) {
  constexpr std::string_view key = "Unknown builtin op: ";
  const auto at = message.find(key);
  if (at == std::string_view::npos) return {};
  std::size_t end = at + key.size();
  while (end < message.size() && message[end] != '\n' && message[end] != ' ') ++end;
  std::string_view op = message.substr(at + key.size(), end - at - key.size());
  while (!op.empty() && op.back() == '.') op.remove_suffix(1);
  return std::string(op);
}

/// The first line of `message` with text on it, trimmed.
inline std::string first_line(std::string_view message) {
  std::size_t b = 0;
  while (b < message.size()) {
    std::size_t e = message.find('\n', b);
    if (e == std::string_view::npos) e = message.size();
    std::string_view line = message.substr(b, e - b);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (!line.empty()) return std::string(line);
    b = e + 1;
  }
  return {};
}

/// The oldest PyTorch version that writes an archive with these records, when it is newer than
/// 1.13: "2.1" for `.data/serialization_id` (written from PyTorch 2.1, pytorch#100994); else "".
inline std::string saved_by_at_least(const std::vector<std::string>& records) {
  for (const std::string& r : records)
    if (r == ".data/serialization_id") return "2.1";
  return {};
}

/// True when version "M.m" is newer than the libtorch in use.
inline bool newer_than_this_libtorch(const std::string& version) {
  const auto dot = version.find('.');
  if (dot == std::string::npos) return false;
  const int major = std::stoi(version.substr(0, dot));
  const int minor = std::stoi(version.substr(dot + 1));
  return major > torch_version_major ||
         (major == torch_version_major && minor > torch_version_minor);
}

/// For a model the JIT could not compile (`message`), throws a `NewerModelError` when it calls
/// an op of PyTorch's own (`aten::`, `prim::`) this libtorch lacks, or when the archive says a
/// newer PyTorch saved it; a `ModelFileError` naming the op's library for another namespace's
/// op (a custom op whose library this program did not load); else returns.
inline void throw_if_newer(const std::filesystem::path& file,
                           const std::vector<std::string>& records, std::string_view message) {
  const std::string name = quoted(file);
  const std::string op = unknown_op(message);
  std::string saved_by = saved_by_at_least(records);
  if (!saved_by.empty() && !newer_than_this_libtorch(saved_by)) saved_by.clear();
  const std::string in_use = torch_version();
  const std::string advice =
      std::string(torch_version_major < 2
                      ? ". Trace it with libtorch 2.5 or later (recorder supports both)"
                      : ". Trace it with the libtorch of the PyTorch that saved it") +
      ", or save it with PyTorch " + in_use;
  const bool own = op.rfind("aten::", 0) == 0 || op.rfind("prim::", 0) == 0;
  if (!op.empty() && !own) {
    const std::string lib = op.substr(0, op.find("::"));
    throw ModelFileError(file, "recorder: cannot load TorchScript model " + name + ": it calls " +
                                   op + ", a custom op of '" + lib +
                                   "' that is not registered: link " + lib +
                                   "'s C++ library into this program first (its ops are "
                                   "registered when it loads)");
  }
  if (op.empty() && saved_by.empty()) return;
  const std::string newer = "recorder: " + name + " was saved by a newer PyTorch" +
                            (saved_by.empty() ? std::string() : " (" + saved_by + " or later)") +
                            " than the libtorch in use (" + in_use + "): ";
  if (!op.empty())
    throw NewerModelError(
        file, op, saved_by,
        newer + "it calls " + op + ", which libtorch " + in_use + " does not have" + advice);
  throw NewerModelError(file, op, saved_by,
                        newer + "libtorch " + in_use + " cannot compile its code (" +
                            first_line(message) + ")" + advice);
}

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

/// The oldest PyTorch version that could have saved the archive `file` when it is newer than
/// 1.13 ("2.1": the archive records `.data/serialization_id`, which PyTorch writes from 2.1 on);
/// "" for an archive 1.13 could have written, and for a file that is not a readable archive
/// (`load_model` says what is wrong with it).
inline std::string saved_by_pytorch_at_least(const std::filesystem::path& file) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    return detail::script::saved_by_at_least(reader.getAllRecords());
  } catch (const c10::Error&) {
    return {};
  }
}

/// Loads the TorchScript model in `file` (written by `torch.jit.save`, `ScriptModule.save` or
/// `torch::jit::Module::save`) onto the CPU. Anything else throws `ModelFileError` naming the
/// file and what it holds:
///
/// ```
/// recorder: 'resnet_sd.pt' is not a TorchScript model: it holds a dict of 122 tensors (a
/// state_dict?) saved with torch.save. Export the model with torch.jit.script(model).save(path) ...
/// ```
inline torch::jit::Module load_model(const std::filesystem::path& file) {
  check_torch();
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
    const auto kind = exported::archive_layout(records, "model").kind;
    if (kind == exported::ArchiveKind::program || kind == exported::ArchiveKind::legacy_program)
      throw ModelFileError(file, not_ts +
                                     "it is a torch.export archive (.pt2): recorder::load_exported "
                                     "reads it (<recorder/exported.hpp>).");
    if (kind == exported::ArchiveKind::compiled_only)
      throw ModelFileError(file, not_ts +
                                     "it is an AOTInductor package (compiled code, no "
                                     "program)." +
                                     ds::export_hint);
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
    ds::throw_if_newer(file, records, e.what_without_backtrace());
    throw ModelFileError(file, "recorder: cannot load TorchScript model " + name + ": " +
                                   e.what_without_backtrace());
  } catch (const std::exception& e) {
    // A compile error of the model's code (torch::jit::ErrorReport, not a c10::Error).
    ds::throw_if_newer(file, records, e.what());
    throw ModelFileError(file, "recorder: cannot load TorchScript model " + name + ": " + e.what());
  }
}

}  // namespace recorder
