#include "hwimg/build/variant_plan.hpp"

#include <sys/utsname.h>

namespace hwimg::build {

std::string host_architecture() {
  utsname name{};
  if (::uname(&name) != 0) {
    return "amd64";
  }
  const std::string_view machine = name.machine;
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64") return "arm64";
  if (machine == "ppc64le") return "ppc64le";
  if (machine == "s390x") return "s390x";
  if (machine == "riscv64") return "riscv64";
  return std::string(machine);
}

}  // namespace hwimg::build
