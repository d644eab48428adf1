// `hwimg check`'s line for a manifest and for an index, and the overrides on the --explain host line.

#include <memory>

#include <doctest/doctest.h>

#include "hwimg/image/memory_reader.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/select/report.hpp"
#include "test_select_support.hpp"

using namespace select_test;

namespace {

select::ImageSource memory_source(std::string_view root_type, std::vector<select::Candidate> candidates) {
  select::ImageSource source;
  source.image.reference.text = "registry.example/app:1.0";
  source.image.reference.tag = "1.0";
  source.image.reader = std::make_unique<image::MemoryReader>("registry.example/app");
  source.image.root.media_type = std::string(root_type);
  source.candidates = std::move(candidates);
  return source;
}

}  // namespace

TEST_CASE("check: an index runs here through the variant select picks") {
  const auto source = memory_source(oci::media_type::index, {cpu_variant("x86-64-v4"), cpu_variant("x86-64-v2")});
  const auto selection = select::select_variant(source.candidates, cpu_host("x86-64-v3"), {}).value();
  CHECK(select::render_check(source, selection) ==
        "registry.example/app:1.0 runs on this host as variant cpu-x86-64-v2 (registry.example/app@" +
            source.candidates[1].descriptor.digest.str() + "): x86-64-v2\n");
}

TEST_CASE("check: a single manifest is judged by its own annotations") {
  const auto source = memory_source(oci::media_type::manifest, {cpu_variant("x86-64-v3")});
  const auto fits = select::select_variant(source.candidates, cpu_host("x86-64-v3"), {}).value();
  CHECK(select::render_check(source, fits) == "registry.example/app:1.0 runs on this host: x86-64-v3\n");
  CHECK(select::render_check(source, fits, "the host in node.json") ==
        "registry.example/app:1.0 runs on the host in node.json: x86-64-v3\n");

  const auto fails = select::select_variant(source.candidates, cpu_host("x86-64-v2"), {}).value();
  CHECK(select::render_check(source, fails).empty());
  const auto explanation = select::render_explanation(source, fails);
  CHECK(explanation.find("cpu-x86-64-v3") != std::string::npos);
  CHECK(explanation.find("rejected  needs AVX2") != std::string::npos);
}

TEST_CASE("the host line names the overrides in effect") {
  auto host = cpu_host("x86-64-v3");
  CHECK(select::select_variant({}, host, {}).value().host.overrides.empty());
  host.overrides = {"HWIMG_OVERRIDE_CPU_LEVEL=\"x86-64-v3\"", "HWIMG_OVERRIDE_CUDA=\"12.4\""};
  const auto line = select::describe_host(select::select_variant({}, host, {}).value().host);
  CHECK(line.ends_with("; no NVIDIA driver; overrides: HWIMG_OVERRIDE_CPU_LEVEL=\"x86-64-v3\", "
                       "HWIMG_OVERRIDE_CUDA=\"12.4\""));
  const auto gpus = with_gpus(host, "580.65.06", "13.0", {"9.0"});
  CHECK(select::describe_host(select::select_variant({}, gpus, {}).value().host)
            .ends_with("GPUs considered (default): 0 GPU 9.0 (9.0); overrides: "
                       "HWIMG_OVERRIDE_CPU_LEVEL=\"x86-64-v3\", HWIMG_OVERRIDE_CUDA=\"12.4\""));
}
