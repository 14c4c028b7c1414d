// The throw helpers of crucible/core/error.h.
#include "crucible/core/error.h"

namespace crucible {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::Usage:
      return "usage";
    case ErrorKind::Input:
      return "input";
    case ErrorKind::OpError:
      return "op_error";
    case ErrorKind::Unsupported:
      return "unsupported";
    case ErrorKind::Memory:
      return "memory";
    case ErrorKind::Internal:
      return "internal";
    case ErrorKind::CompileError:
      return "compile_error";
  }
  return "unknown";
}

void op_error(const std::string& message) { throw Error(ErrorKind::OpError, message); }

void input_error(const std::string& where, const std::string& message) {
  throw Error(ErrorKind::Input, where.empty() ? message : where + ": " + message);
}

void usage_error(const std::string& message) { throw Error(ErrorKind::Usage, message); }

void unsupported(const std::string& message) { throw Error(ErrorKind::Unsupported, message); }

void compile_error(const std::string& message) { throw Error(ErrorKind::CompileError, message); }

void internal_error(const std::string& message) {
  throw Error(ErrorKind::Internal, "internal error: " + message);
}

}  // namespace crucible
