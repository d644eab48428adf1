// NVIDIA_REQUIRE_* expressions from image configs: parse, print, evaluate against a fixed host.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/hw/nvidia_require.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::hw;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto expression = parse_nvidia_require(text);
  if (!expression) return 0;
  // What an expression prints must read back as the same expression.
  const auto again = parse_nvidia_require(expression->str());
  if (!again || *again != *expression) __builtin_trap();
  static const RequireHost host{CudaVersion{12, 8}, DriverVersion::parse("570.86.15"),
                                {{ComputeCapability{9, 0}, "NVIDIA"}, {ComputeCapability{8, 6}, "Tesla"}}};
  (void)unsatisfied_condition(*expression, host);
  (void)unsatisfied_condition(*expression, RequireHost{});
  return 0;
}
