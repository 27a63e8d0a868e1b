// The LLM-backed judge; see llm_judge.hpp.
#include "actors/ai_features/llm_judge.hpp"

#include "common/llm_client.hpp"

namespace aisched::ai {

judge_fn make_llm_judge(std::shared_ptr<llm::llm_client> client) {
  if (!client || !client->configured()) return {};
  return [client](judge_request r, judge_done done) {
    llm::chat_request req;
    llm::chat_message system, user;
    system.role = "system";
    system.content = std::move(r.system);
    user.role = "user";
    user.content = std::move(r.user);
    req.messages = {std::move(system), std::move(user)};
    req.temperature = 0;
    req.feature = r.feature;
    req.caller_counts_answer = true;  // counted below, by the feature's verdict
    client->complete_async(
        std::move(req), nullptr,
        [done, check = std::move(r.check), feature = std::move(r.feature)](
            caf::expected<llm::completion> c) {
          if (!c) return done(c.error());
          // Counted before `done`, so whoever sees the feature's answer also sees the count.
          bool accepted = !check || !check(c->content);
          llm::count_answer(feature, *c, accepted);
          done(std::move(c->content));
        });
  };
}

}  // namespace aisched::ai
