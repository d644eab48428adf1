// The Dockerfile reader: stages, what each starts FROM, the ARGs declared where, the line of each
// instruction, and Docker's substitution of build arguments in FROM lines.

#include <doctest/doctest.h>

#include "hwimg/recipe/dockerfile.hpp"

using namespace hwimg;

namespace {

recipe::Dockerfile parse(std::string_view text) {
  auto parsed = recipe::parse_dockerfile(text, "/src/Dockerfile");
  REQUIRE_MESSAGE(parsed.has_value(), parsed.error().message);
  return std::move(*parsed);
}

std::string parse_error(std::string_view text) {
  const auto parsed = recipe::parse_dockerfile(text, "/src/Dockerfile");
  REQUIRE_FALSE(parsed.has_value());
  return parsed.error().message;
}

std::string expand(std::string_view text, const recipe::ArgValues& values, char escape = '\\') {
  auto expanded = recipe::expand_arguments(text, values, escape, "Dockerfile:1:6");
  REQUIRE_MESSAGE(expanded.has_value(), expanded.error().message);
  return *expanded;
}

}  // namespace

TEST_CASE("a multi-stage Dockerfile is read into stages with their FROM, ARGs, uses and lines") {
  const auto dockerfile = parse(
      "# syntax=docker/dockerfile:1\n"
      "ARG BUILDER=registry.example.org/builder:12\n"
      "ARG BASE\n"
      "\n"
      "FROM ${BUILDER} AS Deps\n"
      "RUN make deps \\\n"
      "# a comment inside the continuation is dropped\n"
      "    && echo done\n"
      "FROM deps AS build\n"
      "ARG MARCH=-march=x86-64 OTHER\n"
      "RUN --mount=type=cache,target=/root/.cache,from=deps make\n"
      "FROM --platform=linux/amd64 $BASE\n"
      "COPY --from=build /out/app /usr/bin/app\n");
  REQUIRE(dockerfile.global_args.size() == 2);
  CHECK(dockerfile.global_args[0].name == "BUILDER");
  CHECK(dockerfile.global_args[0].default_value == "registry.example.org/builder:12");
  CHECK_FALSE(dockerfile.global_args[1].default_value.has_value());
  REQUIRE(dockerfile.stages.size() == 3);
  const auto& deps = dockerfile.stages[0];
  CHECK(deps.from == "${BUILDER}");
  CHECK(deps.name == "deps");  // compared case-insensitively, as Docker does
  CHECK(deps.line == 5);
  CHECK(deps.from_column == 6);
  REQUIRE(deps.instructions.size() == 2);
  CHECK(deps.instructions[1].keyword == "RUN");
  CHECK(deps.instructions[1].line == 6);
  CHECK(deps.instructions[1].arguments == "make deps && echo done");
  const auto& build = dockerfile.stages[1];
  REQUIRE(build.args.size() == 2);
  CHECK(build.args[0].name == "MARCH");
  CHECK(build.args[0].default_value == "-march=x86-64");
  CHECK(build.args[1].name == "OTHER");
  CHECK(build.uses == std::vector<std::string>{"deps"});
  const auto& runtime = dockerfile.stages[2];
  CHECK(runtime.platform == "linux/amd64");
  CHECK(runtime.from == "$BASE");
  CHECK(runtime.name.empty());
  CHECK(runtime.uses == std::vector<std::string>{"build"});
  CHECK(dockerfile.find_stage("DEPS") == 0);
  CHECK(dockerfile.find_stage("1") == 1);
  CHECK_FALSE(dockerfile.find_stage("runtime").has_value());
  CHECK(dockerfile.declares("MARCH"));
  CHECK(dockerfile.declares("BASE"));
  CHECK_FALSE(dockerfile.declares("CUDA_ARCHS"));
}

TEST_CASE("the escape directive changes the continuation character") {
  const auto dockerfile = parse("# escape=`\nFROM scratch\nCOPY a `\n  b /\nRUN echo \\\n");
  CHECK(dockerfile.escape == '`');
  REQUIRE(dockerfile.stages[0].instructions.size() == 3);
  CHECK(dockerfile.stages[0].instructions[1].arguments == "a b /");
  CHECK(dockerfile.stages[0].instructions[2].arguments == "echo \\");
}

TEST_CASE("a malformed Dockerfile is refused with its line and what was expected") {
  CHECK(parse_error("") == "/src/Dockerfile:1:1: expected a FROM instruction: the Dockerfile has no stage");
  CHECK(parse_error("ARG A=1\nRUN true\nFROM scratch\n") ==
        "/src/Dockerfile:2:1: expected FROM (or ARG) before RUN: every instruction belongs to a stage");
  CHECK(parse_error("FROM scratch\nFROM\n") == "/src/Dockerfile:2:1: expected an image after FROM (FROM IMAGE [AS NAME])");
  CHECK(parse_error("FROM debian AS\n") ==
        "/src/Dockerfile:1:1: expected \"AS NAME\" after the image in FROM, got \"AS\"");
  CHECK(parse_error("FROM debian base\n") ==
        "/src/Dockerfile:1:1: expected \"AS NAME\" after the image in FROM, got \"base\"");
  CHECK(parse_error("FROM scratch\nARG\n") == "/src/Dockerfile:2:1: expected a name after ARG (ARG NAME or ARG NAME=DEFAULT)");
}

TEST_CASE("build arguments are substituted in FROM text as Docker does") {
  const recipe::ArgValues values{{"CUDA", "12.8"}, {"EMPTY", ""}};
  CHECK(expand("cuda:${CUDA}-devel", values) == "cuda:12.8-devel");
  CHECK(expand("cuda:$CUDA", values) == "cuda:12.8");
  CHECK(expand("cuda:${MISSING}x", values) == "cuda:x");
  CHECK(expand("${EMPTY:-debian}:${CUDA:-0}", values) == "debian:12.8");
  CHECK(expand("a${CUDA:+-cuda}${EMPTY:+-never}", values) == "a-cuda");
  CHECK(expand("\\$CUDA", values) == "$CUDA");
  CHECK(expand("`$CUDA", values, '`') == "$CUDA");
  CHECK(expand("price $ 5", values) == "price $ 5");
  const auto unterminated = recipe::expand_arguments("${CUDA", values, '\\', "Dockerfile:3:6");
  REQUIRE_FALSE(unterminated.has_value());
  CHECK(unterminated.error().message == "Dockerfile:3:6: unterminated \"${\" in \"${CUDA\" (expected ${NAME})");
  const auto modifier = recipe::expand_arguments("${CUDA:?x}", values, '\\', "Dockerfile:3:6");
  REQUIRE_FALSE(modifier.has_value());
  CHECK(modifier.error().message == "Dockerfile:3:6: expected ${CUDA:-WORD} or ${CUDA:+WORD} in \"${CUDA:?x}\"");
}

TEST_CASE("FROM lines see the global ARGs: their defaults, replaced by build arguments they declare") {
  const auto dockerfile = parse("ARG REGISTRY=r.example.org\nARG IMAGE=${REGISTRY}/base\nARG TAG=12\nFROM ${IMAGE}:${TAG}\nARG LATE\n");
  const auto values = recipe::global_arg_values(dockerfile, {{"TAG", "13"}, {"LATE", "x"}});
  CHECK(values.at("IMAGE") == "r.example.org/base");
  CHECK(values.at("TAG") == "13");
  CHECK_FALSE(values.contains("LATE"));  // declared in a stage: not visible to FROM
}
