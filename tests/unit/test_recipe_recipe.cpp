#include <doctest/doctest.h>

#include "hwimg/recipe/recipe.hpp"
#include "hwimg/recipe/variables.hpp"

using namespace hwimg::recipe;

namespace {
std::string error_of(std::string_view text) {
  auto r = parse_recipe(text, "r.yaml");
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}
}  // namespace

TEST_CASE("a full recipe parses with positions") {
  const auto r = parse_recipe(R"(name: app
base: scratch
build:
  workdir: src
  run: make OUT=${out}
layers:
  - from: ${out}/bin
    to: /opt/app/bin
config:
  entrypoint: [/opt/app/bin/app]
  cmd: ["--fast"]
  env: {A: "1"}
  workdir: /opt/app
  user: "1000:1000"
  labels: {k: v}
annotations:
  org.opencontainers.image.version: "1.2"
)",
                              "r.yaml");
  REQUIRE(r);
  CHECK(r->name == "app");
  CHECK(r->base.value == "scratch");
  REQUIRE(r->build);
  CHECK(r->build->run.value == "make OUT=${out}");
  CHECK(r->build->run.location.str() == "r.yaml:5:8");
  REQUIRE(r->layers.size() == 1);
  CHECK(r->layers[0].to.value == "/opt/app/bin");
  CHECK(r->layers[0].from.location.str() == "r.yaml:7:11");
  REQUIRE(r->config.entrypoint);
  CHECK((*r->config.entrypoint)[0].value == "/opt/app/bin/app");
  CHECK(r->config.user->value == "1000:1000");
  CHECK(r->config.env[0].first == "A");
  CHECK(r->annotations[0].second.value == "1.2");
}

TEST_CASE("recipe errors name file:line:column and what was expected") {
  CHECK(error_of("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\nconfig:\n  lables: {a: b}\n") ==
        "r.yaml:5:3: unknown key \"lables\" in config (did you mean labels?)");
  CHECK(error_of("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\nconfig:\n  entrypoint: /bin/app\n") ==
        "r.yaml:5:15: expected a list of strings for \"config.entrypoint\", got a string");
  CHECK(error_of("name: a\nlayers: []\n") ==
        "r.yaml:1:1: missing key \"base\" (expected e.g. \"base: scratch\")");
  CHECK(error_of("name: a\nbase: scratch\nlayers:\n  - from: x\n    to: opt/x\n") ==
        "r.yaml:5:9: expected an absolute path inside the image for \"to\", got \"opt/x\"");
  CHECK(error_of("name: a\nbase: scratch\nlayers:\n  - from: x\n") == "r.yaml:4:5: missing key \"to\" in a layer");
  CHECK(error_of("name: [a\n").starts_with("r.yaml:"));
  CHECK(error_of("name: a\nbase: scratch\nbuild: {workdir: x}\nlayers: []\n") ==
        "r.yaml:3:8: missing key \"run\" in build (the shell commands to run)");
  CHECK(error_of("nmae: a\n") == "r.yaml:1:1: unknown key \"nmae\" in the recipe (did you mean name?)");
}

TEST_CASE("variables are substituted and unknown ones are refused before building") {
  const LocatedString text{"make OUT=${out} CXXFLAGS='${cpu.march}' HOME=$${HOME}", {"r.yaml", 3, 8}};
  const auto out = substitute(text, {{"out", "/tmp/o"}, {"cpu.march", "-march=x86-64-v3"}});
  REQUIRE(out);
  CHECK(*out == "make OUT=/tmp/o CXXFLAGS='-march=x86-64-v3' HOME=${HOME}");

  const auto unknown = substitute({"${cpu.lvel}", {"r.yaml", 2, 4}}, {});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.starts_with("r.yaml:2:4: unknown variable ${cpu.lvel} (did you mean cpu.level?)"));

  const auto unterminated = substitute({"${out", {"r.yaml", 1, 1}}, {});
  REQUIRE_FALSE(unterminated);
  CHECK(unterminated.error().message.starts_with("r.yaml:1:1: unterminated \"${\""));

  auto recipe = parse_recipe("name: a\nbase: scratch\nlayers:\n  - {from: \"${ouy}/bin\", to: /x}\n", "r.yaml");
  REQUIRE(recipe);
  const auto checked = check_variables(*recipe);
  REQUIRE_FALSE(checked);
  CHECK(checked.error().message.starts_with("r.yaml:4:12: unknown variable ${ouy} (did you mean out?)"));
}

TEST_CASE("a repeated key and an empty layer list are refused") {
  CHECK(error_of("name: a\nbase: scratch\nname: b\n") ==
        "r.yaml:3:1: duplicate key \"name\" in the recipe (first at 1:1)");
  CHECK(error_of("name: a\nbase: scratch\nlayers: []\n") ==
        "r.yaml:3:9: expected at least one {from, to} map in \"layers\"");
}

TEST_CASE("build.image: a string with its position, checked for variables like the other keys") {
  const auto r = parse_recipe("name: a\nbase: scratch\nbuild:\n  image: reg.example.org/cuda:${cuda.version}-devel\n"
                              "  run: make\nlayers: [{from: x, to: /x}]\n",
                              "r.yaml");
  REQUIRE(r);
  REQUIRE(r->build);
  REQUIRE(r->build->image);
  CHECK(r->build->image->value == "reg.example.org/cuda:${cuda.version}-devel");
  CHECK(r->build->image->location.str() == "r.yaml:4:10");
  CHECK(check_variables(*r));

  CHECK(error_of("name: a\nbase: scratch\nbuild:\n  image: [debian]\n  run: make\nlayers: [{from: x, to: /x}]\n") ==
        "r.yaml:4:10: expected a string for \"build.image\", got a list");
  CHECK(error_of("name: a\nbase: scratch\nbuild:\n  image: ''\n  run: make\nlayers: [{from: x, to: /x}]\n") ==
        "r.yaml:4:10: expected an image reference for \"build.image\" (e.g. \"debian:12\" or \"oci:DIR:TAG\")");
  CHECK(error_of("name: a\nbase: scratch\nbuild:\n  imag: debian\n  run: make\nlayers: [{from: x, to: /x}]\n") ==
        "r.yaml:4:3: unknown key \"imag\" in build (did you mean image?)");

  auto typo = parse_recipe("name: a\nbase: scratch\nbuild:\n  image: 'gcc:${cuda.versoin}'\n  run: make\n"
                           "layers: [{from: x, to: /x}]\n",
                           "r.yaml");
  REQUIRE(typo);
  const auto checked = check_variables(*typo);
  REQUIRE_FALSE(checked);
  CHECK(checked.error().message.starts_with("r.yaml:4:10: unknown variable ${cuda.versoin} (did you mean cuda.version?)"));
}

TEST_CASE("a key with no value is reported at the key's own line, not at the next token") {
  // yaml-cpp places an empty value at the next token: line 3 here, or past a comment.
  CHECK(error_of("name: a\nbase:\nlayers: [{from: x, to: /x}]\n") == "r.yaml:2:1: \"base\" has no value");
  CHECK(error_of("name: a\nbase:   \n  # a comment\n\nlayers: [{from: x, to: /x}]\n") ==
        "r.yaml:2:1: \"base\" has no value");
  CHECK(error_of("name: a\nbase: scratch\nlayers:\n  - from: x\n    to:\n") == "r.yaml:5:5: \"to\" has no value");
  CHECK(error_of("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\nconfig:\n  env:\n    A:\n    B: b\n") ==
        "r.yaml:6:5: \"config.env.A\" has no value");
  CHECK(error_of("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\nbuild:\n  run:\n") ==
        "r.yaml:5:3: \"run\" has no value");
}

TEST_CASE("build.env and build.pass_env: names the shell can export, never the ones hwimg sets") {
  const auto r = parse_recipe("name: a\nbase: scratch\nbuild:\n  run: make\n  env: {CC: clang, FLAGS: \"${cpu.march}\"}\n"
                              "  pass_env: [http_proxy, CCACHE_DIR]\nlayers:\n  - {from: x, to: /x}\n",
                              "r.yaml");
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  REQUIRE(r->build->env.size() == 2);
  CHECK(r->build->env[1].first == "FLAGS");
  CHECK(r->build->env[1].second.value == "${cpu.march}");
  REQUIRE(r->build->pass_env.size() == 2);
  CHECK(r->build->pass_env[0].value == "http_proxy");
  CHECK(r->build->pass_env[1].location.str() == "r.yaml:6:26");
  CHECK(error_of("name: a\nbase: scratch\nbuild:\n  run: make\n  pass_env: [SOURCE_DATE_EPOCH]\nlayers:\n  - {from: x, to: /x}\n") ==
        "r.yaml:5:14: \"build.pass_env\" may not set SOURCE_DATE_EPOCH: hwimg sets HWIMG_* and SOURCE_DATE_EPOCH for "
        "each variant");
  CHECK(error_of("name: a\nbase: scratch\nbuild:\n  run: make\n  env: {\"A-B\": x}\nlayers:\n  - {from: x, to: /x}\n") ==
        "r.yaml:5:16: expected an environment variable name (letters, digits and _) in \"build.env\", got \"A-B\"");
  CHECK(error_of("name: a\nbase: scratch\nbuild:\n  run: make\n  pass_env: [\"1X\"]\nlayers:\n  - {from: x, to: /x}\n") ==
        "r.yaml:5:14: expected an environment variable name (letters, digits and _) in \"build.pass_env\", got \"1X\"");
}

TEST_CASE("verify.cpu: strict, warn or off; anything else is refused with its position") {
  const auto recipe = parse_recipe("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\nverify: {cpu: warn}\n", "r.yaml");
  REQUIRE(recipe.has_value());
  CHECK(recipe->verify_cpu == CpuVerify::warn);
  const auto unset = parse_recipe("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\n", "r.yaml");
  REQUIRE(unset.has_value());
  CHECK_FALSE(unset->verify_cpu.has_value());
  CHECK(error_of("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\nverify:\n  cpu: loose\n") ==
        "r.yaml:5:8: expected strict, warn or off for \"verify.cpu\", got \"loose\"");
  CHECK(error_of("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\nverify:\n  gpu: strict\n") ==
        "r.yaml:5:3: unknown key \"gpu\" in verify (did you mean cpu?)");
}

TEST_CASE("a Dockerfile recipe names the Dockerfile instead of base, build, layers and config") {
  const auto r = parse_recipe("name: app\nmatrix: m.yaml\ndockerfile: docker/Dockerfile\ncontext: .\ntarget: runtime\n"
                              "args: {MARCH: \"${cpu.march}\", CUDA_ARCHS: \"${gpu.cmake}\"}\n",
                              "r.yaml");
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  REQUIRE(r->dockerfile.has_value());
  CHECK(r->dockerfile->file.value == "docker/Dockerfile");
  CHECK(r->dockerfile->file.location.str() == "r.yaml:3:13");
  CHECK(r->dockerfile->context->value == ".");
  CHECK(r->dockerfile->target->value == "runtime");
  REQUIRE(r->dockerfile->args.size() == 2);
  CHECK(r->dockerfile->args[0].first == "MARCH");
  CHECK(r->dockerfile->args[1].second.value == "${gpu.cmake}");
  CHECK(r->layers.empty());
  CHECK(check_variables(*r).has_value());
}

TEST_CASE("a Dockerfile recipe's mistakes are named with their position") {
  CHECK(error_of("name: app\ndockerfile: Dockerfile\nlayers: [{from: a, to: /a}]\n") ==
        "r.yaml:3:9: \"layers\" cannot be used with \"dockerfile\": the Dockerfile says how the image is built");
  CHECK(error_of("name: app\nbase: scratch\nlayers: [{from: a, to: /a}]\nargs: {A: b}\n") ==
        "r.yaml:4:7: \"args\" belongs to a Dockerfile recipe: add \"dockerfile: FILE\" or remove it");
  CHECK(error_of("name: app\ndockerfile: Dockerfile\nargs: {\"A=B\": c}\n") ==
        "r.yaml:3:15: expected a build argument name (no '=' or blanks) in \"args\", got \"A=B\"");
  CHECK(error_of("name: app\ndockerfile: Dockerfile\nargs: [A]\n").find("r.yaml:3:7") == 0);
  const auto r = parse_recipe("name: app\ndockerfile: Dockerfile\nargs: {MARCH: \"${cpu.mrch}\"}\n", "r.yaml");
  REQUIRE(r.has_value());
  const auto unknown = check_variables(*r);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("r.yaml:3:15: unknown variable ${cpu.mrch} (did you mean cpu.march?)") == 0);
}

TEST_CASE("driver: where a variant's user-mode driver comes from, and where it goes in the image") {
  const auto recipe = parse_recipe("name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\n"
                                   "driver: {from: \"/opt/nvidia/${driver.version}\"}\n",
                                   "r.yaml");
  REQUIRE(recipe.has_value());
  REQUIRE(recipe->driver);
  CHECK(recipe->driver->from.value == "/opt/nvidia/${driver.version}");
  CHECK(recipe->driver->from.location.str() == "r.yaml:4:16");
  CHECK(recipe->driver->to.value == "/usr/local/nvidia/lib64");
  const auto moved = parse_recipe("name: a\ndockerfile: Dockerfile\ndriver:\n  from: d/${driver.version}\n"
                                  "  to: /usr/lib/x86_64-linux-gnu\n",
                                  "r.yaml");
  REQUIRE(moved.has_value());
  CHECK(moved->driver->to.value == "/usr/lib/x86_64-linux-gnu");

  const std::string head = "name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\n";
  CHECK(error_of(head + "driver: {to: /lib}\n") ==
        "r.yaml:4:9: missing key \"from\" in driver (the directory of the user-mode driver libraries, e.g. "
        "/opt/nvidia-drivers/${driver.version})");
  CHECK(error_of(head + "driver: {from: d, to: lib}\n") ==
        "r.yaml:4:23: expected an absolute path in the image for \"driver.to\", got \"lib\"");
  CHECK(error_of(head + "driver: {from: d, form: e}\n") ==
        "r.yaml:4:19: unknown key \"form\" in driver (did you mean from?)");
  CHECK(error_of(head + "driver: /opt/nvidia\n").starts_with("r.yaml:4:9: "));
}
