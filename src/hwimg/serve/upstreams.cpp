#include "hwimg/serve/upstreams.hpp"

#include <algorithm>

#include "hwimg/registry/reference.hpp"

namespace hwimg::serve {
namespace {

// Idle clients kept per upstream; beyond that a returned client is closed.
constexpr std::size_t max_idle_clients = 32;

}  // namespace

Result<Upstream> parse_upstream(std::string_view text) {
  Upstream upstream;
  const auto equals = text.find('=');
  upstream.registry = std::string(equals == std::string_view::npos ? text : text.substr(equals + 1));
  if (equals != std::string_view::npos) upstream.alias = std::string(text.substr(0, equals));
  auto parsed = registry::parse_reference(upstream.registry + "/x");
  if (!parsed || parsed->registry != upstream.registry) {
    return fail_usage("invalid upstream \"{}\": expected a registry host[:port], such as registry.example.org, or "
                      "NAME=HOST:PORT",
                      text);
  }
  // The alias is the first component of a repository path, so it must be one.
  auto alias = registry::parse_reference(upstream.alias + "/x");
  if (!upstream.alias.empty() && (!alias || upstream.alias.find(':') != std::string::npos)) {
    return fail_usage("invalid upstream \"{}\": the name before '=' must be a host name without a port", text);
  }
  return upstream;
}

Upstreams::Upstreams(UpstreamSettings settings) : m_settings(std::move(settings)) {
  for (const auto& upstream : m_settings.upstreams) {
    for (const auto* name : {&upstream.alias, &upstream.registry}) {
      if (!name->empty() && std::ranges::find(m_names, *name) == m_names.end()) m_names.push_back(*name);
    }
  }
}

const Upstream* Upstreams::find(std::string_view name) const {
  for (const auto& upstream : m_settings.upstreams) {
    if (upstream.registry == name || (!upstream.alias.empty() && upstream.alias == name)) return &upstream;
  }
  return nullptr;
}

Upstreams::Lease::Lease(Upstreams& owner, std::string upstream, std::unique_ptr<registry::Client> client)
    : m_owner(owner), m_upstream(std::move(upstream)), m_client(std::move(client)) {}

Upstreams::Lease::~Lease() {
  m_client->forward_authorization(std::nullopt);
  if (!m_discard) m_owner.give_back(m_upstream, std::move(m_client));
}

registry::ClientOptions Upstreams::client_options(const Upstream& upstream) const {
  auto options = m_settings.client;
  options.insecure = upstream.insecure;
  return options;
}

Result<std::shared_ptr<Upstreams::Lease>> Upstreams::lease(const Upstream& upstream) {
  {
    std::lock_guard lock(m_mutex);
    auto& idle = m_idle[upstream.registry];
    if (!idle.empty()) {
      auto client = std::move(idle.back());
      idle.pop_back();
      return std::make_shared<Lease>(*this, upstream.registry, std::move(client));
    }
  }
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(client_options(upstream)));
  return std::make_shared<Lease>(*this, upstream.registry, std::make_unique<registry::Client>(std::move(client)));
}

void Upstreams::give_back(const std::string& upstream, std::unique_ptr<registry::Client> client) {
  std::lock_guard lock(m_mutex);
  auto& idle = m_idle[upstream];
  if (idle.size() < max_idle_clients) idle.push_back(std::move(client));
}

}  // namespace hwimg::serve
