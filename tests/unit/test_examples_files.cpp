// The example files users copy: the GitHub Actions fan-out workflow and the Kubernetes manifests
// load as YAML and have the structure their systems require.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "hwimg/matrix/report.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/probe/report.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;

namespace {

const std::filesystem::path source_dir = std::filesystem::path(HWIMG_TEST_DATA_DIR) / ".." / "..";

std::vector<YAML::Node> load_documents(const std::string& relative) {
  const auto path = source_dir / relative;
  auto text = util::read_file(path);
  REQUIRE_MESSAGE(text, path.string());
  return YAML::LoadAll(*text);
}

std::string scalar(const YAML::Node& node) { return node && node.IsScalar() ? node.as<std::string>() : ""; }

// Every `${{ matrix.KEY }}` a text uses.
std::set<std::string> matrix_keys(const std::string& text) {
  std::set<std::string> keys;
  const std::regex pattern(R"(\$\{\{\s*matrix\.([A-Za-z_-]+)\s*\}\})");
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) keys.insert((*it)[1]);
  return keys;
}

void collect_matrix_keys(const YAML::Node& node, std::set<std::string>& keys) {
  if (node.IsScalar()) {
    keys.merge(matrix_keys(node.as<std::string>()));
  } else if (node.IsMap()) {
    for (const auto& pair : node) collect_matrix_keys(pair.second, keys);
  } else if (node.IsSequence()) {
    for (const auto& item : node) collect_matrix_keys(item, keys);
  }
}

// The label keys a pod spec places by: nodeSelector and required/preferred node affinity.
std::set<std::string> selected_labels(const YAML::Node& pod) {
  std::set<std::string> keys;
  if (const auto selector = pod["nodeSelector"]) {
    for (const auto& pair : selector) keys.insert(pair.first.as<std::string>());
  }
  const auto affinity = pod["affinity"];
  if (!affinity || !affinity["nodeAffinity"]) return keys;
  const auto node_affinity = affinity["nodeAffinity"];
  if (const auto required = node_affinity["requiredDuringSchedulingIgnoredDuringExecution"]) {
    for (const auto& term : required["nodeSelectorTerms"]) {
      for (const auto& expression : term["matchExpressions"]) {
        keys.insert(scalar(expression["key"]));
        const auto op = scalar(expression["operator"]);
        const std::set<std::string> operators{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
        CHECK_MESSAGE(operators.contains(op), op);
        if (op == "Gt" || op == "Lt") {
          REQUIRE(expression["values"].size() == 1);
          CHECK(std::regex_match(scalar(expression["values"][0]), std::regex("[0-9]+")));
        }
      }
    }
  }
  if (const auto preferred = node_affinity["preferredDuringSchedulingIgnoredDuringExecution"]) {
    for (const auto& preference : preferred) {
      const int weight = preference["weight"].as<int>();
      CHECK((weight >= 1 && weight <= 100));
      for (const auto& expression : preference["preference"]["matchExpressions"]) {
        keys.insert(scalar(expression["key"]));
      }
    }
  }
  return keys;
}

// The fields the API server requires of a workload: kind-specific selector and a pod template
// whose containers have a name and an image.
YAML::Node check_workload(const YAML::Node& document) {
  const auto kind = scalar(document["kind"]);
  INFO(kind << " " << scalar(document["metadata"]["name"]));
  CHECK(!scalar(document["apiVersion"]).empty());
  CHECK(std::regex_match(scalar(document["metadata"]["name"]), std::regex("[a-z0-9]([-a-z0-9]*[a-z0-9])?")));
  const auto spec = document["spec"];
  const auto template_labels = spec["template"]["metadata"]["labels"];
  if (kind == "DaemonSet" || kind == "Deployment") {
    CHECK(scalar(document["apiVersion"]) == "apps/v1");
    const auto match = spec["selector"]["matchLabels"];
    REQUIRE(match.IsMap());
    REQUIRE(match.size() > 0);
    for (const auto& pair : match) {
      CHECK(scalar(template_labels[pair.first.as<std::string>()]) == pair.second.as<std::string>());
    }
  } else {
    CHECK(kind == "Job");
    CHECK(scalar(document["apiVersion"]) == "batch/v1");
    const std::set<std::string> restart_policies{"Never", "OnFailure"};
    CHECK(restart_policies.contains(scalar(spec["template"]["spec"]["restartPolicy"])));
  }
  const auto pod = spec["template"]["spec"];
  REQUIRE(pod["containers"].IsSequence());
  REQUIRE(pod["containers"].size() > 0);
  for (const auto& container : pod["containers"]) {
    CHECK(!scalar(container["name"]).empty());
    CHECK(!scalar(container["image"]).empty());
  }
  return pod;
}

// Every label `hwimg probe --format nfd` can write for the recorded H100 machine and a CPU-only one.
std::set<std::string> probe_label_names() {
  std::set<std::string> names;
  for (const auto* file : {"gpu-h100-probe-nvml.json", "gpu-h100-probe-procfs.json"}) {
    auto text = util::read_file(std::filesystem::path(HWIMG_TEST_DATA_DIR) / "probe" / file);
    REQUIRE(text);
    auto facts = probe::parse_host_facts(*text, file);
    REQUIRE(facts);
    auto cpu_only = *facts;
    cpu_only.nvidia.reset();
    for (const auto& host : {*facts, cpu_only}) {
      for (const auto& line : util::split(probe::to_nfd(host), '\n')) {
        if (line.empty() || line.starts_with('#')) continue;
        names.insert(line.substr(0, line.find('=')));
      }
    }
  }
  return names;
}

}  // namespace

TEST_CASE("examples/ci/github-actions.yml: matrix, one build job per variant, then the index") {
  const auto documents = load_documents("examples/ci/github-actions.yml");
  REQUIRE(documents.size() == 1);
  const auto& workflow = documents[0];
  CHECK(workflow["on"]);
  const auto jobs = workflow["jobs"];
  REQUIRE(jobs.IsMap());
  std::vector<std::string> names;
  for (const auto& job : jobs) {
    const auto name = job.first.as<std::string>();
    names.push_back(name);
    INFO("job " << name);
    CHECK(!scalar(job.second["runs-on"]).empty());
    REQUIRE(job.second["steps"].IsSequence());
    for (const auto& step : job.second["steps"]) CHECK((step["run"] || step["uses"]));
  }
  CHECK(names == std::vector<std::string>{"matrix", "build", "index"});

  const auto matrix_job = jobs["matrix"];
  CHECK(scalar(matrix_job["outputs"]["matrix"]) == "${{ steps.expand.outputs.matrix }}");
  bool expands = false;
  for (const auto& step : matrix_job["steps"]) {
    if (scalar(step["id"]) != "expand") continue;
    expands = scalar(step["run"]).find("hwimg matrix matrix/cpu-levels.yaml --format github") != std::string::npos;
  }
  CHECK(expands);

  const auto build = jobs["build"];
  CHECK(scalar(build["needs"]) == "matrix");
  CHECK(scalar(build["strategy"]["matrix"]) == "${{ fromJSON(needs.matrix.outputs.matrix) }}");
  CHECK(scalar(build["env"]["SOURCE_DATE_EPOCH"]) == "${{ needs.matrix.outputs.epoch }}");
  std::string build_script;
  for (const auto& step : build["steps"]) build_script += scalar(step["run"]);
  CHECK(build_script.find("hwimg build recipes/stencil.yaml --only \"$VARIANT\" -o out --tag \"$TAG\"") !=
        std::string::npos);
  CHECK(build_script.find("hwimg push \"oci:out:$TAG-$VARIANT\" \"$IMAGE:$TAG-$VARIANT\"") != std::string::npos);

  // Every ${{ matrix.KEY }} is a key `hwimg matrix --format github` writes.
  auto report = matrix::check_matrix(source_dir / "matrix/cpu-levels.yaml", {});
  REQUIRE(report);
  const auto rows = nlohmann::json::parse(matrix::render_github(*report));
  std::set<std::string> written;
  for (const auto& [key, value] : rows["include"][0].items()) written.insert(key);
  std::set<std::string> used;
  collect_matrix_keys(build, used);
  CHECK(!used.empty());
  for (const auto& key : used) CHECK_MESSAGE(written.contains(key), "matrix." << key);

  const auto index = jobs["index"];
  CHECK(index["needs"].size() == 2);
  std::string index_script;
  for (const auto& step : index["steps"]) index_script += scalar(step["run"]);
  CHECK(index_script.find("hwimg index create \"$IMAGE:$TAG\" \"${from[@]}\"") != std::string::npos);
  CHECK(index_script.find("jq -r '.include[].variant' <<<\"$MATRIX\"") != std::string::npos);
}

TEST_CASE("examples/k8s: workloads are valid and select only labels hwimg probe writes") {
  const auto probe_labels = probe_label_names();
  CHECK(probe_labels.contains("hwimg.org/nvidia.gpu.count"));

  const auto daemonsets = load_documents("examples/k8s/nfd-hwimg-daemonset.yaml");
  REQUIRE(daemonsets.size() == 1);
  const auto& daemonset = daemonsets[0];
  CHECK(scalar(daemonset["kind"]) == "DaemonSet");
  const auto pod = check_workload(daemonset);
  const std::string features_d = "/etc/kubernetes/node-feature-discovery/features.d";
  CHECK(scalar(pod["volumes"][0]["hostPath"]["path"]) == features_d);
  CHECK(scalar(pod["containers"][0]["volumeMounts"][0]["mountPath"]) == features_d);
  CHECK(scalar(pod["containers"][0]["args"][0]).find("hwimg probe --format nfd --output " + features_d + "/hwimg") !=
        std::string::npos);

  const auto workloads = load_documents("examples/k8s/workload.yaml");
  CHECK(workloads.size() == 2);
  std::size_t hwimg_selectors = 0;
  for (const auto& document : workloads) {
    const auto labels = selected_labels(check_workload(document));
    for (const auto& key : labels) {
      if (!key.starts_with("hwimg.org/")) continue;
      ++hwimg_selectors;
      CHECK_MESSAGE(probe_labels.contains(key), key << " is not a label hwimg probe --format nfd writes");
    }
  }
  CHECK(hwimg_selectors >= 5);
}
