// A small recorded history for the replay tests: a node, a pod admitted,
// bound, started (with an Event about it), a second pod created and deleted,
// and a key of no known kind, each written by a named stage at a known time.
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "log_fixture.h"
#include "log/log.h"
#include "model/codec.h"
#include "replay/replay.h"

namespace podflow::testing {

// The FlatBuffer of the one object in a YAML manifest.
inline std::string Obj(const std::string& yaml) {
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  INFO((*docs)[0].status.ToString());
  REQUIRE((*docs)[0].status.ok());
  return (*docs)[0].object.bytes;
}

inline std::string PodYaml(const std::string& name, const std::string& node,
                           const std::string& phase, const std::string& ip) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                  "\n  namespace: default\nspec:\n  containers:\n  - name: nginx\n"
                  "    image: nginx:1.27\n";
  if (!node.empty()) y += "  nodeName: " + node + "\n";
  y += "status:\n  phase: " + phase + "\n";
  if (!ip.empty()) y += "  podIP: " + ip + "\n";
  return y;
}

inline const std::string kNodeKey = "/registry/nodes/node-2";
inline const std::string kNginxKey = "/registry/pods/default/nginx";
inline const std::string kWebKey = "/registry/pods/default/web";
inline const std::string kEventKey = "/registry/events/default/nginx.1";
inline const std::string kOtherKey = "/podflow/other";
inline constexpr int64_t kT0 = 1'700'000'000'000;

// Writes the history; returns nothing, the revisions are fixed:
//   2 node-2 ADDED (setup)        3 nginx ADDED (admission, t0)
//   4 nginx bound (binding, +12)  5 Event Scheduled (scheduling, +13)
//   6 nginx Running (status, +40) 7 web ADDED (admission)
//   8 web DELETED (gc)            9 /podflow/other (test)
inline void WriteHistory(EventLog& log, FakeWallClock& clock) {
  auto put = [&](const std::string& key, const std::string& value, const std::string& writer) {
    auto r = log.Put(key, value, std::nullopt, 0, {writer});
    REQUIRE(r.ok());
    REQUIRE(r->succeeded);
  };
  clock.now_ms = kT0 - 1000;
  put(kNodeKey,
      Obj("apiVersion: v1\nkind: Node\nmetadata:\n  name: node-2\nstatus:\n"
          "  capacity:\n    cpu: \"4\"\n    memory: 8Gi\n"
          "  conditions:\n  - type: Ready\n    status: \"True\"\n"),
      "setup");
  clock.now_ms = kT0;
  put(kNginxKey, Obj(PodYaml("nginx", "", "Pending", "")), "admission");
  clock.now_ms = kT0 + 12;
  put(kNginxKey, Obj(PodYaml("nginx", "node-2", "Pending", "")), "binding");
  clock.now_ms = kT0 + 13;
  put(kEventKey,
      Obj("apiVersion: v1\nkind: Event\nmetadata:\n  name: nginx.1\n"
          "  namespace: default\ninvolvedObject:\n  kind: Pod\n"
          "  namespace: default\n  name: nginx\nreason: Scheduled\n"
          "message: Successfully assigned default/nginx to node-2\ntype: Normal\n"),
      "scheduling");
  clock.now_ms = kT0 + 40;
  put(kNginxKey, Obj(PodYaml("nginx", "node-2", "Running", "10.244.1.5")), "status");
  clock.now_ms = kT0 + 50;
  put(kWebKey, Obj(PodYaml("web", "", "Pending", "")), "admission");
  clock.now_ms = kT0 + 60;
  REQUIRE(log.Delete(kWebKey, std::nullopt, {"gc"})->succeeded);
  clock.now_ms = kT0 + 70;
  put(kOtherKey, "abc", "test");
  REQUIRE(log.CurrentRevision() == Revision(9));
}

// A temp-dir log holding the history.
struct HistoryLog {
  TempDir dir;
  FakeWallClock clock;
  std::unique_ptr<EventLog> log;

  HistoryLog() {
    LogOptions options = TestOptions(dir.path());
    options.now_ms = clock.Fn();
    log = MustOpen(options);
    WriteHistory(*log, clock);
  }
};

}  // namespace podflow::testing

namespace Catch {
template <>
struct StringMaker<podflow::replay::FieldChange> {
  static std::string convert(const podflow::replay::FieldChange& c) {
    return "{" + c.path + ": " + c.before + " -> " + c.after + "}";
  }
};
template <>
struct StringMaker<std::pair<std::string, std::string>> {
  static std::string convert(const std::pair<std::string, std::string>& p) {
    return "{" + p.first + ", " + p.second + "}";
  }
};
}  // namespace Catch
