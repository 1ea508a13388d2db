// FitStore: fits stored with their inputs and read back as stored, newest first; a fit of an
// unknown sweep or an unknown fit id is NOT_FOUND.
#include "coordinator/store/fit_store.h"

#include <gtest/gtest.h>

#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::StoreTest;

class FitStoreTest : public StoreTest {
 protected:
  FitRecord Fit(int64_t sweep_id, const std::string& baseline) {
    FitRecord fit;
    fit.sweep_id = sweep_id;
    fit.actor = "user:ada";
    fit.metric = "val_loss";
    fit.baseline = baseline;
    fit.variant_keys = {"position.variant"};
    fit.options = {{"bootstrap", 0}, {"seed", 7}};
    fit.points = {{11, "rope", "r1", 1.0e12, 3.5, 0}, {12, "lerope", "r1", 1.0e12, 3.25, 0}};
    fit.result = nlohmann::json::array({{{"variant", "lerope"}, {"multiplier", 1.5}}});
    fit.result_text = "piecewise\n";
    return fit;
  }
};

TEST_F(FitStoreTest, AStoredFitReadsBackWithItsInputsNewestFirst) {
  const int64_t sweep_id = Submit(store_testing::Submission("fits", {store_testing::Cell("a")}));
  ASSERT_OK_AND_ASSIGN(FitRecord first, FitStore(*store_).Save(Fit(sweep_id, "rope")));
  clock_.Advance(std::chrono::seconds(5));
  ASSERT_OK_AND_ASSIGN(FitRecord second, FitStore(*store_).Save(Fit(sweep_id, "nope")));
  EXPECT_GT(second.id, first.id);
  EXPECT_EQ(ToUnixMicros(second.created_at) - ToUnixMicros(first.created_at), 5'000'000);

  Reopen();  // read from the file, not from memory
  FitStore fits(*store_);
  ASSERT_OK_AND_ASSIGN(std::vector<FitRecord> listed, fits.List(sweep_id));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, second.id);
  EXPECT_EQ(listed[0].baseline, "nope");
  EXPECT_TRUE(listed[0].result.is_null()) << "lists leave the result out unless asked";

  ASSERT_OK_AND_ASSIGN(FitRecord read, fits.Get(first.id));
  EXPECT_EQ(read.sweep_id, sweep_id);
  EXPECT_EQ(read.actor, "user:ada");
  EXPECT_EQ(read.metric, "val_loss");
  EXPECT_EQ(read.baseline, "rope");
  EXPECT_EQ(read.variant_keys, std::vector<std::string>{"position.variant"});
  EXPECT_EQ(read.options["seed"], 7);
  ASSERT_EQ(read.points.size(), 2u);
  EXPECT_EQ(read.points[1].trial_id, 12);
  EXPECT_EQ(read.points[1].variant, "lerope");
  EXPECT_EQ(read.points[1].label, "r1");
  EXPECT_DOUBLE_EQ(read.points[1].compute, 1.0e12);
  EXPECT_DOUBLE_EQ(read.points[1].loss, 3.25);
  EXPECT_EQ(read.result[0]["multiplier"], 1.5);
  EXPECT_EQ(read.result_text, "piecewise\n");
  EXPECT_EQ(ToUnixMicros(read.created_at), ToUnixMicros(first.created_at));
}

TEST_F(FitStoreTest, UnknownSweepsAndFitsAreNotFound) {
  EXPECT_EQ(FitStore(*store_).Save(Fit(99, "rope")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FitStore(*store_).List(99).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FitStore(*store_).Get(5).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rung
