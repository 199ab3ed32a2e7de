#pragma once
/// Writes a whole file or nothing: a temporary file in the same folder, then a rename (POSIX).

#include <recorder/file_error.hpp>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace recorder::detail {

/// The `FileError` thrown when `what` ("write") on `path` failed with `errno` value `err`.
inline FileError file_error(std::string_view what, const std::filesystem::path& path, int err) {
  return FileError(path, what, std::generic_category().message(err));
}

/// Throws `FileError` unless the folder `target` goes into exists and is a folder (`FileError`'s
/// rule: writers never create a missing parent). Cheap: writers call it before their work.
inline void check_parent_folder(const std::filesystem::path& target,
                                std::string_view action = "write") {
  if (target.empty()) throw FileError(target, action, "the path is empty");
  const std::filesystem::path folder =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(folder, ec);
  if (!std::filesystem::exists(st))
    throw FileError(target, action,
                    std::generic_category().message(ENOENT) + " (folder '" + folder.string() +
                        "' does not exist)");
  if (!std::filesystem::is_directory(st))
    throw FileError(
        target, action,
        std::generic_category().message(ENOTDIR) + " ('" + folder.string() + "' is not a folder)");
}

/// Replaces (or creates) `path` with exactly `content`.
///
/// The bytes go to a fresh temporary file next to `path` (so the rename stays on one file
/// system), are flushed with `fsync`, and the file is renamed over `path`. Readers see either
/// the old file or the new one, never a partial one. On any failure (missing folder, no
/// permission, full disk, `path` is a folder) the temporary file is removed, an existing
/// `path` is left untouched, and a `FileError` naming `path` and the OS reason is thrown.
/// The new file gets the usual `0666 & ~umask` permissions.
inline void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  check_parent_folder(path);
  const std::filesystem::path folder =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");

  std::random_device entropy;
  std::filesystem::path temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    const std::uint64_t r = (std::uint64_t{entropy()} << 32) ^ entropy();
    temp = folder / (".recorder-" + std::to_string(r) + ".tmp");
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) throw file_error("write", path, errno);
  }
  if (fd < 0) throw file_error("write", path, EEXIST);

  const auto fail = [&](int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    return file_error("write", path, err);
  };
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ::ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw fail(errno);
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) throw fail(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw file_error("write", path, err);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw file_error("write", path, err);
  }
}

}  // namespace recorder::detail
