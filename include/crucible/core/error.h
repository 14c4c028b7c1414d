// crucible's exceptions: every error carries what kind it is and the context a user needs.
#pragma once

#include <stdexcept>
#include <string>

namespace crucible {

enum class ErrorKind {
  Usage,         // a flag or argument the user gave is wrong (exit status 2)
  Input,         // a file or text the user gave is malformed (exit status 2)
  OpError,       // an operator rejected its arguments, as ATen raises c10::Error
  Unsupported,   // a backend does not implement an op or dtype
  Memory,        // an allocation beyond the worker's memory limit
  CompileError,  // a candidate's kernel source did not compile (the message holds the diagnostics)
  Internal,      // a bug in crucible
};

const char* error_kind_name(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// An operator's argument check failed (the analogue of TORCH_CHECK failing).
[[noreturn]] void op_error(const std::string& message);
// A user input is malformed; `where` names the place (file:line:col, flag, ...).
[[noreturn]] void input_error(const std::string& where, const std::string& message);
[[noreturn]] void usage_error(const std::string& message);
[[noreturn]] void unsupported(const std::string& message);
[[noreturn]] void internal_error(const std::string& message);
[[noreturn]] void compile_error(const std::string& message);

#define CRUCIBLE_CHECK(cond, msg)                        \
  do {                                                   \
    if (!(cond)) ::crucible::op_error(std::string(msg)); \
  } while (0)

}  // namespace crucible
