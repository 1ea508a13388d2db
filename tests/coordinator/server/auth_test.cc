// tests/coordinator/server/auth_test.cc
//
// The token authenticator's decisions (without a server) and the token files.
#include "coordinator/server/auth.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <string>

#include <google/protobuf/descriptor.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "proto/rung.grpc.pb.h"
#include "tests/coordinator/server/server_test_util.h"

namespace rung::server {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

constexpr char kUser[] = "user-token-0123456789abcdef";
constexpr char kWorker[] = "worker-token-0123456789abcdef";
constexpr char kViewer[] = "viewer-token-0123456789abcdef";

TEST(RequiredAccessTest, HealthAndReflectionArePublic) {
  EXPECT_EQ(RequiredAccess("/grpc.health.v1.Health/Check"), Access::kPublic);
  EXPECT_EQ(RequiredAccess("/grpc.health.v1.Health/Watch"), Access::kPublic);
  EXPECT_EQ(RequiredAccess("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"), Access::kPublic);
  EXPECT_EQ(RequiredAccess("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"), Access::kPublic);
}

TEST(RequiredAccessTest, EachServiceBelongsToItsRole) {
  EXPECT_EQ(RequiredAccess("/rung.v1.UserService/SubmitSweep"), Access::kUser);
  EXPECT_EQ(RequiredAccess("/rung.v1.UserService/GetMetrics"), Access::kQuery);
  EXPECT_EQ(RequiredAccess("/rung.v1.UserService/GetServerInfo"), Access::kAnyRole);
  EXPECT_EQ(RequiredAccess("/rung.v1.WorkerService/Register"), Access::kWorker);
  EXPECT_EQ(RequiredAccess("/rung.v1.WorkerService/Complete"), Access::kWorker);
  // Not a prefix match on the service name alone.
  EXPECT_EQ(RequiredAccess("/rung.v1.UserServiceX/SubmitSweep"), Access::kAnyRole);
  EXPECT_EQ(RequiredAccess("/grpc.health.v1.HealthX/Check"), Access::kAnyRole);
}

class AuthorizeTest : public ::testing::Test {
 protected:
  grpc::Status Authorize(std::string_view method, std::optional<std::string_view> header) {
    return authenticator_.Authorize(method, header, &role_);
  }
  BearerTokenAuthenticator authenticator_{kUser, kWorker, kViewer};
  v1::Role role_ = v1::ROLE_UNSPECIFIED;
};

TEST_F(AuthorizeTest, PublicMethodsNeedNoToken) {
  EXPECT_TRUE(Authorize("/grpc.health.v1.Health/Check", std::nullopt).ok());
  EXPECT_EQ(role_, v1::ROLE_UNSPECIFIED);
  EXPECT_TRUE(Authorize("/grpc.health.v1.Health/Check", "Bearer not-a-known-token").ok());
}

TEST_F(AuthorizeTest, EachTokenGetsItsRole) {
  EXPECT_TRUE(Authorize("/rung.v1.UserService/SubmitSweep", std::string("Bearer ") + kUser).ok());
  EXPECT_EQ(role_, v1::ROLE_USER);
  EXPECT_TRUE(Authorize("/rung.v1.WorkerService/Lease", std::string("Bearer ") + kWorker).ok());
  EXPECT_EQ(role_, v1::ROLE_WORKER);
  EXPECT_TRUE(Authorize("/rung.v1.UserService/GetServerInfo", std::string("Bearer ") + kWorker).ok());
  EXPECT_EQ(role_, v1::ROLE_WORKER);
}

TEST_F(AuthorizeTest, TheSchemeIsCaseInsensitive) {
  EXPECT_TRUE(Authorize("/rung.v1.UserService/ListSweeps", std::string("bearer ") + kUser).ok());
  EXPECT_TRUE(Authorize("/rung.v1.UserService/ListSweeps", std::string("BEARER  ") + kUser).ok());
}

TEST_F(AuthorizeTest, MissingMalformedOrUnknownTokensAreUnauthenticated) {
  grpc::Status missing = Authorize("/rung.v1.UserService/ListSweeps", std::nullopt);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(missing.error_message(), HasSubstr("rung.v1.UserService/ListSweeps needs a bearer token"));

  grpc::Status basic = Authorize("/rung.v1.UserService/ListSweeps", std::string("Basic ") + kUser);
  EXPECT_EQ(basic.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(basic.error_message(), HasSubstr("not of the form 'Bearer <token>'"));
  EXPECT_EQ(Authorize("/rung.v1.UserService/ListSweeps", "Bearer ").error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // A prefix or an extension of a real token is not that token.
  const std::string prefix = std::string(kUser).substr(0, 10);
  EXPECT_EQ(Authorize("/rung.v1.UserService/ListSweeps", "Bearer " + prefix).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Authorize("/rung.v1.UserService/ListSweeps", std::string("Bearer ") + kUser + "x").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(role_, v1::ROLE_UNSPECIFIED);
}

TEST_F(AuthorizeTest, AValidTokenOfTheOtherRoleIsPermissionDenied) {
  grpc::Status worker_submits = Authorize("/rung.v1.UserService/SubmitSweep", std::string("Bearer ") + kWorker);
  EXPECT_EQ(worker_submits.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(worker_submits.error_message(),
            "rung.v1.UserService/SubmitSweep needs the user token; this call was made with the worker token");
  for (const char* method : {"/rung.v1.UserService/CancelSweep", "/rung.v1.UserService/PauseSweep",
                             "/rung.v1.UserService/ResumeSweep", "/rung.v1.UserService/RetryTrials",
                             "/rung.v1.UserService/GetTrial", "/rung.v1.UserService/Export"}) {
    EXPECT_EQ(Authorize(method, std::string("Bearer ") + kWorker).error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << method;
  }
  EXPECT_EQ(Authorize("/rung.v1.WorkerService/Register", std::string("Bearer ") + kUser).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(AuthorizeTest, RoleOfNamesTheTokensRole) {
  EXPECT_EQ(authenticator_.RoleOf(std::string("Bearer ") + kUser), v1::ROLE_USER);
  EXPECT_EQ(authenticator_.RoleOf(std::string("Bearer ") + kWorker), v1::ROLE_WORKER);
  EXPECT_EQ(authenticator_.RoleOf(std::string("Bearer ") + kViewer), v1::ROLE_VIEWER);
  EXPECT_EQ(authenticator_.RoleOf("Bearer nobody-0123456789abcdef"), v1::ROLE_UNSPECIFIED);
  EXPECT_EQ(authenticator_.RoleOf(std::nullopt), v1::ROLE_UNSPECIFIED);
}

// Every UserService method, by name, and whether the viewer token may call it. A method added to
// the service fails ViewerMayCallExactlyTheQueries until it is listed here: its author decides.
const std::map<std::string, bool>& ViewerMayCall() {
  static const std::map<std::string, bool> table = {
      {"GetServerInfo", true},       {"SubmitSweep", false},   {"ListSweeps", true},
      {"GetSweep", true},            {"CancelSweep", false},   {"PauseSweep", false},
      {"ResumeSweep", false},        {"ListTrials", true},     {"GetTrial", true},
      {"RetryTrials", false},        {"StreamSweepUpdates", true}, {"GetMetrics", true},
      {"QueryResults", true},        {"GetLearnedParameters", true}, {"GetDiagnostics", true},
      {"Fit", true},                 {"ListFits", true},       {"Export", true},
      {"ListWorkers", true},         {"ReleaseWorker", false}, {"GetTuning", true},
      {"GetLogs", true},             {"GetCurves", true},      {"StreamMetrics", true},
      {"GetPrecision", true},
      {"GetLaws", true},
  };
  return table;
}

TEST_F(AuthorizeTest, ViewerMayCallExactlyTheQueries) {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(v1::UserService::service_full_name());
  ASSERT_NE(service, nullptr);
  ASSERT_EQ(service->method_count(), static_cast<int>(ViewerMayCall().size()))
      << "a UserService method is missing from ViewerMayCall(): decide whether a viewer may call it";
  const std::string viewer = std::string("Bearer ") + kViewer;
  for (int i = 0; i < service->method_count(); ++i) {
    const std::string name = service->method(i)->name();
    auto expected = ViewerMayCall().find(name);
    ASSERT_NE(expected, ViewerMayCall().end()) << name << " is missing from ViewerMayCall()";
    const std::string path = "/rung.v1.UserService/" + name;
    grpc::Status status = Authorize(path, viewer);
    if (expected->second) {
      EXPECT_TRUE(status.ok()) << name << ": " << status.error_message();
      EXPECT_EQ(role_, v1::ROLE_VIEWER) << name;
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << name;
      EXPECT_THAT(status.error_message(), HasSubstr("rung.v1.UserService/" + name + " changes the coordinator's state"));
      EXPECT_THAT(status.error_message(), HasSubstr("the viewer token, which may only query"));
      EXPECT_THAT(status.error_message(), HasSubstr("--user-token-file"));
    }
    // The user token may call every one of them.
    EXPECT_TRUE(Authorize(path, std::string("Bearer ") + kUser).ok()) << name;
  }
}

TEST_F(AuthorizeTest, TheViewerTokenCannotCallWorkerMethods) {
  grpc::Status status = Authorize("/rung.v1.WorkerService/Register", std::string("Bearer ") + kViewer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("needs the worker token; this call was made with the viewer token"));
}

TEST(AuthorizeWithoutViewerTest, WithoutAViewerTokenNoTokenIsAViewer) {
  BearerTokenAuthenticator authenticator(kUser, kWorker);
  v1::Role role = v1::ROLE_UNSPECIFIED;
  EXPECT_EQ(authenticator.Authorize("/rung.v1.UserService/ListSweeps", std::string("Bearer ") + kViewer, &role)
                .error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(authenticator.RoleOf(std::string("Bearer ") + kViewer), v1::ROLE_UNSPECIFIED);
}

TEST(ValidateTokensTest, TheViewerTokenMustDifferFromTheOthers) {
  EXPECT_TRUE(ValidateTokens(kUser, kWorker, kViewer).ok());
  EXPECT_TRUE(ValidateTokens(kUser, kWorker, "").ok());
  Status as_user = ValidateTokens(kUser, kWorker, kUser);
  EXPECT_EQ(as_user.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(as_user.message(), HasSubstr("the viewer token is the same as the user token"));
  EXPECT_THAT(ValidateTokens(kUser, kWorker, kWorker).message(), HasSubstr("same as the worker token"));
}

TEST(ValidateTokensTest, TheTwoTokensMustDiffer) {
  EXPECT_TRUE(ValidateTokens(kUser, kWorker).ok());
  Status same = ValidateTokens(kUser, kUser);
  EXPECT_EQ(same.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(same.message(), HasSubstr("the same"));
  EXPECT_EQ(ValidateTokens("", kWorker).code(), StatusCode::kInvalidArgument);
}

mode_t FileMode(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0);
  return info.st_mode & 07777;
}

void WriteFileWithMode(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

TEST(TokenFileTest, AFreshTokenFileHasMode0600AndReadsBack) {
  ScratchDir scratch;
  const std::string path = scratch.Path("user.token");
  StatusOr<std::string> token = WriteFreshTokenFile(path);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(FileMode(path), 0600u);
  EXPECT_EQ(token->size(), 64u);
  EXPECT_EQ(token->find_first_not_of("0123456789abcdef"), std::string::npos);
  StatusOr<std::string> read = ReadTokenFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, *token);
}

TEST(TokenFileTest, EachFreshTokenIsNewAndReplacesAnOpenFile) {
  ScratchDir scratch;
  const std::string path = scratch.Path("worker.token");
  WriteFileWithMode(path, "old-token-that-others-could-read\n", 0644);
  StatusOr<std::string> first = WriteFreshTokenFile(path);
  StatusOr<std::string> second = WriteFreshTokenFile(path);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(*first, *second);
  EXPECT_EQ(FileMode(path), 0600u);
  EXPECT_EQ(*ReadTokenFile(path), *second);
}

TEST(TokenFileTest, AFileOthersCanReadIsRefusedWithTheFix) {
  ScratchDir scratch;
  const std::string path = scratch.Path("open.token");
  WriteFileWithMode(path, "0123456789abcdef0123456789abcdef\n", 0644);
  StatusOr<std::string> token = ReadTokenFile(path);
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(token.status().message(), HasSubstr("mode 0644"));
  EXPECT_THAT(token.status().message(), HasSubstr("chmod 600 " + path));
}

TEST(TokenFileTest, MissingEmptyShortOrOddTokensAreRefused) {
  ScratchDir scratch;
  EXPECT_EQ(ReadTokenFile(scratch.Path("absent.token")).status().code(), StatusCode::kNotFound);

  const std::string path = scratch.Path("bad.token");
  WriteFileWithMode(path, "  \n", 0600);
  EXPECT_THAT(ReadTokenFile(path).status().message(), HasSubstr("is empty"));
  WriteFileWithMode(path, "short\n", 0600);
  EXPECT_THAT(ReadTokenFile(path).status().message(), HasSubstr("shorter than 16"));
  WriteFileWithMode(path, "two tokens on one line, not one\n", 0600);
  EXPECT_EQ(ReadTokenFile(path).status().code(), StatusCode::kInvalidArgument);
}

TEST(TokenFileTest, SurroundingWhitespaceIsNotPartOfTheToken) {
  ScratchDir scratch;
  const std::string path = scratch.Path("spaced.token");
  WriteFileWithMode(path, "\n  0123456789abcdef0123456789abcdef \r\n", 0400);
  StatusOr<std::string> token = ReadTokenFile(path);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(*token, "0123456789abcdef0123456789abcdef");
}

}  // namespace
}  // namespace rung::server
