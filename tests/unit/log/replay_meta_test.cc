// What replay needs from the log: the writer and commit time of every
// revision (from memory and from storage), and a read-only open beside a
// running writer.
#include <filesystem>
#include <thread>

#include "log_fixture.h"

namespace podflow {
namespace {

using testing::FakeWallClock;
using testing::MustOpen;
using testing::MustPut;
using testing::TempDir;
using testing::TestOptions;

std::vector<RevisionChangesPtr> MustReadChanges(EventLog& log, Revision from) {
  auto r = log.ReadChanges(from, 100);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

TEST_CASE("every revision records its writer and commit time, in memory and on disk") {
  TempDir dir;
  FakeWallClock clock;
  LogOptions options = TestOptions(dir.path());
  options.now_ms = clock.Fn();
  {
    auto log = MustOpen(options);
    REQUIRE(log->Put("/a", "1", std::nullopt, 0, {"admission"})->revision == Revision(2));
    clock.now_ms += 12;
    std::vector<TxnOp> ops;
    ops.emplace_back(PutOp{"/a", "2"});
    ops.emplace_back(PutOp{"/b", "1"});
    REQUIRE(log->Txn(std::move(ops), TxnOptions{"binding"})->revision == Revision(3));
    clock.now_ms += 5;
    MustPut(*log, "/c", "1");  // the old one-argument Txn: no writer
    clock.now_ms += 1;
    REQUIRE(log->Delete("/b", std::nullopt, {"gc"})->revision == Revision(5));

    auto check = [&](const std::vector<RevisionChangesPtr>& revs) {
      REQUIRE(revs.size() == 4);
      CHECK(revs[0]->writer == "admission");
      CHECK(revs[0]->committed_at_ms == 1'700'000'000'000);
      CHECK(revs[1]->writer == "binding");
      CHECK(revs[1]->committed_at_ms == 1'700'000'000'012);
      CHECK(revs[1]->changes.size() == 2);
      CHECK(revs[2]->writer.empty());
      CHECK(revs[2]->committed_at_ms == 1'700'000'000'017);
      CHECK(revs[3]->writer == "gc");
      CHECK(revs[3]->changes[0].type == ChangeType::kDelete);
    };
    check(MustReadChanges(*log, Revision(2)));  // from the ring
  }
  auto log = MustOpen(options);  // reopened: from storage
  auto revs = MustReadChanges(*log, Revision(2));
  REQUIRE(revs.size() == 4);
  CHECK(revs[1]->writer == "binding");
  CHECK(revs[1]->committed_at_ms == 1'700'000'000'012);
  CHECK(revs[3]->writer == "gc");
  CHECK(revs[3]->committed_at_ms == 1'700'000'000'018);
}

TEST_CASE("TTL deletes are written by \"ttl\"") {
  TempDir dir;
  FakeWallClock clock;
  LogOptions options = TestOptions(dir.path());
  options.now_ms = clock.Fn();
  auto log = MustOpen(options);
  REQUIRE(log->Put("/e", "x", std::nullopt, 1, {"status"})->succeeded);
  clock.now_ms += 2000;
  REQUIRE(log->WaitForRevision(Revision(3), std::chrono::steady_clock::now() +
                                                std::chrono::seconds(5)) == Revision(3));
  auto revs = MustReadChanges(*log, Revision(3));
  REQUIRE(revs.size() == 1);
  CHECK(revs[0]->writer == "ttl");
}

TEST_CASE("a read-only open reads beside the open writer and catches up") {
  TempDir dir;
  auto writer = MustOpen(TestOptions(dir.path()));
  writer->Put("/pods/a", "a1", std::nullopt, 0, {"admission"}).value();
  writer->Put("/pods/b", "b1", std::nullopt, 0, {"admission"}).value();

  auto opened = OpenLogReadOnly(dir.path());
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  auto& reader = **opened;
  CHECK(reader.CurrentRevision() == Revision(3));
  CHECK((*reader.Get("/pods/a"))->value == "a1");
  auto range = reader.Range(RangeRequest::Prefix("/pods/"));
  INFO(range.status().ToString());
  REQUIRE(range.ok());
  CHECK(range->kvs.size() == 2);
  auto revs = MustReadChanges(reader, Revision(2));
  REQUIRE(revs.size() == 2);
  CHECK(revs[0]->writer == "admission");

  // Writes through the reader fail and change nothing.
  auto w = reader.Put("/pods/c", "c1");
  CHECK(w.status().code() == Code::kUnavailable);
  CHECK(reader.Compact(Revision(2)).code() == Code::kUnavailable);
  CHECK(writer->CurrentRevision() == Revision(3));

  // The writer goes on; the reader sees it on its next read.
  writer->Put("/pods/a", "a2", std::nullopt, 0, {"status"}).value();
  writer->Delete("/pods/b").value();
  CHECK(reader.CurrentRevision() == Revision(5));
  CHECK((*reader.Get("/pods/a"))->value == "a2");
  CHECK((*reader.Get("/pods/a", Revision(3)))->value == "a1");
  CHECK_FALSE(reader.Get("/pods/b")->has_value());
  revs = MustReadChanges(reader, Revision(4));
  REQUIRE(revs.size() == 2);
  CHECK(revs[0]->writer == "status");
  CHECK(revs[1]->changes[0].type == ChangeType::kDelete);

  // WaitForRevision polls the writer.
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    writer->Put("/pods/d", "d1").value();
  });
  CHECK(reader.WaitForRevision(Revision(6), std::chrono::steady_clock::now() +
                                                std::chrono::seconds(5)) == Revision(6));
  later.join();
  CHECK((*reader.Get("/pods/d"))->value == "d1");
}

TEST_CASE("a read-only open of a directory without a log is NotFound and creates nothing") {
  TempDir dir;
  const std::string missing = dir.path() + "/nothing";
  auto r = OpenLogReadOnly(missing);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kNotFound);
  CHECK(r.status().message().find("no event log here") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(missing));
  auto empty = OpenLogReadOnly(dir.path());
  CHECK(empty.status().code() == Code::kNotFound);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("a read-only open works after the writer closed and never takes its lock") {
  TempDir dir;
  {
    auto writer = MustOpen(TestOptions(dir.path()));
    MustPut(*writer, "/k", "v");
  }
  auto reader = OpenLogReadOnly(dir.path());
  REQUIRE(reader.ok());
  CHECK((*(*reader)->Get("/k"))->value == "v");
  // The writer can open (and lock) the directory while a reader has it.
  auto writer = MustOpen(TestOptions(dir.path()));
  MustPut(*writer, "/k", "v2");
  CHECK((*(*reader)->Get("/k"))->value == "v2");
}

}  // namespace
}  // namespace podflow
