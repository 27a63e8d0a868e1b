// RocksDB's Logger over common/log; see rocks_log.hpp.
#include "storage/rocks_log.hpp"

#include <cstdarg>
#include <cstdio>

#include <rocksdb/env.h>

#include "common/log.hpp"

namespace aisched::storage {

namespace {

class json_logger final : public rocksdb::Logger {
 public:
  json_logger() : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL) {}

  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }

  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, format, ap);
    log::write(level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? log::level::error : log::level::warn,
               "rocksdb", {{"detail", buf}});
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> make_json_logger() { return std::make_shared<json_logger>(); }

}  // namespace aisched::storage
