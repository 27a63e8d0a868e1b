// RocksDB's Logger over common/log; see rocks_log.hpp.
#include "storage/rocks_log.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <rocksdb/env.h>

#include "common/log.hpp"

namespace aisched::storage {

namespace {

class json_logger final : public rocksdb::Logger {
 public:
  explicit json_logger(std::shared_ptr<damage_note> note)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), note_(std::move(note)) {}

  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }

  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel() || level == rocksdb::InfoLogLevel::HEADER_LEVEL) return;
    char buf[1024];
    std::vsnprintf(buf, sizeof buf, format, ap);
    if (note_ && std::strstr(buf, "Corruption") != nullptr) note_->set(buf);
    log::write(level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? log::level::error : log::level::warn,
               "rocksdb", {{"detail", buf}});
  }

 private:
  std::shared_ptr<damage_note> note_;
};

}  // namespace

void damage_note::set(std::string line) {
  std::lock_guard<std::mutex> guard(mtx_);
  line_ = std::move(line);
}

std::string damage_note::get() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return line_;
}

std::shared_ptr<rocksdb::Logger> make_json_logger(std::shared_ptr<damage_note> note) {
  return std::make_shared<json_logger>(std::move(note));
}

}  // namespace aisched::storage
