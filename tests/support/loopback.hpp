// Loopback sockets tests own: a listening one for their servers, and a port
// that refuses connections.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

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

/// A loopback port where connecting is refused: a bound socket that never
/// listens, so no one else can take the port while this object lives.
class refused_port {
 public:
  refused_port() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      close(fd_);
      throw std::runtime_error("bind failed");
    }
    port_ = ntohs(addr.sin_port);
  }
  ~refused_port() { close(fd_); }
  refused_port(const refused_port&) = delete;
  refused_port& operator=(const refused_port&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace aisched::test
