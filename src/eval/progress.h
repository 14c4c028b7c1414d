// Console progress of a run: a live bar on a terminal, plain lines otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace crucible {

class Progress {
 public:
  Progress(std::string phase, size_t total, bool enabled);
  void add(bool passed);
  void finish();

 private:
  void draw(bool force);
  std::string phase_;
  size_t total_, done_ = 0, passed_ = 0, failed_ = 0;
  bool enabled_, tty_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace crucible
