// coordinator/server/server_options.cc
#include "coordinator/server/server_options.h"

#include <fstream>
#include <optional>
#include <sstream>

#include <grpcpp/security/server_credentials.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "core/common/network_address.h"

namespace rung::server {
namespace {

StatusOr<std::string> ReadPemFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(std::string(flag) + " " + path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// INVALID_ARGUMENT unless `cert` holds a PEM certificate and `key` the PEM private key of it (gRPC
// itself would only fail later, when binding, with no reason given).
Status CheckCertificateAndKey(const std::string& cert, const std::string& key, const ServerOptions& options) {
  BIO* cert_bio = BIO_new_mem_buf(cert.data(), static_cast<int>(cert.size()));
  X509* x509 = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(key.data(), static_cast<int>(key.size()));
  EVP_PKEY* pkey = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  Status status;
  if (x509 == nullptr) {
    status = Status::InvalidArgument("--tls-cert " + options.tls_cert_file + " holds no PEM certificate");
  } else if (pkey == nullptr) {
    status = Status::InvalidArgument("--tls-key " + options.tls_key_file + " holds no unencrypted PEM private key");
  } else if (X509_check_private_key(x509, pkey) != 1) {
    status = Status::InvalidArgument("--tls-key " + options.tls_key_file + " is not the key of the certificate in " +
                                     options.tls_cert_file);
  }
  X509_free(x509);
  EVP_PKEY_free(pkey);
  return status;
}

}  // namespace

std::string BoundAddress(std::string_view listen_address, int port) {
  if (IsUnixAddress(listen_address)) return std::string(listen_address);
  const size_t colon = listen_address.rfind(':');
  return std::string(listen_address.substr(0, colon)) + ":" + std::to_string(port);
}

Status ValidateServerOptions(const ServerOptions& options) {
  const std::string& address = options.listen_address;
  if (!IsUnixAddress(address) && !SplitHostPort(address).has_value()) {
    return Status::InvalidArgument("--listen " + address +
                                   ": expected host:port, [v6 host]:port or unix:path, e.g. 127.0.0.1:" +
                                   std::to_string(kDefaultPort) + " (port 0 picks a free port)");
  }
  if (!options.health_listen_address.empty() && !SplitHostPort(options.health_listen_address).has_value()) {
    return Status::InvalidArgument("--health-listen " + options.health_listen_address +
                                   ": expected host:port or [v6 host]:port, e.g. 0.0.0.0:" +
                                   std::to_string(kDefaultPort + 1));
  }
  if (options.database_path.empty()) {
    return Status::InvalidArgument("--db is required: the SQLite file that holds sweeps, trials and metrics "
                                   "(created if missing; on a local disk, never NFS)");
  }
  if (options.user_token_file.empty()) {
    return Status::InvalidArgument("--user-token-file is required: the file holding the token `rung` sends");
  }
  if (options.worker_token_file.empty()) {
    return Status::InvalidArgument("--worker-token-file is required: the file holding the token rung-worker sends");
  }
  const bool tls = !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  if (tls && (options.tls_cert_file.empty() || options.tls_key_file.empty())) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together: give both PEM files, or neither");
  }
  if (!tls && !IsLoopbackAddress(address)) {
    return Status::InvalidArgument("--listen " + address +
                                   " is not a loopback address: without TLS the bearer tokens would cross the "
                                   "network in the clear; pass --tls-cert and --tls-key, or listen on 127.0.0.1");
  }
  if (options.heartbeat_interval.count() <= 0 || options.heartbeat_interval >= options.lease_duration) {
    return Status::InvalidArgument(
        "the heartbeat interval (--heartbeat-seconds) must be positive and shorter than the lease duration "
        "(--lease-seconds)");
  }
  if (options.max_trials_per_submission < 1) {
    return Status::InvalidArgument("--max-trials-per-submission must be at least 1, got " +
                                   std::to_string(options.max_trials_per_submission));
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerOptions& options) {
  if (options.tls_cert_file.empty()) {
    return grpc::experimental::LocalServerCredentials(IsUnixAddress(options.listen_address) ? UDS : LOCAL_TCP);
  }
  RUNG_ASSIGN_OR_RETURN(std::string cert, ReadPemFile(options.tls_cert_file, "--tls-cert"));
  RUNG_ASSIGN_OR_RETURN(std::string key, ReadPemFile(options.tls_key_file, "--tls-key"));
  RUNG_RETURN_IF_ERROR(CheckCertificateAndKey(cert, key, options));
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({key, cert});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace rung::server
