// generation.jsonl, appended with one write per event and synced.
#include "crucible/llm/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "crucible/core/error.h"

namespace crucible::llm {

Journal::Journal(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) input_error(path_, std::string("cannot open the journal: ") + std::strerror(errno));
  ::close(fd);
}

void Journal::append(const nlohmann::json& event) {
  const std::string line =
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    input_error(path_, std::string("cannot append to the journal: ") + std::strerror(errno));
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t w = ::write(fd, line.data() + done, line.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ::close(fd);
      input_error(path_, std::string("cannot append to the journal: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(w);
  }
  ::fsync(fd);
  ::close(fd);
}

std::vector<nlohmann::json> read_journal(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream f(path);
  if (!f) return out;
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(f, line)) lines.push_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    nlohmann::json j = nlohmann::json::parse(lines[i], nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (i + 1 == lines.size()) break;  // cut off by a kill while being written
      input_error(fmt::format("{}:{}", path, i + 1), "not a JSON object; the journal is damaged");
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace crucible::llm
