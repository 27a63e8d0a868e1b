// A run's secrets in worker::execute_task, with real processes: the value is in
// the run's environment under its variable, and every byte the run writes
// reaches the stored tail and the live chunks with the value masked as ***,
// also when the run writes it in two parts with a pause between.
#include "actors/worker/executor_fixture.hpp"

namespace aisched::worker {
namespace {

using namespace testing_support;

constexpr const char* value = "s3cr3t-V4lue-xyz";

execute_request with_secret(execute_request req) {
  req.secret_env = {{"API_TOKEN", value}};
  req.redact = {value};
  return req;
}

TEST_F(executor_test, a_secret_is_in_the_environment_and_masked_in_the_output) {
  auto r = run(with_secret(shell(R"sh(test "$API_TOKEN" = "$(printf 's3cr3t-V4lue-%s' xyz)" && echo "ok $API_TOKEN")sh")));
  EXPECT_EQ(r.state, instance_state::success) << r.error << r.output;
  EXPECT_EQ(r.output, "ok ***\n");
}

TEST_F(executor_test, a_secret_written_in_two_parts_is_masked_in_tail_and_live_chunks) {
  std::string live;
  std::mutex m;
  auto r = run(with_secret(shell(R"(p="$API_TOKEN"; printf 'a:%s' "${p%????}"; sleep 0.3; )"
                           R"(printf '%s:b\n' "${p#"${p%????}"}"; echo "$p$p")")),
               never, [&](std::string_view chunk) {
                 std::lock_guard<std::mutex> g(m);
                 live.append(chunk);
               });
  EXPECT_EQ(r.state, instance_state::success) << r.error;
  EXPECT_EQ(r.output, "a:***:b\n***\n");
  std::lock_guard<std::mutex> g(m);
  EXPECT_EQ(live, r.output);
  EXPECT_EQ(live.find("s3cr3t"), std::string::npos);
}

TEST_F(executor_test, without_secrets_output_passes_unchanged) {
  auto r = run(shell("echo '***' s3cr3t-V4lue-xyz"));
  EXPECT_EQ(r.output, "*** s3cr3t-V4lue-xyz\n");
}

}  // namespace
}  // namespace aisched::worker
