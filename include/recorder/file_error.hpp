#pragma once
/// The error every writer and reader of files throws: `recorder::FileError`, naming the path.

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace recorder {

/// A file could not be written or read. `what()` is one line, `recorder: cannot <action>
/// '<path>': <reason>`; `path()` is the file (or folder) concerned.
///
/// One rule for every writer (`render_to_file`, `save`, `save_per_layer`): it creates its target
/// (a file; for `save_per_layer` the folder of files) and never a missing parent folder; a
/// missing or unusable parent folder is reported before any work is done, and nothing is
/// written.
class FileError : public std::runtime_error {
 public:
  FileError(std::filesystem::path path, std::string_view action, std::string_view reason)
      : std::runtime_error("recorder: cannot " + std::string(action) + " '" + path.string() +
                           "': " + std::string(reason)),
        path_(std::move(path)) {}

  /// The file or folder that could not be written or read.
  const std::filesystem::path& path() const noexcept { return path_; }

 protected:
  /// For errors that say more than "cannot <action>" (`ModelFileError`): `message` as it is.
  FileError(std::string message, std::filesystem::path path)
      : std::runtime_error(std::move(message)), path_(std::move(path)) {}

 private:
  std::filesystem::path path_;
};

}  // namespace recorder
