// Tests for router::substitute_shell: each command template is run by the real
// /bin/sh with the variables it produced, and must print the hostile value
// literally (no command substitution, no field splitting, no globbing) in every
// quoting context; URL and JSON landings stay escaped (router::substitute).
#include "actors/router/substitute.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace aisched::router {
namespace {

namespace fs = std::filesystem;

/// Runs `command` with /bin/sh -c and only `env` (plus PATH) in its environment;
/// returns its stdout.
std::string run_sh(const std::string& command, const std::map<std::string, std::string>& env) {
  std::vector<std::string> vars{"PATH=/usr/bin:/bin"};
  for (auto& [k, v] : env) vars.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return "<pipe failed>";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::string sh = "/bin/sh", c = "-c", cmd = command;
  char* argv[] = {sh.data(), c.data(), cmd.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; rc == 0 && (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  close(fds[0]);
  if (rc == 0) waitpid(pid, nullptr, 0);
  return out;
}

class substitute_shell_test : public ::testing::Test {
 protected:
  substitute_shell_test() {
    char tmpl[] = "/tmp/aisched-substitute-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    marker_ = dir_ / "injected";
    // Every way a value could turn into code, or be split or globbed.
    hostile_ = "$(touch " + marker_.string() + ") `touch " + marker_.string() +
               "` ' \" \\ \\' \\\" ; | & * ? ~ $HOME ${HOME} }} '\"'\"' a  b";
  }
  ~substitute_shell_test() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string payload() const {
    std::string escaped;
    for (char c : hostile_) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    return "{\"msg\": \"" + escaped + "\", \"n\": 7, \"a\": {\"b\": \"dot\"}, \"a_b\": \"under\"}";
  }

  /// The template's output when run; fails the test if the value ran as code.
  std::string output_of(const std::string& command, const std::string& event = "deploy") {
    auto s = substitute_shell(command, event, payload());
    EXPECT_EQ(s.command.find("touch"), std::string::npos) << "the value reached the command";
    auto out = run_sh(s.command, s.env);
    EXPECT_FALSE(fs::exists(marker_)) << "injected through: " << command << "\nran: " << s.command;
    return out;
  }

  fs::path dir_, marker_;
  std::string hostile_;
};

TEST_F(substitute_shell_test, unquoted_placeholder_is_one_literal_word) {
  EXPECT_EQ(output_of("printf '[%s]\\n' {{event.payload.msg}}"), "[" + hostile_ + "]\n");
}

TEST_F(substitute_shell_test, single_quoted_placeholder_is_literal) {
  EXPECT_EQ(output_of("printf '[%s]\\n' '{{event.payload.msg}}'"), "[" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' 'say: {{ event.payload.msg }} ok'"),
            "[say: " + hostile_ + " ok]\n");
}

TEST_F(substitute_shell_test, double_quoted_placeholder_is_literal) {
  EXPECT_EQ(output_of("printf '[%s]\\n' \"{{event.payload.msg}}\""), "[" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' \"a \\\"{{event.payload.msg}}\\\" b\""),
            "[a \"" + hostile_ + "\" b]\n");
}

TEST_F(substitute_shell_test, mixed_quoting_in_one_word) {
  EXPECT_EQ(output_of("printf '[%s]\\n' pre-'{{event.payload.msg}}'-\"{{event.payload.msg}}\"-"
                      "{{event.payload.msg}}-post"),
            "[pre-" + hostile_ + "-" + hostile_ + "-" + hostile_ + "-post]\n");
}

TEST_F(substitute_shell_test, escaped_single_quote_keeps_the_state) {
  EXPECT_EQ(output_of("printf '[%s]\\n' 'it'\\''s {{event.payload.msg}}'"),
            "[it's " + hostile_ + "]\n");
}

TEST_F(substitute_shell_test, backslash_before_the_placeholder) {
  // Unquoted, a backslash before '{' escapes nothing special; in double quotes it
  // stays a literal backslash. Neither may escape the reference.
  EXPECT_EQ(output_of("printf '[%s]\\n' \\{{event.payload.msg}}"), "[" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' \"\\{{event.payload.msg}}\""),
            "[\\" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' \"\\\\{{event.payload.msg}}\""),
            "[\\" + hostile_ + "]\n");
}

TEST_F(substitute_shell_test, nested_command_substitutions_and_backquotes) {
  EXPECT_EQ(output_of("printf '[%s]\\n' \"$(printf '%s' \"$(printf '%s' '{{event.payload.msg}}')\")\""),
            "[" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' \"$( (printf '%s' {{event.payload.msg}}) )\""),
            "[" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' \"`printf '%s' '{{event.payload.msg}}'`\""),
            "[" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' `printf '%s' {{event.payload.name}}`x"), "[x]\n");
}

TEST_F(substitute_shell_test, parameter_expansion_defaults) {
  EXPECT_EQ(output_of("printf '[%s]\\n' ${UNSET:-{{event.payload.msg}}}"), "[" + hostile_ + "]\n");
  EXPECT_EQ(output_of("printf '[%s]\\n' \"${UNSET:-{{event.payload.msg}}}\""),
            "[" + hostile_ + "]\n");
}

TEST_F(substitute_shell_test, quote_in_a_comment_changes_nothing) {
  EXPECT_EQ(output_of("echo x # don't\nprintf '[%s]\\n' {{event.payload.msg}}"),
            "x\n[" + hostile_ + "]\n");
}

TEST_F(substitute_shell_test, here_documents) {
  EXPECT_EQ(output_of("cat <<EOF\n[{{event.payload.msg}}]\nEOF\necho after"),
            "[" + hostile_ + "]\nafter\n");
  EXPECT_EQ(output_of("cat <<-EOF\n\t'{{event.payload.n}}'\n\tEOF\necho after"), "'7'\nafter\n");
  // A quoted delimiter expands nothing: the reference stays text, the value (which
  // could end the document early) never lands there.
  auto s = substitute_shell("cat <<'EOF'\n{{event.payload.msg}}\nEOF\n", "e", payload());
  EXPECT_EQ(run_sh(s.command, s.env), "${AISCHED_EVENT_PAYLOAD_MSG}\n");
  EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(substitute_shell_test, names_and_values_of_the_variables) {
  auto s = substitute_shell("echo {{event.name}} {{event.payload.a.b}} {{event.payload.a_b}} "
                            "{{event.payload.n}} {{event.payload.missing}} {{event.payload.a.b}}",
                            "deploy", payload());
  EXPECT_EQ(s.command,
            "echo \"${AISCHED_EVENT_NAME}\" \"${AISCHED_EVENT_PAYLOAD_A_B}\" "
            "\"${AISCHED_EVENT_PAYLOAD_A_B_2}\" \"${AISCHED_EVENT_PAYLOAD_N}\" "
            "\"${AISCHED_EVENT_PAYLOAD_MISSING}\" \"${AISCHED_EVENT_PAYLOAD_A_B}\"");
  EXPECT_EQ(s.env, (std::map<std::string, std::string>{{"AISCHED_EVENT_NAME", "deploy"},
                                                       {"AISCHED_EVENT_PAYLOAD_A_B", "dot"},
                                                       {"AISCHED_EVENT_PAYLOAD_A_B_2", "under"},
                                                       {"AISCHED_EVENT_PAYLOAD_N", "7"},
                                                       {"AISCHED_EVENT_PAYLOAD_MISSING", ""}}));
}

TEST_F(substitute_shell_test, hostile_event_name_and_foreign_braces) {
  EXPECT_EQ(output_of("printf '[%s]\\n' '{{event.name}}' {{other}}", hostile_),
            "[" + hostile_ + "]\n[{{other}}]\n");
  auto s = substitute_shell("echo plain 'text'", "e", "{}");
  EXPECT_EQ(s.command, "echo plain 'text'");
  EXPECT_TRUE(s.env.empty());
}

TEST(substitute, url_and_json_landings_stay_escaped) {
  EXPECT_EQ(substitute("http://h/x?q={{event.payload.q}}", "e", "{\"q\": \"a b&c\"}", landing::url),
            "http://h/x?q=a%20b%26c");
  EXPECT_EQ(substitute("{\"m\": \"{{event.payload.q}}\"}", "e", "{\"q\": \"a\\\"b\"}", landing::json),
            "{\"m\": \"a\\\"b\"}");
  EXPECT_EQ(substitute("v={{event.payload.q}}", "e", "{\"q\": \"a\\r\\nX: y\"}", landing::text),
            "v=aX: y");
}

}  // namespace
}  // namespace aisched::router
