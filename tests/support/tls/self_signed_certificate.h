// tests/support/tls/self_signed_certificate.h
//
// A fresh self-signed certificate and its key for tests that serve TLS on loopback: an EC P-256 key,
// subject CN=localhost with subject alternative names DNS:localhost and IP:127.0.0.1, valid from a
// minute ago for an hour. Test support, no part of the product.
#pragma once

#include <string>

namespace rung::testing {

struct PemPair {
  std::string certificate;  // PEM
  std::string key;          // PEM, unencrypted
};

PemPair SelfSignedLocalhostCertificate();

}  // namespace rung::testing
