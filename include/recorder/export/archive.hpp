#pragma once
/// Opening a `torch.export` archive (`torch.export.save`): which kind of PyTorch archive a file
/// is, decided by its records, and its program read without touching its weights. Needs only
/// libtorch's zip reader (`caffe2/serialize`), which 1.13 has too.

#include <recorder/export/program.hpp>
#include <recorder/export/static_trace.hpp>
#include <recorder/torch_version.hpp>

#include <caffe2/serialize/inline_container.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace recorder {

namespace exported {

/// What a PyTorch zip archive holds, by its records.
enum class ArchiveKind {
  program,         ///< a PT2 archive (2.8 and later) with `models/<name>.json`
  legacy_program,  ///< `torch.export.save` of 2.1-2.7: `serialized_exported_program.json`
  compiled_only,   ///< an AOTInductor package: compiled code, no program
  torchscript,     ///< `torch.jit.save`: `code/` and `data.pkl`
  other,           ///< `torch.save` of tensors or objects, or records of no known kind
  unreadable,      ///< not a zip archive, or one the reader cannot open (`archive_kind` only)
};

/// The kind of an archive with records `records` (names below the archive's folder), and the
/// record holding the program of model `model` (empty when there is none).
struct Layout {
  ArchiveKind kind = ArchiveKind::other;
  std::string program_record{};
  std::vector<std::string> models{};  ///< the models a PT2 archive holds (`models/<name>.json`)
};

inline Layout archive_layout(const std::vector<std::string>& records, std::string_view model) {
  Layout l;
  bool pt2 = false, compiled = false, code = false;
  for (const std::string& r : records) {
    constexpr std::string_view models = "models/";
    if (r.rfind(models, 0) == 0 && r.size() > models.size() + 5 &&
        r.compare(r.size() - 5, 5, ".json") == 0 && r.find('/', models.size()) == std::string::npos)
      l.models.push_back(r.substr(models.size(), r.size() - models.size() - 5));
    pt2 = pt2 || r == "archive_format";
    compiled = compiled || r.rfind("data/aotinductor/", 0) == 0;
    code = code || r.rfind("code/", 0) == 0;
    if (r == "serialized_exported_program.json") {
      l.kind = ArchiveKind::legacy_program;
      l.program_record = r;
    }
  }
  std::sort(l.models.begin(), l.models.end());
  if (l.kind == ArchiveKind::legacy_program) return l;
  if (!l.models.empty()) {
    l.kind = ArchiveKind::program;
    const std::string wanted(model);
    if (std::find(l.models.begin(), l.models.end(), wanted) != l.models.end())
      l.program_record = "models/" + wanted + ".json";
    else if (l.models.size() == 1 && model == "model")
      l.program_record = "models/" + l.models.front() + ".json";
    return l;
  }
  if (pt2 || compiled) {
    l.kind = compiled ? ArchiveKind::compiled_only : ArchiveKind::other;
    return l;
  }
  if (code) l.kind = ArchiveKind::torchscript;
  return l;
}

}  // namespace exported

/// A `torch.export` program read from its archive: the program, and where it came from. Its
/// weights stay in the archive (read when it runs).
struct ExportedProgram {
  std::filesystem::path file{};
  std::string model{};  ///< the model's name in the archive ("model")
  exported::ArchiveKind kind = exported::ArchiveKind::program;
  exported::Program program{};
};

namespace exported {

/// What the PyTorch archive `file` holds, by its records (`unreadable` for a file that is not a
/// zip archive the reader can open). Reads the archive's directory only.
inline ArchiveKind archive_kind(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  char head[4] = {};
  if (!in.read(head, 4) || std::string_view(head, 4) != std::string_view("PK\x03\x04", 4))
    return ArchiveKind::unreadable;
  in.close();
  try {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    return archive_layout(reader.getAllRecords(), "model").kind;
  } catch (const c10::Error&) {
    return ArchiveKind::unreadable;
  }
}

}  // namespace exported

/// True when `file` is a zip archive holding a `torch.export` program (by its records, whatever
/// its name); false for anything else, a TorchScript file included.
inline bool is_exported_archive(const std::filesystem::path& file) {
  const auto kind = exported::archive_kind(file);
  return kind == exported::ArchiveKind::program || kind == exported::ArchiveKind::legacy_program;
}

/// Reads the program of model `model` (default `model`, what `torch.export.save` writes) from
/// the `torch.export` archive `file` (`.pt2`, PyTorch 2.1 and later), without reading its
/// weights. Anything else throws `ExportedFileError`, one line naming the file and the fault: a
/// missing or unreadable file, not a zip archive, a truncated or corrupt one, a TorchScript file
/// (`load_model` reads those), an AOTInductor package without its program, an archive without
/// that model, a program of a newer schema than this reader knows.
inline ExportedProgram load_exported(const std::filesystem::path& file,
                                     std::string_view model = "model") {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) throw ExportedFileError(file, "no such file");
  if (std::filesystem::is_directory(status))
    throw ExportedFileError(file, "it is a directory, not a .pt2 archive");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ExportedFileError(file, "permission denied");
  char head[4] = {};
  in.read(head, 4);
  if (in.gcount() < 4 || std::string_view(head, 4) != std::string_view("PK\x03\x04", 4))
    throw ExportedFileError(file, "it is not a torch.export archive (not a zip file)");
  in.close();
  ExportedProgram ep;
  ep.file = file;
  ep.model = std::string(model);
  std::string text, weights_text, constants_text;
  try {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    const exported::Layout layout = exported::archive_layout(reader.getAllRecords(), model);
    ep.kind = layout.kind;
    switch (layout.kind) {
      case exported::ArchiveKind::torchscript:
        throw ExportedFileError(file,
                                "it is a TorchScript file, not a torch.export archive: "
                                "recorder::load_model reads it");
      case exported::ArchiveKind::compiled_only:
        throw ExportedFileError(file,
                                "it is an AOTInductor package (compiled code, no program): save "
                                "the program with torch.export.save(ep, path)");
      case exported::ArchiveKind::other:
        throw ExportedFileError(file,
                                "it is a zip archive without a torch.export program (no "
                                "models/*.json)");
      default:
        break;
    }
    if (layout.program_record.empty()) {
      std::string names;
      for (const std::string& m : layout.models) names += (names.empty() ? "" : ", ") + m;
      throw ExportedFileError(
          file, "it holds no model '" + std::string(model) + "' (it holds: " + names + ")");
    }
    if (layout.kind == exported::ArchiveKind::program)  // models/<name>.json
      ep.model = layout.program_record.substr(7, layout.program_record.size() - 12);
    const auto [data, size] = reader.getRecord(layout.program_record);
    text.assign(static_cast<const char*>(data.get()), size);
    const std::string weights = "data/weights/" + ep.model + "_weights_config.json";
    if (layout.kind == exported::ArchiveKind::program && reader.hasRecord(weights)) {
      const auto [w, wsize] = reader.getRecord(weights);
      weights_text.assign(static_cast<const char*>(w.get()), wsize);
    }
    const std::string constants = "data/constants/" + ep.model + "_constants_config.json";
    if (layout.kind == exported::ArchiveKind::program && reader.hasRecord(constants)) {
      const auto [c, csize] = reader.getRecord(constants);
      constants_text.assign(static_cast<const char*>(c.get()), csize);
    }
  } catch (const c10::Error& e) {
    std::string why = e.what_without_backtrace();
    why = why.substr(0, std::min(why.find('\n'), why.find(". This is an internal")));
    throw ExportedFileError(file, "it is a damaged zip archive (" + why + ")");
  }
  ep.program = exported::parse_program(text, file);
  if (!weights_text.empty()) exported::read_weights_config(weights_text, ep.program, file);
  if (!constants_text.empty())
    exported::read_weights_config(constants_text, ep.program, file, /*constants=*/true);
  return ep;
}

/// The trace of `program` read without running it (`exported::exported_trace`); its
/// `Trace::torch_version` is the libtorch in use, as a run's is.
inline Trace static_trace(const ExportedProgram& program,
                          const ExportedTraceOptions& options = {}) {
  Trace t = exported::exported_trace(program.program, options);
  t.torch_version = std::to_string(torch_version_major) + '.' + std::to_string(torch_version_minor);
  return t;
}

}  // namespace recorder
