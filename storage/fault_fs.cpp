// Fault-injecting file system for tests; see fault_fs.hpp. Reads are never
// failed: a full or broken disk still serves what it holds.
#include "storage/fault_fs.hpp"

#include <sys/stat.h>

#include <fstream>

namespace aisched::storage {

namespace {

/// What a write fails with under fault `k`; `sync` tells an fsync from other writes.
rocksdb::IOStatus injected(fault_kind k, bool sync = false) {
  switch (k) {
    case fault_kind::none: return rocksdb::IOStatus::OK();
    case fault_kind::no_space: return rocksdb::IOStatus::NoSpace("No space left on device (injected)");
    case fault_kind::io_error: return rocksdb::IOStatus::IOError("Input/output error (injected)");
    case fault_kind::sync_error:
      if (sync) return rocksdb::IOStatus::IOError("Input/output error on fsync (injected)");
      return rocksdb::IOStatus::OK();
  }
  return rocksdb::IOStatus::OK();
}

using fault_fn = std::function<fault_kind()>;

class fault_file : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  fault_file(std::unique_ptr<rocksdb::FSWritableFile> f, fault_fn fault)
      : FSWritableFileOwnerWrapper(std::move(f)), fault_(std::move(fault)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_()); !s.ok()) return s;
    return FSWritableFileOwnerWrapper::Append(data, o, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& v,
                           rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_()); !s.ok()) return s;
    return FSWritableFileOwnerWrapper::Append(data, o, v, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_()); !s.ok()) return s;
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, dbg);
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                     const rocksdb::IOOptions& o,
                                     const rocksdb::DataVerificationInfo& v,
                                     rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_()); !s.ok()) return s;
    return FSWritableFileOwnerWrapper::PositionedAppend(data, offset, o, v, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_(), true); !s.ok()) return s;
    return FSWritableFileOwnerWrapper::Sync(o, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_(), true); !s.ok()) return s;
    return FSWritableFileOwnerWrapper::Fsync(o, dbg);
  }

 private:
  fault_fn fault_;
};

class fault_fs : public rocksdb::FileSystemWrapper {
 public:
  fault_fs(std::shared_ptr<rocksdb::FileSystem> target, fault_fn fault)
      : FileSystemWrapper(std::move(target)), fault_(std::move(fault)) {}

  const char* Name() const override { return "aisched_fault_fs"; }

  // A full disk also says it is full. RocksDB's SstFileManager polls this to
  // decide when to resume after ENOSPC; if it tried while writes still fail,
  // the failed recovery flush would make the error fatal (RocksDB 7.8).
  rocksdb::IOStatus GetFreeSpace(const std::string& path, const rocksdb::IOOptions& o,
                                 uint64_t* free, rocksdb::IODebugContext* dbg) override {
    if (fault_() == fault_kind::no_space) {
      *free = 0;
      return rocksdb::IOStatus::OK();
    }
    return FileSystemWrapper::GetFreeSpace(path, o, free, dbg);
  }

  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_()); !s.ok()) return s;
    return wrap(FileSystemWrapper::NewWritableFile(f, o, r, dbg), r);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_()); !s.ok()) return s;
    return wrap(FileSystemWrapper::ReopenWritableFile(f, o, r, dbg), r);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                                      const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r,
                                      rocksdb::IODebugContext* dbg) override {
    if (auto s = injected(fault_()); !s.ok()) return s;
    return wrap(FileSystemWrapper::ReuseWritableFile(f, old, o, r, dbg), r);
  }

 private:
  rocksdb::IOStatus wrap(rocksdb::IOStatus s, std::unique_ptr<rocksdb::FSWritableFile>* r) {
    if (s.ok()) *r = std::make_unique<fault_file>(std::move(*r), fault_);
    return s;
  }
  fault_fn fault_;
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> make_fault_fs(std::shared_ptr<rocksdb::FileSystem> target,
                                                   std::function<fault_kind()> fault) {
  return std::make_shared<fault_fs>(std::move(target), std::move(fault));
}

std::function<fault_kind()> fault_while_file_exists(std::string path) {
  return [path = std::move(path)] {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return fault_kind::none;
    std::ifstream in(path);
    std::string word;
    in >> word;
    if (word == "eio") return fault_kind::io_error;
    if (word == "esync") return fault_kind::sync_error;
    return fault_kind::no_space;
  };
}

}  // namespace aisched::storage
