#include "hwimg/registry/reference.hpp"

#include <algorithm>

#include "hwimg/util/strings.hpp"

namespace hwimg::registry {
namespace {

constexpr std::size_t max_name_length = 255;
constexpr std::size_t max_tag_length = 128;

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// component := [a-z0-9]+ ( ("." | "_" | "__" | "-"+) [a-z0-9]+ )*
bool is_path_component(std::string_view c) {
  if (c.empty() || !is_lower_alnum(c.front()) || !is_lower_alnum(c.back())) return false;
  for (std::size_t i = 0; i < c.size();) {
    if (is_lower_alnum(c[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < c.size() && !is_lower_alnum(c[j])) ++j;
    const auto sep = c.substr(i, j - i);
    const bool dashes = std::all_of(sep.begin(), sep.end(), [](char x) { return x == '-'; });
    if (sep != "." && sep != "_" && sep != "__" && !dashes) return false;
    i = j;
  }
  return true;
}

bool is_dns_label(std::string_view label) {
  if (label.empty() || !is_alnum(label.front()) || !is_alnum(label.back())) return false;
  return std::all_of(label.begin(), label.end(), [](char c) { return is_alnum(c) || c == '-'; });
}

Result<void> validate_domain(std::string_view text, std::string_view domain) {
  std::string_view host = domain;
  std::optional<std::string_view> port;
  if (domain.starts_with('[')) {
    const auto close = domain.find(']');
    if (close == std::string_view::npos) {
      return fail("failed to parse reference \"{}\": unterminated IPv6 address in \"{}\"", text, domain);
    }
    host = domain.substr(1, close - 1);
    const auto rest = domain.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) {
      return fail("failed to parse reference \"{}\": unexpected \"{}\" after the IPv6 address", text, rest);
    }
    if (!rest.empty()) port = rest.substr(1);
    const bool ok = !host.empty() && std::all_of(host.begin(), host.end(), [](char c) { return is_hex(c) || c == ':'; });
    if (!ok) return fail("failed to parse reference \"{}\": invalid IPv6 address \"{}\"", text, host);
  } else {
    const auto colon = domain.find(':');
    if (colon != std::string_view::npos) {
      host = domain.substr(0, colon);
      port = domain.substr(colon + 1);
    }
    for (const auto& label : util::split(host, '.')) {
      if (!is_dns_label(label)) {
        return fail("failed to parse reference \"{}\": invalid registry host \"{}\"", text, host);
      }
    }
  }
  if (port && (port->empty() || !std::all_of(port->begin(), port->end(), is_digit))) {
    return fail("failed to parse reference \"{}\": invalid port \"{}\"", text, *port);
  }
  return {};
}

}  // namespace

Result<void> validate_registry_tag(std::string_view tag) {
  if (tag.empty()) return fail("invalid tag \"\": a tag cannot be empty");
  if (tag.size() > max_tag_length) {
    return fail("invalid tag \"{}\": longer than {} characters", tag, max_tag_length);
  }
  if (tag.front() == '.' || tag.front() == '-') {
    return fail("invalid tag \"{}\": it cannot start with '{}'", tag, tag.front());
  }
  for (const char c : tag) {
    if (!is_alnum(c) && c != '_' && c != '.' && c != '-') {
      return fail("invalid tag \"{}\": character '{}' is not allowed", tag, c);
    }
  }
  return {};
}

bool is_loopback_host(std::string_view host) {
  const auto lower = util::to_lower(host);
  if (lower == "localhost" || lower == "::1" || lower == "0:0:0:0:0:0:0:1") return true;
  const auto parts = util::split(lower, '.');
  if (parts.size() != 4 || parts[0] != "127") return false;
  return std::all_of(parts.begin(), parts.end(), [](const std::string& p) {
    return !p.empty() && p.size() <= 3 && std::all_of(p.begin(), p.end(), is_digit) && std::stoi(p) <= 255;
  });
}

Result<Reference> parse_reference(std::string_view text) {
  // Quoted in every error below: a newline in it would make a one-line error three.
  if (std::ranges::any_of(text, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return fail("failed to parse reference \"{}\": it holds a control character", util::printable(text));
  }
  if (text.empty()) return fail("failed to parse reference \"\": it is empty");
  Reference ref;
  std::string_view rest = text;
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    const auto digest_text = rest.substr(at + 1);
    auto digest = oci::Digest::parse(digest_text);
    if (!digest) {
      return fail("failed to parse reference \"{}\": invalid digest \"{}\" (expected sha256:<64 hex digits>)", text,
                  digest_text);
    }
    ref.digest = *digest;
    rest = rest.substr(0, at);
  }
  const auto last_colon = rest.rfind(':');
  const auto last_slash = rest.rfind('/');
  if (last_colon != std::string_view::npos && (last_slash == std::string_view::npos || last_colon > last_slash)) {
    ref.tag = std::string(rest.substr(last_colon + 1));
    rest = rest.substr(0, last_colon);
    if (auto r = validate_registry_tag(ref.tag); !r) {
      return fail("failed to parse reference \"{}\": {}", text, r.error().message);
    }
  }
  if (rest.empty()) return fail("failed to parse reference \"{}\": the repository name is empty", text);

  std::string_view path = rest;
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) {
    if (rest.size() == 64 && std::all_of(rest.begin(), rest.end(), is_hex)) {
      return fail("failed to parse reference \"{}\": a repository name cannot be 64 hex digits", text);
    }
    ref.registry = "docker.io";
  } else {
    const auto first = rest.substr(0, slash);
    const bool has_upper = std::any_of(first.begin(), first.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (first == "localhost" || first.find_first_of(".:[") != std::string_view::npos || has_upper) {
      HWIMG_TRY(validate_domain(text, first));
      ref.registry = std::string(first);
      path = rest.substr(slash + 1);
    } else {
      ref.registry = "docker.io";
    }
  }
  if (ref.registry == "index.docker.io") ref.registry = "docker.io";
  for (const auto& component : util::split(path, '/')) {
    if (std::any_of(component.begin(), component.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
      return fail("failed to parse reference \"{}\": repository name must be lowercase", text);
    }
    if (!is_path_component(component)) {
      return fail("failed to parse reference \"{}\": invalid repository name component \"{}\"", text, component);
    }
  }
  ref.repository = std::string(path);
  if (ref.registry == "docker.io" && ref.repository.find('/') == std::string::npos) {
    ref.repository = "library/" + ref.repository;
  }
  if (ref.name().size() > max_name_length) {
    return fail("failed to parse reference \"{}\": the name is longer than {} characters", text, max_name_length);
  }
  return ref;
}

std::string Reference::str() const {
  std::string out = name();
  if (!tag.empty()) out += ":" + tag;
  if (digest) out += "@" + digest->str();
  return out;
}

std::string Reference::manifest_reference() const {
  if (digest) return digest->str();
  return tag.empty() ? "latest" : tag;
}

std::string Reference::host() const {
  if (registry.starts_with('[')) return registry.substr(1, registry.find(']') - 1);
  return registry.substr(0, registry.find(':'));
}

Reference Reference::with_tag(std::string new_tag) const {
  Reference out = *this;
  out.tag = std::move(new_tag);
  out.digest.reset();
  return out;
}

}  // namespace hwimg::registry
