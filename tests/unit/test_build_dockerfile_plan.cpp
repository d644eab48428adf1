// Planning the variants of a Dockerfile recipe: build arguments substituted per variant, what each
// stage starts from, the stages all variants build alike, FROM lines pinned to digests, and the
// Dockerfile line of the instruction buildah's output says failed.

#include <doctest/doctest.h>

#include <algorithm>

#include "hwimg/build/buildah.hpp"
#include "hwimg/build/dockerfile_plan.hpp"
#include "hwimg/build/dockerfile_variant.hpp"
#include "hwimg/matrix/expand.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view dockerfile_text =
    "ARG BUILDER=registry.example.org/debian/builder:bookworm\n"
    "ARG BASE=registry.example.org/debian/runtime:bookworm\n"
    "FROM ${BUILDER} AS deps\n"
    "RUN echo shared\n"
    "FROM deps AS build\n"
    "ARG MARCH\n"
    "RUN g++ $MARCH -o /app app.cpp\n"
    "FROM ${BUILDER} AS docs\n"
    "RUN echo unused\n"
    "FROM ${BASE} AS runtime\n"
    "COPY --from=build /app /app\n";

struct Project {
  util::TempDir directory;
  recipe::Recipe recipe;
  std::shared_ptr<const recipe::Dockerfile> dockerfile;
};

Project project(std::string_view recipe_text = "name: app\ndockerfile: Dockerfile\nargs: {MARCH: \"${cpu.march}\"}\n") {
  auto directory = util::TempDir::create(fs::temp_directory_path(), "hwimg-test-dockerfile-");
  REQUIRE(directory);
  REQUIRE(util::write_file_atomic(directory->path() / "Dockerfile", dockerfile_text));
  REQUIRE(util::write_file_atomic(directory->path() / "app.yaml", recipe_text));
  auto recipe = recipe::load_recipe(directory->path() / "app.yaml");
  REQUIRE_MESSAGE(recipe.has_value(), recipe.error().message);
  auto dockerfile = build::load_recipe_dockerfile(*recipe);
  REQUIRE_MESSAGE(dockerfile.has_value(), dockerfile.error().message);
  return {std::move(*directory), std::move(*recipe), std::move(*dockerfile)};
}

std::vector<matrix::Variant> cpu_variants() {
  const auto file = matrix::parse_matrix_text("axes: {gpu: [none], cpu: [x86-64-v2, x86-64-v3]}\n", "m.yaml");
  return matrix::expand_matrix(file, {}).variants;
}

build::VariantPlan plan(const Project& p, const matrix::Variant& variant) {
  auto planned = build::plan_dockerfile_variant(p.recipe, p.dockerfile, variant);
  REQUIRE_MESSAGE(planned.has_value(), planned.error().message);
  return std::move(*planned);
}

}  // namespace

TEST_CASE("a Dockerfile variant's plan: arguments substituted, stage sources, the base the final stage leaves from") {
  const auto p = project();
  const auto variants = cpu_variants();
  const auto planned = plan(p, variants[1]);
  REQUIRE(planned.dockerfile.has_value());
  const auto& dockerfile = *planned.dockerfile;
  CHECK(dockerfile.args == std::vector<std::pair<std::string, std::string>>{{"MARCH", variants[1].variables.at("cpu.march")}});
  CHECK(dockerfile.context == p.directory.path());
  CHECK(dockerfile.final_stage == 3);
  REQUIRE(dockerfile.stages.size() == 4);
  CHECK(dockerfile.stages[0].kind == build::StageSource::Kind::image);
  CHECK(dockerfile.stages[0].text == "registry.example.org/debian/builder:bookworm");
  CHECK(dockerfile.stages[1].kind == build::StageSource::Kind::stage);
  CHECK(dockerfile.stages[1].stage == 0);
  CHECK(planned.base_text == "registry.example.org/debian/runtime:bookworm");
  CHECK(planned.base_location.str() == (p.directory.path() / "Dockerfile").string() + ":10:6");
  CHECK(build::undeclared_arguments(planned).empty());
}

TEST_CASE("the stages every variant builds alike are the ones the target needs and no other shared one builds on") {
  const auto p = project();
  const auto variants = cpu_variants();
  const std::vector<build::VariantPlan> plans{plan(p, variants[0]), plan(p, variants[1])};
  // deps: shared; build: uses MARCH; docs: not needed by the target; runtime: the target itself.
  CHECK(build::shared_stages(plans) == std::vector<std::size_t>{0});
  CHECK(build::shared_stages(std::span(plans).first(1)).empty());
  CHECK(build::stage_signature(plans[0], 1) != build::stage_signature(plans[1], 1));
}

TEST_CASE("a target, a context and undeclared arguments of a Dockerfile recipe") {
  const auto variants = cpu_variants();
  {
    const auto p = project("name: app\ndockerfile: Dockerfile\ntarget: BUILD\nargs: {MARCH: x, CUDA_ARCHS: \"80\"}\n");
    const auto planned = plan(p, variants[0]);
    CHECK(planned.dockerfile->final_stage == 1);
    CHECK(planned.base_text == "registry.example.org/debian/builder:bookworm");
    CHECK(build::undeclared_arguments(planned) == std::vector<std::string>{"CUDA_ARCHS"});
  }
  {
    const auto p = project("name: app\ndockerfile: Dockerfile\ntarget: runtim\n");
    const auto planned = build::plan_dockerfile_variant(p.recipe, p.dockerfile, variants[0]);
    REQUIRE_FALSE(planned.has_value());
    CHECK(planned.error().message.find("app.yaml:3:9: no stage named \"runtim\"") != std::string::npos);
    CHECK(planned.error().message.find("(did you mean runtime?); stages: deps, build, docs, runtime") != std::string::npos);
  }
  {
    const auto p = project("name: app\ndockerfile: Dockerfile\ncontext: ..\n");
    const auto planned = build::plan_dockerfile_variant(p.recipe, p.dockerfile, variants[0]);
    REQUIRE_FALSE(planned.has_value());
    CHECK(planned.error().message.find("app.yaml:3:10: build context \"..\" escapes the recipe's directory") != std::string::npos);
  }
}

TEST_CASE("FROM lines of registry images are pinned to the digest the build resolved") {
  const auto p = project();
  const auto variants = cpu_variants();
  const auto planned = plan(p, variants[0]);
  auto base = std::make_shared<build::BaseImage>();
  base->source = image::parse_image_reference("registry.example.org/debian/runtime:bookworm").value();
  base->manifest_descriptor.digest =
      oci::Digest::parse("sha256:1111111111111111111111111111111111111111111111111111111111111111").value();
  const build::StageImages images{nullptr, nullptr, nullptr, base};
  const auto pinned = build::pinned_dockerfile(planned, images, {});
  CHECK(pinned.find("FROM registry.example.org/debian/runtime@sha256:1111111111111111111111111111111111111111111111111111111111111111 AS runtime\n") != std::string::npos);
  CHECK(pinned.find("FROM ${BUILDER} AS deps\n") != std::string::npos);  // not resolved here: left as written
  CHECK(std::ranges::count(pinned, '\n') == std::ranges::count(dockerfile_text, '\n'));  // lines keep their numbers
}

TEST_CASE("a stage already built for every variant becomes a FROM of its image, its instructions blank lines") {
  const auto p = project();
  const auto variants = cpu_variants();
  const auto planned = plan(p, variants[0]);
  const std::string deps(64, 'a');
  const std::string docs(64, 'b');
  const auto pinned = build::pinned_dockerfile(planned, {}, {{0, deps}, {2, docs}});
  const auto lines = util::split(pinned, '\n');
  REQUIRE(lines.size() == util::split(dockerfile_text, '\n').size());  // a failing step keeps its line number
  CHECK(lines[2] == "FROM " + deps + " AS deps");
  CHECK(lines[3].empty());
  CHECK(lines[4] == "FROM deps AS build");  // stages that build on it still name it
  CHECK(lines[6] == "RUN g++ $MARCH -o /app app.cpp");
  CHECK(lines[7] == "FROM " + docs + " AS docs");
  CHECK(lines[8].empty());
  CHECK(lines[9] == "FROM ${BASE} AS runtime");  // the blanking stops at the next FROM
  CHECK(lines[10] == "COPY --from=build /app /app");
}

TEST_CASE("a shared stage with an ONBUILD of its own is left as written") {
  auto p = project();
  REQUIRE(util::write_file_atomic(p.directory.path() / "Dockerfile",
                                  "FROM registry.example.org/debian/builder:bookworm AS deps\n"
                                  "ONBUILD RUN echo child\n"
                                  "FROM deps AS build\n"
                                  "RUN true\n"));
  auto dockerfile = build::load_recipe_dockerfile(p.recipe);
  REQUIRE_MESSAGE(dockerfile.has_value(), dockerfile.error().message);
  p.dockerfile = std::move(*dockerfile);
  const auto variants = cpu_variants();
  const auto pinned = build::pinned_dockerfile(plan(p, variants[0]), {}, {{0, std::string(64, 'a')}});
  CHECK(pinned.starts_with("FROM registry.example.org/debian/builder:bookworm AS deps\nONBUILD RUN echo child\n"));
}

TEST_CASE("the failed instruction is found from buildah's last STEP line") {
  const auto p = project();
  const auto& dockerfile = *p.dockerfile;
  const auto* failed = build::failed_instruction(
      "[1/4] STEP 1/2: FROM registry.example.org/debian/builder@sha256:11 AS deps\n"
      "[1/4] STEP 2/2: RUN echo shared\n--> Using cache 2aee\n"
      "[2/4] STEP 3/3: RUN g++ $MARCH -o /app app.cpp\ng++: error: app.cpp: No such file\n"
      "Error: building at STEP \"RUN g++ $MARCH -o /app app.cpp\": exit status 1\n",
      dockerfile);
  REQUIRE(failed != nullptr);
  CHECK(failed->line == 7);
  CHECK(failed->keyword == "RUN");
  CHECK(build::failed_instruction("STEP 2/2: RUN echo shared\n", dockerfile)->line == 4);
  // A count that does not land on an instruction of that kind names none rather than a wrong one.
  CHECK(build::failed_instruction("[2/4] STEP 2/3: RUN g++\n", dockerfile) == nullptr);
  CHECK(build::failed_instruction("no steps at all\n", dockerfile) == nullptr);
  CHECK(build::failed_instruction("[9/9] STEP 1/1: FROM x\n", dockerfile) == nullptr);
}

TEST_CASE("Docker's own config settings are read from buildah inspect's stdout, apart from its warnings, with types checked") {
  auto directory = util::TempDir::create(fs::temp_directory_path(), "hwimg-test-buildah-");
  REQUIRE(directory);
  // A stand-in buildah that prints, for `inspect`, inspect.out on stdout and inspect.err on stderr,
  // and exits with the status in inspect.status.
  const auto program = directory->path() / "buildah";
  REQUIRE(util::write_file_atomic(program, "#!/bin/sh\nd=$(dirname \"$0\")\ncat \"$d/inspect.out\"\n"
                                           "cat \"$d/inspect.err\" >&2\nexit \"$(cat \"$d/inspect.status\")\"\n"));
  fs::permissions(program, fs::perms::owner_all);
  build::BuildahOptions options;
  options.program = program;
  auto buildah = build::Buildah::create(options);
  REQUIRE(buildah.has_value());
  const auto inspect = [&](std::string_view output, std::string_view errors = "", std::string_view status = "0") {
    REQUIRE(util::write_file_atomic(directory->path() / "inspect.out", output));
    REQUIRE(util::write_file_atomic(directory->path() / "inspect.err", errors));
    REQUIRE(util::write_file_atomic(directory->path() / "inspect.status", status));
    return buildah->docker_config_extension("0123abcd");
  };

  // A warning that looks like JSON on stderr does not get into what is parsed.
  const auto read = inspect(
      "{\n  \"Docker\": {\"config\": {\"Healthcheck\": {\"Test\": [\"CMD\", \"true\"]}, \"OnBuild\": [],\n"
      "    \"Shell\": [\"/bin/bash\", \"-c\"], \"Env\": [\"A=1\"]}}\n}\n",
      "time=\"2026-12-05T16:21:46Z\" level=warning msg=\"HEALTHCHECK is not supported for OCI image format\"\n"
      "{\"level\": \"warning\"}\n}\n");
  REQUIRE_MESSAGE(read.has_value(), read.error().message);
  CHECK(*read == R"({"Healthcheck":{"Test":["CMD","true"]},"Shell":["/bin/bash","-c"]})");  // an empty OnBuild is none
  const auto none = inspect("{\n  \"Docker\": {\"config\": {\"Env\": []}}\n}\n");
  REQUIRE(none.has_value());
  CHECK(*none == "{}");

  const auto no_json = inspect("something else\n", "level=warning msg=\"odd\"\n");
  REQUIRE_FALSE(no_json.has_value());
  CHECK(no_json.error().message ==
        "failed to read the config of image 0123abcd in buildah's storage: buildah inspect printed no JSON object; it "
        "said: level=warning msg=\"odd\"");
  const auto failed = inspect("", "Error: 0123abcd: image not known\n", "125");
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().message ==
        "failed to read the config of image 0123abcd in buildah's storage (buildah inspect exited with status 125): "
        "Error: 0123abcd: image not known");
  const auto wrong_type = inspect("{\n  \"Docker\": {\"config\": {\"Shell\": \"/bin/bash\"}}\n}\n");
  REQUIRE_FALSE(wrong_type.has_value());
  CHECK(wrong_type.error().message ==
        "failed to read the config of image 0123abcd in buildah's storage: Docker.config.Shell: expected an array of "
        "strings");
}

TEST_CASE("buildah is found through HWIMG_BUILDAH or PATH, and its absence says how to install it") {
  const auto missing = build::find_buildah({{"PATH", "/nonexistent-a:/nonexistent-b"}});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("apt-get install buildah") != std::string::npos);
  const auto named = build::find_buildah({{"HWIMG_BUILDAH", "/bin/sh"}, {"PATH", ""}});
  REQUIRE(named.has_value());
  CHECK(*named == "/bin/sh");
  const auto wrong = build::find_buildah({{"HWIMG_BUILDAH", "/nonexistent/buildah"}});
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message.find("HWIMG_BUILDAH names /nonexistent/buildah") != std::string::npos);
}

TEST_CASE("the image ID buildah writes with --iidfile is read as 64 hex digits; anything else is refused") {
  auto directory = util::TempDir::create(fs::temp_directory_path(), "hwimg-test-iidfile-");
  REQUIRE(directory);
  const auto file = directory->path() / "image-id";
  const std::string hex(64, 'a');
  for (const auto& written : {"sha256:" + hex, hex + "\n"}) {
    REQUIRE(util::write_file_atomic(file, written));
    const auto id = build::read_image_id(file);
    REQUIRE_MESSAGE(id.has_value(), id.error().message);
    CHECK(*id == hex);
  }
  // It goes on buildah's command line: an option, a short or non-hex ID, or nothing is not an ID.
  for (const auto* written : {"--all", "", "sha256:abc", "sha512:0000"}) {
    REQUIRE(util::write_file_atomic(file, written));
    const auto id = build::read_image_id(file);
    REQUIRE_FALSE(id.has_value());
    CHECK(id.error().message ==
          fmt::format("buildah's --iidfile {} holds \"{}\", not an image ID", file.string(), written));
  }
  fs::remove(file);
  const auto missing = build::read_image_id(file);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find(file.string()) != std::string::npos);
}
