#include "crucible/core/retirement.h"

#include <mutex>

namespace crucible {
namespace {
std::mutex g_mutex;
bool g_requested = false;
std::string g_reason;
}  // namespace

void request_worker_retirement(const std::string& why) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_requested) return;
  g_requested = true;
  g_reason = why;
}

bool worker_retirement_requested() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_requested;
}

std::string worker_retirement_reason() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_reason;
}

}  // namespace crucible
