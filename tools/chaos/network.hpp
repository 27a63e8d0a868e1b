// aisched-chaos, network: where the machine permits network namespaces, the
// harness moves itself into a private one and gives every node its own, linked
// by a veth pair to a bridge (10.99.0.0/24, the harness at .254), so that a
// partition is one link set down. Where it does not, every node shares the
// host's loopback and partitions are skipped. Uses iproute2 (`ip`, `nsenter`).
#pragma once

#include <sys/types.h>

#include <string>

namespace aisched::chaos {

class network {
 public:
  /// Tries to set up the private namespace and the bridge. Must run before the
  /// harness starts any thread (unshare() moves only the calling thread, and
  /// threads inherit it). `enabled()` says whether it worked, `skipped()` why not.
  explicit network(bool wanted);

  bool enabled() const { return enabled_; }
  const std::string& skipped() const { return skipped_; }

  /// The address node number `slot` (1-based) listens on: 10.99.0.<slot>, or
  /// 127.0.0.1 without namespaces.
  std::string host_of(int slot) const;

  /// Gives process `pid` (which has unshared its network namespace and waits)
  /// its link to the bridge with address host_of(slot). "" or the error.
  std::string attach(pid_t pid, int slot);

  /// Cuts (or heals) the link of node `slot`: it can reach no one and no one it.
  std::string set_link(int slot, bool up);

 private:
  std::string link_name(int slot) const;

  bool enabled_ = false;
  std::string skipped_;
  int generation_[16] = {};  // per slot: links of dead namespaces vanish asynchronously
};

}  // namespace aisched::chaos
