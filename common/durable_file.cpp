// Syncing a directory; see durable_file.hpp.
#include "common/durable_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace aisched {

int sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace aisched
