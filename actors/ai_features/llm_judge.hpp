// The judge (judge.hpp) backed by the node's LLM client
// (common/llm_client.hpp): one non-streamed chat completion per
// judgement, system + user prompt, temperature 0. Failed requests are counted
// in ai_requests_total{feature} by the client; answers by the judge, after the
// caller's verdict ("ok"/"fallback" when used, "invalid" when rejected).
#pragma once

#include <memory>

#include "actors/ai_features/judge.hpp"

namespace aisched::llm {
class llm_client;
}

namespace aisched::ai {

/// A judge sending to `client`; empty (no model) when `client` is null or not
/// configured. The client must outlive every call's callback (it joins its
/// threads on destruction, finishing queued calls with an error).
judge_fn make_llm_judge(std::shared_ptr<llm::llm_client> client);

}  // namespace aisched::ai
