#include "hwimg/build/variant_plan.hpp"

#include "hwimg/recipe/variables.hpp"

namespace hwimg::build {
namespace {

class Planner {
public:
  Planner(const recipe::Recipe& recipe, const recipe::Variables& variables)
      : m_recipe(recipe), m_variables(variables) {}

  Result<std::string> text(const recipe::LocatedString& value) const {
    return recipe::substitute(value, m_variables);
  }

  Result<std::vector<std::string>> list(const std::vector<recipe::LocatedString>& values) const {
    std::vector<std::string> out;
    for (const auto& value : values) {
      HWIMG_TRY_ASSIGN(out.emplace_back(), text(value));
    }
    return out;
  }

  Result<std::vector<std::pair<std::string, std::string>>> pairs(const recipe::LocatedMap& values) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [name, value] : values) {
      HWIMG_TRY_ASSIGN(auto substituted, text(value));
      out.emplace_back(name, std::move(substituted));
    }
    return out;
  }

  Result<std::optional<std::string>> optional(const std::optional<recipe::LocatedString>& value) const {
    if (!value) return std::optional<std::string>();
    HWIMG_TRY_ASSIGN(auto substituted, text(*value));
    return std::optional<std::string>(std::move(substituted));
  }

  Result<std::optional<std::vector<std::string>>> optional_list(
      const std::optional<std::vector<recipe::LocatedString>>& values) const {
    if (!values) return std::optional<std::vector<std::string>>();
    HWIMG_TRY_ASSIGN(auto substituted, list(*values));
    return std::optional<std::vector<std::string>>(std::move(substituted));
  }

  Result<ConfigPlan> config() const {
    const auto& spec = m_recipe.config;
    ConfigPlan plan;
    HWIMG_TRY_ASSIGN(plan.entrypoint, optional_list(spec.entrypoint));
    HWIMG_TRY_ASSIGN(plan.cmd, optional_list(spec.cmd));
    HWIMG_TRY_ASSIGN(plan.env, pairs(spec.env));
    HWIMG_TRY_ASSIGN(plan.labels, pairs(spec.labels));
    HWIMG_TRY_ASSIGN(plan.workdir, optional(spec.workdir));
    HWIMG_TRY_ASSIGN(plan.user, optional(spec.user));
    HWIMG_TRY_ASSIGN(plan.stop_signal, optional(spec.stop_signal));
    for (const auto& port : spec.exposed_ports) plan.exposed_ports.push_back(port.value);
    return plan;
  }

private:
  const recipe::Recipe& m_recipe;
  const recipe::Variables& m_variables;
};

bool is_under(const std::filesystem::path& path, const std::filesystem::path& directory) {
  const auto relative = path.lexically_relative(directory);
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

std::string built_layer_name(const BlobLayer& layer) {
  constexpr std::size_t shown = 72;
  if (layer.created_by.empty()) return layer.diff_id.str();
  const auto text = layer.created_by.size() > shown ? layer.created_by.substr(0, shown) + "..." : layer.created_by;
  return fmt::format("{} made by \"{}\"", layer.diff_id.str(), text);
}

Result<VariantPlan> plan_variant(const recipe::Recipe& recipe, const matrix::Variant& variant,
                                 const std::filesystem::path& out) {
  VariantPlan plan;
  plan.variant = &variant;
  plan.verify_cpu = recipe.verify_cpu;
  plan.out = out;
  plan.variables = matrix::build_variables(variant, out);
  auto environment = matrix::build_environment(variant, out);
  // The toolkit of a builder image is the image's, not the host's default location.
  const bool in_image = recipe.build && recipe.build->image;
  if (in_image && variant.uses_gpu() && variant.cuda_home_origin == matrix::CudaHomeOrigin::default_root) {
    const std::string home(builder_image_cuda_home);
    plan.variables["cuda.home"] = environment["HWIMG_CUDA_HOME"] = environment["CUDA_HOME"] = home;
  }
  const Planner planner(recipe, plan.variables);

  HWIMG_TRY_ASSIGN(plan.base_text, planner.text(recipe.base));
  plan.base_location = recipe.base.location;
  if (plan.base_text != "scratch") {
    HWIMG_TRY_ASSIGN(plan.base, with_context(image::parse_image_reference(plan.base_text),
                                             recipe.base.location.str() + ": failed to use base image " +
                                                 plan.base_text));
  }

  if (recipe.build) {
    BuildStepPlan step;
    HWIMG_TRY_ASSIGN(step.run, planner.text(recipe.build->run));
    HWIMG_TRY_ASSIGN(const auto workdir, planner.text(recipe.build->workdir));
    step.workdir = recipe.resolve(workdir);
    step.run_location = recipe.build->run.location;
    step.workdir_location = recipe.build->workdir.location;
    HWIMG_TRY_ASSIGN(const auto recipe_environment, planner.pairs(recipe.build->env));
    // HWIMG_* win: the recipe parser refuses them in build.env, and CUDA_HOME is the variant's.
    for (const auto& [name, value] : recipe_environment) environment.emplace(name, value);
    step.environment = std::move(environment);
    for (const auto& name : recipe.build->pass_env) step.pass_env.push_back(name.value);
    step.workdir_in_build_output = is_under(step.workdir, out);
    if (const auto& image = recipe.build->image) {
      HWIMG_TRY_ASSIGN(step.image_text, planner.text(*image));
      step.image_location = image->location;
      HWIMG_TRY_ASSIGN(step.image, with_context(image::parse_image_reference(step.image_text),
                                                image->location.str() + ": failed to use builder image " +
                                                    step.image_text));
    }
    plan.build = std::move(step);
  }

  for (const auto& layer : recipe.layers) {
    LayerPlan planned;
    HWIMG_TRY_ASSIGN(const auto from, planner.text(layer.from));
    HWIMG_TRY_ASSIGN(planned.to, planner.text(layer.to));
    planned.from = recipe.resolve(from);
    planned.from_location = layer.from.location;
    planned.to_location = layer.to.location;
    planned.from_build_output = is_under(planned.from, out);
    planned.variant_specific = planned.from_build_output || recipe::names_variables(layer.from);
    plan.layers.push_back(std::move(planned));
  }

  HWIMG_TRY_ASSIGN(plan.driver, plan_driver(recipe, variant, plan.variables));
  HWIMG_TRY_ASSIGN(plan.config, planner.config());
  for (const auto& [name, value] : recipe.annotations) {
    HWIMG_TRY_ASSIGN(plan.annotations[name], planner.text(value));
  }
  return plan;
}

}  // namespace hwimg::build
