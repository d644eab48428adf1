// The example files users copy: the GitHub Actions fan-out workflow and the Kubernetes manifests
// load as YAML and have the structure their systems require.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "hwimg/matrix/report.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/probe/report.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/serve/node_config.hpp"
#include "hwimg/util/duration.hpp"
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

// Every label `hwimg probe --format nfd` can write for the recorded H100 machine and a CPU-only one,
// with a value it writes.
std::map<std::string, std::string> probe_labels_written() {
  std::map<std::string, std::string> names;
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
        const auto equals = line.find('=');
        names[line.substr(0, equals)] = line.substr(equals + 1);
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

// The keys a pod's required node affinity compares as integers (Gt, Lt).
std::set<std::string> integer_compared_labels(const YAML::Node& pod) {
  std::set<std::string> keys;
  const auto affinity = pod["affinity"];
  if (!affinity || !affinity["nodeAffinity"]) return keys;
  const auto required = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  if (!required) return keys;
  for (const auto& term : required["nodeSelectorTerms"]) {
    for (const auto& expression : term["matchExpressions"]) {
      const auto op = scalar(expression["operator"]);
      if (op == "Gt" || op == "Lt") keys.insert(scalar(expression["key"]));
    }
  }
  return keys;
}

TEST_CASE("examples/k8s: workloads are valid and select only labels hwimg probe writes") {
  const auto probe_labels = probe_labels_written();
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
  // The facts as JSON on the host, for the guard's `hwimg check --host`.
  const std::string facts_dir = "/var/lib/hwimg";
  CHECK(scalar(pod["containers"][0]["args"][0]).find("hwimg probe --format json --output " + facts_dir + "/node.json") !=
        std::string::npos);
  CHECK(scalar(pod["volumes"][1]["hostPath"]["path"]) == facts_dir);
  CHECK(scalar(pod["containers"][0]["volumeMounts"][1]["mountPath"]) == facts_dir);

  // The guard: an init container checks the pod's own image against those facts, and its reasons
  // reach `kubectl describe` as the termination message.
  const auto guarded = load_documents("examples/k8s/guarded-deployment.yaml");
  REQUIRE(guarded.size() == 1);
  const auto guarded_pod = check_workload(guarded[0]);
  REQUIRE(guarded_pod["initContainers"].size() == 1);
  const auto guard = guarded_pod["initContainers"][0];
  std::vector<std::string> command;
  for (const auto& word : guard["command"]) command.push_back(scalar(word));
  REQUIRE(command.size() >= 5);
  CHECK(command[0] == "hwimg");
  CHECK(command[1] == "check");
  CHECK(command[2] == scalar(guarded_pod["containers"][0]["image"]));
  const auto host = std::ranges::find(command, std::string("--host"));
  REQUIRE(host != command.end());
  REQUIRE(std::next(host) != command.end());
  CHECK(*std::next(host) == facts_dir + "/node.json");
  CHECK(scalar(guard["terminationMessagePolicy"]) == "FallbackToLogsOnError");
  CHECK(scalar(guarded_pod["volumes"][0]["hostPath"]["path"]) == facts_dir);
  CHECK(scalar(guard["volumeMounts"][0]["mountPath"]) == facts_dir);

  // Both styles: hwimg's own names, and NFD's and GPU Feature Discovery's, which hwimg writes too.
  const auto workloads = load_documents("examples/k8s/workload.yaml");
  CHECK(workloads.size() == 4);
  std::map<std::string, std::size_t> selectors;
  for (const auto& document : workloads) {
    const auto workload_pod = check_workload(document);
    for (const auto& key : selected_labels(workload_pod)) {
      const auto prefix = key.substr(0, key.find('/'));
      if (prefix != "hwimg.org" && prefix != "feature.node.kubernetes.io" && prefix != "nvidia.com") continue;
      ++selectors[prefix];
      CHECK_MESSAGE(probe_labels.contains(key), key << " is not a label hwimg probe --format nfd writes");
    }
    for (const auto& key : integer_compared_labels(workload_pod)) {
      if (!probe_labels.contains(key)) continue;
      CHECK_MESSAGE(std::regex_match(probe_labels.at(key), std::regex("[0-9]+")),
                    key << "=" << probe_labels.at(key) << " cannot be compared with Gt/Lt");
    }
  }
  CHECK(selectors["hwimg.org"] >= 7);
  CHECK(selectors["feature.node.kubernetes.io"] >= 1);
  CHECK(selectors["nvidia.com"] >= 2);
}

// ---------------------------------------------------------------------------------------------
// examples/k8s/serve: `hwimg serve` on every node and the runtime configurations that make its
// answer final (docs/serve.md).

namespace {

const std::string serve_dir = "examples/k8s/serve";
const std::string mirror = "127.0.0.1:5050";

std::string read_example(const std::string& relative) {
  auto text = util::read_file(source_dir / relative);
  REQUIRE_MESSAGE(text, relative);
  return *text;
}

// A TOML file read line by line, which is all these small files need: `[table]` and `[[array]]`
// headers, `key = value` lines with the value as written (whitespace inside arrays removed),
// comments and blank lines skipped. Every `[[array]]` header opens a table of its own.
struct TomlTable {
  std::string header;  // "" for the root table, else the header line as written
  std::map<std::string, std::string> values;
};

std::vector<TomlTable> read_toml_lines(const std::string& text, const std::string& file) {
  std::vector<TomlTable> tables(1);
  for (const auto& raw : util::split(text, '\n')) {
    const std::string line(util::trim(raw));
    if (line.empty() || line.starts_with('#')) continue;
    if (line.starts_with('[')) {
      CHECK_MESSAGE(line.ends_with(']'), file << ": " << line);
      tables.push_back(TomlTable{line, {}});
      continue;
    }
    const auto equals = line.find('=');
    REQUIRE_MESSAGE(equals != std::string::npos, file << ": not a key = value line: " << line);
    const std::string key(util::trim(line.substr(0, equals)));
    std::string value(util::trim(line.substr(equals + 1)));
    if (value.starts_with('[')) std::erase_if(value, [](char c) { return c == ' ' || c == '\t'; });
    CHECK_MESSAGE(!tables.back().values.contains(key), file << ": " << key << " set twice in one table");
    tables.back().values[key] = value;
  }
  return tables;
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// The words of a container's command and args.
std::vector<std::string> command_words(const YAML::Node& container) {
  std::vector<std::string> words;
  for (const auto* field : {"command", "args"}) {
    if (!container[field]) continue;
    REQUIRE(container[field].IsSequence());
    for (const auto& word : container[field]) words.push_back(word.as<std::string>());
  }
  return words;
}

// `hwimg serve FLAG VALUE...` as (flag, value) pairs; every flag the examples use takes a value.
std::vector<std::pair<std::string, std::string>> serve_flags(const std::vector<std::string>& words,
                                                             const std::string& where) {
  INFO(where);
  REQUIRE(words.size() >= 2);
  CHECK((words[0] == "hwimg" || words[0].ends_with("/hwimg")));
  CHECK(words[1] == "serve");
  std::vector<std::pair<std::string, std::string>> flags;
  for (std::size_t i = 2; i < words.size(); i += 2) {
    CHECK_MESSAGE(words[i].starts_with("--"), words[i]);
    REQUIRE_MESSAGE(i + 1 < words.size(), words[i] << " has no value");
    flags.emplace_back(words[i], words[i + 1]);
  }
  return flags;
}

std::vector<std::string> flag_values(const std::vector<std::pair<std::string, std::string>>& flags,
                                     const std::string& name) {
  std::vector<std::string> values;
  for (const auto& [flag, value] : flags) {
    if (flag == name) values.push_back(value);
  }
  return values;
}

// The options the section `heading` of docs/commands.md (generated from --help, kept current)
// lists, up to the next command's section.
std::set<std::string> documented_options(std::string_view heading) {
  const auto reference = read_example("docs/commands.md");
  const auto start = reference.find(heading);
  REQUIRE(start != std::string::npos);
  const auto end = reference.find("\n## ", start + 1);
  const auto section = reference.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::set<std::string> options;
  const std::regex option(R"(\n  (?:-[a-z],)?(--[a-z-]+))");
  for (std::sregex_iterator it(section.begin(), section.end(), option), stop; it != stop; ++it) options.insert((*it)[1]);
  return options;
}

// The options `hwimg serve --help` lists.
std::set<std::string> serve_options() { return documented_options("## hwimg serve"); }

// The options `hwimg serve configure-node --help` lists.
std::set<std::string> configure_node_options() { return documented_options("### hwimg serve configure-node"); }

// The tables of a TOML text with their values, for comparing two files whatever their comments.
std::vector<std::pair<std::string, std::map<std::string, std::string>>> toml_content(const std::string& text,
                                                                                     const std::string& file) {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> content;
  for (auto& table : read_toml_lines(text, file)) content.emplace_back(table.header, std::move(table.values));
  return content;
}

// Every variant id the repository's matrices expand to ("cpu-x86-64-v4", "cuda13.0-sm90-x86-64-v1", ...).
std::set<std::string> matrix_variant_ids() {
  std::set<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir / "matrix")) {
    if (entry.path().extension() != ".yaml") continue;
    auto report = matrix::check_matrix(entry.path(), {});
    REQUIRE_MESSAGE(report, entry.path().string());
    const auto rendered = nlohmann::json::parse(matrix::render_json(*report));
    for (const auto& variant : rendered["variants"]) ids.insert(variant["id"].get<std::string>());
  }
  return ids;
}

struct ServeDaemonSet {
  std::vector<std::pair<std::string, std::string>> flags;
  std::vector<std::string> upstreams;
  registry::Reference image;
};

ServeDaemonSet check_serve_daemonset() {
  const auto documents = load_documents(serve_dir + "/hwimg-serve-daemonset.yaml");
  REQUIRE(documents.size() == 1);
  const auto& daemonset = documents[0];
  CHECK(scalar(daemonset["kind"]) == "DaemonSet");
  const auto pod = check_workload(daemonset);
  CHECK(pod["hostNetwork"].as<bool>(false));
  REQUIRE(pod["containers"].size() == 1);
  const auto container = pod["containers"][0];

  ServeDaemonSet out;
  out.flags = serve_flags(command_words(container), "the DaemonSet's command");
  CHECK(flag_values(out.flags, "--listen") == std::vector<std::string>{mirror});
  out.upstreams = flag_values(out.flags, "--upstream");
  CHECK(!out.upstreams.empty());
  const auto known = serve_options();
  CHECK(known.contains("--listen"));
  for (const auto& [flag, value] : out.flags) {
    CHECK_MESSAGE(known.contains(flag), flag << " is not an option of hwimg serve (docs/commands.md)");
    if (flag == "--ttl" || flag == "--refresh") CHECK_MESSAGE(util::parse_duration(value), flag << " " << value);
    if (flag == "--upstream") {
      // As `hwimg serve` checks it: a registry host[:port], nothing more.
      const auto parsed = registry::parse_reference(value + "/x");
      CHECK_MESSAGE((parsed && parsed->registry == value), "--upstream " << value);
    }
  }

  // The mirror's own image must not depend on the mirror: pinned by digest (containerd fetches a
  // digest from the upstream when the mirror is down).
  auto image = registry::parse_reference(scalar(container["image"]));
  REQUIRE_MESSAGE(image, scalar(container["image"]));
  CHECK_MESSAGE(image->digest.has_value(), "the DaemonSet's image is not pinned by digest");
  out.image = *image;

  // Probes reach the loopback listener: the kubelet must name 127.0.0.1 (with hostNetwork the
  // default host is the node's IP, where nothing listens). Readiness is the upstreams answering,
  // liveness the server's own.
  for (const auto& [probe, path] : {std::pair{"readinessProbe", "/readyz"}, std::pair{"livenessProbe", "/healthz"}}) {
    INFO(probe);
    const auto get = container[probe]["httpGet"];
    REQUIRE(get.IsMap());
    CHECK(scalar(get["host"]) == "127.0.0.1");
    CHECK(scalar(get["path"]) == path);
    CHECK(scalar(get["port"]) == mirror.substr(mirror.find(':') + 1));
  }
  CHECK(container["resources"]["requests"]["cpu"]);
  CHECK(container["resources"]["requests"]["memory"]);
  CHECK(container["resources"]["limits"]["memory"]);
  // Replaced one node at a time: each node is without its mirror while its pod is.
  CHECK(daemonset["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"].as<int>(0) == 1);
  // SIGTERM lets requests in flight finish for up to 10 s; the kubelet must wait longer.
  CHECK(pod["terminationGracePeriodSeconds"].as<int>(30) > 10);
  CHECK_FALSE(container["securityContext"]["privileged"].as<bool>(false));

  // The host's /proc and /sys, read-only, where HWIMG_PROC_ROOT and HWIMG_SYS_ROOT point.
  std::map<std::string, std::string> env;
  for (const auto& variable : container["env"]) env[scalar(variable["name"])] = scalar(variable["value"]);
  std::map<std::string, std::string> host_paths;
  for (const auto& volume : pod["volumes"]) {
    if (volume["hostPath"]) host_paths[scalar(volume["name"])] = scalar(volume["hostPath"]["path"]);
  }
  std::map<std::string, std::string> mounted;  // host path -> mount path
  for (const auto& mount : container["volumeMounts"]) {
    const auto name = scalar(mount["name"]);
    if (!host_paths.contains(name)) continue;
    CHECK_MESSAGE(mount["readOnly"].as<bool>(false), host_paths[name] << " is mounted writable");
    mounted[host_paths[name]] = scalar(mount["mountPath"]);
  }
  CHECK(mounted.contains("/proc"));
  CHECK(mounted.contains("/sys"));
  CHECK(env["HWIMG_PROC_ROOT"] == mounted["/proc"]);
  CHECK(env["HWIMG_SYS_ROOT"] == mounted["/sys"]);
  return out;
}

}  // namespace

TEST_CASE("examples/k8s/serve: the mirror, the runtimes pointed at it with no fallback, one plain tag") {
  const auto daemonset = check_serve_daemonset();
  const std::set<std::string> upstreams(daemonset.upstreams.begin(), daemonset.upstreams.end());

  // Every file of the example is one of those checked here.
  const std::set<std::string> checked{"README.md",
                                      "hwimg-serve-daemonset.yaml",
                                      "deployment.yaml",
                                      "containerd/certs.d/registry.example.org/hosts.toml",
                                      "crio/registries.conf.d/50-hwimg-serve.conf",
                                      "systemd/hwimg-serve.service",
                                      "systemd/hwimg-serve.env",
                                      "kyverno-verify-index.yaml"};
  std::set<std::string> present;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir / serve_dir)) {
    if (entry.is_regular_file()) {
      present.insert(std::filesystem::relative(entry.path(), source_dir / serve_dir).generic_string());
    }
  }
  for (const auto& file : present) CHECK_MESSAGE(checked.contains(file), file << " is not checked by this test");
  // The admission policy verifies the index's signature and leaves every pod its tag: a digest
  // would pin every node to the index (docs/serve.md#admission-controllers-that-pin-digests).
  const auto policies = load_documents(serve_dir + "/kyverno-verify-index.yaml");
  REQUIRE(policies.size() == 1);
  CHECK(scalar(policies[0]["kind"]) == "ClusterPolicy");
  std::size_t verify_rules = 0;
  for (const auto& rule : policies[0]["spec"]["rules"]) {
    for (const auto& verify : rule["verifyImages"]) {
      ++verify_rules;
      CHECK(scalar(verify["mutateDigest"]) == "false");
      CHECK(scalar(verify["verifyDigest"]) == "false");
      CHECK(scalar(verify["required"]) == "true");
      REQUIRE(verify["imageReferences"].IsSequence());
      for (const auto& pattern : verify["imageReferences"]) {
        const auto text = scalar(pattern);
        CHECK_MESSAGE(upstreams.contains(text.substr(0, text.find('/'))), text << " is not a mirrored registry");
      }
    }
  }
  CHECK(verify_rules > 0);
  for (const auto& file : checked) CHECK_MESSAGE(present.contains(file), file << " is missing");
  const auto readme = read_example(serve_dir + "/README.md");
  for (const auto& file : checked) {
    if (file != "README.md") CHECK_MESSAGE(readme.find(file) != std::string::npos, "README.md does not explain " << file);
  }

  SUBCASE("containerd: hosts.toml per mirrored registry, the upstream only for digests") {
    std::set<std::string> registries;
    for (const auto& entry : std::filesystem::directory_iterator(source_dir / serve_dir / "containerd/certs.d")) {
      const auto registry = entry.path().filename().string();
      const auto file = serve_dir + "/containerd/certs.d/" + registry + "/hosts.toml";
      INFO(file);
      registries.insert(registry);
      CHECK_MESSAGE(upstreams.contains(registry), registry << " is not an --upstream of the DaemonSet");
      const auto tables = read_toml_lines(read_example(file), file);
      const auto& root = tables.front().values;
      CHECK(root.at("server") == quoted("https://" + registry));
      // Only "pull": asked for digests, never for a tag the mirror refused.
      CHECK(root.at("capabilities") == R"(["pull"])");
      std::size_t mirrors = 0;
      for (std::size_t i = 1; i < tables.size(); ++i) {
        const auto& table = tables[i];
        CHECK_MESSAGE(table.header.starts_with("[host."), table.header);
        if (table.header != "[host." + quoted("http://" + mirror) + "]") continue;
        ++mirrors;
        CHECK(table.values.at("capabilities") == R"(["pull","resolve"])");
        // On an http:// host, containerd 2.x would try HTTPS first.
        CHECK_FALSE(table.values.contains("skip_verify"));
        CHECK_FALSE(table.values.contains("ca"));
      }
      CHECK(mirrors == 1);
    }
    CHECK(!registries.empty());
  }

  SUBCASE("CRI-O and podman: a location rewrite to the path form, no [[registry.mirror]]") {
    const auto file = serve_dir + "/crio/registries.conf.d/50-hwimg-serve.conf";
    INFO(file);
    const auto text = read_example(file);
    const auto tables = read_toml_lines(text, file);
    CHECK(tables.front().values.empty());
    std::vector<std::string> mirrored;
    std::vector<std::string> direct;
    for (std::size_t i = 1; i < tables.size(); ++i) {
      const auto& table = tables[i];
      INFO(table.header);
      CHECK(table.header == "[[registry]]");
      const auto prefix = table.values.at("prefix");
      const auto location = table.values.at("location");
      REQUIRE((prefix.size() > 2 && prefix.front() == '"' && prefix.back() == '"'));
      const auto name = prefix.substr(1, prefix.size() - 2);
      if (location.starts_with("\"" + mirror + "/")) {
        // The upstream is the path's first component: /v2/<upstream>/<repository>/...
        CHECK(location == quoted(mirror + "/" + name));
        CHECK(table.values.at("insecure") == "true");
        // A reference whose first path component is the upstream must be valid: a registry with a
        // :port cannot be written there (docs/serve.md#cri-o-and-podman).
        const auto rewritten = registry::parse_reference(mirror + "/" + name + "/team/app:1.0");
        CHECK_MESSAGE((rewritten && rewritten->registry == mirror), mirror << "/" << name);
        CHECK_MESSAGE(upstreams.contains(name), name << " is not an --upstream of the DaemonSet");
        mirrored.push_back(name);
      } else {
        CHECK(location == prefix);
        direct.push_back(name);
      }
    }
    CHECK(!mirrored.empty());
    // A mirror falls back to the upstream on any error: never one here.
    for (const auto& raw : util::split(text, '\n')) {
      const std::string line(util::trim(raw));
      if (!line.starts_with('#')) CHECK_MESSAGE(line.find("registry.mirror") == std::string::npos, line);
    }
    for (const auto& table : tables) {
      for (const auto* key : {"mirror", "mirror-by-digest-only", "pull-from-mirror", "blocked"}) {
        CHECK_MESSAGE(!table.values.contains(key), key);
      }
    }
    // The mirror's own image comes from the upstream, through a longer prefix than the rewrite's.
    const auto own = daemonset.image.name();
    const auto covers = [&](const std::string& prefix) { return own == prefix || own.starts_with(prefix + "/"); };
    std::string longest;
    bool longest_is_direct = false;
    for (const auto& name : mirrored) {
      if (covers(name) && name.size() > longest.size()) longest = name, longest_is_direct = false;
    }
    for (const auto& name : direct) {
      if (covers(name) && name.size() > longest.size()) longest = name, longest_is_direct = true;
    }
    CHECK_MESSAGE((longest.empty() || longest_is_direct), own << " would be pulled through the mirror");
  }

  SUBCASE("configure-node: the DaemonSet's init container writes the hosts.toml shown here") {
    const auto documents = load_documents(serve_dir + "/hwimg-serve-daemonset.yaml");
    const auto pod = documents[0]["spec"]["template"]["spec"];
    REQUIRE(pod["initContainers"].size() == 1);
    const auto init = pod["initContainers"][0];
    const auto words = command_words(init);
    REQUIRE(words.size() >= 3);
    CHECK(words[0] == "hwimg");
    CHECK(words[1] == "serve");
    CHECK(words[2] == "configure-node");
    std::vector<std::pair<std::string, std::string>> flags;
    for (std::size_t i = 3; i < words.size(); i += 2) {
      REQUIRE_MESSAGE(i + 1 < words.size(), words[i] << " has no value");
      flags.emplace_back(words[i], words[i + 1]);
    }
    const auto known = configure_node_options();
    for (const auto& [flag, value] : flags) {
      CHECK_MESSAGE(known.contains(flag), flag << " is not an option of hwimg serve configure-node (docs/commands.md)");
    }
    // The same mirror, upstreams and image as the serve container.
    CHECK(flag_values(flags, "--listen") == std::vector<std::string>{mirror});
    CHECK(flag_values(flags, "--upstream") == daemonset.upstreams);
    CHECK(scalar(init["image"]) == daemonset.image.str());
    // --containerd-dir is the node's /etc/containerd/certs.d, mounted writable.
    const auto directories = flag_values(flags, "--containerd-dir");
    REQUIRE(directories.size() == 1);
    std::map<std::string, std::string> host_paths;
    for (const auto& volume : pod["volumes"]) {
      if (volume["hostPath"]) host_paths[scalar(volume["name"])] = scalar(volume["hostPath"]["path"]);
    }
    bool mounted = false;
    for (const auto& mount : init["volumeMounts"]) {
      if (scalar(mount["mountPath"]) != directories[0]) continue;
      mounted = true;
      CHECK(host_paths[scalar(mount["name"])] == "/etc/containerd/certs.d");
      CHECK_FALSE(mount["readOnly"].as<bool>(false));
    }
    CHECK_MESSAGE(mounted, directories[0] << " is not a mount of the init container");
    CHECK_FALSE(init["securityContext"]["privileged"].as<bool>(false));
    // What configure-node writes is what the example files show (their comments aside).
    for (const auto& text : daemonset.upstreams) {
      const auto upstream = serve::parse_upstream(text);
      REQUIRE(upstream);
      const auto file = serve_dir + "/containerd/certs.d/" + upstream->registry + "/hosts.toml";
      INFO(file);
      CHECK(toml_content(serve::containerd_hosts_toml(*upstream, mirror), "configure-node") ==
            toml_content(read_example(file), file));
    }
    std::vector<serve::Upstream> upstreams_parsed;
    for (const auto& text : daemonset.upstreams) upstreams_parsed.push_back(*serve::parse_upstream(text));
    const auto drop_in = serve::crio_drop_in(upstreams_parsed, mirror, {daemonset.image.name()});
    REQUIRE(drop_in);
    const auto file = serve_dir + "/crio/registries.conf.d/50-hwimg-serve.conf";
    CHECK(toml_content(*drop_in, "configure-node") == toml_content(read_example(file), file));
  }

  SUBCASE("systemd: the DaemonSet's flags, restarted always and by the watchdog, with an EnvironmentFile") {
    const auto file = serve_dir + "/systemd/hwimg-serve.service";
    INFO(file);
    std::map<std::string, std::string> settings;
    for (const auto& raw : util::split(read_example(file), '\n')) {
      const std::string line(util::trim(raw));
      if (line.empty() || line.starts_with('#') || line.starts_with('[')) continue;
      const auto equals = line.find('=');
      REQUIRE_MESSAGE(equals != std::string::npos, line);
      settings[line.substr(0, equals)] = line.substr(equals + 1);
    }
    CHECK(settings["Restart"] == "always");
    // hwimg serve sends READY=1 and, while its /healthz answers, WATCHDOG=1 (docs/serve.md#systemd).
    CHECK(settings["Type"] == "notify");
    CHECK(std::stoi(settings["WatchdogSec"]) >= 10);
    CHECK(settings["EnvironmentFile"].find("/etc/default/hwimg-serve") != std::string::npos);
    CHECK(settings["ExecReload"].find("kill -HUP $MAINPID") != std::string::npos);
    CHECK(std::stoi(settings["TimeoutStopSec"]) > 10);
    std::vector<std::string> words;
    std::set<std::string> variables;
    for (const auto& word : util::split(settings["ExecStart"], ' ')) {
      if (word.empty()) continue;
      if (word.starts_with('$')) {
        variables.insert(word.substr(1));
      } else {
        words.push_back(word);
      }
    }
    CHECK(words.front().starts_with('/'));
    CHECK(serve_flags(words, "ExecStart") == daemonset.flags);
    // Each $VARIABLE the command line uses is one the EnvironmentFile shipped beside it sets.
    const auto environment = read_example(serve_dir + "/systemd/hwimg-serve.env");
    for (const auto& variable : variables) {
      CHECK_MESSAGE(environment.find("\n" + variable + "=") != std::string::npos, variable);
    }
  }

  SUBCASE("the Deployment: one plain tag of a mirrored registry, no hardware selectors") {
    const auto documents = load_documents(serve_dir + "/deployment.yaml");
    REQUIRE(documents.size() == 1);
    CHECK(scalar(documents[0]["kind"]) == "Deployment");
    const auto pod = check_workload(documents[0]);
    for (const auto& key : selected_labels(pod)) CHECK_MESSAGE(!key.starts_with("hwimg.org/"), key);
    const auto variant_ids = matrix_variant_ids();
    CHECK(variant_ids.contains("cpu-x86-64-v4"));
    for (const auto& container : pod["containers"]) {
      const auto text = scalar(container["image"]);
      INFO(text);
      const auto image = registry::parse_reference(text);
      REQUIRE(image);
      CHECK(text.find('@') == std::string::npos);
      CHECK(!image->digest);
      CHECK(!image->tag.empty());
      for (const auto& id : variant_ids) CHECK_MESSAGE(!image->tag.ends_with("-" + id), "a per-variant tag");
      CHECK_MESSAGE(upstreams.contains(image->registry), image->registry << " is not mirrored");
      CHECK(std::filesystem::exists(source_dir / serve_dir / "containerd/certs.d" / image->registry / "hosts.toml"));
    }
  }
}
