// plan_variant: every ${...} of a recipe substituted once for one variant, paths resolved against
// the recipe's directory, the base image parsed, and which layers belong to the variant alone.

#include <doctest/doctest.h>

#include "hwimg/build/variant_plan.hpp"
#include "hwimg/matrix/expand.hpp"

using namespace hwimg;

namespace {

// Nothing is read from disk: the recipe is parsed from text under this (absolute) name.
const std::filesystem::path recipe_file = "/srv/project/recipes/app.yaml";
// ${out} holds a literal "${variant}": substitution is done once, so it stays as it is.
const std::filesystem::path out = "/scratch/${variant}/out";

recipe::Recipe parse(std::string_view text) {
  auto parsed = recipe::parse_recipe(text, recipe_file);
  REQUIRE_MESSAGE(parsed.has_value(), parsed.error().message);
  return std::move(*parsed);
}

// cuda12.8-sm90-x86-64-v3, with its toolkit at the default /usr/local/cuda-12.8.
matrix::Variant gpu_variant() {
  const auto file = matrix::parse_matrix_text("axes: {cuda: ['12.8'], gpu: [sm_90], cpu: [x86-64-v3]}\n", "m.yaml");
  auto report = matrix::expand_matrix(file, {});
  REQUIRE(report.variants.size() == 1);
  return std::move(report.variants.front());
}

build::VariantPlan plan(const recipe::Recipe& recipe, const matrix::Variant& variant) {
  auto planned = build::plan_variant(recipe, variant, out);
  REQUIRE_MESSAGE(planned.has_value(), planned.error().message);
  return std::move(*planned);
}

std::string plan_error(const recipe::Recipe& recipe, const matrix::Variant& variant) {
  const auto planned = build::plan_variant(recipe, variant, out);
  REQUIRE_FALSE(planned.has_value());
  return planned.error().message;
}

std::string recipe_with_base(std::string_view base) {
  return fmt::format("name: app\nbase: {}\nlayers: [{{from: data, to: /data}}]\n", base);
}

const std::string full_recipe = R"(name: app
base: oci:../bases/${cpu.level}:1.0
build:
  workdir: ../src/${variant}
  run: make OUT="${out}" GENCODE="${gpu.gencode}" CFLAGS="${cpu.march}" HOME=$${HOME}
layers:
  - {from: "${out}/bin", to: /opt/app/bin}
  - {from: ../data, to: /opt/app/data}
  - {from: "../models/${cpu.level}", to: "/opt/app/models/${variant}"}
  - {from: "${cuda.home}/lib64", to: /usr/local/cuda/lib64}
  - {from: /usr/share/zoneinfo, to: /usr/share/zoneinfo}
config:
  entrypoint: [/opt/app/bin/app, "--variant=${variant}"]
  cmd: ["--cuda", "${cuda.version}"]
  env: {APP_VARIANT: "${variant}", APP_TARGETS: "${gpu.targets}", PLAIN: "1"}
  labels: {org.example.level: "${cpu.level}", org.example.cmake: "${gpu.cmake}"}
  workdir: /opt/app/${cpu.level}
  user: "build-${cpu.level}"
  stop_signal: "SIGTERM${cpu.target}"
  exposed_ports: ["8080/tcp"]
annotations:
  org.opencontainers.image.title: "app ${variant}"
  org.opencontainers.image.version: "1.0"
)";

}  // namespace

TEST_CASE("every ${...} of the recipe is substituted once for the variant") {
  const auto recipe = parse(full_recipe);
  const auto variant = gpu_variant();
  const auto p = plan(recipe, variant);
  const std::string cuda_home = "/usr/local/cuda-12.8";

  CHECK(p.variant == &variant);
  CHECK(p.id() == "cuda12.8-sm90-x86-64-v3");
  CHECK(p.out == out);
  CHECK(p.variables.at("out") == out.string());
  CHECK(p.variables.at("variant") == "cuda12.8-sm90-x86-64-v3");

  REQUIRE(p.build.has_value());
  CHECK(p.build->run == "make OUT=\"/scratch/${variant}/out\" GENCODE=\"-gencode arch=compute_90,code=sm_90\" "
                        "CFLAGS=\"-march=x86-64-v3 -mtune=generic\" HOME=${HOME}");
  CHECK(p.build->workdir == "/srv/project/src/cuda12.8-sm90-x86-64-v3");
  CHECK(p.build->run_location.str() == "/srv/project/recipes/app.yaml:5:8");
  CHECK(p.build->workdir_location.str() == "/srv/project/recipes/app.yaml:4:12");
  CHECK_FALSE(p.build->workdir_in_build_output);
  CHECK(p.build->environment.at("HWIMG_OUT") == out.string());
  CHECK(p.build->environment.at("HWIMG_VARIANT") == "cuda12.8-sm90-x86-64-v3");
  CHECK(p.build->environment.at("HWIMG_CPU_MARCH") == "-march=x86-64-v3 -mtune=generic");
  CHECK(p.build->environment.at("CUDA_HOME") == cuda_home);

  REQUIRE(p.layers.size() == 5);
  CHECK(p.layers[0].from == "/scratch/${variant}/out/bin");
  CHECK(p.layers[0].to == "/opt/app/bin");
  CHECK(p.layers[1].from == "/srv/project/data");
  CHECK(p.layers[2].from == "/srv/project/models/x86-64-v3");
  CHECK(p.layers[2].to == "/opt/app/models/cuda12.8-sm90-x86-64-v3");
  CHECK(p.layers[3].from == cuda_home + "/lib64");  // absolute after substitution: not resolved again
  CHECK(p.layers[4].from == "/usr/share/zoneinfo");
  CHECK(p.layers[2].from_location.str() == "/srv/project/recipes/app.yaml:9:12");
  CHECK(p.layers[2].to_location.str() == "/srv/project/recipes/app.yaml:9:42");

  const auto& c = p.config;
  CHECK(c.entrypoint == std::vector<std::string>{"/opt/app/bin/app", "--variant=cuda12.8-sm90-x86-64-v3"});
  CHECK(c.cmd == std::vector<std::string>{"--cuda", "12.8"});
  CHECK(c.env == std::vector<std::pair<std::string, std::string>>{
                     {"APP_VARIANT", "cuda12.8-sm90-x86-64-v3"}, {"APP_TARGETS", "sm_90"}, {"PLAIN", "1"}});
  CHECK(c.labels == std::vector<std::pair<std::string, std::string>>{
                        {"org.example.level", "x86-64-v3"}, {"org.example.cmake", variant.variables.at("gpu.cmake")}});
  CHECK_FALSE(variant.variables.at("gpu.cmake").empty());
  CHECK(c.workdir == "/opt/app/x86-64-v3");
  CHECK(c.user == "build-x86-64-v3");
  CHECK(c.stop_signal == "SIGTERM");  // ${cpu.target} is empty for a plain level
  CHECK(c.exposed_ports == std::vector<std::string>{"8080/tcp"});

  CHECK(p.annotations == oci::Annotations{{"org.opencontainers.image.title", "app cuda12.8-sm90-x86-64-v3"},
                                          {"org.opencontainers.image.version", "1.0"}});
}

TEST_CASE("layers from the build output or named by a variable belong to the variant alone") {
  const auto recipe = parse(full_recipe);
  const auto variant = gpu_variant();
  const auto p = plan(recipe, variant);
  REQUIRE(p.layers.size() == 5);
  // ${out}/bin
  CHECK(p.layers[0].from_build_output);
  CHECK(p.layers[0].variant_specific);
  // ../data
  CHECK_FALSE(p.layers[1].from_build_output);
  CHECK_FALSE(p.layers[1].variant_specific);
  // ../models/${cpu.level}
  CHECK_FALSE(p.layers[2].from_build_output);
  CHECK(p.layers[2].variant_specific);
  // ${cuda.home}/lib64
  CHECK_FALSE(p.layers[3].from_build_output);
  CHECK(p.layers[3].variant_specific);
  // /usr/share/zoneinfo
  CHECK_FALSE(p.layers[4].from_build_output);
  CHECK_FALSE(p.layers[4].variant_specific);
}

TEST_CASE("defaults: no config, no annotations, the build step in the recipe's directory or in ${out}") {
  const auto variant = gpu_variant();
  const auto minimal = plan(parse("name: app\nbase: scratch\nbuild: {run: make}\nlayers: [{from: ., to: /app}]\n"),
                            variant);
  CHECK_FALSE(minimal.base.has_value());
  REQUIRE(minimal.build.has_value());
  // The recipe's directory, as resolving "." spells it.
  CHECK(minimal.build->workdir == "/srv/project/recipes/");
  CHECK(minimal.layers.at(0).from == "/srv/project/recipes/");
  CHECK_FALSE(minimal.config.entrypoint.has_value());
  CHECK_FALSE(minimal.config.cmd.has_value());
  CHECK_FALSE(minimal.config.workdir.has_value());
  CHECK_FALSE(minimal.config.user.has_value());
  CHECK_FALSE(minimal.config.stop_signal.has_value());
  CHECK(minimal.config.env.empty());
  CHECK(minimal.annotations.empty());

  const auto in_out = plan(parse("name: app\nbase: scratch\nbuild: {workdir: '${out}', run: make}\n"
                                 "layers: [{from: '${out}', to: /app}]\n"),
                           variant);
  CHECK(in_out.build->workdir == out);
  CHECK(in_out.build->workdir_in_build_output);
  CHECK(in_out.layers.at(0).from_build_output);

  const auto no_build = plan(parse(recipe_with_base("scratch")), variant);
  CHECK_FALSE(no_build.build.has_value());
}

TEST_CASE("the base: scratch, an OCI layout or a registry reference") {
  const auto variant = gpu_variant();

  const auto scratch = plan(parse(recipe_with_base("scratch")), variant);
  CHECK(scratch.base_text == "scratch");
  CHECK_FALSE(scratch.base.has_value());
  CHECK(scratch.base_location.str() == "/srv/project/recipes/app.yaml:2:7");

  const auto layout = plan(parse(full_recipe), variant);
  CHECK(layout.base_text == "oci:../bases/x86-64-v3:1.0");
  REQUIRE(layout.base.has_value());
  CHECK(layout.base->kind == image::SourceKind::layout);
  CHECK(layout.base->directory == "../bases/x86-64-v3");  // as written; opened against the recipe's directory
  CHECK(layout.base->tag == "1.0");
  CHECK_FALSE(layout.base->digest.has_value());

  const auto hub = plan(parse(recipe_with_base("ubuntu:24.04")), variant);
  REQUIRE(hub.base.has_value());
  CHECK(hub.base->kind == image::SourceKind::registry);
  CHECK(hub.base->text == "ubuntu:24.04");
  CHECK(hub.base->registry.registry == "docker.io");
  CHECK(hub.base->registry.repository == "library/ubuntu");
  CHECK(hub.base->tag == "24.04");

  const auto digest = oci::Digest::sha256_of("base");
  const auto pinned = plan(parse(recipe_with_base("registry.example.org:5000/team/base-${cpu.level}@" + digest.str())),
                           variant);
  REQUIRE(pinned.base.has_value());
  CHECK(pinned.base->kind == image::SourceKind::registry);
  CHECK(pinned.base->registry.registry == "registry.example.org:5000");
  CHECK(pinned.base->registry.repository == "team/base-x86-64-v3");
  CHECK(pinned.base->digest == digest);
  CHECK(pinned.base->tag.empty());
}

TEST_CASE("a base that does not parse and an unknown variable fail with file:line:column") {
  const auto variant = gpu_variant();
  CHECK(plan_error(parse(recipe_with_base("Team/Base:1")), variant)
            .starts_with("/srv/project/recipes/app.yaml:2:7: failed to use base image Team/Base:1: failed to parse "
                         "reference \"Team/Base:1\""));
  CHECK(plan_error(parse(recipe_with_base("oci::1.0")), variant) ==
        "/srv/project/recipes/app.yaml:2:7: failed to use base image oci::1.0: failed to parse layout reference "
        "\"oci::1.0\": empty directory");
  CHECK(plan_error(parse(recipe_with_base("'oci:base:${cpu.levle}'")), variant)
            .starts_with("/srv/project/recipes/app.yaml:2:7: unknown variable ${cpu.levle} (did you mean cpu.level?)"));
  CHECK(plan_error(parse("name: app\nbase: scratch\nlayers: [{from: '${out', to: /x}]\n"), variant)
            .starts_with("/srv/project/recipes/app.yaml:3:17: unterminated \"${\""));
}

// A layer is packed per variant only when its path names a variable: the escape "$${" (a literal
// "${") changes the text but names none.
TEST_CASE("a literal $${ in a layer path does not make the layer variant-specific") {
  const auto p = plan(parse("name: app\nbase: scratch\nlayers: [{from: 'data/$${HOME}', to: /data}]\n"), gpu_variant());
  REQUIRE(p.layers.size() == 1);
  CHECK(p.layers[0].from == "/srv/project/recipes/data/${HOME}");
  CHECK_FALSE(p.layers[0].variant_specific);
}

TEST_CASE("a builder image: parsed once per variant, and ${cuda.home} is the image's toolkit") {
  const auto variant = gpu_variant();
  const std::string in_image = "name: app\nbase: scratch\nbuild:\n  image: reg.example.org/cuda:${cuda.version}-devel\n"
                               "  run: make CUDA=${cuda.home}\nlayers: [{from: '${cuda.home}/lib64', to: /lib64}]\n";
  const auto p = plan(parse(in_image), variant);
  REQUIRE(p.build);
  REQUIRE(p.build->image);
  CHECK(p.build->image_text == "reg.example.org/cuda:12.8-devel");
  CHECK(p.build->image->kind == image::SourceKind::registry);
  CHECK(p.build->image->tag == "12.8-devel");
  CHECK(p.build->image_location.str() == "/srv/project/recipes/app.yaml:4:10");
  CHECK(p.build->run == "make CUDA=/usr/local/cuda");
  CHECK(p.layers[0].from == "/usr/local/cuda/lib64");
  CHECK(p.variables.at("cuda.home") == "/usr/local/cuda");
  CHECK(p.build->environment.at("CUDA_HOME") == "/usr/local/cuda");
  CHECK(p.build->environment.at("HWIMG_CUDA_HOME") == "/usr/local/cuda");

  // On the host the toolkit stays where the matrix's default puts it.
  const auto host = plan(parse("name: app\nbase: scratch\nbuild: {run: 'make CUDA=${cuda.home}'}\n"
                               "layers: [{from: x, to: /x}]\n"),
                         variant);
  CHECK_FALSE(host.build->image.has_value());
  CHECK(host.build->run == "make CUDA=/usr/local/cuda-12.8");

  // cuda_home in the matrix wins in an image too.
  const auto file = matrix::parse_matrix_text(
      "axes: {cuda: ['12.8'], gpu: [sm_90], cpu: [x86-64-v3]}\ncuda_home: /opt/cuda-${cuda.version}\n", "m.yaml");
  auto report = matrix::expand_matrix(file, {});
  REQUIRE(report.variants.size() == 1);
  const auto named = plan(parse(in_image), report.variants.front());
  CHECK(named.build->run == "make CUDA=/opt/cuda-12.8");
  CHECK(named.build->environment.at("CUDA_HOME") == "/opt/cuda-12.8");

  CHECK(plan_error(parse("name: app\nbase: scratch\nbuild:\n  image: Bad/Image\n  run: make\n"
                         "layers: [{from: x, to: /x}]\n"),
                   variant)
            .starts_with("/srv/project/recipes/app.yaml:4:10: failed to use builder image Bad/Image: failed to parse "
                         "reference \"Bad/Image\""));
}
