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

// __builtin_cpu_supports choosing between an AVX2 version and a plain one; `run_avx2` is static so
// that no other object can call it (an exported function has callers the scan cannot see).
inline constexpr std::string_view x86_cpu_supports =
    "__attribute__((target(\"avx2\"), noinline))\n"
    "static void run_avx2(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }\n"
    "__attribute__((noinline))\n"
    "static void run_plain(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 5; }\n"
    "void work(int* a, const int* b, int n) {\n"
    "  if (__builtin_cpu_supports(\"avx2\")) run_avx2(a, b, n); else run_plain(a, b, n);\n"
    "}\n"
    "int main(void) { return 0; }\n";

// The same, and a function without a check that calls the AVX2 version too.
inline constexpr std::string_view x86_cpu_supports_and_unchecked_call =
    "__attribute__((target(\"avx2\"), noinline))\n"
    "static void run_avx2(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }\n"
    "void work(int* a, const int* b, int n) { if (__builtin_cpu_supports(\"avx2\")) run_avx2(a, b, n); }\n"
    "void always(int* a, const int* b, int n) { run_avx2(a, b, n); }\n"
    "int main(void) { return 0; }\n";

// The AVX2 version called through a table of function pointers: no code refers to it.
inline constexpr std::string_view x86_cpu_supports_through_table =
    "__attribute__((target(\"avx2\"), noinline))\n"
    "static void run_avx2(int* a, const int* b, int n) { for (int i = 0; i < n; ++i) a[i] += b[i] * 3; }\n"
    "void (*kernels[])(int*, const int*, int) = {run_avx2};\n"
    "void work(int* a, const int* b, int n) { if (__builtin_cpu_supports(\"avx2\")) kernels[0](a, b, n); }\n"
    "int main(void) { return 0; }\n";

// Inline `cpuid` (leaf 7, EBX bit 5: AVX2) before an AVX2 instruction, and one after it.
inline constexpr std::string_view x86_inline_cpuid =
    "#define CPUID(b) unsigned a_, c_, d_; __asm__ volatile(\"cpuid\" : \"=a\"(a_), \"=b\"(b), \"=c\"(c_), \"=d\"(d_) : \"a\"(7), \"c\"(0))\n"
    "#define VPADDD() __asm__ volatile(\"vpaddd %%ymm0, %%ymm0, %%ymm0\" ::: \"xmm0\")\n"
    "void checked(int* out) { unsigned b; CPUID(b); if (b & (1u << 5)) VPADDD(); *out = (int)b; }\n"
    "void unchecked(int* out) { VPADDD(); unsigned b; CPUID(b); *out = (int)b; }\n";

// Compiles `source` (C) with `flags` into `output`; `flags` includes -shared for a library.
inline void compile_c(const std::filesystem::path& output, std::string_view source, std::string_view flags) {
  const auto file = output.parent_path() / (output.filename().string() + ".c");
  write_file(file, source);
  const auto command = fmt::format("gcc {} -o '{}' '{}' 2>&1", flags, output.string(), file.string());
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command);
}

}  // namespace hwimg::test
