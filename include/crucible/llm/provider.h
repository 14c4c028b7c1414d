// Model providers: the Anthropic Messages API, any OpenAI-compatible chat-completions server
// (vLLM, llama.cpp's server, Ollama) and `command:<program>` (the prompt on standard input, the
// answer on standard output). HTTP goes through libcurl with a timeout per try, retries with
// exponential backoff on 429, 5xx and network errors (a bounded number of tries), and a limit
// on the calls in flight at once. A failure never throws: it is a Completion with `error` set.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace crucible::llm {

// US dollars per million tokens.
struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

// Prices by model name; a model not in the table costs 0 (and says so: `priced` false).
class PriceTable {
 public:
  PriceTable();  // the built-in prices of common models
  // Adds or replaces prices from a JSON file {"model": {"input": 3.0, "output": 15.0}, ...}
  // (dollars per million tokens); an Input error names the file and the entry otherwise.
  void load(const std::string& path);
  // The price of `model`: an exact entry, else the longest entry that prefixes it.
  const Price* find(const std::string& model) const;

 private:
  std::map<std::string, Price> prices_;
};

struct ProviderConfig {
  std::string spec = "anthropic";  // anthropic | openai | command:<program>
  std::string model;               // empty: the provider's default
  std::string base_url;            // empty: the provider's default
  std::string api_key;             // empty: from the environment (ANTHROPIC_API_KEY, ...)
  double timeout_s = 300;          // per try
  int max_tries = 4;               // tries per call (429, 5xx, network errors are retried)
  double backoff_s = 1;            // the wait before the second try; doubles per try
  int concurrency = 4;             // calls in flight at once, over every thread
  int max_tokens = 8192;           // the answer's length limit
  double temperature = -1;         // < 0: the provider's default
  PriceTable prices;
};

// One call's outcome, successful or not.
struct Completion {
  bool ok = false;
  std::string text;   // the model's answer (ok)
  std::string raw;    // the last response body as received (or the program's output)
  std::string error;  // why not ok: "HTTP 401 from https://...: invalid x-api-key", ...
  int http_status = 0;
  int tries = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  bool priced = false;  // the model has a price in the table
  double seconds = 0;
};

class Provider {
 public:
  virtual ~Provider() = default;
  // Asks the model; never throws for a failure of the provider.
  virtual Completion complete(const std::string& prompt) = 0;
  virtual std::string name() const = 0;  // "anthropic", "openai", "command:./fake.sh"
  virtual std::string model() const = 0;
};

// The provider of `cfg`. A spec that names no provider is a Usage error naming --provider.
// A missing key is not an error here: each call then fails with a message saying so.
std::unique_ptr<Provider> make_provider(const ProviderConfig& cfg);

}  // namespace crucible::llm
