#include "hwimg/serve/upstreams.hpp"

#include <algorithm>

namespace hwimg::serve {
namespace {

// Idle clients kept per upstream; beyond that a returned client is closed.
constexpr std::size_t max_idle_clients = 32;

}  // namespace

Upstreams::Upstreams(UpstreamSettings settings) : m_settings(std::move(settings)) {
  for (const auto& name : m_settings.names) {
    if (std::ranges::find(m_names, name) == m_names.end()) m_names.push_back(name);
  }
  for (const auto& name : m_settings.insecure) {
    if (std::ranges::find(m_names, name) == m_names.end()) m_names.push_back(name);
  }
}

Upstreams::Lease::Lease(Upstreams& owner, std::string upstream, std::unique_ptr<registry::Client> client)
    : m_owner(owner), m_upstream(std::move(upstream)), m_client(std::move(client)) {}

Upstreams::Lease::~Lease() {
  m_client->forward_authorization(std::nullopt);
  if (!m_discard) m_owner.give_back(m_upstream, std::move(m_client));
}

Result<std::shared_ptr<Upstreams::Lease>> Upstreams::lease(const std::string& upstream) {
  {
    std::lock_guard lock(m_mutex);
    auto& idle = m_idle[upstream];
    if (!idle.empty()) {
      auto client = std::move(idle.back());
      idle.pop_back();
      return std::make_shared<Lease>(*this, upstream, std::move(client));
    }
  }
  auto options = m_settings.client;
  options.insecure = std::ranges::find(m_settings.insecure, upstream) != m_settings.insecure.end();
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(options));
  return std::make_shared<Lease>(*this, upstream, std::make_unique<registry::Client>(std::move(client)));
}

void Upstreams::give_back(const std::string& upstream, std::unique_ptr<registry::Client> client) {
  std::lock_guard lock(m_mutex);
  auto& idle = m_idle[upstream];
  if (idle.size() < max_idle_clients) idle.push_back(std::move(client));
}

}  // namespace hwimg::serve
