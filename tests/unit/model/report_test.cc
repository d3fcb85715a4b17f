// The runtime -> status report: merging one advance's reports, and the
// Verifier in front of the frame decoder. (That a runner's real report
// survives the frame is checked with the runtime's tests.)
#include "model/report.h"

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
  std::string frame = EncodeReport(report);

  SECTION("truncated") {
    Result<Report> r = DecodeReport(std::string_view(frame).substr(0, frame.size() / 2));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kCorruption);
  }
  SECTION("root offset pointing outside the buffer") {
    frame[0] = '\xff';
    frame[1] = '\xff';
    Result<Report> r = DecodeReport(frame);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kCorruption);
  }
  SECTION("empty") { CHECK(DecodeReport("").status().code() == Code::kCorruption); }
}

}  // namespace
}  // namespace podflow::model
