// The deterministic task-draft parser understands the common phrasings.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "actors/ai_features/task_draft.hpp"

using namespace aisched::ai;

namespace {

boost::json::object draft(const std::string& text) {
  std::string why;
  auto d = draft_from_text(text, why);
  EXPECT_TRUE(d) << text << ": " << why;
  return d ? *d : boost::json::object{};
}

std::string sched(const boost::json::object& d) {
  auto* s = d.if_contains("schedule");
  return s ? std::string(s->as_string()) : "";
}

}  // namespace

TEST(task_draft, every_n_minutes_run_command) {
  auto d = draft("every 5 minutes run /opt/jobs/sync.sh --full");
  EXPECT_EQ(sched(d), "@every 5m");
  EXPECT_EQ(d.at("kind").as_string(), "shell");
  EXPECT_EQ(d.at("command").as_string(), "/opt/jobs/sync.sh --full");
  EXPECT_FALSE(d.at("name").as_string().empty());
}

TEST(task_draft, daily_at_3am) {
  auto d = draft("Run `pg_dump shop > /backups/shop.sql` daily at 3am");
  EXPECT_EQ(sched(d), "0 3 * * *");
  EXPECT_EQ(d.at("command").as_string(), "pg_dump shop > /backups/shop.sql");
  EXPECT_EQ(sched(draft("every day at 15:30 run report.sh")), "30 15 * * *");
  EXPECT_EQ(sched(draft("at 11:45pm every day run cleanup")), "45 23 * * *");
}

TEST(task_draft, weekdays_hours_and_names) {
  auto d = draft("every monday at 9:30am run weekly-report called weekly");
  EXPECT_EQ(sched(d), "30 9 * * 1");
  EXPECT_EQ(d.at("name").as_string(), "weekly");
  EXPECT_EQ(sched(draft("every weekday at noon run lunch.sh")), "0 12 * * 1-5");
  EXPECT_EQ(sched(draft("hourly run rotate-logs")), "@hourly");
  EXPECT_EQ(sched(draft("run ping.sh every 30 seconds")), "@every 30s");
  EXPECT_EQ(sched(draft("every 2 days run archive")), "@every 48h");
}

TEST(task_draft, url_becomes_http_task) {
  auto d = draft("every 10 minutes call https://status.example.com/health");
  EXPECT_EQ(d.at("kind").as_string(), "http");
  EXPECT_EQ(d.at("http").at("url").as_string(), "https://status.example.com/health");
  EXPECT_EQ(d.at("http").at("method").as_string(), "GET");
  auto p = draft("POST https://hooks.example.com/x every hour");
  EXPECT_EQ(p.at("http").at("method").as_string(), "POST");
}

TEST(task_draft, no_schedule_is_manual_and_said_so) {
  std::string why;
  auto d = draft_from_text("run make release", why);
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->contains("schedule"));
  EXPECT_NE(why.find("manual"), std::string::npos);
}

TEST(task_draft, nothing_to_run) {
  std::string why;
  EXPECT_FALSE(draft_from_text("make everything faster please", why));
  EXPECT_FALSE(why.empty());
}

TEST(task_draft, clock_times) {
  EXPECT_EQ(parse_clock("3am"), (std::pair{3, 0}));
  EXPECT_EQ(parse_clock("12am"), (std::pair{0, 0}));
  EXPECT_EQ(parse_clock("12:15 pm"), (std::pair{12, 15}));
  EXPECT_EQ(parse_clock("23:59"), (std::pair{23, 59}));
  EXPECT_FALSE(parse_clock("25:00"));
  EXPECT_FALSE(parse_clock("3"));
  EXPECT_FALSE(parse_clock("13pm"));
}

TEST(task_draft, relative_commands_are_kept_as_written) {
  EXPECT_EQ(draft("every 5 minutes run ./sync.sh").at("command").as_string(), "./sync.sh");
  EXPECT_EQ(draft("every 5 minutes run ./scripts/sync.sh --full").at("command").as_string(),
            "./scripts/sync.sh --full");
  EXPECT_EQ(draft("run ../bin/backup.sh daily").at("command").as_string(), "../bin/backup.sh");
  EXPECT_EQ(draft("run .hidden/job every hour").at("command").as_string(), ".hidden/job");
  EXPECT_EQ(draft("hourly run cd /tmp && ls .").at("command").as_string(), "cd /tmp && ls .");
  // The sentence's own full stop is not part of the command.
  EXPECT_EQ(draft("Run backup.sh every day.").at("command").as_string(), "backup.sh");
}
