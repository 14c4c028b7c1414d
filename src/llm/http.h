// One HTTP POST over libcurl, with a timeout; no retries (the providers retry).
#pragma once

#include <string>
#include <vector>

namespace crucible::llm {

struct HttpResponse {
  int status = 0;           // 0: no response (network error, timeout)
  std::string body;         // the response body
  std::string retry_after;  // the Retry-After header, when present
  std::string error;        // libcurl's error when status is 0
  bool timed_out = false;
};

// POSTs `body` to `url` with `headers` ("Name: value"), giving up after `timeout_s`.
HttpResponse http_post(const std::string& url, const std::vector<std::string>& headers,
                       const std::string& body, double timeout_s);

}  // namespace crucible::llm
