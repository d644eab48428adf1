// Scales a vector on the GPU and checks it on the host; prints the device code the CUDA runtime
// loaded for the GPU (sm_XY), so a run shows which of the variant's targets served it.
#include <cstdio>

#include <cuda_runtime.h>

namespace {

__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return 0;
  std::fprintf(stderr, "scale: %s failed: %s\n", what, cudaGetErrorString(status));
  return 2;
}

}  // namespace

int main() {
  constexpr int n = 1 << 16;
  cudaFuncAttributes attributes{};
  if (int rc = check(cudaFuncGetAttributes(&attributes, scale), "loading the kernel")) return rc;
  std::printf("kernel code: sm_%d\n", attributes.binaryVersion);
  float* x = nullptr;
  if (int rc = check(cudaMallocManaged(&x, n * sizeof(float)), "allocating")) return rc;
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
  if (int rc = check(cudaDeviceSynchronize(), "running the kernel")) return rc;
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += x[i] != 2.0f * static_cast<float>(i);
  cudaFree(x);
  std::printf("%s\n", wrong == 0 ? "result ok" : "result WRONG");
  return wrong == 0 ? 0 : 1;
}
