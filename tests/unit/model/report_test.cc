// The runtime -> status report: merging one advance's reports, and the
// Verifier in front of the frame decoder. (That a runner's real report
// survives the frame is checked with the runtime's tests.)
#include "model/report.h"

#include "messages_generated.h"

#include <catch2/catch.hpp>

namespace podflow::model {
namespace {

TEST_CASE("reports of one pod from one advance merge: last status, every event in order") {
  auto report = [](std::string key, std::string uid, int64_t rev, api::PodPhase phase,
                   std::vector<std::string> reasons) {
    Report r;
    r.node_name = "node-1";
    r.pod_key = std::move(key);
    r.pod_uid = std::move(uid);
    r.observed_mod_revision = rev;
    r.status.phase = phase;
    for (auto& reason : reasons) r.events.push_back(ReportEvent{"Normal", reason, "", "", ""});
    return r;
  };
  std::vector<Report> reports;
  reports.push_back(report("/a", "ua", 5, api::PodPhase::Pending, {"Pulling"}));
  reports.push_back(report("/b", "ub", 7, api::PodPhase::Pending, {}));
  reports.push_back(report("/a", "ua", 6, api::PodPhase::Running, {"Pulled", "Created", "Started"}));
  reports.push_back(report("/b", "ub2", 9, api::PodPhase::Running, {"Started"}));  // re-created under the name
  CoalesceReports(reports);
  REQUIRE(reports.size() == 3);
  CHECK(reports[0].pod_key == "/a");
  CHECK(reports[0].status.phase == api::PodPhase::Running);
  CHECK(reports[0].observed_mod_revision == 6);
  std::vector<std::string> reasons;
  for (const ReportEvent& e : reports[0].events) reasons.push_back(e.reason);
  CHECK(reasons == std::vector<std::string>{"Pulling", "Pulled", "Created", "Started"});
  CHECK(reports[1].pod_uid == "ub");
  CHECK(reports[1].status.phase == api::PodPhase::Pending);
  CHECK(reports[2].pod_uid == "ub2");
}

TEST_CASE("the Verifier rejects a garbled report frame") {
  Report report;
  report.node_name = "node-1";
  report.pod_key = "/registry/pods/default/a";
  report.events.push_back(
      {"Normal", "Pulling", "Pulling image \"nginx\"", "2024-05-01T12:00:00Z", ""});
  const std::vector<Report> one = {report};
  std::string frame = EncodeReports(one);

  SECTION("intact") {
    Result<std::vector<Report>> r = DecodeReports(frame);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 1);
    CHECK((*r)[0].events == report.events);
  }
  SECTION("truncated") {
    Result<std::vector<Report>> r = DecodeReports(std::string_view(frame).substr(0, frame.size() / 2));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kCorruption);
  }
  SECTION("root offset pointing outside the buffer") {
    frame[0] = '\xff';
    frame[1] = '\xff';
    Result<std::vector<Report>> r = DecodeReports(frame);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kCorruption);
  }
  SECTION("empty") { CHECK(DecodeReports("").status().code() == Code::kCorruption); }
}

TEST_CASE("a frame of several reports reads back in order; a single Report frame reads as one") {
  std::vector<Report> reports(3);
  for (size_t i = 0; i < reports.size(); ++i) {
    reports[i].pod_key = "/registry/pods/default/p" + std::to_string(i);
    reports[i].pod_uid = "u" + std::to_string(i);
    reports[i].observed_mod_revision = static_cast<int64_t>(10 + i);
  }
  Result<std::vector<Report>> back = DecodeReports(EncodeReports(reports));
  REQUIRE(back.ok());
  REQUIRE(back->size() == 3);
  for (size_t i = 0; i < reports.size(); ++i) {
    CHECK((*back)[i].pod_key == reports[i].pod_key);
    CHECK((*back)[i].observed_mod_revision == reports[i].observed_mod_revision);
  }

  flatbuffers::FlatBufferBuilder fbb;
  auto single = msg::CreateReportDirect(fbb, "node-1", "/registry/pods/default/a", "ua", 4);
  fbb.Finish(msg::CreateEnvelope(fbb, msg::Body::Report, single.Union()));
  back = DecodeReports(std::string_view(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()));
  REQUIRE(back.ok());
  REQUIRE(back->size() == 1);
  CHECK((*back)[0].pod_uid == "ua");

  flatbuffers::FlatBufferBuilder other;
  other.Finish(msg::CreateEnvelope(other, msg::Body::StreamCredit, msg::CreateStreamCredit(other).Union()));
  back = DecodeReports(std::string_view(reinterpret_cast<const char*>(other.GetBufferPointer()), other.GetSize()));
  REQUIRE_FALSE(back.ok());
  CHECK(back.status().code() == Code::kInvalid);
}

}  // namespace
}  // namespace podflow::model
