// The worker's outbox (actors/worker/outbox.hpp) on real files in a temporary
// directory: reports kept across a reopen and erased ones gone; one process at
// a time; a record cut short by a killed process dropped, and a tail of
// zeros a lost machine left, a flipped byte an error; a full disk leaves the reports written before it readable; segments
// reclaimed even with one report never acknowledged; an outbox RocksDB wrote
// (the former format) read and moved over, and so a segment an earlier build
// wrote with reports in CAF's encoding; the fault hook fails writes.
#include "actors/worker/outbox.hpp"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <signal.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "proto/codec.hpp"
#include "proto/errors.hpp"
#include "support/test_dir.hpp"

namespace aisched::worker {
namespace {

namespace fs = std::filesystem;

proto::run_result report(const std::string& id, std::string output = "ok") {
  proto::run_result r;
  r.instance_id = id;
  r.worker_id = "w1";
  r.attempt = 1;
  r.state = proto::instance_state::failed;
  r.exit_code = 3;
  r.output = std::move(output);
  r.started_at = 100;
  r.finished_at = 200;
  return r;
}

caf::error put(outbox& box, const std::vector<proto::run_result>& rs) {
  std::vector<std::pair<std::string, const proto::run_result*>> batch;
  for (auto& r : rs) batch.emplace_back(r.instance_id + "#1", &r);
  return box.put(batch);
}

std::map<std::string, proto::run_result> load(outbox& box) {
  std::map<std::string, proto::run_result> out;
  for (auto& [k, r] : box.load()) out.emplace(k, r);
  return out;
}

std::vector<fs::path> segment_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".outbox") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

class outbox_test : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = test::make_test_dir("outbox-");
    ASSERT_FALSE(root_.empty());
    dir_ = (root_ / "box").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path root_;
  std::string dir_;
};

TEST_F(outbox_test, reports_survive_a_reopen_and_erased_ones_do_not) {
  {
    auto box = outbox::open(dir_);
    ASSERT_TRUE(box) << view(box.error()).message;
    EXPECT_TRUE(load(**box).empty());
    ASSERT_FALSE(put(**box, {report("1-1-0"), report("1-2-0")}));
    ASSERT_FALSE(put(**box, {report("1-3-0", "third")}));
    ASSERT_FALSE((*box)->erase({"1-2-0#1", "never-stored#1"}));
  }
  auto box = outbox::open(dir_);
  ASSERT_TRUE(box) << view(box.error()).message;
  auto got = load(**box);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(got.count("1-1-0#1"));
  ASSERT_TRUE(got.count("1-3-0#1"));
  EXPECT_EQ(got["1-3-0#1"].output, "third");
  EXPECT_EQ(got["1-1-0#1"].exit_code, 3);
  EXPECT_EQ(got["1-1-0#1"].state, proto::instance_state::failed);
  EXPECT_EQ(got["1-1-0#1"].finished_at, 200);
}

TEST_F(outbox_test, a_second_open_is_refused_while_one_holds_it) {
  auto first = outbox::open(dir_);
  ASSERT_TRUE(first);
  auto second = outbox::open(dir_);
  ASSERT_FALSE(second) << "two workers appending to one outbox would garble it";
  EXPECT_NE(view(second.error()).message.find("in use"), std::string::npos)
      << view(second.error()).message;
  first->reset();
  EXPECT_TRUE(outbox::open(dir_)) << "the lock must go with the outbox";
}

TEST_F(outbox_test, a_record_cut_short_at_the_end_is_dropped_and_the_rest_kept) {
  {
    auto box = outbox::open(dir_);
    ASSERT_TRUE(box);
    ASSERT_FALSE(put(**box, {report("1-1-0")}));
    ASSERT_FALSE(put(**box, {report("1-2-0", std::string(500, 'x'))}));
  }
  // A worker killed in the middle of its second write.
  auto segs = segment_files(dir_);
  ASSERT_FALSE(segs.empty());
  auto last = segs.back();
  fs::resize_file(last, fs::file_size(last) - 100);
  {
    auto box = outbox::open(dir_);
    ASSERT_TRUE(box) << view(box.error()).message;
    auto got = load(**box);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got.count("1-1-0#1"));
    ASSERT_FALSE(put(**box, {report("1-4-0")}));
  }
  // The cut was dropped for good: the segment is no longer the newest and opens cleanly.
  auto box = outbox::open(dir_);
  ASSERT_TRUE(box) << view(box.error()).message;
  auto got = load(**box);
  EXPECT_EQ(got.size(), 2u);
  EXPECT_TRUE(got.count("1-4-0#1"));
}

TEST_F(outbox_test, a_tail_of_zeros_a_lost_machine_left_is_dropped_and_the_rest_kept) {
  // The outbox does not fsync: after a power loss the newest segment may end
  // in blocks the kernel never wrote, read back as zeros. Its reports before
  // them are kept and the worker opens (it would otherwise take no runs).
  {
    auto box = outbox::open(dir_);
    ASSERT_TRUE(box);
    ASSERT_FALSE(put(**box, {report("1-1-0"), report("1-2-0")}));
  }
  auto segs = segment_files(dir_);
  ASSERT_FALSE(segs.empty());
  auto whole = fs::file_size(segs.back());
  std::ofstream(segs.back(), std::ios::binary | std::ios::app) << std::string(4096, '\0');
  {
    auto box = outbox::open(dir_);
    ASSERT_TRUE(box) << view(box.error()).message;
    auto got = load(**box);
    EXPECT_EQ(got.size(), 2u);
    EXPECT_TRUE(got.count("1-1-0#1"));
    EXPECT_TRUE(got.count("1-2-0#1"));
  }
  EXPECT_EQ(fs::file_size(segs.back()), whole) << "the zeros stay behind the next write";
}

TEST_F(outbox_test, a_flipped_byte_is_an_error_not_a_lost_report) {
  {
    auto box = outbox::open(dir_);
    ASSERT_TRUE(box);
    ASSERT_FALSE(put(**box, {report("1-1-0", std::string(200, 'a'))}));
    ASSERT_FALSE(put(**box, {report("1-2-0")}));
  }
  auto seg = segment_files(dir_).back();
  {
    std::fstream f(seg, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('b');
  }
  auto box = outbox::open(dir_);
  ASSERT_FALSE(box) << "a report read wrong, or skipped, is a run the scheduler never hears of";
  EXPECT_EQ(view(box.error()).code, errc::corrupted) << view(box.error()).message;
}

TEST_F(outbox_test, a_full_disk_fails_the_write_and_keeps_what_was_written_before) {
  auto box = outbox::open(dir_);
  ASSERT_TRUE(box);
  ASSERT_FALSE(put(**box, {report("1-1-0")}));
  auto seg = segment_files(dir_).back();
  auto size = fs::file_size(seg);
  // The file may grow by 64 bytes more: the next report (1 KiB) is written in part, then fails.
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = size + 64;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  auto err = put(**box, {report("1-2-0", std::string(1024, 'x'))});
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  ASSERT_TRUE(err) << "a report not kept must be said so";
  EXPECT_EQ(fs::file_size(seg), size) << "the part written must be taken back";
  box->reset();
  auto again = outbox::open(dir_);
  ASSERT_TRUE(again) << view(again.error()).message;
  auto got = load(**again);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got.count("1-1-0#1"));
}

// options::fail_writes, the test hook of a failing disk (tests/sim/scheduler_sim):
// while it says so, puts and erases fail with EIO and change nothing on disk;
// once it no longer does, the outbox writes again.
TEST_F(outbox_test, the_fault_hook_fails_writes_with_eio_while_it_says_so) {
  auto failing = std::make_shared<bool>(false);
  outbox::options opts;
  opts.fail_writes = [failing] { return *failing; };
  auto box = outbox::open(dir_, opts);
  ASSERT_TRUE(box) << view(box.error()).message;
  ASSERT_FALSE(put(**box, {report("1-1-0")}));
  auto seg = segment_files(dir_).back();
  auto size = fs::file_size(seg);
  *failing = true;
  auto err = put(**box, {report("1-2-0")});
  ASSERT_TRUE(err) << "a report not kept must be said so";
  EXPECT_EQ(view(err).code, errc::storage_error);
  EXPECT_NE(view(err).message.find(std::strerror(EIO)), std::string::npos) << view(err).message;
  EXPECT_TRUE((*box)->erase({"1-1-0#1"})) << "an erase not written must be said so";
  EXPECT_EQ(fs::file_size(seg), size);
  *failing = false;
  ASSERT_FALSE(put(**box, {report("1-3-0")}));
  box->reset();
  auto again = outbox::open(dir_);
  ASSERT_TRUE(again) << view(again.error()).message;
  auto got = load(**again);
  EXPECT_EQ(got.size(), 2u);
  EXPECT_TRUE(got.count("1-1-0#1")) << "its erase failed: it is still there";
  EXPECT_FALSE(got.count("1-2-0#1"));
  EXPECT_TRUE(got.count("1-3-0#1"));
}

TEST_F(outbox_test, segments_are_reclaimed_even_behind_a_report_never_acknowledged) {
  outbox::options opts;
  opts.segment_bytes = 4096;
  {
    auto box = outbox::open(dir_, opts);
    ASSERT_TRUE(box);
    ASSERT_FALSE(put(**box, {report("0-0-0", "pinned")}));  // never erased
    for (int i = 1; i <= 3000; ++i) {
      auto id = "7-" + std::to_string(i) + "-0";
      ASSERT_FALSE(put(**box, {report(id)}));
      ASSERT_FALSE((*box)->erase({id + "#1"}));
      ASSERT_LE((*box)->segments(), 3u) << "after " << i << " reports";
    }
    EXPECT_LE(segment_files(dir_).size(), 3u);
    uint64_t bytes = 0;
    for (auto& s : segment_files(dir_)) bytes += fs::file_size(s);
    EXPECT_LE(bytes, 3u * 4096u + 1024u);
  }
  auto box = outbox::open(dir_, opts);
  ASSERT_TRUE(box) << view(box.error()).message;
  auto got = load(**box);
  ASSERT_EQ(got.size(), 1u) << "3000 erased reports must stay erased, the pinned one kept";
  EXPECT_EQ(got.begin()->second.output, "pinned");
}

/// A segment as a build of data format 0 or 1 wrote it: each record its
/// u32 body length, the FNV-1a checksum of the body, then the body (kind 1, a
/// put of CAF's encoding of the report, or kind 2, an erase; the key's u32
/// length; the key; the value). tests/compat/format-0/outbox_segment is one.
std::string format_1_segment(const std::vector<std::pair<uint8_t, proto::run_result>>& records) {
  auto u32 = [](std::string& out, uint32_t v) {
    char b[4];
    std::memcpy(b, &v, 4);
    out.append(b, 4);
  };
  std::string out;
  for (auto& [kind, r] : records) {
    std::string body(1, static_cast<char>(kind));
    auto key = r.instance_id + "#1";
    u32(body, static_cast<uint32_t>(key.size()));
    body += key;
    if (kind == 1) body += proto::format_1::encode(r);
    uint32_t sum = 2166136261u;
    for (unsigned char c : body) sum = (sum ^ c) * 16777619u;
    u32(out, static_cast<uint32_t>(body.size()));
    u32(out, sum);
    out += body;
  }
  return out;
}

TEST_F(outbox_test, a_report_an_earlier_build_left_reads_after_every_move_of_its_segment) {
  // Left by the build before the upgrade: one report live, four erased.
  std::vector<std::pair<uint8_t, proto::run_result>> left;
  for (int i = 0; i < 5; ++i) left.emplace_back(1, report("5-" + std::to_string(i) + "-0"));
  left[0].second.output = "from before the upgrade";
  for (int i = 1; i < 5; ++i) left.emplace_back(2, report("5-" + std::to_string(i) + "-0"));
  fs::create_directories(dir_);
  std::ofstream(fs::path(dir_) / "seg-00000000000000000001.outbox", std::ios::binary)
      << format_1_segment(left);
  outbox::options opts;
  opts.segment_bytes = 4096;
  {
    auto box = outbox::open(dir_, opts);
    ASSERT_TRUE(box) << view(box.error()).message;
    EXPECT_EQ(load(**box).at("5-0-0#1").output, "from before the upgrade");
    // This build's reports come and go: the old report's segment is
    // reclaimed again and again, the report moved each time.
    for (int i = 1; i <= 1000; ++i) {
      auto id = "7-" + std::to_string(i) + "-0";
      ASSERT_FALSE(put(**box, {report(id)}));
      ASSERT_FALSE((*box)->erase({id + "#1"}));
    }
    EXPECT_GT(segment_files(dir_).front().filename().string(), "seg-00000000000000000001.outbox")
        << "the first segment was never reclaimed: nothing moved";
  }
  auto box = outbox::open(dir_, opts);
  ASSERT_TRUE(box) << view(box.error()).message;
  auto got = load(**box);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at("5-0-0#1").output, "from before the upgrade");
  EXPECT_EQ(got.at("5-0-0#1").exit_code, 3);
}

TEST_F(outbox_test, an_outbox_rocksdb_wrote_is_read_and_moved_over) {
  auto kept = report("5-1-0", "from before the upgrade");
  {
    rocksdb::Options opts;
    opts.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(opts, dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    // As the builds of data formats 0 and 1 wrote it: CAF's encoding.
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions{}, "5-1-0#1", proto::format_1::encode(kept)).ok());
    db->Close();
  }
  {
    auto box = outbox::open(dir_);
    ASSERT_TRUE(box) << view(box.error()).message;
    auto got = load(**box);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got["5-1-0#1"].output, kept.output);
  }
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "CURRENT")) << "the former files must go";
  auto box = outbox::open(dir_);
  ASSERT_TRUE(box) << view(box.error()).message;
  auto got = load(**box);
  ASSERT_EQ(got.size(), 1u) << "the report must live on in the new format";
  ASSERT_FALSE((*box)->erase({"5-1-0#1"}));
  box->reset();
  box = outbox::open(dir_);
  ASSERT_TRUE(box);
  EXPECT_TRUE(load(**box).empty());
}

}  // namespace
}  // namespace aisched::worker
