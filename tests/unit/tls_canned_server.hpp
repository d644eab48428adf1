#pragma once
// A TLS server on 127.0.0.1 for unit tests of the transport: a fresh self-signed certificate (for
// IP 127.0.0.1, written where the client can trust it), one request per connection answered
// "200 ok" (or a given answer) and closed, and for each connection whether the client resumed a
// session.

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "canned_server.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::test {

class TlsCannedServer {
public:
  TlsCannedServer(const std::filesystem::path& ca_file, int connections,
                  std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
      : m_left(connections), m_answer(std::move(answer)) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
    std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
    REQUIRE(key);
    REQUIRE(cert);
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
    X509_set_pubkey(cert.get(), key.get());
    auto* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, cert.get(), cert.get(), nullptr, nullptr, 0);
    for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1"},
                                     std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
      X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
      REQUIRE(extension != nullptr);
      X509_add_ext(cert.get(), extension, -1);
      X509_EXTENSION_free(extension);
    }
    REQUIRE(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0);
    std::FILE* out = std::fopen(ca_file.c_str(), "w");
    REQUIRE(out != nullptr);
    PEM_write_X509(out, cert.get());
    std::fclose(out);

    m_context.reset(SSL_CTX_new(TLS_server_method()));
    REQUIRE(m_context);
    REQUIRE(SSL_CTX_use_certificate(m_context.get(), cert.get()) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey(m_context.get(), key.get()) == 1);

    m_listener = listen_on_loopback(m_port);
    m_thread = std::thread([this] { serve(); });
  }
  ~TlsCannedServer() {
    ::shutdown(m_listener.get(), SHUT_RDWR);
    m_thread.join();
  }

  [[nodiscard]] std::string url(std::string_view path) const {
    return "https://127.0.0.1:" + std::to_string(m_port) + std::string(path);
  }
  // Per connection accepted: whether its handshake resumed an earlier session.
  [[nodiscard]] std::vector<bool> resumed() const {
    std::lock_guard lock(m_mutex);
    return m_resumed;
  }

private:
  void serve() {
    while (m_left-- > 0) {
      const util::UniqueFd connection(::accept(m_listener.get(), nullptr, nullptr));
      if (!connection.valid()) return;
      std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(m_context.get()), SSL_free);
      SSL_set_fd(ssl.get(), connection.get());
      if (SSL_accept(ssl.get()) != 1) continue;
      std::string request;
      char chunk[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const int n = SSL_read(ssl.get(), chunk, sizeof chunk);
        if (n <= 0) break;
        request.append(chunk, static_cast<std::size_t>(n));
      }
      {
        // Before the answer: the client may look as soon as it has one.
        std::lock_guard lock(m_mutex);
        m_resumed.push_back(SSL_session_reused(ssl.get()) == 1);
      }
      SSL_write(ssl.get(), m_answer.data(), static_cast<int>(m_answer.size()));
      SSL_shutdown(ssl.get());
    }
  }

  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> m_context{nullptr, SSL_CTX_free};
  util::UniqueFd m_listener;
  std::uint16_t m_port = 0;
  std::atomic<int> m_left;
  std::string m_answer;
  std::thread m_thread;
  mutable std::mutex m_mutex;
  std::vector<bool> m_resumed;
};

}  // namespace hwimg::test
