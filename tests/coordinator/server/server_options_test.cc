// tests/coordinator/server/server_options_test.cc
//
// Listen addresses, the loopback rule for plaintext, and the option checks.
#include "coordinator/server/server_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/network_address.h"

namespace rung::server {
namespace {

using ::testing::HasSubstr;

ServerOptions WithTokens() {
  ServerOptions options;
  options.database_path = "rung.db";
  options.user_token_file = "user.token";
  options.worker_token_file = "worker.token";
  return options;
}

TEST(ServerOptionsTest, TheDefaultListensOnLoopback) {
  const ServerOptions options = WithTokens();
  EXPECT_EQ(options.listen_address, "127.0.0.1:50551");
  EXPECT_TRUE(ValidateServerOptions(options).ok());
}

TEST(ServerOptionsTest, LoopbackAddresses) {
  for (const char* address : {"127.0.0.1:0", "127.8.9.10:1", "localhost:50551", "[::1]:7", "unix:/tmp/rung.sock"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
  for (const char* address : {"0.0.0.0:50551", "10.0.0.1:1", "[::]:50551", "node7:50551", "::1:50551", "127.0.0.1"}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

TEST(ServerOptionsTest, BoundAddressTakesThePortTheServerGot) {
  EXPECT_EQ(BoundAddress("127.0.0.1:0", 43117), "127.0.0.1:43117");
  EXPECT_EQ(BoundAddress("[::1]:0", 43117), "[::1]:43117");
  EXPECT_EQ(BoundAddress("unix:/tmp/rung.sock", 1), "unix:/tmp/rung.sock");
}

TEST(ServerOptionsTest, PlaintextBeyondLoopbackIsRefused) {
  ServerOptions options = WithTokens();
  options.listen_address = "0.0.0.0:50551";
  Status status = ValidateServerOptions(options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pass --tls-cert and --tls-key"));
  options.tls_cert_file = "cert.pem";
  options.tls_key_file = "key.pem";
  EXPECT_TRUE(ValidateServerOptions(options).ok());
}

TEST(ServerOptionsTest, EachMistakeNamesItsFlag) {
  ServerOptions options = WithTokens();
  options.listen_address = "127.0.0.1";
  EXPECT_THAT(ValidateServerOptions(options).message(), HasSubstr("--listen 127.0.0.1: expected host:port"));
  options.listen_address = "127.0.0.1:99999";
  EXPECT_THAT(ValidateServerOptions(options).message(), HasSubstr("--listen"));

  options = WithTokens();
  options.user_token_file.clear();
  EXPECT_THAT(ValidateServerOptions(options).message(), HasSubstr("--user-token-file is required"));
  options = WithTokens();
  options.worker_token_file.clear();
  EXPECT_THAT(ValidateServerOptions(options).message(), HasSubstr("--worker-token-file is required"));

  options = WithTokens();
  options.tls_cert_file = "cert.pem";
  EXPECT_THAT(ValidateServerOptions(options).message(), HasSubstr("--tls-cert and --tls-key go together"));

  options = WithTokens();
  options.heartbeat_interval = options.lease_duration;
  EXPECT_THAT(ValidateServerOptions(options).message(), HasSubstr("shorter than the lease"));

  options = WithTokens();
  options.max_trials_per_submission = 0;
  EXPECT_THAT(ValidateServerOptions(options).message(), HasSubstr("--max-trials-per-submission must be at least 1"));
}

TEST(ServerOptionsTest, MissingTlsFilesAreNotFound) {
  ServerOptions options = WithTokens();
  options.tls_cert_file = "/nonexistent/cert.pem";
  options.tls_key_file = "/nonexistent/key.pem";
  auto credentials = MakeServerCredentials(options);
  ASSERT_FALSE(credentials.ok());
  EXPECT_EQ(credentials.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(credentials.status().message(), HasSubstr("--tls-cert /nonexistent/cert.pem"));
}

}  // namespace
}  // namespace rung::server
