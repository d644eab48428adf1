// Dockerfiles of Dockerfile recipes: instructions, continuations, directives, stages, ARGs, and
// the substitution of build arguments in each FROM (what a variant's images are resolved from).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "hwimg/recipe/dockerfile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto dockerfile = hwimg::recipe::parse_dockerfile(text, "/fuzz/Dockerfile");
  if (!dockerfile) return 0;
  const hwimg::recipe::ArgValues args{{"MARCH", "-march=x86-64-v3"}, {"CUDA_VERSION", "12.8"}};
  const auto values = hwimg::recipe::global_arg_values(*dockerfile, args);
  for (const auto& stage : dockerfile->stages) {
    (void)hwimg::recipe::expand_arguments(stage.from, values, dockerfile->escape, "/fuzz/Dockerfile");
    (void)dockerfile->find_stage(stage.from);
    for (const auto& use : stage.uses) (void)dockerfile->find_stage(use);
  }
  (void)dockerfile->declares("MARCH");
  return 0;
}
