#include "tasks/recording_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testlib/temp_dir.h"

namespace nk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = RecordingStore::Clock;

class RecordingStoreTest : public ::testing::Test {
 protected:
  fs::path put(const fs::path& path, size_t bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
    return path;
  }
  RecordingStore::Options options(uint64_t per_user, uint64_t total) {
    RecordingStore::Options o;
    o.limits = {per_user, total, 7 * 24h};
    o.clock = [this] { return now_; };
    return o;
  }

  test::TempDir dir_{"recording-store-test"};
  fs::path recordings_ = dir_ / "recordings";
  Clock::time_point now_ = Clock::now();
};

TEST_F(RecordingStoreTest, NamesCarryTheOwnerAndParseBack) {
  EXPECT_EQ(RecordingStore::fileName(3, 42, 1000), "session-3-pid42-uid1000.nkrec");
  auto parts = RecordingStore::parseName("session-3-pid42-uid1000.nkrec");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->session, 3u);
  EXPECT_EQ(parts->owner, 1000u);
  auto older = RecordingStore::parseName("session-7-pid9.nkrec.old");
  ASSERT_TRUE(older);
  EXPECT_EQ(older->session, 7u);
  EXPECT_FALSE(older->owner);
  for (const char* other : {"saved-controls.json", "session-3-pid42-uid1000.nkrec.tmp", "session--pid1.nkrec",
                            "session-3-pid42-uid.nkrec", "xsession-3-pid42.nkrec", "session-3-pid42-uid1000.nkrecx"})
    EXPECT_FALSE(RecordingStore::parseName(other)) << other;
}

TEST_F(RecordingStoreTest, AnEarlierRunsRecordingsAreCountedAndNothingElse) {
  put(recordings_ / "session-5-pid9-uid1000.nkrec", 300);
  put(recordings_ / "session-2-pid3.nkrec", 200);  // before owners were named: the file's owner
  put(recordings_ / "notes.txt", 5000);
  fs::path outside = put(dir_ / "saved-controls.json", 7000);
  fs::create_symlink(outside, recordings_ / "session-9-pid1-uid1000.nkrec");
  fs::create_directory(recordings_ / "session-8-pid1-uid1000.nkrec");
  RecordingStore store(recordings_, options(1 << 20, 1 << 20));
  EXPECT_EQ(store.userBytes(1000), 300u);
  EXPECT_EQ(store.userBytes(geteuid()), 200u);
  EXPECT_EQ(store.totalBytes(), 500u);
  EXPECT_EQ(store.highestSessionId(), 5u);
}

TEST_F(RecordingStoreTest, SweepRemovesOnlyOldRecordingsNeverWhatElseLiesThere) {
  fs::path old_one = put(recordings_ / "session-5-pid9-uid1000.nkrec", 300);
  fs::path notes = put(recordings_ / "notes.txt", 10);
  fs::path outside = put(dir_ / "saved-controls.json", 70);
  fs::path link = recordings_ / "session-9-pid1-uid1000.nkrec";
  fs::create_symlink(outside, link);
  RecordingStore store(recordings_, options(1 << 20, 1 << 20));
  fs::path live = recordings_ / RecordingStore::fileName(10, 1, 1000);
  ASSERT_TRUE(store.admit(live, 1000, 16).allowed);
  put(live, 16);
  EXPECT_TRUE(store.sweep().empty());
  now_ += 8 * 24h;
  auto removed = store.sweep();
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].path, old_one);
  EXPECT_EQ(removed[0].reason, "ended more than 7 days ago");
  EXPECT_FALSE(fs::exists(old_one));
  EXPECT_TRUE(fs::exists(live));  // live, however old its start
  EXPECT_TRUE(fs::exists(notes));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::file_size(outside), 70u);
  EXPECT_EQ(store.totalBytes(), 16u);
  // Ended now: kept for another 7 days, then removed.
  store.end(live);
  EXPECT_TRUE(store.sweepIfDue().empty());
  now_ += 7 * 24h + 1s;
  EXPECT_EQ(store.sweepIfDue().size(), 1u);
  EXPECT_FALSE(fs::exists(live));
  EXPECT_EQ(store.totalBytes(), 0u);
}

TEST_F(RecordingStoreTest, GrowingMakesRoomOrIsRefused) {
  fs::path older = put(recordings_ / "session-1-pid9-uid1000.nkrec", 400);
  fs::path theirs = put(recordings_ / "session-2-pid9-uid1001.nkrec", 400);
  RecordingStore store(recordings_, options(1000, 1 << 20));
  fs::path live = recordings_ / RecordingStore::fileName(3, 7, 1000);
  ASSERT_TRUE(store.admit(live, 1000, 16).allowed);
  EXPECT_TRUE(store.grow(live, 500).allowed);
  EXPECT_TRUE(fs::exists(older));
  auto room = store.grow(live, 100);  // 1016 > 1000: the ended one goes
  EXPECT_TRUE(room.allowed);
  ASSERT_EQ(room.removed.size(), 1u);
  EXPECT_EQ(room.removed[0].path, older);
  EXPECT_FALSE(fs::exists(older));
  EXPECT_TRUE(fs::exists(theirs));
  EXPECT_EQ(store.userBytes(1000), 616u);
  auto refused = store.grow(live, 385);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.refusal, "uid 1000's live recordings reached their quota of 1000 bytes");
  EXPECT_EQ(store.userBytes(1000), 616u);
  EXPECT_TRUE(store.grow(live, 384).allowed);
  EXPECT_EQ(store.userBytes(1000), 1000u);
}

// Room to rewrite a recording is taken only where it is free: an ended
// recording of the owner's is never removed for it.
TEST_F(RecordingStoreTest, ReservingNeverRemovesAnything) {
  using Reservation = RecordingStore::Reservation;
  fs::path older = put(recordings_ / "session-1-pid9-uid1000.nkrec", 400);
  RecordingStore store(recordings_, options(1000, 1 << 20));
  fs::path live = recordings_ / RecordingStore::fileName(3, 7, 1000);
  ASSERT_TRUE(store.admit(live, 1000, 16).allowed);
  ASSERT_TRUE(store.grow(live, 284).allowed);
  EXPECT_EQ(store.reserve(live, 301), Reservation::kNoRoom);  // 1001 > 1000; removing `older` would make room
  EXPECT_TRUE(fs::exists(older));
  EXPECT_EQ(store.userBytes(1000), 700u);
  EXPECT_EQ(store.reserve(live, 300), Reservation::kReserved);
  EXPECT_EQ(store.userBytes(1000), 1000u);
  EXPECT_EQ(store.reserve(recordings_ / "session-9-pid9-uid1000.nkrec", 1), Reservation::kGone);
}

// A rewrite takes the recording's place and its size; a recording the quota
// removed while it was rewritten stays removed, and so does the rewrite.
TEST_F(RecordingStoreTest, ARewriteReplacesOnlyARecordingStillThere) {
  RecordingStore store(recordings_, options(1000, 1 << 20));
  fs::path first = recordings_ / RecordingStore::fileName(1, 7, 1000);
  ASSERT_TRUE(store.admit(first, 1000, 16).allowed);
  put(first, 400);
  ASSERT_TRUE(store.grow(first, 384).allowed);
  store.end(first);
  ASSERT_EQ(store.reserve(first, 400), RecordingStore::Reservation::kReserved);
  fs::path rewrite = put(recordings_ / ".compacting-first", 120);
  std::error_code error;
  ASSERT_TRUE(store.replace(first, rewrite, 120, error)) << error.message();
  EXPECT_FALSE(fs::exists(rewrite));
  EXPECT_EQ(fs::file_size(first), 120u);
  EXPECT_EQ(store.userBytes(1000), 120u);

  // The next recording needs the room: the ended first one goes, then its
  // second rewrite finishes.
  ASSERT_EQ(store.reserve(first, 120), RecordingStore::Reservation::kReserved);
  fs::path second = recordings_ / RecordingStore::fileName(2, 8, 1000);
  ASSERT_TRUE(store.admit(second, 1000, 16).allowed);
  auto room = store.grow(second, 900);
  ASSERT_TRUE(room.allowed);
  ASSERT_EQ(room.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(first));
  fs::path late = put(recordings_ / ".compacting-first", 60);
  EXPECT_FALSE(store.replace(first, late, 60, error));
  EXPECT_FALSE(error);
  EXPECT_FALSE(fs::exists(first));
  EXPECT_FALSE(fs::exists(late));
  EXPECT_EQ(store.userBytes(1000), 916u);
}

}  // namespace
}  // namespace nk
