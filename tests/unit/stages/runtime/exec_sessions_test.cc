// `podflow exec`'s commands beside a real container of the process engine:
// output, stdin, exit codes, the container's env, working dir, namespaces
// and a terminal; sessions only their owner reaches; idle ones killed.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "stages/runtime/process/exec_sessions.h"
#include "stages/runtime/process/process_engine.h"

namespace podflow::runtime::process {
namespace {
namespace fs = std::filesystem;

using namespace std::chrono_literals;

// A container (`sleep 60` as "web-0") on an engine of its own, and a target
// beside it.
struct Container {
  fs::path logs;
  std::optional<ProcessEngine> engine;
  ProcessId id = 0;

  Container() {
    char tmpl[] = "/tmp/podflow-exec-XXXXXX";
    logs = ::mkdtemp(tmpl);
    engine.emplace(EngineOptions{.log_root = logs.string(), .owner = "exec-test-" + std::to_string(::getpid())});
    ContainerLaunch launch;
    launch.pod_key = "/registry/pods/default/web-0";
    launch.log_dir = "default_web-0_uid/app";
    launch.argv = {"sleep", "60"};
    launch.env = {{"PATH", "/usr/bin:/bin"}};
    launch.hostname = "web-0";
    // /tmp as the machine's, where the tests look for what commands write.
    launch.mounts = {{"/tmp", "", "/tmp", false}};
    Result<ProcessId> started = engine->Launch(launch);
    INFO(started.status().message());
    REQUIRE(started.ok());
    id = *started;
  }
  ~Container() {
    engine.reset();
    fs::remove_all(logs);
  }
  ExecTarget Target(EnvList env = {{"PATH", "/usr/bin:/bin"}, {"GREETING", "hello"}}, std::string dir = "") {
    Result<ExecTarget> target = engine->ExecTargetOf(id);
    REQUIRE(target.ok());
    target->env = std::move(env);
    target->working_dir = std::move(dir);
    return std::move(*target);
  }
};

ExecCommand Command(std::vector<std::string> argv, bool with_stdin = false, bool tty = false) {
  ExecCommand c;
  c.argv = std::move(argv);
  c.with_stdin = with_stdin;
  c.tty = tty;
  c.owner = "/registry/pods/default/web-0\nalice";
  return c;
}

// Turns the session until its command has ended (at most ~10 s); the first
// turn carries `input`.
ExecChunk RunToEnd(ExecSessions& sessions, const std::string& id, ExecTurn first = {},
                   const std::string& owner = "/registry/pods/default/web-0\nalice") {
  ExecChunk all;
  ExecTurn turn = std::move(first);
  for (int i = 0; i < 200 && !all.exited; ++i) {
    Result<ExecChunk> got = sessions.Turn(id, owner, turn, 50ms);
    REQUIRE(got.ok());
    all.out += got->out;
    all.err += got->err;
    all.exited = got->exited;
    all.exit_code = got->exit_code;
    turn = {};
  }
  REQUIRE(all.exited);
  return all;
}

}  // namespace

TEST_CASE("exec: a command's stdout, stderr and exit code come back, with the container's env and working dir") {
  Container c;
  ExecSessions sessions;
  Result<std::string> id =
      sessions.Start(c.Target({{"PATH", "/usr/bin:/bin"}, {"GREETING", "hello"}}, "/tmp"),
                     Command({"sh", "-c", "echo $GREETING from $(pwd); echo oops >&2; exit 3"}));
  REQUIRE(id.ok());
  const ExecChunk done = RunToEnd(sessions, *id);
  CHECK(done.out == "hello from /tmp\n");
  CHECK(done.err == "oops\n");
  CHECK(done.exit_code == 3);
  // Ended and taken: the session is gone.
  CHECK(sessions.size() == 0);
  CHECK(sessions.Turn(*id, "/registry/pods/default/web-0\nalice", {}, 0ms).status().code() == Code::kNotFound);
}

TEST_CASE("exec: stdin reaches the command and its end closes the command's stdin") {
  Container c;
  ExecSessions sessions;
  Result<std::string> id = sessions.Start(c.Target(), Command({"sh", "-c", "cat; echo done"}, /*with_stdin=*/true));
  REQUIRE(id.ok());
  // Input in two turns, the second one closing it.
  Result<ExecChunk> first = sessions.Turn(*id, "/registry/pods/default/web-0\nalice", {.input = "one\n"}, 200ms);
  REQUIRE(first.ok());
  CHECK_FALSE(first->exited);
  const ExecChunk rest = RunToEnd(sessions, *id, {.input = "two\n", .close_stdin = true});
  CHECK(first->out + rest.out == "one\ntwo\ndone\n");
  CHECK(rest.exit_code == 0);
}

TEST_CASE("exec: a command killed by a signal exits with 128 + the signal") {
  Container c;
  ExecSessions sessions;
  Result<std::string> id = sessions.Start(c.Target(), Command({"sh", "-c", "kill -9 $$"}));
  REQUIRE(id.ok());
  CHECK(RunToEnd(sessions, *id).exit_code == 137);
}

TEST_CASE("exec: as root the command is in the container's PID and UTS namespaces") {
  Container c;
  if (!c.engine->isolated()) {
    WARN("skipped: " + c.engine->limitations().front());
    return;
  }
  ExecSessions sessions;
  Result<std::string> id =
      sessions.Start(c.Target(), Command({"sh", "-c", "hostname; tr '\\0' ' ' < /proc/1/cmdline; echo; echo $$"}));
  REQUIRE(id.ok());
  const ExecChunk done = RunToEnd(sessions, *id);
  // The container's sleep is PID 1 of the namespace the command sees.
  CHECK(done.out.starts_with("web-0\nsleep 60 \n"));
  const std::string own_pid = done.out.substr(done.out.rfind('\n', done.out.size() - 2) + 1);
  CHECK(std::stoi(own_pid) > 1);
  CHECK(std::stoi(own_pid) < 100);  // a pid of the container's namespace, not of this machine's
  CHECK(done.exit_code == 0);
}

TEST_CASE("exec: with tty the command has a terminal of its own, of the caller's size") {
  Container c;
  ExecSessions sessions;
  ExecCommand command = Command({"sh", "-c", "tty; stty size; echo $TERM"}, /*with_stdin=*/true, /*tty=*/true);
  command.rows = 40;
  command.cols = 100;
  Result<std::string> id = sessions.Start(c.Target(), command);
  REQUIRE(id.ok());
  const ExecChunk done = RunToEnd(sessions, *id);
  CHECK(done.out.starts_with("/dev/pts/"));
  // A terminal ends lines with CR LF; everything comes on one stream.
  CHECK(done.out.find("\r\n40 100\r\nxterm\r\n") != std::string::npos);
  CHECK(done.err.empty());
  CHECK(done.exit_code == 0);
}

TEST_CASE("exec: a command that cannot start is refused in the runtime's words") {
  Container c;
  ExecSessions sessions;
  Result<std::string> id = sessions.Start(c.Target(), Command({"no-such-command"}));
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().code() == Code::kInvalid);
  CHECK_THAT(id.status().message(),
             Catch::Matches("failed to start exec \"[0-9a-f]{64}\": OCI runtime exec failed: exec failed: unable to "
                            "start container process: exec: \"no-such-command\": executable file not found in "
                            "\\$PATH: unknown"));
  CHECK(sessions.size() == 0);
}

TEST_CASE("exec: a session answers only its owner, and one nobody turns is killed") {
  Container c;
  ExecSessions sessions(1s);
  Result<std::string> id = sessions.Start(c.Target(), Command({"sleep", "30"}));
  REQUIRE(id.ok());
  CHECK(sessions.Turn(*id, "/registry/pods/default/web-0\nmallory", {}, 0ms).status().code() == Code::kNotFound);
  CHECK(sessions.Turn("no-such-session", "/registry/pods/default/web-0\nalice", {}, 0ms).status().code() ==
        Code::kNotFound);
  Result<ExecChunk> running = sessions.Turn(*id, "/registry/pods/default/web-0\nalice", {}, 0ms);
  REQUIRE(running.ok());
  CHECK_FALSE(running->exited);
  std::this_thread::sleep_for(2500ms);
  // Found idle (by the sweeper, or this call at the latest): killed and forgotten.
  CHECK(sessions.Turn(*id, "/registry/pods/default/web-0\nalice", {}, 0ms).status().code() == Code::kNotFound);
  CHECK(sessions.size() == 0);
}

TEST_CASE("exec: a command's end is reaped at once, so that its container's end is not held up") {
  Container c;
  if (!c.engine->isolated()) {
    WARN("skipped: " + c.engine->limitations().front());
    return;
  }
  ExecSessions sessions;
  // It ends and nobody turns the session: a zombie in the container's PID
  // namespace would keep the container from ending until the idle kill (60 s).
  Result<std::string> id = sessions.Start(c.Target(), Command({"true"}));
  REQUIRE(id.ok());
  std::this_thread::sleep_for(300ms);
  c.engine->Signal(c.id, SIGKILL);
  bool ended = false;
  for (int i = 0; i < 500 && !ended; ++i) {
    ended = !c.engine->TakeExits().empty();
    if (!ended) std::this_thread::sleep_for(10ms);
  }
  CHECK(ended);
  // Its exit code is still the session's to tell.
  Result<ExecChunk> last = sessions.Turn(*id, "/registry/pods/default/web-0\nalice", {}, 0ms);
  REQUIRE(last.ok());
  CHECK(last->exited);
  CHECK(last->exit_code == 0);
}

TEST_CASE("exec: what a command leaves running lives on in the container's namespace, and is killed outside of one") {
  Container c;
  ExecSessions sessions;
  char tmpl[] = "/tmp/podflow-exec-bg-XXXXXX";
  const std::string marker = std::string(::mkdtemp(tmpl)) + "/alive";
  // A background loop that touches the marker every 50 ms, left behind.
  Result<std::string> id = sessions.Start(
      c.Target(), Command({"sh", "-c", "(while true; do touch " + marker + "; sleep 0.05; done) >/dev/null 2>&1 & exit 0"}));
  REQUIRE(id.ok());
  CHECK(RunToEnd(sessions, *id).exit_code == 0);
  std::filesystem::remove(marker);
  // Beside a container with its own PID namespace it runs on (until the
  // container ends); without one nothing would contain it, so it is killed.
  bool touched = false;
  for (int i = 0; i < 40 && !touched; ++i) {
    std::this_thread::sleep_for(50ms);
    touched = std::filesystem::exists(marker);
  }
  CHECK(touched == c.engine->isolated());
  c.engine.reset();  // the container ends, and with it what it held
  std::filesystem::remove(marker);
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(std::filesystem::exists(marker));
  std::filesystem::remove_all(std::filesystem::path(marker).parent_path());
}

TEST_CASE("exec: a container that has ended cannot be joined") {
  Container c;
  c.engine->Signal(c.id, SIGKILL);
  for (int i = 0; i < 500; ++i) {
    if (!c.engine->TakeExits().empty()) break;
    std::this_thread::sleep_for(10ms);
  }
  CHECK(c.engine->ExecTargetOf(c.id).status().code() == Code::kNotFound);
}

}  // namespace podflow::runtime::process
