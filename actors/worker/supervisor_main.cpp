// `aisched-supervisor`: started by a worker for each shell run (see supervisor.hpp
// for its descriptors). Not for people: it refuses to run unless its parent is the
// node named in the spec it reads from descriptor 4.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "actors/worker/supervisor.hpp"

using namespace aisched::worker;

namespace {

[[noreturn]] void refuse(int err) {
  run_status s;
  s.kind = run_status::setup_failed;
  s.stage = stage_spec;
  s.err = err;
  (void)!write(status_fd_no, &s, sizeof s);
  _exit(126);
}

}  // namespace

int main() {
  // The node's death (before or after the spec is read) ends this process; no other
  // process of this user may read its memory (the spec holds the run's secrets).
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  close_from(spec_fd_no + 1);  // posix_spawn closed them already; a node descriptor never lingers
  std::string bytes;
  char buf[16384];
  for (;;) {
    ssize_t n = read(spec_fd_no, buf, sizeof buf);
    if (n > 0) {
      bytes.append(buf, static_cast<size_t>(n));
      if (bytes.size() > (64u << 20)) refuse(E2BIG);
      continue;
    }
    if (n == 0) break;
    if (errno != EINTR) refuse(errno);
  }
  close(spec_fd_no);
  supervisor_spec spec;
  if (!parse_spec(bytes, spec)) refuse(EINVAL);
  if (getppid() != spec.node_pid) _exit(1);  // the node died before PDEATHSIG was set
  supervise(spec);
}
