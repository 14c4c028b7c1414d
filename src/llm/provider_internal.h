// What the providers share: the limit on calls in flight and the command provider's factory.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "crucible/llm/provider.h"

namespace crucible::llm {

// At most `limit` holders at once; the others wait.
class CallGate {
 public:
  explicit CallGate(int limit);
  void acquire();
  void release();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

// Holds a gate until released or destroyed.
class GateHold {
 public:
  explicit GateHold(CallGate& g) : g_(&g) { g_->acquire(); }
  ~GateHold() { release(); }
  GateHold(const GateHold&) = delete;
  GateHold& operator=(const GateHold&) = delete;
  void release() {
    if (g_) g_->release();
    g_ = nullptr;
  }

 private:
  CallGate* g_;
};

// The first `n` bytes of `s` on one line, with how many more there were.
std::string clip(const std::string& s, size_t n);

// `command:<program>`: the program runs through /bin/sh with the prompt on its standard input;
// its standard output is the answer.
std::unique_ptr<Provider> make_command_provider(const ProviderConfig& cfg);

}  // namespace crucible::llm
