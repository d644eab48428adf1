#pragma once
// The registries `hwimg serve` mirrors, each with a pool of registry clients: a client serves one
// request at a time (and keeps its connections and tokens for the next), so concurrent requests
// lease their own.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hwimg/registry/client.hpp"

namespace hwimg::serve {

struct Upstream {
  std::string registry;  // host[:port] the requests go to
  std::string alias;     // a name without a port for the path form (`--upstream NAME=HOST:PORT`), or ""
  bool insecure = false; // --insecure-upstream: no TLS verification, plain HTTP allowed
};

struct UpstreamSettings {
  std::vector<Upstream> upstreams;  // in order; the first takes requests naming none
  registry::ClientOptions client;   // --ca-file, the node's Docker config, the output
};

// "registry.example.org", "127.0.0.1:5000" or "NAME=HOST:PORT".
[[nodiscard]] Result<Upstream> parse_upstream(std::string_view text);

class Upstreams {
public:
  explicit Upstreams(UpstreamSettings settings);

  // What requests may name: each upstream's registry, and its alias, in the order given.
  [[nodiscard]] const std::vector<std::string>& names() const { return m_names; }
  // Every upstream, in the order given.
  [[nodiscard]] const std::vector<Upstream>& list() const { return m_settings.upstreams; }
  // The options of a client of `upstream` (its --insecure-upstream setting applied).
  [[nodiscard]] registry::ClientOptions client_options(const Upstream& upstream) const;
  // The upstream a name (a registry or an alias) stands for; nullptr for none.
  [[nodiscard]] const Upstream* find(std::string_view name) const;

  // A client of `upstream` for one request; back to the pool when the lease ends.
  class Lease {
  public:
    Lease(Upstreams& owner, std::string upstream, std::unique_ptr<registry::Client> client);
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    [[nodiscard]] registry::Client& client() { return *m_client; }
    // The client is left mid-transfer: close it instead of pooling it.
    void discard() { m_discard = true; }

  private:
    Upstreams& m_owner;
    std::string m_upstream;
    std::unique_ptr<registry::Client> m_client;
    bool m_discard = false;
  };

  [[nodiscard]] Result<std::shared_ptr<Lease>> lease(const Upstream& upstream);

private:
  void give_back(const std::string& upstream, std::unique_ptr<registry::Client> client);

  UpstreamSettings m_settings;
  std::vector<std::string> m_names;
  std::mutex m_mutex;
  std::map<std::string, std::vector<std::unique_ptr<registry::Client>>> m_idle;
};

}  // namespace hwimg::serve
