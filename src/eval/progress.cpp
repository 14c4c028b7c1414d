#include "eval/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace crucible {

Progress::Progress(std::string phase, size_t total, bool enabled)
    : phase_(std::move(phase)),
      total_(total),
      enabled_(enabled && total > 0),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::add(bool passed) {
  ++done_;
  (passed ? passed_ : failed_) += 1;
  draw(false);
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double eta =
      done_ ? elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_) : 0;
  if (tty_) {
    if (!force && done_ != total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    int filled = static_cast<int>(kWidth * done_ / total_);
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
    fmt::print(stderr, "\r{} [{}] {}/{}  passed {}  not passed {}  ETA {:.0f}s   ", phase_, bar,
               done_, total_, passed_, failed_, eta);
    std::fflush(stderr);
  } else {
    int decile = static_cast<int>(10 * done_ / total_);
    if (!force && decile == last_decile_) return;
    last_decile_ = decile;
    fmt::print(stderr, "{}: {}/{} done, {} passed, {} not passed, {:.1f}s elapsed\n", phase_, done_,
               total_, passed_, failed_, elapsed);
  }
}

void Progress::finish() {
  if (!enabled_) return;
  if (tty_) {
    draw(true);
    fmt::print(stderr, "\n");
  } else if (last_decile_ != 10) {
    draw(true);
  }
}

}  // namespace crucible
