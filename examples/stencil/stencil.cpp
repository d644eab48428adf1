// Jacobi stencil: every sweep replaces each interior cell by the mean of its four neighbours.
// The same source is compiled once per CPU level; the binary reports what it was built for.
#include <algorithm>
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

void sweep(const float* __restrict in, float* __restrict out, int rows, int cols, int row_begin, int row_end,
           int col_begin, int col_end) {
  (void)rows;
  for (int i = row_begin; i < row_end; ++i) {
    const float* up = in + (i - 1) * cols;
    const float* row = in + i * cols;
    const float* down = in + (i + 1) * cols;
    float* target = out + i * cols;
    for (int j = col_begin; j < col_end; ++j) {
      target[j] = 0.25f * (up[j] + down[j] + row[j - 1] + row[j + 1]);
    }
  }
}

// Temporal blocking: each tile is copied with a halo as wide as the number of sweeps done on it,
// swept in cache, and its centre written back. The result is exactly that of whole-grid sweeps, but
// the work is bound by arithmetic (where wider vectors pay) instead of memory bandwidth.
void sweeps_blocked(std::vector<float>& grid, int n, int sweeps) {
  constexpr int tile = 256;
  constexpr int depth = 16;
  std::vector<float> next = grid;
  std::vector<float> a, b;
  for (int done = 0; done < sweeps; done += depth) {
    const int k = std::min(depth, sweeps - done);
    for (int ti = 1; ti < n - 1; ti += tile) {
      for (int tj = 1; tj < n - 1; tj += tile) {
        const int i0 = std::max(0, ti - k - 1), i1 = std::min(n, ti + tile + k + 1);
        const int j0 = std::max(0, tj - k - 1), j1 = std::min(n, tj + tile + k + 1);
        const int rows = i1 - i0, cols = j1 - j0;
        a.resize(static_cast<size_t>(rows) * static_cast<size_t>(cols));
        for (int i = 0; i < rows; ++i) {
          std::copy_n(grid.data() + static_cast<size_t>(i0 + i) * static_cast<size_t>(n) + j0, cols,
                      a.data() + static_cast<size_t>(i) * static_cast<size_t>(cols));
        }
        b = a;
        for (int s = 0; s < k; ++s) {
          // Valid cells shrink by one per sweep; cells on the global edge are never updated.
          const int shrink = s;
          const int rb = std::max(1, (ti - k + shrink) - i0), re = std::min(rows - 1, (ti + tile + k - shrink) - i0);
          const int cb = std::max(1, (tj - k + shrink) - j0), ce = std::min(cols - 1, (tj + tile + k - shrink) - j0);
          const int rb_global = std::max(rb, 1 - i0), re_global = std::min(re, n - 1 - i0);
          const int cb_global = std::max(cb, 1 - j0), ce_global = std::min(ce, n - 1 - j0);
          sweep(a.data(), b.data(), rows, cols, rb_global, re_global, cb_global, ce_global);
          a.swap(b);
        }
        const int oi1 = std::min(ti + tile, n - 1), oj1 = std::min(tj + tile, n - 1);
        for (int i = ti; i < oi1; ++i) {
          std::copy_n(a.data() + static_cast<size_t>(i - i0) * static_cast<size_t>(cols) + (tj - j0), oj1 - tj,
                      next.data() + static_cast<size_t>(i) * static_cast<size_t>(n) + tj);
        }
      }
    }
    grid.swap(next);
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
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) check = true;
  }

  const auto start = std::chrono::steady_clock::now();
  if (check) {
    // The plain whole-grid sweeps, to compare checksums with the blocked version.
    std::vector<float> b = a;
    for (int s = 0; s < sweeps; ++s) {
      sweep(a.data(), b.data(), n, n, 1, n - 1, 1, n - 1);
      a.swap(b);
    }
  } else {
    sweeps_blocked(a, n, sweeps);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  double sum = 0;
  for (float v : a) sum += v;
  std::printf("stencil: built for %s (variant %s)\n", compiled_level(), variant != nullptr ? variant : "unknown");
  std::printf("stencil: %dx%d grid, %d sweeps, checksum %.3f\n", n, n, sweeps, sum);
  std::printf("stencil: time %.3f s\n", seconds);
  return 0;
}
