// Says which x86-64 psABI level it was compiled for (from the compiler's predefined macros, the
// features each level of the psABI adds) and which levels the CPU it runs on has (GCC's
// __builtin_cpu_supports). The example's Dockerfile compiles it once per variant with $MARCH.
#include <cstdio>

namespace {

constexpr int compiled_level() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__)
  return 4;
#elif defined(__AVX2__) && defined(__BMI__) && defined(__BMI2__) && defined(__FMA__) && defined(__F16C__) && \
    defined(__LZCNT__) && defined(__MOVBE__)
  return 3;
#elif defined(__SSE4_2__) && defined(__POPCNT__) && defined(__SSSE3__) && defined(__SSE4_1__)
  return 2;
#else
  return 1;
#endif
}

int host_level() {
  if (__builtin_cpu_supports("x86-64-v4")) return 4;
  if (__builtin_cpu_supports("x86-64-v3")) return 3;
  if (__builtin_cpu_supports("x86-64-v2")) return 2;
  return 1;
}

}  // namespace

int main() {
  const int built = compiled_level();
  const int host = host_level();
  std::printf("compiled for x86-64-v%d\n", built);
  std::printf("this CPU runs up to x86-64-v%d\n", host);
  if (host < built) {
    std::printf("wrong variant: this CPU lacks x86-64-v%d\n", built);
    return 1;
  }
  return 0;
}
