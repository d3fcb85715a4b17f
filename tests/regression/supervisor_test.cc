// kill -9 of the supervising `podflow run` (one process per stage) orphaned
// all seven stage processes; the next `podflow run` then failed with
// "Address already in use" and a bare RocksDB LOCK error. Children now die
// with their supervisor, and a start that finds the data dir locked names
// the process holding it.
#include <sys/prctl.h>

#include <cerrno>
#include <cstdio>
#include <set>

#include <catch2/catch.hpp>

#include "pipeline_fixture.h"

namespace podflow::e2e {
namespace {

// The pids whose parent is `parent` (from /proc/PID/stat).
std::set<pid_t> ChildrenOf(pid_t parent) {
  std::set<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      out.insert(static_cast<pid_t>(std::stoi(name)));
    }
  }
  return out;
}

// Reaps each of `pids` (orphans come to this process, a subreaper) within
// `timeout`; returns those still running, after killing them.
std::set<pid_t> ReapOrKill(std::set<pid_t> pids, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pids.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto it = pids.begin(); it != pids.end();) {
      int status = 0;
      it = waitpid(*it, &status, WNOHANG) == *it ? pids.erase(it) : std::next(it);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (pid_t pid : pids) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  return pids;
}

TEST_CASE("supervisor: kill -9 of podflow run takes its stage processes with it; the next run starts") {
  // Orphans are reparented here instead of to init, so the test can reap them.
  REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  Pipeline p(/*multi_process=*/true);
  pid_t run = p.StartSupervised();
  std::set<pid_t> stages = ChildrenOf(run);
  REQUIRE(stages.size() == Pipeline::Stages().size());

  kill(run, SIGKILL);
  waitpid(run, nullptr, 0);
  p.Forget("podflow");
  INFO(p.Logs());
  CHECK(ReapOrKill(stages, std::chrono::seconds(15)).empty());

  // Nothing was left holding the sockets or the data dir.
  pid_t again = p.StartSupervised();
  CHECK(ChildrenOf(again).size() == Pipeline::Stages().size());
  REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 0) == 0);
}

TEST_CASE("supervisor: a start on a data dir in use names the process holding it") {
  Pipeline p(/*multi_process=*/false);
  pid_t run = p.StartSupervised();
  auto [code, output] = RunCommand({Pipeline::Program("podflow"), "run", "--config", p.config()},
                                   p.dir());
  INFO(output);
  CHECK(code == 1);
  CHECK(output.find("is in use by pid " + std::to_string(run) + " (") != std::string::npos);
  CHECK(output.find("podflow run --config") != std::string::npos);
  // The refused start took nothing from the running pipeline (its sockets).
  auto created = p.Submit(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: still-served}\n"
      "spec:\n  containers: [{name: c, image: \"nginx:1.14.2\"}]\n");
  REQUIRE(created.size() == 1);
  INFO(created[0].first << ": " << created[0].second);
  CHECK(created[0].first.empty());
}

}  // namespace
}  // namespace podflow::e2e
