// Fencing by leader term (issue 41): a deposed leader's late request is
// refused once a newer leader reached the worker.
#include "worker_actor_fixture.hpp"

namespace aisched::worker {
namespace {

// A leader that was deposed while stopped (SIGSTOP, a long pause) still sends
// what it placed; its successor may have placed the same attempt elsewhere.
// The worker refuses a request of a term older than one it has seen, whether
// it saw it in a request or when the registrar asked what it holds for a leader.
TEST_F(worker_actor_test, a_deposed_leaders_late_request_is_refused_and_never_runs) {
  auto ran = dir_ / "stale-ran";
  auto req = [&](std::string id, uint64_t term, std::string cmd = "true") {
    auto r = shell(std::move(id), std::move(cmd));
    r.leader_term = term;
    return r;
  };
  ASSERT_EQ(execute(req("7-1-0", 5)), true);
  ASSERT_TRUE(next_report());  // running
  ASSERT_TRUE(next_report());  // success
  auto stale = refusal(req("7-2-0", 4, "touch '" + ran.string() + "'"));
  EXPECT_EQ(stale.code, errc::not_leader) << stale.message;
  EXPECT_NE(stale.message.find("term 4"), std::string::npos) << stale.message;
  expect_no_report();
  EXPECT_FALSE(fs::exists(ran)) << "a stale leader's run started";

  // The registrar asked for the leader of term 7: term 6 is stale from now on.
  held(worker_, nullptr, 7);  // the finished runs, not acknowledged here
  EXPECT_EQ(refusal(req("7-3-0", 6)).code, errc::not_leader);
  ASSERT_EQ(execute(req("7-4-0", 7)), true);  // the current leader's
  ASSERT_TRUE(next_report());
  ASSERT_TRUE(next_report());
  ASSERT_EQ(execute(req("7-5-0", 0)), true);  // unfenced (no leader's router)
  ASSERT_TRUE(next_report());
  ASSERT_TRUE(next_report());
  expect_no_report();

  // Another cluster (a group recovered from a lost quorum): its terms start
  // again, and only they compare from now on.
  held(worker_, nullptr, 2, "c2");
  ASSERT_EQ(execute(req("7-6-0", 2)), true);
  ASSERT_TRUE(next_report());
  ASSERT_TRUE(next_report());
  EXPECT_EQ(refusal(req("7-7-0", 1)).code, errc::not_leader);
  expect_no_report();
}

}  // namespace
}  // namespace aisched::worker
