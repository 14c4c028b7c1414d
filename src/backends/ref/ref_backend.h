#pragma once

#include <memory>

#include "crucible/backends/backend.h"

namespace crucible {
std::unique_ptr<Backend> make_ref_backend();
}
