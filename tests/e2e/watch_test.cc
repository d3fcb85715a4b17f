// The API's watches on a real pipeline, as kube-apiserver streams them:
// what a selection sees (objects entering and leaving it), bookmarks,
// timeouts, the 410 of a compacted revision, RBAC's watch verb, and
// `podflow get -w` printing changes as kubectl does.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "cli/api_session.h"
#include "model/objects.h"
#include "pipeline_fixture.h"

namespace podflow::e2e {
namespace {

using namespace std::chrono_literals;
using cli::ApiCall;
using cli::ApiSession;
using cli::ApiWatchEvent;
using cli::ApiWatchStream;

std::unique_ptr<ApiSession> Session(Pipeline& pipeline, const std::string& token = "e2e-token") {
  cli::ToolEndpoints endpoints;
  endpoints.submit = pipeline.Endpoint("submit");
  endpoints.apiwatch = pipeline.Endpoint("apiwatch");
  endpoints.token = token;
  endpoints.data_dir = pipeline.data_dir();
  auto session = ApiSession::Open(endpoints);
  REQUIRE(session.ok());
  return std::move(*session);
}

std::string ConfigMap(const std::string& name, const std::string& app, const std::string& value) {
  return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", labels: {app: " + app +
         "}}\ndata: {k: \"" + value + "\"}\n";
}

// A change through the API, which must succeed.
void Call(ApiSession& api, const std::string& verb, const std::string& name, const std::string& body = "",
          const std::string& patch_type = "") {
  ApiCall call;
  call.verb = verb;
  call.resource = "configmaps";
  call.namespace_ = "default";
  call.name = verb == "create" ? "" : name;
  call.body = body;
  call.patch_type = patch_type;
  auto reply = api.Call(call);
  REQUIRE(reply.ok());
  INFO(verb << " " << name << ": " << reply->status.message);
  REQUIRE(reply->status.success());
}

// The next `n` events other than bookmarks (waiting up to 10 s), and
// whether the watch said it ended.
std::vector<ApiWatchEvent> NextEvents(ApiWatchStream& watch, size_t n, bool* ended = nullptr) {
  std::vector<ApiWatchEvent> out;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
    auto frame = watch.Next(200ms);
    REQUIRE(frame.ok());
    if (!frame->has_value()) continue;
    for (ApiWatchEvent& e : (*frame)->events) {
      if (e.type != "BOOKMARK") out.push_back(std::move(e));
    }
    if ((*frame)->end) {
      if (ended != nullptr) *ended = true;
      break;
    }
  }
  return out;
}

// A watch of `resource` in the default namespace.
ApiCall WatchOf(const std::string& resource) {
  ApiCall call;
  call.resource = resource;
  call.namespace_ = "default";
  return call;
}

std::string NameOf(const ApiWatchEvent& e) { return e.object.key.substr(e.object.key.rfind('/') + 1); }

std::string LabelOf(const ApiWatchEvent& e) {
  auto cm = model::Unpack<api::ConfigMap>(e.object.value);
  return cm->metadata->labels.empty() ? "" : cm->metadata->labels[0]->value;
}

TEST_CASE("The API's watch: a selection's view, bookmarks, a timeout, RBAC and a compacted revision", "[e2e]") {
  Pipeline pipeline(false, "compactionInterval: 1s");
  pipeline.StartAll();
  auto api = Session(pipeline);
  Call(*api, "create", "one", ConfigMap("one", "web", "1"));
  Call(*api, "create", "two", ConfigMap("two", "other", "1"));

  SECTION("from the current objects: ADDED first, then each change as the selector sees it") {
    ApiCall call = WatchOf("configmaps");
    call.label_selector = "app=web";
    auto watch = api->Watch(call);
    REQUIRE(watch.ok());
    std::vector<ApiWatchEvent> first = NextEvents(**watch, 1);
    REQUIRE(first.size() == 1);
    CHECK(first[0].type == "ADDED");
    CHECK(NameOf(first[0]) == "one");

    Call(*api, "patch", "one", R"({"data":{"k":"2"}})", "merge");
    Call(*api, "patch", "two", R"({"metadata":{"labels":{"app":"web"}}})", "merge");
    Call(*api, "patch", "one", R"({"metadata":{"labels":{"app":"db"}}})", "merge");
    Call(*api, "delete", "two");
    std::vector<ApiWatchEvent> events = NextEvents(**watch, 4);
    REQUIRE(events.size() == 4);
    CHECK(events[0].type == "MODIFIED");
    CHECK(NameOf(events[0]) == "one");
    CHECK(events[1].type == "ADDED");  // entered the selection
    CHECK(NameOf(events[1]) == "two");
    CHECK(events[2].type == "DELETED");  // left it: as it last was, at the revision it left
    CHECK(NameOf(events[2]) == "one");
    CHECK(LabelOf(events[2]) == "web");
    CHECK(events[2].object.mod_revision > events[1].object.mod_revision);
    CHECK(events[3].type == "DELETED");
    CHECK(NameOf(events[3]) == "two");
    for (size_t i = 1; i < events.size(); ++i) CHECK(events[i].object.mod_revision > events[i - 1].object.mod_revision);
  }

  SECTION("from a resourceVersion: only what came after it; bookmarks while idle; the timeout ends it cleanly") {
    ApiCall get;
    get.verb = "get";
    get.resource = "configmaps";
    get.namespace_ = "default";
    get.name = "one";
    auto got = api->Call(get);
    REQUIRE(got.ok());
    REQUIRE(got->status.success());
    ApiCall call = WatchOf("configmaps");
    call.name = "one";
    call.resource_version = std::to_string(got->revision);
    call.allow_watch_bookmarks = true;
    call.timeout_seconds = 3;
    auto watch = api->Watch(call);
    REQUIRE(watch.ok());
    Call(*api, "patch", "two", R"({"data":{"k":"9"}})", "merge");  // another object: not seen
    Call(*api, "patch", "one", R"({"data":{"k":"3"}})", "merge");
    std::vector<ApiWatchEvent> seen;
    bool bookmark = false;
    bool ended = false;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!ended && std::chrono::steady_clock::now() < deadline) {
      auto frame = (*watch)->Next(200ms);
      REQUIRE(frame.ok());
      if (!frame->has_value()) continue;
      for (ApiWatchEvent& e : (*frame)->events) {
        if (e.type == "BOOKMARK") {
          bookmark = true;
          CHECK(e.object.key.empty());
          CHECK(e.object.mod_revision.value() >= got->revision);
        } else {
          seen.push_back(std::move(e));
        }
      }
      ended = (*frame)->end;
    }
    CHECK(ended);
    CHECK(bookmark);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].type == "MODIFIED");
    CHECK(NameOf(seen[0]) == "one");
  }

  SECTION("a revision compacted away: 410 Expired in kube-apiserver's words") {
    // The compactor keeps one interval (1s) of history: write, wait more.
    Call(*api, "patch", "one", R"({"data":{"k":"4"}})", "merge");
    std::this_thread::sleep_for(3500ms);
    // kubectl watches one object from "0", not from the revision it read
    // (gone by now): the object once, then nothing, and no error.
    {
      auto [code, out] = pipeline.Podflow({"get", "configmap", "one", "-w", "--request-timeout", "1"});
      INFO(out);
      CHECK(code == 0);
      CHECK(out.starts_with("NAME   DATA   AGE\none    1      "));
      CHECK(std::count(out.begin(), out.end(), '\n') == 2);
    }
    Call(*api, "patch", "one", R"({"data":{"k":"5"}})", "merge");
    ApiCall call = WatchOf("configmaps");
    call.resource_version = "1";
    auto watch = api->Watch(call);
    REQUIRE(watch.ok());
    bool ended = false;
    std::vector<ApiWatchEvent> events = NextEvents(**watch, 1, &ended);
    REQUIRE(events.size() == 1);
    CHECK(ended);
    CHECK(events[0].type == "ERROR");
    CHECK(events[0].status.code == 410);
    CHECK(events[0].status.reason == "Expired");
    CHECK(events[0].status.message.starts_with("too old resource version: 1 ("));
  }

  SECTION("RBAC decides the watch verb; a bad resourceVersion is refused") {
    auto viewer = Session(pipeline, "viewer-token");
    ApiCall call = WatchOf("pods");
    auto watch = viewer->Watch(call);
    REQUIRE(watch.ok());
    std::vector<ApiWatchEvent> events = NextEvents(**watch, 1);
    REQUIRE(events.size() == 1);
    CHECK(events[0].type == "ERROR");
    CHECK(events[0].status.code == 403);
    CHECK(events[0].status.message ==
          "pods is forbidden: User \"viewer\" cannot watch resource \"pods\" in API group \"\" in the namespace "
          "\"default\"");
    call.resource_version = "abc";
    auto bad = api->Watch(call);
    REQUIRE(bad.ok());
    events = NextEvents(**bad, 1);
    REQUIRE(events.size() == 1);
    CHECK(events[0].status.code == 400);
    CHECK(events[0].status.message.find("resourceVersion: Invalid value: \"abc\"") != std::string::npos);
  }
  pipeline.StopAll();
}

TEST_CASE("podflow get -w lists, then prints each change; --output-watch-events names it", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  auto api = Session(pipeline);
  Call(*api, "create", "settings", ConfigMap("settings", "web", "0"));
  std::pair<int, std::string> watched;
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    watched = pipeline.Podflow(
        {"get", "configmaps", "-l", "app=web", "-w", "--output-watch-events", "--request-timeout", "3s"});
    done = true;
  });
  // Changes until the watch ends: some land after it started, whenever
  // that was.
  for (int i = 1; !done && i < 100; ++i) {
    Call(*api, "patch", "settings", R"({"data":{"k":")" + std::to_string(i) + R"("}})", "merge");
    std::this_thread::sleep_for(200ms);
  }
  watcher.join();
  const auto& [code, out] = watched;
  INFO(out);
  CHECK(code == 0);
  // The header once; the listed object as ADDED; every change a row of its
  // own in the columns of the rows before, EVENT widened for MODIFIED (as
  // kubectl's watch writer remembers widths).
  std::vector<std::string> lines;
  for (size_t at = 0; at < out.size();) {
    const size_t end = out.find('\n', at);
    lines.push_back(out.substr(at, end - at));
    at = end == std::string::npos ? out.size() : end + 1;
  }
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0] == "EVENT   NAME       DATA   AGE");
  CHECK(lines[1].starts_with("ADDED   settings   1      "));
  for (size_t i = 2; i < lines.size(); ++i) {
    INFO(lines[i]);
    REQUIRE(lines[i].starts_with("MODIFIED   settings   1      "));
    const std::string age = lines[i].substr(std::string("MODIFIED   settings   1      ").size());
    CHECK((age.size() >= 2 && age.back() == 's' && std::isdigit(static_cast<unsigned char>(age[0]))));
  }
  {
    auto [one_code, one] = pipeline.Podflow({"get", "configmaps", "settings", "-w", "-o", "name", "--request-timeout", "1"});
    CHECK(one_code == 0);
    CHECK(one == "configmap/settings\n");
  }
  {
    auto [bad_code, bad] = pipeline.Podflow({"get", "configmaps", "a", "b", "-w"});
    CHECK(bad_code == 1);
    CHECK(bad == "error: watch is only supported on individual resources and resource collections, but 2 resources "
                 "were found\n");
  }
  pipeline.StopAll();
}

}  // namespace
}  // namespace podflow::e2e
