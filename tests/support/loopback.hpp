// A listening TCP socket on 127.0.0.1 for the loopback servers tests own.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace aisched::test {

/// Listens on 127.0.0.1 at a port the kernel picks; returns the socket and sets
/// `port`. Throws std::runtime_error when it cannot (a broken test machine).
inline int listen_loopback(int backlog, uint16_t& port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("bind/listen failed");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace aisched::test
