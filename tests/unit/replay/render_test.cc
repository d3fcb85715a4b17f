// Printing: aligned tables with a header, and JSON / YAML that parse back
// with the fields the tool promises.
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "replay/replay.h"
#include "replay_test_util.h"

namespace podflow::replay {
namespace {

using testing::HistoryLog;
using testing::kNginxKey;
using testing::kT0;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST_CASE("the events table has a header and aligned columns") {
  HistoryLog h;
  auto events = ListEvents(*h.log, EventQuery{});
  REQUIRE(events.ok());
  const auto lines = Lines(RenderEvents(*events, Output::kTable));
  REQUIRE(lines.size() == 1 + events->size());
  CHECK(lines[0].starts_with("REVISION   TYPE       KEY "));
  const size_t key_col = lines[0].find("KEY");
  const size_t writer_col = lines[0].find("WRITER");
  const size_t summary_col = lines[0].find("SUMMARY");
  for (size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    const bool key_aligned = lines[i].compare(key_col, 10, "/registry/") == 0 ||
                             lines[i].compare(key_col, 9, "/podflow/") == 0;
    CHECK(key_aligned);
    CHECK(lines[i][writer_col - 1] == ' ');
    CHECK(lines[i][summary_col - 1] == ' ');
  }
  CHECK(lines[2].starts_with("3          ADDED      /registry/pods/default/nginx"));
  CHECK(lines[2].substr(writer_col).starts_with("admission"));
  CHECK(lines[2].substr(summary_col) == "phase=Pending node=<none>");
}

TEST_CASE(
    "events as JSON: one array of {revision, type, key, writer, committed_at_ms, summary, "
    "object}") {
  HistoryLog h;
  auto events = ListEvents(*h.log, EventQuery{Revision(3), Revision(8), "/registry/pods/"});
  REQUIRE(events.ok());
  const std::string json = RenderEvents(*events, Output::kJson);
  YAML::Node doc = YAML::Load(json);
  REQUIRE(doc.IsSequence());
  REQUIRE(doc.size() == 5);
  CHECK(doc[0]["revision"].as<int64_t>() == 3);
  CHECK(doc[0]["type"].as<std::string>() == "ADDED");
  CHECK(doc[0]["key"].as<std::string>() == kNginxKey);
  CHECK(doc[0]["writer"].as<std::string>() == "admission");
  CHECK(doc[0]["committed_at_ms"].as<int64_t>() == kT0);
  CHECK(doc[0]["summary"].as<std::string>() == "phase=Pending node=<none>");
  CHECK(doc[0]["object"]["kind"].as<std::string>() == "Pod");
  CHECK(doc[0]["object"]["metadata"]["name"].as<std::string>() == "nginx");
  CHECK(doc[1]["object"]["spec"]["nodeName"].as<std::string>() == "node-2");
  CHECK(doc[2]["object"]["status"]["podIP"].as<std::string>() == "10.244.1.5");
  CHECK(doc[4]["type"].as<std::string>() == "DELETED");
  CHECK(doc[4]["object"].IsNull());
  // YAML renders the same document.
  YAML::Node yaml = YAML::Load(RenderEvents(*events, Output::kYaml));
  REQUIRE(yaml.IsSequence());
  CHECK(yaml.size() == 5);
  CHECK(yaml[3]["writer"].as<std::string>() == "admission");
}

TEST_CASE("the state at a revision: a table, or a List of the full objects") {
  HistoryLog h;
  auto state = StateAt(*h.log, Revision(7));
  REQUIRE(state.ok());
  const auto lines = Lines(RenderState(*state, Output::kTable));
  REQUIRE(lines.size() == 5);  // header, event, node, nginx, web
  CHECK(lines[0].starts_with("KEY "));
  CHECK(lines[0].find("REVISION") != std::string::npos);
  CHECK(lines[3].starts_with(kNginxKey));
  INFO(lines[3]);
  CHECK(lines[3].ends_with("6          phase=Running node=node-2 ip=10.244.1.5"));

  for (Output out : {Output::kJson, Output::kYaml}) {
    YAML::Node doc = YAML::Load(RenderState(*state, out));
    CHECK(doc["kind"].as<std::string>() == "List");
    CHECK(doc["metadata"]["resourceVersion"].as<std::string>() == "7");
    REQUIRE(doc["items"].size() == 4);
    CHECK(doc["items"][0]["kind"].as<std::string>() == "Event");
    CHECK(doc["items"][1]["kind"].as<std::string>() == "Node");
    CHECK(doc["items"][2]["status"]["phase"].as<std::string>() == "Running");
    CHECK(doc["items"][3]["metadata"]["name"].as<std::string>() == "web");
  }
}

TEST_CASE("the timeline table shows times, writers and one changed field per line") {
  HistoryLog h;
  auto t = BuildPodTimeline(*h.log, "default", "nginx");
  REQUIRE(t.ok());
  const auto lines = Lines(RenderTimeline(*t, Output::kTable));
  REQUIRE(lines.size() == 6);  // header, 3, 4, 5, 6, 6's second field
  CHECK(lines[0].starts_with("REVISION   TIME    WRITER       TYPE       CHANGE"));
  CHECK(lines[1] == "3          +0ms    admission    ADDED      phase=Pending node=<none>");
  CHECK(lines[2] ==
        "4          +12ms   binding      MODIFIED   spec.nodeName: <none> -> \"node-2\"");
  CHECK(lines[3] ==
        "5          +13ms   scheduling   EVENT      Normal Scheduled: Successfully "
        "assigned default/nginx to node-2");
  CHECK(lines[4] ==
        "6          +40ms   status       MODIFIED   status.phase: \"Pending\" -> "
        "\"Running\"");
  const size_t change_col = lines[0].find("CHANGE");
  CHECK(lines[5] == std::string(change_col, ' ') + "status.podIP: <none> -> \"10.244.1.5\"");

  YAML::Node doc = YAML::Load(RenderTimeline(*t, Output::kJson));
  CHECK(doc["pod"].as<std::string>() == "default/nginx");
  REQUIRE(doc["entries"].size() == 4);
  CHECK(doc["entries"][1]["writer"].as<std::string>() == "binding");
  CHECK(doc["entries"][1]["since_creation_ms"].as<int64_t>() == 12);
  CHECK(doc["entries"][1]["changes"][0]["path"].as<std::string>() == "spec.nodeName");
  CHECK(doc["entries"][1]["changes"][0]["to"].as<std::string>() == "\"node-2\"");
  CHECK(doc["entries"][2]["event"].as<bool>());
  CHECK(doc["entries"][3]["changes"].size() == 2);
}

}  // namespace
}  // namespace podflow::replay
