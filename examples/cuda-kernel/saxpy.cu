// saxpy on the GPU: prints the device, the device code the CUDA runtime picked for it, and the
// result checked on the host. Exits 2 with the CUDA error when no usable GPU is there.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

namespace {

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}

// Prints what failed and exits; every CUDA call goes through it.
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "saxpy: %s failed: %s (%s)%s\n", what, cudaGetErrorString(status), cudaGetErrorName(status),
                 status == cudaErrorInsufficientDriver
                     ? "; no NVIDIA driver is visible, or it is older than this program's CUDA runtime"
                     : "");
    std::exit(2);
  }
}

}  // namespace

int main() {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "looking for a CUDA device");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "reading device 0");
  int driver = 0;
  int runtime = 0;
  check(cudaDriverGetVersion(&driver), "reading the driver version");
  check(cudaRuntimeGetVersion(&runtime), "reading the runtime version");
  std::printf("device 0 of %d: %s, compute capability %d.%d\n", devices, prop.name, prop.major, prop.minor);
  std::printf("CUDA driver %d.%d, runtime %d.%d\n", driver / 1000, driver % 1000 / 10, runtime / 1000,
              runtime % 1000 / 10);

  // binaryVersion is the SASS the runtime loaded; when it came from PTX JIT it equals the device's.
  cudaFuncAttributes attributes{};
  check(cudaFuncGetAttributes(&attributes, saxpy), "loading the kernel");
  std::printf("kernel code: sm_%d (PTX version %d)\n", attributes.binaryVersion, attributes.ptxVersion);

  const int n = 1 << 20;
  const float a = 2.0f;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.5f;
    y[i] = 1.0f;
  }
  float* dx = nullptr;
  float* dy = nullptr;
  check(cudaMalloc(&dx, n * sizeof(float)), "allocating x");
  check(cudaMalloc(&dy, n * sizeof(float)), "allocating y");
  check(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copying x");
  check(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copying y");
  saxpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
  check(cudaGetLastError(), "launching saxpy");
  check(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost), "copying the result");
  check(cudaFree(dx), "freeing x");
  check(cudaFree(dy), "freeing y");

  double max_error = 0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    max_error = std::fmax(max_error, std::fabs(y[i] - (a * x[i] + 1.0f)));
    sum += y[i];
  }
  std::printf("saxpy of %d elements: sum %.1f, max error %g\n", n, sum, max_error);
  return max_error == 0 ? 0 : 1;
}
