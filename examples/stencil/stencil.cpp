// Jacobi stencil: every sweep replaces each interior cell by the mean of its four neighbours.
// The same source is compiled once per CPU level; the binary reports what it was built for.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const char* compiled_level() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  return "x86-64-v4";
#elif defined(__AVX2__) && defined(__FMA__)
  return "x86-64-v3";
#elif defined(__SSE4_2__) && defined(__POPCNT__)
  return "x86-64-v2";
#elif defined(__x86_64__)
  return "x86-64-v1";
#else
  return "generic";
#endif
}

void sweep(const float* __restrict in, float* __restrict out, int n) {
  for (int i = 1; i < n - 1; ++i) {
    const float* up = in + (i - 1) * n;
    const float* row = in + i * n;
    const float* down = in + (i + 1) * n;
    float* target = out + i * n;
    for (int j = 1; j < n - 1; ++j) {
      target[j] = 0.25f * (up[j] + down[j] + row[j - 1] + row[j + 1]);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int n = 4096;
  int sweeps = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--size") == 0) n = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--sweeps") == 0) sweeps = std::atoi(argv[i + 1]);
  }
  if (n < 3 || sweeps < 1) {
    std::fprintf(stderr, "usage: stencil [--size N>=3] [--sweeps S>=1]\n");
    return 2;
  }
  const char* variant = std::getenv("HWIMG_VARIANT");
  std::vector<float> a(static_cast<size_t>(n) * static_cast<size_t>(n), 0.0f);
  for (int j = 0; j < n; ++j) a[static_cast<size_t>(j)] = 100.0f;  // hot top edge
  std::vector<float> b = a;

  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < sweeps; ++s) {
    sweep(a.data(), b.data(), n);
    a.swap(b);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  double sum = 0;
  for (float v : a) sum += v;
  std::printf("stencil: built for %s (variant %s)\n", compiled_level(), variant != nullptr ? variant : "unknown");
  std::printf("stencil: %dx%d grid, %d sweeps, checksum %.3f\n", n, n, sweeps, sum);
  std::printf("stencil: time %.3f s\n", seconds);
  return 0;
}
