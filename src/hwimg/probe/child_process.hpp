#pragma once
// Runs a function in a forked child with a deadline and returns what it wrote. NVIDIA's libraries
// can block for seconds or forever (cuInit, nvmlInit), so they are only ever loaded in a child:
// the parent stays free of driver state and can give up on time.

#include <chrono>
#include <functional>
#include <string>

#include "hwimg/util/error.hpp"

namespace hwimg::probe {

// `body` runs in the child; its return value is the child's answer. A child still running at
// the deadline is killed and left behind if the kernel holds it (a call stuck in D state).
[[nodiscard]] Result<std::string> run_in_child(const std::function<std::string()>& body,
                                               std::chrono::milliseconds timeout);

}  // namespace hwimg::probe
