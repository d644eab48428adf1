#include "hwimg/build/dockerfile_plan.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "hwimg/recipe/variables.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

// A recipe may not reach outside its own directory for its context: what it builds from is then
// what its repository holds (the command line names any directory it likes).
Result<void> check_context(const recipe::Recipe& recipe, const fs::path& context, const recipe::LocatedString& written) {
  std::error_code ec;
  if (!fs::is_directory(context, ec)) {
    return fail("{}: build context {} is not a directory", written.location.str(), context.string());
  }
  if (written.location.line == 0) return {};
  const auto inside = fs::canonical(context, ec);
  const auto home = fs::canonical(recipe.directory(), ec);
  const auto relative = inside.lexically_relative(home);
  if (ec || relative.empty() || *relative.begin() == "..") {
    return fail("{}: build context \"{}\" escapes the recipe's directory {} (it resolves to {}); move the recipe up, "
                "or name the context on the command line with hwimg build --dockerfile FILE --context DIR",
                written.location.str(), written.value, home.string(), inside.string());
  }
  return {};
}

std::vector<std::string> stage_names(const recipe::Dockerfile& dockerfile) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < dockerfile.stages.size(); ++i) {
    names.push_back(dockerfile.stages[i].name.empty() ? std::to_string(i) : dockerfile.stages[i].name);
  }
  return names;
}

Result<std::vector<StageSource>> stage_sources(const recipe::Dockerfile& dockerfile, const recipe::ArgValues& args) {
  const auto values = recipe::global_arg_values(dockerfile, args);
  std::vector<StageSource> sources;
  for (std::size_t i = 0; i < dockerfile.stages.size(); ++i) {
    const auto& stage = dockerfile.stages[i];
    StageSource source;
    source.location = {dockerfile.file, stage.line, stage.from_column};
    HWIMG_TRY_ASSIGN(source.text, recipe::expand_arguments(stage.from, values, dockerfile.escape, source.location.str()));
    const auto earlier = dockerfile.find_stage(source.text);
    if (util::to_lower(source.text) == "scratch") {
      source.kind = StageSource::Kind::scratch;
    } else if (earlier && *earlier < i) {
      source.kind = StageSource::Kind::stage;
      source.stage = *earlier;
    } else {
      source.kind = StageSource::Kind::image;
      if (source.text.empty()) {
        return fail("{}: FROM {} names no image with these build arguments (set {} with args: or --build-arg)",
                    source.location.str(), stage.from, stage.from);
      }
      HWIMG_TRY_ASSIGN(source.image, with_context(image::parse_image_reference(source.text),
                                                  source.location.str() + ": failed to use image " + source.text));
    }
    sources.push_back(std::move(source));
  }
  return sources;
}

// Stages `from` builds on, through FROM and --from, `from` included.
std::set<std::size_t> needed_stages(const DockerfilePlan& dockerfile, std::size_t from) {
  std::set<std::size_t> needed;
  std::function<void(std::size_t)> visit = [&](std::size_t stage) {
    if (!needed.insert(stage).second) return;
    if (dockerfile.stages[stage].kind == StageSource::Kind::stage) visit(dockerfile.stages[stage].stage);
    for (const auto& use : dockerfile.parsed->stages[stage].uses) {
      if (const auto other = dockerfile.parsed->find_stage(use); other && *other < stage) visit(*other);
    }
  };
  visit(from);
  return needed;
}

}  // namespace

Result<std::shared_ptr<const recipe::Dockerfile>> load_recipe_dockerfile(const recipe::Recipe& recipe) {
  const auto& spec = *recipe.dockerfile;
  HWIMG_TRY_ASSIGN(const auto path, recipe::substitute(spec.file, {}));
  HWIMG_TRY_ASSIGN(auto parsed, with_context(recipe::load_dockerfile(recipe.resolve(path)), spec.file.location.str()));
  return std::make_shared<const recipe::Dockerfile>(std::move(parsed));
}

Result<VariantPlan> plan_dockerfile_variant(const recipe::Recipe& recipe,
                                            std::shared_ptr<const recipe::Dockerfile> dockerfile,
                                            const matrix::Variant& variant) {
  const auto& spec = *recipe.dockerfile;
  VariantPlan plan;
  plan.variant = &variant;
  plan.verify_cpu = recipe.verify_cpu;
  plan.variables = matrix::build_variables(variant, {});
  DockerfilePlan planned;
  planned.dockerfile = dockerfile->file;
  if (spec.context) {
    HWIMG_TRY_ASSIGN(const auto context, recipe::substitute(*spec.context, plan.variables));
    planned.context = recipe.resolve(context);
    HWIMG_TRY(check_context(recipe, planned.context, *spec.context));
  } else {
    planned.context = planned.dockerfile.parent_path();
  }
  recipe::ArgValues values;
  for (const auto& [name, value] : spec.args) {
    HWIMG_TRY_ASSIGN(auto substituted, recipe::substitute(value, plan.variables));
    values[name] = substituted;
    planned.args.emplace_back(name, std::move(substituted));
  }
  planned.final_stage = dockerfile->stages.size() - 1;
  if (spec.target) {
    HWIMG_TRY_ASSIGN(const auto target, recipe::substitute(*spec.target, plan.variables));
    const auto stage = dockerfile->find_stage(target);
    if (!stage) {
      const auto names = stage_names(*dockerfile);
      return fail("{}: no stage named \"{}\" in {}{}; stages: {}", spec.target->location.str(), target,
                  dockerfile->file.string(), util::did_you_mean(target, names), util::join(names, ", "));
    }
    planned.target = target;
    planned.final_stage = *stage;
  }
  HWIMG_TRY_ASSIGN(planned.stages, stage_sources(*dockerfile, values));
  planned.parsed = std::move(dockerfile);

  // The base is where the final stage's chain of FROMs leaves the Dockerfile.
  const auto& source = planned.stages[root_stage(planned)];
  plan.base_location = source.location;
  plan.base_text = source.kind == StageSource::Kind::image ? source.text : "scratch";
  plan.base = source.image;
  for (const auto& [name, value] : recipe.annotations) {
    HWIMG_TRY_ASSIGN(plan.annotations[name], recipe::substitute(value, plan.variables));
  }
  plan.dockerfile = std::move(planned);
  HWIMG_TRY_ASSIGN(plan.driver, plan_driver(recipe, variant, plan.variables));
  return plan;
}

std::size_t root_stage(const DockerfilePlan& dockerfile) {
  auto stage = dockerfile.final_stage;
  while (dockerfile.stages[stage].kind == StageSource::Kind::stage) stage = dockerfile.stages[stage].stage;
  return stage;
}

std::vector<std::string> undeclared_arguments(const VariantPlan& plan) {
  std::vector<std::string> names;
  for (const auto& [name, value] : plan.dockerfile->args) {
    if (!plan.dockerfile->parsed->declares(name)) names.push_back(name);
  }
  return names;
}

std::string stage_signature(const VariantPlan& plan, std::size_t stage) {
  const auto& dockerfile = *plan.dockerfile;
  const auto& parsed = *dockerfile.parsed;
  const auto& source = dockerfile.stages[stage];
  std::string signature = source.kind == StageSource::Kind::stage
                              ? "[" + stage_signature(plan, source.stage) + "]"
                              : source.text;
  if (const auto& platform = parsed.stages[stage].platform) signature += " --platform=" + *platform;
  const recipe::ArgValues args(dockerfile.args.begin(), dockerfile.args.end());
  const auto globals = recipe::global_arg_values(parsed, args);
  for (const auto& arg : parsed.stages[stage].args) {
    const auto given = args.find(arg.name);
    const auto global = globals.find(arg.name);
    const auto value = given != args.end()        ? given->second
                       : arg.default_value         ? *arg.default_value
                       : global != globals.end()   ? global->second
                                                   : std::string();
    signature += " " + arg.name + "=" + value;
  }
  for (const auto& use : parsed.stages[stage].uses) {
    const auto other = parsed.find_stage(use);
    signature += " uses " + (other && *other < stage ? "[" + stage_signature(plan, *other) + "]" : use);
  }
  return signature;
}

std::vector<std::size_t> shared_stages(std::span<const VariantPlan> plans) {
  if (plans.size() < 2) return {};
  const auto& first = plans.front();
  std::set<std::size_t> candidates;
  for (const auto stage : needed_stages(*first.dockerfile, first.dockerfile->final_stage)) {
    if (stage == first.dockerfile->final_stage) continue;
    const auto signature = stage_signature(first, stage);
    const bool alike = std::ranges::all_of(plans, [&](const VariantPlan& plan) {
      return plan.dockerfile->parsed == first.dockerfile->parsed && stage < plan.dockerfile->stages.size() &&
             stage_signature(plan, stage) == signature;
    });
    if (alike) candidates.insert(stage);
  }
  // A stage another shared stage builds on is built by that one.
  std::set<std::size_t> covered;
  for (const auto stage : candidates) {
    for (const auto below : needed_stages(*first.dockerfile, stage)) {
      if (below != stage) covered.insert(below);
    }
  }
  std::vector<std::size_t> shared;
  for (const auto stage : candidates) {
    if (!covered.contains(stage)) shared.push_back(stage);
  }
  return shared;
}

}  // namespace hwimg::build
