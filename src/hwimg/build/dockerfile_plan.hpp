#pragma once
// A variant of a Dockerfile recipe, planned (docs/recipe.md#bring-your-dockerfile): its build
// arguments substituted, the Dockerfile and context resolved, and what each stage starts from with
// the arguments applied, so the images can be resolved, pinned and keyed before buildah runs.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hwimg/build/variant_plan.hpp"

namespace hwimg::build {

// The recipe's Dockerfile, read once per build; its path may not use variables.
[[nodiscard]] Result<std::shared_ptr<const recipe::Dockerfile>> load_recipe_dockerfile(const recipe::Recipe& recipe);

// `variant` must outlive the plan. Fails on a context that is not a directory or that leaves the
// recipe's directory, on a target no stage is named, and on a FROM image that does not parse.
[[nodiscard]] Result<VariantPlan> plan_dockerfile_variant(const recipe::Recipe& recipe,
                                                          std::shared_ptr<const recipe::Dockerfile> dockerfile,
                                                          const matrix::Variant& variant);

// The stage the chain of FROMs of the plan's final stage starts at: the one whose image is the base.
[[nodiscard]] std::size_t root_stage(const DockerfilePlan& dockerfile);

// The build arguments of the plan that no ARG of its Dockerfile declares (buildah ignores them).
[[nodiscard]] std::vector<std::string> undeclared_arguments(const VariantPlan& plan);

// The stages that every plan builds alike and that its target needs, the ones no other such stage
// builds on: run once before the variants, they leave buildah's layer cache warm for all of them.
[[nodiscard]] std::vector<std::size_t> shared_stages(std::span<const VariantPlan> plans);

// The stage's own build arguments as the plan sets them (for --explain and the sharing above).
[[nodiscard]] std::string stage_signature(const VariantPlan& plan, std::size_t stage);

}  // namespace hwimg::build
