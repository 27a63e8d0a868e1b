// The data directory's format version; see format_version.hpp.
#include "storage/format_version.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "common/durable_file.hpp"
#include "proto/errors.hpp"

namespace aisched::storage {

namespace {

constexpr const char* file_name = "FORMAT";

/// Writes `text` to `path` durably: a temporary file, fsynced, renamed over
/// `path`, and the directory fsynced, so a crash leaves the old file or the new.
caf::error write_durably(const std::string& dir, const std::string& text) {
  auto path = dir + "/" + file_name;
  auto tmp = path + ".tmp";
  auto fail = [&](const std::string& what, int err) {
    return make_error(errc::storage_error, "data_dir",
                      "cannot " + what + " " + tmp + ": " + std::strerror(err));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail("create", errno);
  auto written = ::write(fd, text.data(), text.size());
  int err = written == static_cast<ssize_t>(text.size()) ? 0 : (written < 0 ? errno : EIO);
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  ::close(fd);
  if (err != 0) return fail("write", err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename", errno);
  if (int e = sync_directory(dir)) return fail("sync the directory of", e);
  return {};
}

}  // namespace

caf::expected<format_stamp> parse_format(const std::string& text) {
  format_stamp out;
  bool has_version = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto space = line.find(' ');
    auto key = line.substr(0, space);
    auto value = space == std::string::npos ? std::string() : line.substr(space + 1);
    if (key == "aisched-format") {
      char* end = nullptr;
      errno = 0;
      auto v = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || v > UINT32_MAX)
        return make_error(errc::corrupted, "FORMAT",
                          "the format version is not a number: \"" + value + "\"");
      out.version = static_cast<uint32_t>(v);
      has_version = true;
    } else if (key == "written-by") {
      out.written_by = value;
    }  // other keys: written by a newer build, which the version then says
  }
  if (!has_version)
    return make_error(errc::corrupted, "FORMAT", "no \"aisched-format\" line");
  return out;
}

std::string format_text(const format_stamp& s) {
  return "aisched-format " + std::to_string(s.version) + "\nwritten-by " + s.written_by + "\n";
}

caf::expected<format_stamp> read_format(const std::string& dir) {
  auto path = dir + "/" + file_name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return format_stamp{};
  std::ifstream in(path);
  if (!in) {
    return make_error(errc::storage_error, "data_dir",
                      "cannot read " + path + ": " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto s = parse_format(text.str());
  if (!s)
    return make_error(errc::corrupted, "data_dir", path + " is damaged: " + view(s.error()).message);
  return s;
}

caf::error write_format(const std::string& dir, const format_stamp& s) {
  return write_durably(dir, format_text(s));
}

caf::expected<format_stamp> check_format(const std::string& dir, const std::string& build) {
  auto found = read_format(dir);
  if (!found) return found.error();
  if (found->version > current_format)
    return make_error(
        errc::invalid_argument, "data_dir",
        "the data directory " + dir + " holds format " + std::to_string(found->version) +
            (found->written_by.empty() ? "" : ", written by aisched " + found->written_by) +
            ", newer than format " + std::to_string(current_format) + " that this build (" +
            build + ") reads: start that build or a newer one; nothing was changed");
  return found;
}

}  // namespace aisched::storage
