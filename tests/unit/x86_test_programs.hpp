#pragma once
// Small x86-64 programs compiled by the host's GCC for the instruction-scan tests: what a user's
// build step would produce, not hand-made bytes.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "test_support.hpp"

namespace hwimg::test {

// An integer loop GCC vectorises: with -mavx2 it uses AVX2's vpaddd on ymm registers.
inline constexpr std::string_view x86_add_loop =
    "void add_ints(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }\n"
    "int main(void) { return 0; }\n";

// The same loop as target_clones: an avx2 version and a baseline one behind an IFUNC.
inline constexpr std::string_view x86_clones =
    "__attribute__((target_clones(\"avx2\", \"default\")))\n"
    "void add_ints(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }\n";

// Compiles `source` (C) with `flags` into `output`; `flags` includes -shared for a library.
inline void compile_c(const std::filesystem::path& output, std::string_view source, std::string_view flags) {
  const auto file = output.parent_path() / (output.filename().string() + ".c");
  write_file(file, source);
  const auto command = fmt::format("gcc {} -o '{}' '{}' 2>&1", flags, output.string(), file.string());
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
}

}  // namespace hwimg::test
