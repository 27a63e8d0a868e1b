// Tests for the analysis actor on CAF's test coordinator: a raft group of one
// over RocksDB, the store actor, and the analysis actor subscribed to commits,
// with a scripted judge in place of the LLM client. A run that fails for the
// last time is judged once and the model's analysis stored (source "llm"); an
// unusable or failed answer stores the rules' analysis with the reason (and the
// judge's check rejects exactly those answers, so they count as invalid); runs
// with attempts left, and everything without a model, are not judged; reads
// without a stored analysis get the rules' answer.
#define CAF_GTEST_DSL_IMPL
#include "support/caf_gtest_dsl.hpp"
#include "support/local_ai_writer.hpp"
#include "support/single_node.hpp"

#include <functional>
#include <string>
#include <vector>

#include "actors/ai_features/analysis_actor.hpp"
#include "common/clock.hpp"
#include "proto/errors.hpp"
#include "proto/registry.hpp"
#include "storage/rocks.hpp"

namespace aisched::ai {
namespace {

using proto::instance_state;

struct analysis_test_config : caf::actor_system_config {
  analysis_test_config() { proto::register_types(*this); }
};

const char* fenced_answer =
    "Here you go:\n```json\n{\"summary\":\"pg_dump is missing on the worker\",\"severity\":"
    "\"high\",\"categories\":[\"command_not_found\"],\"root_cause\":\"postgresql-client not "
    "installed\",\"fix\":\"apt-get install postgresql-client\",\"confidence\":0.9}\n```";

class analysis_actor_test : public test_coordinator_fixture<analysis_test_config>,
                            public ::testing::Test {
 protected:
  /// The judge's scripted reply: text, or an error when `fail` is set.
  struct script {
    std::string text = fenced_answer;
    bool fail = false;
  };

  void start(bool with_model) {
    node_ = test::start_single_node(sys, "analysis");
    analysis_options opts;
    opts.write = test::local_ai_writer(node_.db);
    if (with_model)
      opts.judge = [this](judge_request r, judge_done done) {
        if (script_.fail) {
          calls_.push_back(std::move(r));
          return done(make_error(errc::unavailable, "llm", "connect refused"));
        }
        // As the LLM judge does: the feature's check first (it decides the
        // metric), then the text.
        EXPECT_TRUE(r.check) << "a judged feature must say which answers it accepts";
        verdicts_.push_back(r.check ? !r.check(script_.text) : true);
        calls_.push_back(std::move(r));
        done(script_.text);
      };
    analysis_ = sys.spawn(analysis_actor_impl, node_.db, node_.store, opts);
    caf::anon_send(node_.raft, proto::subscribe_atom::value,
                   caf::actor_cast<proto::commit_listener_actor>(analysis_));
    sched.run();
  }

  ~analysis_actor_test() override {
    caf::anon_send_exit(analysis_, caf::exit_reason::user_shutdown);
    test::stop_single_node(node_);
    sched.run();
    analysis_ = nullptr;
    test::remove_single_node(node_);
  }

  caf::expected<proto::applied> propose(proto::command cmd) {
    auto out = test::propose_via(*this, node_.raft, std::move(cmd));
    sched.run();  // the commit reaches the analysis actor, its reads and the judge's answer
    return out;
  }

  /// Creates a shell task, fires, dispatches and reports one run ending in
  /// `state` with `exit_code` and `output`; returns the instance id.
  std::string run(instance_state state, int32_t exit_code, std::string output,
                  uint32_t max_attempts = 1) {
    proto::task t;
    t.name = "backup";
    t.command = "pg_dump shop";
    t.retry.max_attempts = max_attempts;
    t.created_at = t.updated_at = system_now_ms();
    auto created = propose(proto::create_task{t});
    EXPECT_TRUE(created) << sys.render(created.error());
    auto id = created->tasks.at(0).id;
    auto slot = system_now_ms();
    EXPECT_TRUE(propose(proto::fire{node_.term, slot, {proto::fire_slot{id, slot, "t"}}}));
    auto inst = proto::make_instance_id(id, slot, 0);
    EXPECT_TRUE(propose(proto::dispatch{node_.term, slot, {proto::dispatch_entry{inst, "w1"}}}));
    proto::run_result r;
    r.instance_id = inst;
    r.worker_id = "w1";
    r.state = state;
    r.exit_code = exit_code;
    r.error = "exit status " + std::to_string(exit_code);
    r.output = std::move(output);
    r.started_at = slot;
    r.finished_at = slot + 10;
    auto reported = propose(proto::report_results{node_.term, slot + 10, {r}});
    EXPECT_TRUE(reported) << sys.render(reported.error());
    return inst;
  }

  std::optional<proto::failure_analysis> stored(const std::string& inst) {
    auto a = load_analysis(*node_.db, "default", inst);
    EXPECT_TRUE(a) << sys.render(a.error());
    return a ? *a : std::nullopt;
  }

  template <class Atom>
  caf::expected<proto::failure_analysis> ask(Atom atom, const std::string& inst) {
    caf::expected<proto::failure_analysis> out{caf::make_error(caf::sec::runtime_error, "none")};
    auto h = self->request(analysis_, caf::infinite, atom, std::string("default"), inst);
    sched.run();
    h.receive([&](proto::failure_analysis& a) { out = std::move(a); },
              [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  test::single_node node_;
  proto::analysis_actor analysis_;
  std::vector<judge_request> calls_;
  std::vector<bool> verdicts_;  // the check's verdict on each answer: true = accepted
  script script_;
};

TEST_F(analysis_actor_test, final_failure_is_judged_once_and_stored) {
  start(true);
  auto inst = run(instance_state::failed, 127, "sh: 1: pg_dump: not found\n");
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].feature, "analysis");
  EXPECT_NE(calls_[0].user.find("pg_dump: not found"), std::string::npos) << calls_[0].user;
  EXPECT_NE(calls_[0].user.find("command_not_found"), std::string::npos)
      << "the rules' reading goes to the model as a fact";
  EXPECT_EQ(verdicts_, std::vector<bool>{true});
  auto a = stored(inst);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->source, "llm");
  EXPECT_EQ(a->summary, "pg_dump is missing on the worker");
  EXPECT_EQ(a->instance_id, inst);
  EXPECT_GT(a->analyzed_at, 0);
  auto served = ask(proto::get_analysis_atom::value, inst);
  ASSERT_TRUE(served);
  EXPECT_EQ(*served, *a);
}

TEST_F(analysis_actor_test, unusable_answer_stores_the_rules_with_the_reason) {
  start(true);
  script_.text = "It is probably DNS. Severity: catastrophic.";
  auto inst = run(instance_state::failed, 127, "sh: 1: pg_dump: not found\n");
  auto a = stored(inst);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->source, "rules");
  EXPECT_EQ(a->categories.at(0), "command_not_found");
  EXPECT_NE(a->llm_error.find("rejected"), std::string::npos) << a->llm_error;

  script_.text = R"({"summary":"x","severity":"catastrophic","categories":[],"root_cause":"y",
                     "fix":"z","confidence":0.5})";
  auto again = ask(proto::analyze_atom::value, inst);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->source, "rules");
  EXPECT_NE(again->llm_error.find("severity"), std::string::npos) << again->llm_error;
  EXPECT_EQ(verdicts_, (std::vector<bool>{false, false}))
      << "the check rejects what the actor rejects, so the judge counts both as invalid";
}

TEST_F(analysis_actor_test, model_failure_stores_the_rules_with_the_reason) {
  start(true);
  script_.fail = true;
  auto inst = run(instance_state::timed_out, 137, "");
  auto a = stored(inst);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->source, "rules");
  EXPECT_EQ(a->categories.at(0), "timeout");
  EXPECT_NE(a->llm_error.find("model unavailable"), std::string::npos) << a->llm_error;
}

TEST_F(analysis_actor_test, runs_with_attempts_left_and_successes_are_not_judged) {
  start(true);
  run(instance_state::failed, 1, "boom", /*max_attempts=*/3);  // -> retry_waiting
  run(instance_state::success, 0, "ok");
  EXPECT_TRUE(calls_.empty());
}

TEST_F(analysis_actor_test, without_a_model_nothing_is_stored_and_reads_get_the_rules) {
  start(false);
  auto inst = run(instance_state::failed, 137, "Killed\n");
  EXPECT_FALSE(stored(inst));
  auto a = ask(proto::get_analysis_atom::value, inst);
  ASSERT_TRUE(a) << sys.render(a.error());
  EXPECT_EQ(a->source, "rules");
  EXPECT_EQ(a->categories.at(0), "killed");
  EXPECT_EQ(a->analyzed_at, 0);
  auto made = ask(proto::analyze_atom::value, inst);
  ASSERT_TRUE(made);
  EXPECT_TRUE(stored(inst));
  auto missing = ask(proto::get_analysis_atom::value, "999-1-0");
  ASSERT_FALSE(missing);
  EXPECT_EQ(view(missing.error()).code, errc::not_found);
}

}  // namespace
}  // namespace aisched::ai
