// result<T>: a value or an outreach::error, the return type of every call of the client.
// No exception crosses the public API of the client; reading the value of a failed result is
// a bug in the caller and aborts (STYLE C1). The same template as the engine's result<T>
// (engine/basic_result.hpp).
#pragma once

#include "engine/basic_result.hpp"
#include "engine/outreach/errors.hpp"

namespace orch::outreach {

template <typename T>
using result = orch::basic_result<T, error>;

} // namespace orch::outreach
