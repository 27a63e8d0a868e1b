// The files of scheduled backups; see backup_files.hpp.
#include "actors/backup/backup_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>

#include "common/durable_file.hpp"
#include "common/backup_file.hpp"
#include "proto/errors.hpp"
#include "storage/backup_export.hpp"
#include "storage/format_version.hpp"

namespace aisched::backups {

namespace {

constexpr size_t piece_bytes = 1 << 20;  // read from RocksDB and written at a time
constexpr std::string_view prefix = "aisched-";
constexpr std::string_view suffix = ".snap";
constexpr size_t time_width = 20;  // YYYYMMDDTHHMMSS.mmmZ

caf::error io_error(const std::string& what, const std::string& path, int err) {
  return make_error(errc::storage_error, "backup-dir",
                    "scheduled backup: cannot " + what + " " + path + ": " + std::strerror(err));
}

/// Writes all of `data` to `fd`; errno on failure, else 0.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

caf::error sync_dir(const std::string& dir) {
  if (int err = sync_directory(dir)) return io_error("sync the directory", dir, err);
  return {};
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Writes the export of `db` into the open file `fd` (named `tmp`).
caf::expected<std::pair<uint64_t, uint64_t>> fill(storage::backup_export& source, int fd,
                                                  const std::string& tmp,
                                                  const std::atomic<bool>& stopping) {
  for (;;) {
    if (stopping.load())
      return make_error(errc::unavailable, "",
                        "scheduled backup: the node is stopping; " + tmp + " was abandoned");
    auto piece = source.next(piece_bytes);
    if (!piece) return piece.error();
    if (piece->empty()) break;
    if (int err = write_all(fd, *piece)) return io_error("write", tmp, err);
  }
  if (::fsync(fd) != 0) return io_error("sync", tmp, errno);
  return std::pair{source.bytes(), source.records()};
}

}  // namespace

std::string cluster_tag(std::string_view cluster_id) {
  std::string out;
  for (char c : cluster_id) {
    if (out.size() == 8) break;
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
  }
  return out.empty() ? "cluster" : out;
}

std::string file_name(unix_ms at, std::string_view tag, uint64_t index) {
  auto secs = static_cast<std::time_t>(at >= 0 ? at / 1000 : 0);
  auto ms = static_cast<int>(at >= 0 ? at % 1000 : 0);
  std::tm t{};
  ::gmtime_r(&secs, &t);
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%04d%02d%02dT%02d%02d%02d.%03dZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ms);
  return std::string(prefix) + stamp + "-" + std::string(tag) + "-" + std::to_string(index) +
         std::string(suffix);
}

bool is_backup_of(std::string_view name, std::string_view tag) {
  if (name.size() < prefix.size() + time_width + suffix.size()) return false;
  if (name.substr(0, prefix.size()) != prefix) return false;
  if (name.substr(name.size() - suffix.size()) != suffix) return false;
  auto stamp = name.substr(prefix.size(), time_width);
  if (!all_digits(stamp.substr(0, 8)) || stamp[8] != 'T' || !all_digits(stamp.substr(9, 6)) ||
      stamp[15] != '.' || !all_digits(stamp.substr(16, 3)) || stamp[19] != 'Z')
    return false;
  auto rest = name.substr(prefix.size() + time_width);  // -<tag>-<index>.snap
  rest.remove_suffix(suffix.size());
  if (rest.size() < tag.size() + 3 || rest[0] != '-' || rest.substr(1, tag.size()) != tag ||
      rest[1 + tag.size()] != '-')
    return false;
  return all_digits(rest.substr(tag.size() + 2));
}

caf::expected<written> write_backup(storage::rocks& db, const write_request& req,
                                    const std::atomic<bool>& stopping) {
  auto source = storage::backup_export::open(
      db, storage::backup_export::origin{req.node_id, req.written_by, req.at});
  if (!source) return source.error();
  auto& h = (*source)->header();
  auto tag = cluster_tag(h.cluster_id);
  written out;
  out.file = file_name(req.at, tag, h.index);
  out.index = h.index;
  auto path = req.dir + "/" + out.file;
  auto tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("create", tmp, errno);
  auto filled = fill(**source, fd, tmp, stopping);
  if (::close(fd) != 0 && filled) filled = io_error("close", tmp, errno);
  auto give_up = [&tmp](caf::error err) {
    ::unlink(tmp.c_str());
    return err;
  };
  if (!filled) return give_up(filled.error());
  out.bytes = filled->first;
  out.records = filled->second;
  out.checksum = (*source)->checksum();
  source->reset();  // releases the pinned snapshot before the read-back
  // Read back what reached the disk: what restore will read.
  {
    std::ifstream in(tmp, std::ios::binary);
    if (!in) return give_up(io_error("read back", tmp, errno));
    auto summary = backup::read_backup(in, storage::current_format);
    if (!summary)
      return give_up(make_error(errc::corrupted, "backup-dir",
                                "scheduled backup: " + tmp + " does not verify: " +
                                    view(summary.error()).message));
    if (summary->checksum != out.checksum || summary->records != out.records ||
        summary->bytes != out.bytes)
      return give_up(make_error(
          errc::corrupted, "backup-dir",
          "scheduled backup: " + tmp + " read back differs from what was written (sha256 " +
              summary->checksum + " of " + std::to_string(summary->bytes) + " bytes, wrote " +
              out.checksum + " of " + std::to_string(out.bytes) + ")"));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return give_up(io_error("rename " + tmp + " to", path, errno));
  if (auto err = sync_dir(req.dir)) return err;
  auto removed = rotate(req.dir, tag, req.keep, out.file);
  if (!removed)
    return make_error(errc::storage_error, "backup-dir",
                      "scheduled backup " + path + " was written, but rotation failed: " +
                          view(removed.error()).message);
  out.removed = std::move(*removed);
  return out;
}

caf::expected<std::vector<std::string>> rotate(const std::string& dir, std::string_view tag,
                                               uint32_t keep, const std::string& current) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name != current && is_backup_of(name, tag)) names.push_back(std::move(name));
  }
  if (ec) return io_error("list", dir, ec.value());
  std::sort(names.begin(), names.end(), std::greater<>());  // newest first
  std::vector<std::string> removed;
  uint32_t kept = 1;  // `current`
  for (auto& name : names) {
    if (kept < keep) {
      kept += 1;
      continue;
    }
    auto path = dir + "/" + name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return io_error("delete", path, errno);
    removed.push_back(name);
  }
  if (!removed.empty())
    if (auto err = sync_dir(dir)) return err;
  return removed;
}

}  // namespace aisched::backups
