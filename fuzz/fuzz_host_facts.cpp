// Host facts JSON (`select --host FILE`, the facts `serve` reads) and the NVIDIA part alone.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/probe/host_facts.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::probe;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Facts hwimg reads must write back as facts it reads.
  if (const auto facts = parse_host_facts(text, "fuzz.json")) {
    if (!parse_host_facts(to_json(*facts), "written.json")) __builtin_trap();
  }
  (void)parse_nvidia_facts(text, "fuzz.json");
  return 0;
}
