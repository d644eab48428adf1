#include "hwimg/matrix/variant.hpp"

#include <cctype>
#include <system_error>

#include <unistd.h>

#include <fmt/format.h>

namespace hwimg::matrix {

std::map<std::string, std::string> build_variables(const Variant& variant, const std::filesystem::path& out) {
  auto variables = variant.variables;
  variables["out"] = out.string();
  return variables;
}

std::map<std::string, std::string> build_environment(const Variant& variant, const std::filesystem::path& out) {
  std::map<std::string, std::string> environment;
  for (const auto& [name, value] : build_variables(variant, out)) {
    std::string key = "HWIMG_";
    for (const char c : name) {
      key += c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    environment[key] = value;
  }
  if (variant.uses_gpu()) {
    environment["CUDA_HOME"] = variant.cuda_home.string();
  }
  return environment;
}

Result<Toolkit> resolve_toolkit(const Variant& variant) {
  if (!variant.cuda) {
    return fail("failed to find a CUDA toolkit for variant {}: it has no CUDA version", variant.id);
  }
  const Toolkit toolkit{variant.cuda_home, variant.cuda_home / "bin" / "nvcc"};
  std::error_code error;
  if (!std::filesystem::is_regular_file(toolkit.nvcc, error) || ::access(toolkit.nvcc.c_str(), X_OK) != 0) {
    return fail("failed to find the CUDA {} toolkit for variant {}: {} does not exist or is not executable "
                "(install CUDA {} there, or set cuda_home in the matrix)",
                variant.cuda->str(), variant.id, toolkit.nvcc.string(), variant.cuda->str());
  }
  return toolkit;
}

}  // namespace hwimg::matrix
