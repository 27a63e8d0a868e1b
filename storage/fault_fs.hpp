// Test-only fault injection under RocksDB: a FileSystemWrapper whose file
// writes (create, append, sync) fail with ENOSPC or EIO while a predicate says
// so. Included only by storage/rocks.cpp (it names RocksDB types); enabled
// through rocks::open_options::fault, never in a default start.
#pragma once

#include <functional>
#include <memory>

#include <rocksdb/file_system.h>

#include "storage/rocks.hpp"

namespace aisched::storage {

/// Wraps `target`; asks `fault` before every write-side file operation.
std::shared_ptr<rocksdb::FileSystem> make_fault_fs(std::shared_ptr<rocksdb::FileSystem> target,
                                                   std::function<fault_kind()> fault);

}  // namespace aisched::storage
