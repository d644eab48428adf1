#include "hwimg/registry/detail/challenge_memory.hpp"

#include <algorithm>
#include <chrono>
#include <system_error>

#include "hwimg/util/files.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::registry {
namespace {

using util::json::Json;

// Far more than `capacity` entries need; a larger file is not ours to read.
constexpr std::uintmax_t max_file_size = 1 << 20;

long long now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

ChallengeMemory ChallengeMemory::load(std::filesystem::path file) {
  ChallengeMemory out;
  out.m_file = std::move(file);
  if (out.m_file.empty()) return out;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(out.m_file, ec) || std::filesystem::file_size(out.m_file, ec) > max_file_size) {
    return out;
  }
  const auto text = util::read_file(out.m_file);
  if (!text) return out;
  const auto document = util::json::parse_object(*text);
  if (!document) return out;
  const auto registries = util::json::member(*document, "registries", util::json::Kind::object);
  if (!registries || *registries == nullptr) return out;
  for (const auto& [url, value] : (*registries)->items()) {
    if (!value.is_object()) continue;
    const auto realm = util::json::string_member(value, "realm");
    const auto service = util::json::string_member(value, "service");
    const auto learned = util::json::integer_member(value, "learned");
    if (!realm || !*realm || realm->value().empty() || !service || !learned) continue;
    out.m_entries[url] = Entry{**realm, service->value_or(""), learned->value_or(0)};
  }
  return out;
}

std::optional<Challenge> ChallengeMemory::find(const std::string& base_url) const {
  const auto it = m_entries.find(base_url);
  if (it == m_entries.end()) return std::nullopt;
  Challenge challenge{"bearer", {{"realm", it->second.realm}}};
  if (!it->second.service.empty()) challenge.params["service"] = it->second.service;
  return challenge;
}

void ChallengeMemory::remember(const std::string& base_url, const Challenge& challenge) {
  if (challenge.scheme != "bearer" || challenge.param("realm").empty()) return forget(base_url);
  const auto it = m_entries.find(base_url);
  if (it != m_entries.end() && it->second.realm == challenge.param("realm") &&
      it->second.service == challenge.param("service")) {
    return;
  }
  m_entries[base_url] = Entry{challenge.param("realm"), challenge.param("service"), now_seconds()};
  while (m_entries.size() > capacity) {
    m_entries.erase(std::ranges::min_element(m_entries, {}, [](const auto& e) { return e.second.learned; }));
  }
  save();
}

void ChallengeMemory::forget(const std::string& base_url) {
  if (m_entries.erase(base_url) != 0) save();
}

void ChallengeMemory::save() const {
  if (m_file.empty()) return;
  Json registries = Json::object();
  for (const auto& [url, entry] : m_entries) {
    registries[url] = {{"realm", entry.realm}, {"service", entry.service}, {"learned", entry.learned}};
  }
  const Json document = {{"registries", std::move(registries)}};
  // A cache: a command that cannot write it only loses a round trip next time.
  if (util::make_directories(m_file.parent_path())) {
    static_cast<void>(util::write_file_atomic(m_file, document.dump(2) + "\n", 0600));
  }
}

}  // namespace hwimg::registry
