// aisched-chaos, WAL damage; see wal_damage.hpp.
#include "tools/chaos/wal_damage.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace aisched::chaos {

namespace fs = std::filesystem;

namespace {

constexpr size_t damaged_bytes = 64;

/// The number of RocksDB file `name` ("000012.log" is 12), or -1 if it is not
/// a write-ahead log.
int64_t wal_number(const std::string& name) {
  auto stem = name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0
                  ? name.substr(0, name.size() - 4)
                  : std::string();
  if (stem.empty() || stem.size() > 18 || stem.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(stem);
}

}  // namespace

wal_damage damage_newest_wal(const std::string& data_dir, uintmax_t min_size) {
  wal_damage out;
  std::error_code ec;
  int64_t newest = -1;
  for (auto& e : fs::directory_iterator(data_dir, ec)) {
    std::error_code type_ec;
    auto n = wal_number(e.path().filename().string());
    if (n > newest && e.is_regular_file(type_ec)) {
      newest = n;
      out.file = e.path().string();
    }
  }
  if (ec) {
    out.file.clear();
    out.skipped = "cannot list " + data_dir + ": " + ec.message();
    return out;
  }
  if (newest < 0) {
    out.skipped = "no write-ahead log (*.log) in " + data_dir;
    return out;
  }
  out.size = fs::file_size(out.file, ec);
  if (ec || out.size < std::max<uintmax_t>(min_size, 2 * damaged_bytes)) {
    out.skipped = "the newest write-ahead log " + fs::path(out.file).filename().string() +
                  " has " + (ec ? "an unknown size" : std::to_string(out.size) + " bytes") +
                  ", under the " + std::to_string(min_size) +
                  " needed for damage in its middle rather than its last record";
    out.file.clear();
    return out;
  }
  out.offset = out.size / 2;
  std::fstream f(out.file, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes(damaged_bytes, '\0');
  f.seekg(static_cast<std::streamoff>(out.offset));
  f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  for (auto& c : bytes) c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(out.offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.flush();
  if (!f) {
    out.skipped = "cannot rewrite the middle of " + out.file;
    out.file.clear();
  }
  return out;
}

}  // namespace aisched::chaos
