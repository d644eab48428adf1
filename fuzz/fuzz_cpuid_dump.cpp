// CPUID dumps (HWIMG_CPUID_FILE, `probe --cpuid-dump`) and the decoding of whatever registers they
// hold, into the host facts hwimg writes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/probe/host_facts.hpp"
#include "hwimg/probe/x86_cpuid.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg::probe;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto snapshot = parse_cpuid_dump(text, "fuzz.txt");
  if (!snapshot) return 0;
  // A dump hwimg reads must write back as the same dump.
  const auto again = parse_cpuid_dump(format_cpuid_dump(*snapshot), "written.txt");
  if (!again || again->leaves != snapshot->leaves || again->xcr0 != snapshot->xcr0 || again->hwcap2 != snapshot->hwcap2) {
    __builtin_trap();
  }
  // Whatever the registers say, the facts are JSON that hwimg reads back.
  HostFacts facts;
  facts.cpu = decode_x86(*snapshot);
  if (!parse_host_facts(to_json(facts), "facts.json")) __builtin_trap();
  return 0;
}
