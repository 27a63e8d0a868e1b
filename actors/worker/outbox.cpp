// Segmented append-only outbox of unacknowledged reports; see outbox.hpp.
#include "actors/worker/outbox.hpp"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>

#include "common/log.hpp"
#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "storage/rocks_log.hpp"

namespace aisched::worker {
namespace {

namespace fs = std::filesystem;

// A record: u32 body length, u32 checksum of the body, then the body:
// u8 kind, u32 key length, the key, and (puts) the encoded run_result: CAF's
// encoding in a put that builds of data formats 0 and 1 wrote, the wire
// codec's (proto/codec.hpp) in a wire put. Both read, so reports an earlier
// build left are sent after an upgrade; a live report moved keeps its kind.
constexpr uint8_t kind_put = 1;
constexpr uint8_t kind_erase = 2;
constexpr uint8_t kind_wire_put = 3;

bool is_put(uint8_t kind) { return kind == kind_put || kind == kind_wire_put; }

/// A report as a put of `kind` holds it.
caf::expected<proto::run_result> decode_report(uint8_t kind, std::string_view value) {
  if (kind == kind_put) return proto::format_1::decode<proto::run_result>(value);
  return proto::decode<proto::run_result>(value);
}

/// A put's kind and its value.
using put_value = std::pair<uint8_t, std::string>;
constexpr size_t header_bytes = 8;
constexpr size_t body_prefix = 5;
constexpr uint32_t max_body = 64u << 20;  // far above any report; guards a garbled length

uint32_t checksum(std::string_view body) {  // FNV-1a, 32 bits
  uint32_t h = 2166136261u;
  for (unsigned char c : body) h = (h ^ c) * 16777619u;
  return h;
}

void put_u32(std::string& out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

uint32_t get_u32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void add_record(std::string& out, uint8_t kind, std::string_view key, std::string_view value) {
  auto body_at = out.size() + header_bytes;
  put_u32(out, static_cast<uint32_t>(body_prefix + key.size() + value.size()));
  put_u32(out, 0);  // the checksum, once the body is in place
  out.push_back(static_cast<char>(kind));
  put_u32(out, static_cast<uint32_t>(key.size()));
  out.append(key);
  out.append(value);
  auto sum = checksum(std::string_view(out).substr(body_at));
  std::memcpy(out.data() + body_at - 4, &sum, 4);
}

/// Whether the test hook fails the next write (options::fail_writes); sets
/// errno as the failed system call would.
bool injected_failure(const outbox::options& opts) {
  if (!opts.fail_writes || !opts.fail_writes()) return false;
  errno = EIO;
  return true;
}

caf::error sys_error(const std::string& what) {
  return make_error(errc::storage_error, "outbox: " + what + ": " + std::strerror(errno));
}

caf::expected<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      auto err = sys_error("cannot read " + path);
      ::close(fd);
      return err;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

/// Calls `each(kind, key, value)` for every record of segment file `data`.
/// Returns the length of the whole records read: less than the file when its
/// last record is cut short, or when only zeros follow them (blocks a lost
/// machine's kernel never wrote). A record whose checksum fails is an error.
template <class Each>
caf::expected<size_t> parse(const std::string& data, const std::string& path, Each each) {
  size_t at = 0;
  while (at + header_bytes <= data.size()) {
    auto len = get_u32(data.data() + at);
    if (len == 0 && std::all_of(data.begin() + static_cast<std::ptrdiff_t>(at), data.end(),
                                [](char c) { return c == 0; }))
      break;  // cut short, as a partial record
    if (len < body_prefix || len > max_body)
      return make_error(errc::corrupted, "outbox record at " + path + ":" + std::to_string(at) +
                                             " has a bad length");
    if (at + header_bytes + len > data.size()) break;  // cut short
    std::string_view body(data.data() + at + header_bytes, len);
    if (checksum(body) != get_u32(data.data() + at + 4))
      return make_error(errc::corrupted, "outbox record at " + path + ":" + std::to_string(at) +
                                             " fails its checksum");
    auto kind = static_cast<uint8_t>(body[0]);
    auto key_len = get_u32(body.data() + 1);
    if ((!is_put(kind) && kind != kind_erase) || key_len > len - body_prefix)
      return make_error(errc::corrupted,
                        "outbox record at " + path + ":" + std::to_string(at) + " is malformed");
    each(kind, body.substr(body_prefix, key_len), body.substr(body_prefix + key_len));
    at += header_bytes + len;
  }
  return at;
}

std::string segment_name(uint64_t seq) {
  char name[40];
  std::snprintf(name, sizeof name, "seg-%020llu.outbox", static_cast<unsigned long long>(seq));
  return name;
}

bool parse_segment_name(const std::string& name, uint64_t& seq) {
  unsigned long long n = 0;
  char tail[8] = {};
  if (name.size() != segment_name(0).size() ||
      std::sscanf(name.c_str(), "seg-%20llu.%7s", &n, tail) != 2 || std::string(tail) != "outbox")
    return false;
  seq = n;
  return true;
}

/// The reports an outbox RocksDB wrote (before this format), by key.
caf::expected<std::map<std::string, std::string>> read_legacy(const std::string& dir) {
  rocksdb::Options opts;
  opts.info_log = storage::make_json_logger();  // never <dir>/LOG: see rocks_log.hpp
  rocksdb::DB* raw = nullptr;
  auto st = rocksdb::DB::Open(opts, dir, &raw);
  if (!st.ok())
    return make_error(errc::storage_error,
                      "cannot open the worker's former outbox: " + st.ToString());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::map<std::string, std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions{}));
  for (it->SeekToFirst(); it->Valid(); it->Next())
    out.emplace(it->key().ToString(), it->value().ToString());
  if (!it->status().ok())
    return make_error(errc::storage_error,
                      "cannot read the worker's former outbox: " + it->status().ToString());
  it.reset();
  db->Close();
  return out;
}

}  // namespace

std::string outbox::path_of(uint64_t seq) const { return dir_ + "/" + segment_name(seq); }

caf::expected<std::unique_ptr<outbox>> outbox::open(const std::string& dir, options opts) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    return make_error(errc::storage_error,
                      "cannot open worker outbox: " + dir + " is not a directory we can create");
  std::unique_ptr<outbox> box{new outbox};
  box->dir_ = dir;
  box->opts_ = opts;
  box->lock_fd_ = ::open((dir + "/outbox.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (box->lock_fd_ < 0) return sys_error("cannot open worker outbox lock in " + dir);
  if (::flock(box->lock_fd_, LOCK_EX | LOCK_NB) != 0)
    return make_error(errc::storage_error,
                      "cannot open worker outbox: " + dir + " is in use by another worker");

  // The segments, oldest first, replayed: the latest put of each key not
  // erased after it is live.
  std::vector<uint64_t> seqs;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    uint64_t seq = 0;
    if (parse_segment_name(e.path().filename().string(), seq)) seqs.push_back(seq);
  }
  if (ec) return make_error(errc::storage_error, "cannot list worker outbox " + dir);
  std::sort(seqs.begin(), seqs.end());
  for (size_t i = 1; i < seqs.size(); ++i)
    if (seqs[i] != seqs[i - 1] + 1)  // segments go oldest first only
      return make_error(errc::corrupted,
                        "outbox " + dir + " misses segment " + segment_name(seqs[i - 1] + 1));
  std::map<std::string, put_value> values;  // live key -> encoded report
  uint64_t newest_size = 0;                   // of the last segment, whole records only
  for (size_t i = 0; i < seqs.size(); ++i) {
    auto seq = seqs[i];
    box->segs_.push_back({seq, 0, 0});
    auto path = box->path_of(seq);
    auto data = read_file(path);
    if (!data) return data.error();
    auto whole =
        parse(*data, path, [&](uint8_t kind, std::string_view key, std::string_view value) {
          std::string k(key);
          box->forget(k);
          if (is_put(kind)) {
            box->where_[k] = seq;
            box->segs_.back().live += 1;
            box->segs_.back().puts += 1;
            values[k] = put_value{kind, std::string(value)};
          } else {
            values.erase(k);
          }
        });
    if (!whole) return whole.error();
    newest_size = *whole;
    if (*whole < data->size()) {
      if (i + 1 != seqs.size())
        return make_error(errc::corrupted, "outbox segment " + path + " ends in a partial record");
      // The process died writing it: that write was never acknowledged.
      log::warn("worker outbox: dropped a partial record at the end of a segment",
                {{"segment", path}, {"bytes", std::to_string(data->size() - *whole)}});
      if (::truncate(path.c_str(), static_cast<off_t>(*whole)) != 0)
        return sys_error("cannot truncate " + path);
    }
  }

  // An outbox RocksDB wrote: its reports move into the newest segment.
  auto legacy = fs::exists(dir + "/CURRENT", ec);
  std::map<std::string, std::string> former;
  if (legacy) {
    auto read = read_legacy(dir);
    if (!read) return read.error();
    former = std::move(*read);
  }
  // Appends go on in the newest segment (a reopen adds no file), or a first one.
  if (box->segs_.empty()) {
    if (auto err = box->start_segment()) return err;
  } else {
    auto path = box->path_of(box->segs_.back().seq);
    box->fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (box->fd_ < 0) return sys_error("cannot open " + path);
    box->size_ = newest_size;
  }
  if (!former.empty()) {
    std::string records;
    for (auto& [key, value] : former) {
      add_record(records, kind_put, key, value);
      box->forget(key);
      box->where_[key] = box->segs_.back().seq;
      values[key] = put_value{kind_put, value};
    }
    if (auto err = box->append(records, former.size())) return err;
    if (::fdatasync(box->fd_) != 0) return sys_error("cannot sync the moved reports");
  }
  if (legacy) {
    rocksdb::Options opts;
    opts.info_log = storage::make_json_logger();
    auto st = rocksdb::DestroyDB(dir, opts);
    if (!st.ok())
      return make_error(errc::storage_error,
                        "cannot remove the worker's former outbox: " + st.ToString());
  }

  for (auto& [key, value] : values) {
    auto r = decode_report(value.first, value.second);
    if (!r)
      return make_error(errc::corrupted,
                        "outbox record " + key + " does not decode: " + view(r.error()).message);
    box->stored_.emplace_back(key, std::move(*r));
  }
  if (auto err = box->reclaim()) return err;
  return box;
}

outbox::~outbox() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

std::vector<std::pair<std::string, proto::run_result>> outbox::load() { return std::move(stored_); }

void outbox::forget(const std::string& key) {
  auto i = where_.find(key);
  if (i == where_.end()) return;
  segs_[i->second - segs_.front().seq].live -= 1;
  where_.erase(i);
}

caf::error outbox::start_segment() {
  auto seq = segs_.empty() ? 1 : segs_.back().seq + 1;
  int fd = -1;
  if (!injected_failure(opts_))
    fd = ::open(path_of(seq).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return sys_error("cannot create " + path_of(seq));
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  size_ = 0;
  segs_.push_back({seq, 0, 0});
  return {};
}

caf::error outbox::append(const std::string& records, uint64_t puts) {
  size_t done = 0;
  while (done < records.size()) {
    ssize_t n = -1;
    if (!injected_failure(opts_)) n = ::write(fd_, records.data() + done, records.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      auto err = sys_error("write to " + path_of(segs_.back().seq) + " failed");
      // Nothing of this write stays: the next one starts on a whole record.
      if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
        ::close(fd_);
        fd_ = -1;  // no further writes: the segment ends in a partial record
      }
      return err;
    }
    done += static_cast<size_t>(n);
  }
  size_ += records.size();
  segs_.back().live += puts;
  segs_.back().puts += puts;
  return {};
}

caf::error outbox::reclaim() {
  while (segs_.size() > 1 && segs_.front().live == 0) {
    if (::unlink(path_of(segs_.front().seq).c_str()) != 0 && errno != ENOENT)
      return sys_error("cannot remove " + path_of(segs_.front().seq));
    segs_.pop_front();
  }
  return {};
}

caf::error outbox::put(
    const std::vector<std::pair<std::string, const proto::run_result*>>& reports) {
  if (fd_ < 0) return make_error(errc::storage_error, "outbox: a failed write left it unusable");
  std::string records;
  records.reserve(reports.size() * 160);  // a no-op's report is about 130 bytes framed
  for (auto& [key, r] : reports) add_record(records, kind_wire_put, key, proto::encode(*r));
  if (size_ > 0 && size_ + records.size() > opts_.segment_bytes) {
    if (auto err = start_segment()) return err;
    // An oldest segment mostly dead: its live reports are written again here
    // (one wholly dead just goes).
    if (auto err = reclaim()) return err;
    while (segs_.size() > 1 && segs_.front().live * 4 < segs_.front().puts) {
      auto& front = segs_.front();
      auto path = path_of(front.seq);
      auto data = read_file(path);
      if (!data) return data.error();
      std::map<std::string, put_value> live;
      auto whole = parse(*data, path, [&](uint8_t kind, std::string_view key, std::string_view v) {
        std::string k(key);
        if (!is_put(kind)) return;
        if (auto i = where_.find(k); i != where_.end() && i->second == front.seq)
          live[k] = put_value{kind, std::string(v)};
      });
      if (!whole) return whole.error();
      std::string moved;
      for (auto& [key, value] : live) add_record(moved, value.first, key, value.second);
      if (auto err = append(moved, live.size())) return err;
      for (auto& [key, value] : live) where_[key] = segs_.back().seq;
      segs_.front().live = 0;
      if (auto err = reclaim()) return err;
    }
  }
  if (auto err = append(records, reports.size())) return err;
  for (auto& [key, r] : reports) {
    auto& seq = where_[key];
    if (seq != 0) segs_[seq - segs_.front().seq].live -= 1;  // put again: the older is dead
    seq = segs_.back().seq;
  }
  return reclaim();
}

caf::error outbox::erase(const std::vector<std::string>& keys) {
  if (fd_ < 0) return make_error(errc::storage_error, "outbox: a failed write left it unusable");
  std::string records;
  records.reserve(keys.size() * 48);
  for (auto& k : keys)
    if (where_.count(k)) add_record(records, kind_erase, k, {});
  if (records.empty()) return {};
  if (auto err = append(records, 0)) return err;
  for (auto& k : keys) forget(k);
  return reclaim();
}

}  // namespace aisched::worker
