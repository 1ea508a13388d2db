// tests/worker/agent/attempt_workspace_test.cc
//
// The attempt's folder, its config file, its own checkpoint folder and the resume point.
#include "proto/config_value.h"
#include "worker/agent/attempt_workspace.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/train/checkpoint.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

void TouchCheckpoint(const std::string& dir, int64_t step) {
  fs::create_directories(dir);
  std::ofstream(CheckpointPath(dir, step)) << "x";
}

TEST(AttemptWorkspaceTest, ResumesFromTheNewestCheckpointOfTheNewestAttemptThatHasOne) {
  ScratchDir scratch;
  const std::string attempt1 = scratch.Path("attempt-1"), attempt2 = scratch.Path("attempt-2"),
                    attempt3 = scratch.Path("attempt-3");
  EXPECT_EQ(ResumePoint({}), "never");
  EXPECT_EQ(ResumePoint({attempt2, attempt1}), "never") << "folders that do not exist";
  TouchCheckpoint(attempt1, 10);
  TouchCheckpoint(attempt1, 20);
  fs::create_directories(attempt3);  // went stale before its first checkpoint
  EXPECT_EQ(ResumePoint({attempt3, attempt2, attempt1}), CheckpointPath(attempt1, 20));
  TouchCheckpoint(attempt2, 15);
  EXPECT_EQ(ResumePoint({attempt3, attempt2, attempt1}), CheckpointPath(attempt2, 15))
      << "the newer attempt wins even with an older step";
}

TEST(AttemptWorkspaceTest, WritesTheConfigAndGivesEveryAttemptItsOwnCheckpointFolder) {
  ScratchDir scratch;
  v1::TrialLease lease;
  lease.set_trial_id(7);
  lease.set_attempt(3);
  *lease.mutable_config() = wire::ToConfigObject(nlohmann::json::parse(R"({"seed":1})"));
  lease.set_checkpoint_dir(scratch.Path("artifacts/sweep/0/attempt-3"));
  lease.add_resume_from_dirs(scratch.Path("artifacts/sweep/0/attempt-2"));
  TouchCheckpoint(scratch.Path("artifacts/sweep/0/attempt-2"), 40);

  StatusOr<AttemptWorkspace> workspace = PrepareAttemptWorkspace(scratch.Path("work"), lease);
  ASSERT_TRUE(workspace.ok()) << workspace.status().ToString();
  EXPECT_EQ(workspace->dir, scratch.Path("work/trial-7/attempt-3"));
  EXPECT_EQ(testing::ReadLines(workspace->config_path), std::vector<std::string>{R"({"seed":1})"});
  EXPECT_EQ(workspace->checkpoint_dir, scratch.Path("artifacts/sweep/0/attempt-3"));
  EXPECT_FALSE(fs::exists(workspace->checkpoint_dir)) << "the trainer creates it with its first checkpoint";
  EXPECT_EQ(workspace->resume, CheckpointPath(scratch.Path("artifacts/sweep/0/attempt-2"), 40));

  lease.clear_checkpoint_dir();
  lease.clear_resume_from_dirs();
  workspace = PrepareAttemptWorkspace(scratch.Path("work"), lease);
  ASSERT_TRUE(workspace.ok()) << workspace.status().ToString();
  EXPECT_EQ(workspace->checkpoint_dir, scratch.Path("work/trial-7/attempt-3/checkpoints"));
  EXPECT_EQ(workspace->resume, "never");

  lease.clear_config();
  EXPECT_EQ(PrepareAttemptWorkspace(scratch.Path("work"), lease).status().code(), StatusCode::kInvalidArgument);
}

// The checkpoint folder is left to the trainer, but a location it could never create is refused
// before anything is spawned.
TEST(AttemptWorkspaceTest, RefusesACheckpointFolderThatCannotBeCreated) {
  ScratchDir scratch;
  v1::TrialLease lease;
  lease.set_trial_id(7);
  lease.set_attempt(1);
  *lease.mutable_config() = wire::ToConfigObject(nlohmann::json::parse("{}"));
  std::ofstream(scratch.Path("artifacts")) << "a file, not a folder\n";
  lease.set_checkpoint_dir(scratch.Path("artifacts/sweep/0/attempt-1"));
  StatusOr<AttemptWorkspace> workspace = PrepareAttemptWorkspace(scratch.Path("work"), lease);
  EXPECT_EQ(workspace.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(workspace.status().message(), ::testing::HasSubstr(scratch.Path("artifacts") + " is not a folder"));

  fs::create_directories(scratch.Path("existing/attempt-1"));
  lease.set_checkpoint_dir(scratch.Path("existing/attempt-1"));
  EXPECT_TRUE(PrepareAttemptWorkspace(scratch.Path("work"), lease).ok()) << "an existing folder is fine";
}

}  // namespace
}  // namespace rung::agent
