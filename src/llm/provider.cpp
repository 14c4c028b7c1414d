// The providers over HTTP (Anthropic, OpenAI-compatible) with retries and a concurrency limit;
// the command provider is in command_provider.cpp.
#include "crucible/llm/provider.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "llm/http.h"
#include "llm/provider_internal.h"

namespace crucible::llm {

using nlohmann::json;

CallGate::CallGate(int limit) : free_(limit < 1 ? 1 : limit) {}

void CallGate::acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return free_ > 0; });
  --free_;
}

void CallGate::release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++free_;
  }
  cv_.notify_one();
}

std::string clip(const std::string& s, size_t n) {
  std::string out;
  for (char c : s.substr(0, n)) out += (c == '\n' || c == '\r') ? ' ' : c;
  if (s.size() > n) out += fmt::format("... [{} more bytes]", s.size() - n);
  return out;
}

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// The provider's error message in a JSON error body ({"error": {"message": ...}} in both APIs),
// else the body itself, clipped.
std::string error_text(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return clip(body, 300);
}

bool retryable(const HttpResponse& r) {
  return r.status == 0 || r.status == 408 || r.status == 429 || r.status >= 500;
}

// A provider speaking JSON over HTTP POST: what differs between the APIs is the request, the
// headers and where the answer and the usage are in the response.
class HttpProvider : public Provider {
 public:
  HttpProvider(const ProviderConfig& cfg, std::string kind)
      : cfg_(cfg), kind_(std::move(kind)), gate_(cfg.concurrency) {
    if (kind_ == "anthropic") {
      base_ = cfg.base_url.empty() ? env_or("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
                                   : cfg.base_url;
      key_ = cfg.api_key.empty() ? env_or("ANTHROPIC_API_KEY", "") : cfg.api_key;
      model_ = cfg.model.empty() ? "claude-sonnet-4-5" : cfg.model;
      while (base_.ends_with("/")) base_.pop_back();
      url_ = base_ + (base_.ends_with("/v1") ? "/messages" : "/v1/messages");
    } else {
      base_ = cfg.base_url.empty() ? env_or("OPENAI_BASE_URL", "https://api.openai.com/v1")
                                   : cfg.base_url;
      key_ = cfg.api_key.empty() ? env_or("OPENAI_API_KEY", "") : cfg.api_key;
      model_ = cfg.model.empty() ? "gpt-4o" : cfg.model;
      while (base_.ends_with("/")) base_.pop_back();
      url_ = base_ + "/chat/completions";
    }
  }

  std::string name() const override { return kind_; }
  std::string model() const override { return model_; }

  Completion complete(const std::string& prompt) override {
    Completion c;
    const auto start = std::chrono::steady_clock::now();
    auto finish = [&]() -> Completion {
      c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return c;
    };
    if (key_.empty() && needs_key()) {
      c.error = kind_ == "anthropic"
                    ? "no API key: set ANTHROPIC_API_KEY (or give --base-url of a server that "
                      "needs none)"
                    : "no API key: set OPENAI_API_KEY, or give --base-url of an "
                      "OpenAI-compatible server that needs none (vLLM, llama.cpp, Ollama)";
      return finish();
    }
    const std::string body = request(prompt);
    std::vector<std::string> headers = {"Content-Type: application/json"};
    if (kind_ == "anthropic") {
      headers.push_back("anthropic-version: 2023-06-01");
      if (!key_.empty()) headers.push_back("x-api-key: " + key_);
    } else if (!key_.empty()) {
      headers.push_back("Authorization: Bearer " + key_);
    }
    HttpResponse r;
    for (c.tries = 1;; ++c.tries) {
      GateHold hold(gate());
      r = http_post(url_, headers, body, cfg_.timeout_s);
      c.http_status = r.status;
      c.raw = r.body;
      if (!retryable(r) || c.tries >= cfg_.max_tries) break;
      double wait = cfg_.backoff_s * std::pow(2.0, c.tries - 1);
      if (!r.retry_after.empty()) {
        char* end = nullptr;
        const double ra = std::strtod(r.retry_after.c_str(), &end);
        if (end && *end == '\0' && std::isfinite(ra) && ra >= 0) wait = std::min(ra, 60.0);
      }
      hold.release();
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
    const std::string tries =
        c.tries > 1 ? fmt::format(" (after {} tries)", c.tries) : std::string();
    if (r.status == 0) {
      c.error = r.timed_out
                    ? fmt::format("no answer from {} within {} s{}", url_, cfg_.timeout_s, tries)
                    : fmt::format("cannot reach {}: {}{}", url_, r.error, tries);
      return finish();
    }
    if (r.status != 200) {
      c.error = fmt::format("HTTP {} from {}{}: {}", r.status, url_, tries, error_text(r.body));
      if (r.status == 401 || r.status == 403)
        c.error += kind_ == "anthropic" ? " (check ANTHROPIC_API_KEY)" : " (check OPENAI_API_KEY)";
      return finish();
    }
    parse(r.body, c);
    return finish();
  }

 private:
  // The official endpoints need a key; a local server (--base-url) may not.
  bool needs_key() const {
    return base_.find("api.anthropic.com") != std::string::npos ||
           base_.find("api.openai.com") != std::string::npos;
  }

  CallGate& gate() { return gate_; }

  std::string request(const std::string& prompt) const {
    json msg = {{"role", "user"}, {"content", prompt}};
    json j = {{"model", model_}, {"max_tokens", cfg_.max_tokens}, {"messages", json::array({msg})}};
    if (cfg_.temperature >= 0) j["temperature"] = cfg_.temperature;
    return j.dump();
  }

  // The answer and the usage from a 200 response; a body of another shape is an error.
  void parse(const std::string& body, Completion& c) const {
    json j = json::parse(body, nullptr, false);
    const std::string what = fmt::format("a malformed answer from {}", url_);
    if (j.is_discarded() || !j.is_object()) {
      c.error = fmt::format("{}: not JSON: {}", what, clip(body, 200));
      return;
    }
    try {
      if (kind_ == "anthropic") {
        const json& content = j.at("content");
        if (!content.is_array()) throw std::runtime_error("\"content\" is not a list");
        std::string text;
        for (const json& part : content)
          if (part.is_object() && part.value("type", "") == "text")
            text += part.at("text").get<std::string>();
        c.text = text;
        if (j.contains("usage") && j["usage"].is_object()) {
          c.input_tokens = j["usage"].value("input_tokens", int64_t{0});
          c.output_tokens = j["usage"].value("output_tokens", int64_t{0});
        }
      } else {
        const json& choices = j.at("choices");
        if (!choices.is_array() || choices.empty())
          throw std::runtime_error("\"choices\" is not a non-empty list");
        const json& content = choices[0].at("message").at("content");
        c.text = content.is_string() ? content.get<std::string>() : "";
        if (j.contains("usage") && j["usage"].is_object()) {
          c.input_tokens = j["usage"].value("prompt_tokens", int64_t{0});
          c.output_tokens = j["usage"].value("completion_tokens", int64_t{0});
        }
      }
    } catch (const std::exception& e) {
      c.error = fmt::format("{}: {} in {}", what, e.what(), clip(body, 200));
      return;
    }
    if (c.text.empty()) {
      c.error = fmt::format("an empty answer from {}", url_);
      return;
    }
    if (const Price* p = cfg_.prices.find(model_)) {
      c.priced = true;
      c.cost_usd = (static_cast<double>(c.input_tokens) * p->input_per_mtok +
                    static_cast<double>(c.output_tokens) * p->output_per_mtok) /
                   1e6;
    }
    c.ok = true;
  }

  ProviderConfig cfg_;
  std::string kind_, base_, url_, key_, model_;
  CallGate gate_;
};

}  // namespace

std::unique_ptr<Provider> make_provider(const ProviderConfig& cfg) {
  if (cfg.spec == "anthropic" || cfg.spec == "openai")
    return std::make_unique<HttpProvider>(cfg, cfg.spec);
  if (cfg.spec.starts_with("command:")) {
    if (cfg.spec.size() == 8)
      usage_error("--provider command: needs a program, e.g. --provider command:./my-model.sh");
    return make_command_provider(cfg);
  }
  usage_error(fmt::format(
      "--provider {}: unknown provider; use anthropic, openai (any OpenAI-compatible server "
      "with --base-url) or command:<program>",
      cfg.spec));
}

}  // namespace crucible::llm
