#include <doctest/doctest.h>

#include "hwimg/hw/cuda_release.hpp"

using namespace hwimg::hw;

namespace {

DriverVersion d(std::string_view text) { return DriverVersion::parse(text).value(); }

}  // namespace

TEST_CASE("CUDA versions are strictly M.m") {
  CHECK(parse_cuda_version("12.8") == CudaVersion{12, 8});
  CHECK(parse_cuda_version("12.10") > CudaVersion{12, 9});
  CHECK_FALSE(parse_cuda_version("13").has_value());
  CHECK_FALSE(parse_cuda_version("12.4.1").has_value());
  CHECK_FALSE(parse_cuda_version("v12.4").has_value());
  CHECK(cuda_version_from_int(12020) == CudaVersion{12, 2});
  CHECK(cuda_version_from_int(13000).str() == "13.0");
}

TEST_CASE("driver versions compare numerically with missing components as zero") {
  CHECK(d("535.104.05") > d("535.54.03"));
  CHECK(d("525") == d("525.0"));
  CHECK(d("525.60.11") < d("525.60.13"));
  CHECK(d("535.104.05") > d("535"));
  CHECK(d("535.104.05").branch() == 535);
  CHECK_FALSE(DriverVersion::parse("535.x").has_value());
  CHECK_FALSE(DriverVersion::parse("").has_value());
}

TEST_CASE("toolkit releases and their native drivers") {
  CHECK(is_cuda_toolkit_version({12, 6}));
  CHECK_FALSE(is_cuda_toolkit_version({12, 7}));
  CHECK(is_cuda_toolkit_version({13, 4}));
  CHECK(toolkit_native_driver({12, 2})->str() == "535.54.03");
  CHECK(toolkit_native_driver({12, 8})->str() == "570.26");
  CHECK(toolkit_native_driver({13, 0})->str() == "580.65.06");
  CHECK(toolkit_native_driver({13, 3})->str() == "610.43.02");
  CHECK(is_cuda_toolkit_version({13, 3}));
  CHECK_FALSE(is_cuda_toolkit_version({13, 5}));
  CHECK(cuda_toolkit_versions().back() == CudaVersion{13, 4});
  CHECK_FALSE(toolkit_native_driver({13, 4}).has_value());  // 13.4 bundles no driver
}

TEST_CASE("driver branch to CUDA version") {
  CHECK(cuda_version_of_driver(d("535.104.05")) == CudaVersion{12, 2});
  CHECK(cuda_version_of_driver(d("565.57.01")) == CudaVersion{12, 7});
  CHECK(cuda_version_of_driver(d("580.65.06")) == CudaVersion{13, 0});
  CHECK(cuda_version_of_driver(d("610.43.02")) == CudaVersion{13, 3});
  CHECK(cuda_version_of_driver(d("615.71.09")) == CudaVersion{13, 4});
  CHECK(cuda_version_of_driver(d("540.1")) == CudaVersion{12, 2});
  CHECK_FALSE(cuda_version_of_driver(d("418.87")).has_value());
}

TEST_CASE("minor-version compatibility floors") {
  CHECK(minor_compat_floor(11)->str() == "450.80.02");
  CHECK(minor_compat_floor(12)->str() == "525");
  CHECK(minor_compat_floor(13)->str() == "580");
  CHECK_FALSE(minor_compat_floor(10).has_value());
}

TEST_CASE("minor-version compatibility ranges end where the next major's drivers begin") {
  CHECK(minor_compat_range(11)->upper_branch == 525);
  CHECK(minor_compat_range(12)->upper_branch == 580);
  CHECK_FALSE(minor_compat_range(13)->upper_branch.has_value());
  CHECK(minor_compat_range(12)->contains(d("525.60.11")));
  CHECK(minor_compat_range(12)->contains(d("575.57.08")));
  CHECK_FALSE(minor_compat_range(12)->contains(d("580.65.06")));
  CHECK_FALSE(minor_compat_range(11)->contains(d("450.51.06")));
  CHECK(minor_compat_range(13)->contains(d("615.71.09")));
  for (const int major : {11, 12}) {
    const auto range = *minor_compat_range(major);
    CHECK(cuda_version_of_driver(range.floor)->major == major);
    CHECK(cuda_version_of_driver(d(std::to_string(*range.upper_branch)))->major == major + 1);
  }
  // A driver of a newer major runs older toolkits natively (backward compatibility), never "minor".
  CHECK(cuda_compatibility({12, 8}, {13, 0}, d("580.65.06")) == CudaCompatibility::native);
  CHECK(cuda_compatibility({11, 8}, {12, 0}, d("525.60.13")) == CudaCompatibility::native);
  // Inconsistent facts (a 580 driver claiming CUDA 12.2) are outside 12.x's range.
  CHECK(cuda_compatibility({12, 8}, {12, 2}, d("580.65.06")) == CudaCompatibility::none);
}

TEST_CASE("native, minor-version or no compatibility") {
  CHECK(cuda_compatibility({12, 2}, {12, 4}, d("550.54.14")) == CudaCompatibility::native);
  CHECK(cuda_compatibility({12, 8}, {12, 2}, d("535.104.05")) == CudaCompatibility::minor_version);
  CHECK(cuda_compatibility({13, 0}, {12, 9}, d("575.51.03")) == CudaCompatibility::none);
  CHECK(cuda_compatibility({11, 8}, {11, 0}, d("450.51.06")) == CudaCompatibility::none);
  CHECK(cuda_compatibility({11, 8}, {11, 0}, d("450.80.02")) == CudaCompatibility::minor_version);
  CHECK(cuda_compatibility({13, 2}, {13, 0}, std::nullopt) == CudaCompatibility::minor_version);
  CHECK(cuda_compatibility({12, 0}, {13, 0}, d("580.65.06")) == CudaCompatibility::native);
}

TEST_CASE("host driver descriptions for rejection messages") {
  CHECK(describe_host_driver({12, 2}, d("535.104.05")) == "host driver 535.104.05 supports CUDA 12.2");
  CHECK(describe_host_driver({12, 2}, std::nullopt) == "host driver supports CUDA 12.2");
}
