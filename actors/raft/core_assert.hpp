// The raft core's invariant check, shared by its .cpp files (core.cpp, core_log.cpp).
#pragma once

// A broken invariant aborts with a message, in release builds too (TigerStyle):
// a member that runs on past one can silently lose committed data. Used inside
// core's member functions; `fail` prints the member's id, term and role.
#define AISCHED_RAFT_ASSERT(cond, what)       \
  do {                                        \
    if (!(cond)) fail(#cond, what, __LINE__); \
  } while (false)
