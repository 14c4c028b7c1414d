// Files of a run folder that are rewritten (manifest.json, the summaries) are replaced
// atomically: written to a temporary file beside them, flushed, then renamed over the old one,
// so a run killed at any moment leaves either the old file or the new one, never a torn one.
#pragma once

#include <string>

namespace crucible {

// Replaces `path` with `content`; an input error naming `path` when it cannot.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace crucible
