// The process runtime's engine on this machine: real processes, their exit
// codes, signals, log files (CRI format, rotation), memory and CPU limits.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <thread>

#include "stages/runtime/container_plan.h"
#include "free_port.h"
#include "temp_dir.h"
#include "stages/runtime/process/cri_log.h"
#include "stages/runtime/process/process_engine.h"
#include "stages/runtime/process/probes.h"

namespace podflow::runtime::process {
namespace {
namespace fs = std::filesystem;

// A scratch directory of the test's.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("podflow-engine") {}
};

ContainerLaunch Shell(const std::string& script, const std::string& log_dir = "default_p_uid/c") {
  ContainerLaunch l;
  l.pod_key = "/registry/pods/default/p";
  l.log_dir = log_dir;
  l.argv = {"sh", "-c", script};
  l.env = {{"PATH", "/usr/bin:/bin"}, {"GREETING", "hello"}};
  l.hostname = "p";
  return l;
}

// Waits (up to `tries` x 10 ms) for the exit of `id`.
std::optional<ContainerExit> AwaitExit(ProcessEngine& engine, ProcessId id, int tries = 1000) {
  for (int i = 0; i < tries; ++i) {
    for (ContainerExit& e : engine.TakeExits()) {
      if (e.id == id) return e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

std::vector<std::string> Texts(const std::vector<ContainerLogLine>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.text);
  return out;
}

}  // namespace

TEST_CASE("process engine: a command runs with its env and working dir, its output is its log, its exit code comes back") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  ContainerLaunch launch = Shell("echo $GREETING from $(pwd); echo oops >&2; exit 3");
  launch.working_dir = "/tmp";
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  const std::optional<ContainerExit> exit = AwaitExit(engine, *id);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 3);
  CHECK_FALSE(exit->oom_killed);
  CHECK(exit->pod_key == "/registry/pods/default/p");
  const std::vector<std::string> lines = Texts(engine.ReadLog("default_p_uid/c", 0));
  REQUIRE(lines.size() == 2);
  CHECK(std::count(lines.begin(), lines.end(), "hello from /tmp") == 1);
  CHECK(std::count(lines.begin(), lines.end(), "oops") == 1);
  // The file is the runtime's format: time, stream, tag, text.
  std::ifstream file(dir.dir() / "default_p_uid/c/0.log");
  std::string first;
  std::getline(file, first);
  CHECK(first.find(" stdout F hello from /tmp") != std::string::npos);
  CHECK(first.size() > 30);
  CHECK(first[first.find(' ') - 1] == 'Z');
}

TEST_CASE("process engine: a command that cannot start says why in the runtime's words") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  ContainerLaunch launch = Shell("");
  launch.argv = {"no-such-command-podflow"};
  Result<ProcessId> missing = engine.Launch(launch);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "exec: \"no-such-command-podflow\": executable file not found in $PATH");
  launch.argv = {"true"};
  launch.working_dir = "/no/such/dir";
  Result<ProcessId> no_dir = engine.Launch(launch);
  REQUIRE_FALSE(no_dir.ok());
  CHECK(no_dir.status().message() ==
        "chdir to cwd (\"/no/such/dir\") set in config.json failed: no such file or directory");
  launch.working_dir.clear();
  launch.argv = {"/no/such/binary"};
  CHECK(engine.Launch(launch).status().message() ==
        "exec: \"/no/such/binary\": stat /no/such/binary: no such file or directory");
  launch.argv.clear();
  CHECK(engine.Launch(launch).status().message() == "no command specified");
  CHECK(engine.TakeExits().empty());
}

TEST_CASE("process engine: SIGTERM is the command's to handle; SIGKILL ends it with 137") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  // A shell that traps TERM exits 0 on it.
  Result<ProcessId> polite = engine.Launch(Shell("trap 'echo bye; exit 0' TERM; echo up; while true; do sleep 0.05; done"));
  REQUIRE(polite.ok());
  for (int i = 0; i < 200 && engine.ReadLog("default_p_uid/c", 0).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  engine.Signal(*polite, SIGTERM);
  std::optional<ContainerExit> exit = AwaitExit(engine, *polite);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 0);
  CHECK(Texts(engine.ReadLog("default_p_uid/c", 0)) == std::vector<std::string>{"up", "bye"});

  ContainerLaunch stubborn = Shell("trap '' TERM; echo ready; sleep 30 & wait", "default_p_uid/d");
  Result<ProcessId> id = engine.Launch(stubborn);
  REQUIRE(id.ok());
  for (int i = 0; i < 200 && engine.ReadLog("default_p_uid/d", 0).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(Texts(engine.ReadLog("default_p_uid/d", 0)) == std::vector<std::string>{"ready"});
  engine.Signal(*id, SIGTERM);
  CHECK_FALSE(AwaitExit(engine, *id, 30).has_value());  // ignored
  engine.Signal(*id, SIGKILL);
  exit = AwaitExit(engine, *id);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 137);
  CHECK_FALSE(exit->oom_killed);
  engine.Signal(*id, SIGKILL);  // gone: nothing happens
}

TEST_CASE("process engine: as root a container is PID 1 of its own namespace, with the pod's hostname") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  if (!engine.isolated()) {
    WARN("skipped: " + engine.limitations().front());
    return;
  }
  ContainerLaunch launch = Shell("echo $$; hostname");
  launch.hostname = "web-0";
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  REQUIRE(AwaitExit(engine, *id).has_value());
  CHECK(Texts(engine.ReadLog("default_p_uid/c", 0)) == std::vector<std::string>{"1", "web-0"});
}

TEST_CASE("process engine: as root a container has a root of its own: what it writes is its own, its volumes are "
          "bound in (read-only ones refuse writes), subPaths are made") {
  TempDir dir;
  fs::create_directories(dir.dir() / "private");
  std::ofstream(dir.dir() / "private" / "admin.token") << "secret";
  ProcessEngine engine({.log_root = (dir.dir() / "logs").string(),
                        .hidden = {(dir.dir() / "private").string()},
                        .owner = "test-" + std::to_string(::getpid())});
  if (!engine.own_root()) {
    WARN("skipped: " + engine.limitations().back());
    return;
  }
  fs::create_directories(dir.dir() / "volume");
  fs::create_directories(dir.dir() / "config");
  std::ofstream(dir.dir() / "config" / "key") << "value";
  const std::string outside = (dir.dir() / "written-inside").string();
  // Writes where the machine has no such directory (/usr/share/podflow-test
  // exists only in its root), into its volume (through a symlink of the
  // machine's, /var/run -> /run, resolved in its root), and beside the
  // test's own directory.
  ContainerLaunch launch = Shell(
      "mkdir -p /usr/share/podflow-test && echo layer > /usr/share/podflow-test/f && cat /usr/share/podflow-test/f; "
      "echo shared > /var/run/podflow-vol/out; cat /etc/podflow-config/key; echo; "
      "{ echo no > /etc/podflow-config/key; } 2>/dev/null || echo read-only; "
      "echo sub > /sub/f; touch " + outside + "; ls /proc | grep -c '^[0-9]'; ls " +
      (dir.dir() / "private").string() + " | wc -l");
  launch.mounts = {{(dir.dir() / "volume").string(), "", "/var/run/podflow-vol", false},
                   {(dir.dir() / "config").string(), "", "/etc/podflow-config", true},
                   {(dir.dir() / "volume").string(), "part/one", "/sub", false}};
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  std::optional<ContainerExit> exit = AwaitExit(engine, *id);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 0);
  // Its /proc is its PID namespace's: sh, ls and grep at most.
  const std::vector<std::string> lines = Texts(engine.ReadLog("default_p_uid/c", 0));
  INFO(lines.size());
  for (const auto& l : lines) UNSCOPED_INFO(l);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "layer");
  CHECK(lines[1] == "value");
  CHECK(lines[2] == "read-only");
  CHECK(std::stoi(lines[3]) <= 4);
  CHECK(lines[4] == "0");  // podflow's own files are hidden
  CHECK_FALSE(fs::exists("/usr/share/podflow-test"));
  CHECK_FALSE(fs::exists("/run/podflow-vol"));
  // The test's directory is the machine's root filesystem's unless a mount
  // of its own holds it (a mount is carried into the container's root).
  struct stat root_fs {}, dir_fs {};
  if (::stat("/", &root_fs) == 0 && ::stat(dir.dir().c_str(), &dir_fs) == 0 && root_fs.st_dev == dir_fs.st_dev) {
    CHECK_FALSE(fs::exists(outside));
  }
  std::ifstream shared(dir.dir() / "volume" / "out");
  std::string line;
  CHECK((std::getline(shared, line) && line == "shared"));
  std::ifstream sub(dir.dir() / "volume" / "part" / "one" / "f");
  CHECK((std::getline(sub, line) && line == "sub"));
  std::ifstream config(dir.dir() / "config" / "key");
  CHECK((std::getline(config, line) && line == "value"));

  // A subPath out of the volume is refused before anything runs, by name
  // or through a symlink a container left in it.
  launch.mounts = {{(dir.dir() / "volume").string(), "../escape", "/sub", false}};
  Result<ProcessId> refused = engine.Launch(launch);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message() == "subPath ../escape reaches out of its volume");
  fs::create_symlink("/etc", dir.dir() / "volume" / "to-etc");
  fs::create_symlink("../../..", dir.dir() / "volume" / "up");
  for (const std::string sub : {"to-etc", "up/etc", "to-etc/new"}) {
    launch.mounts = {{(dir.dir() / "volume").string(), sub, "/sub", false}};
    refused = engine.Launch(launch);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message() == "subPath " + sub + " reaches out of its volume");
  }
  CHECK_FALSE(fs::exists("/etc/new"));
  // A command its volume holds is found there (looked up in the container).
  {
    std::ofstream script(dir.dir() / "config" / "run.sh");
    script << "#!/bin/sh\necho from the volume\n";
  }
  fs::permissions(dir.dir() / "config" / "run.sh", fs::perms::owner_all);
  ContainerLaunch from_volume = Shell("", "default_p_uid/v");
  from_volume.argv = {"run.sh"};
  from_volume.env = {{"PATH", "/etc/podflow-config:/usr/bin:/bin"}};
  from_volume.mounts = {{(dir.dir() / "config").string(), "", "/etc/podflow-config", true}};
  id = engine.Launch(from_volume);
  REQUIRE(id.ok());
  REQUIRE(AwaitExit(engine, *id).has_value());
  CHECK(Texts(engine.ReadLog("default_p_uid/v", 0)) == std::vector<std::string>{"from the volume"});
  from_volume.argv = {"not-in-the-volume"};
  Result<ProcessId> missing = engine.Launch(from_volume);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "exec: \"not-in-the-volume\": executable file not found in $PATH");
  from_volume.argv = {"/etc/podflow-config/key"};  // not executable
  missing = engine.Launch(from_volume);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "exec: \"/etc/podflow-config/key\": permission denied");
  from_volume.argv = {"/nowhere/x"};
  missing = engine.Launch(from_volume);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "exec: \"/nowhere/x\": stat /nowhere/x: no such file or directory");

  // An exec probe runs in the container's root too: the volume's command is found, a missing one is runc's error.
  ContainerLaunch running = Shell("exec sleep 30", "default_p_uid/r");
  running.mounts = from_volume.mounts;
  id = engine.Launch(running);
  REQUIRE(id.ok());
  const auto probe = [&](std::vector<std::string> command) {
    ProbeCheck check;
    check.container = *id;
    check.command = std::move(command);
    check.env = {{"PATH", "/etc/podflow-config:/usr/bin:/bin"}};
    check.timeout = SimDuration(5000);
    const uint64_t n = engine.StartProbe("k", check);
    for (int i = 0; i < 1000; ++i) {
      for (ProbeOutcome& o : engine.TakeProbeOutcomes()) {
        if (o.probe == n) return o;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL("no probe outcome");
    return ProbeOutcome{};
  };
  ProbeOutcome found = probe({"run.sh"});
  CHECK(found.ok);
  CHECK(found.output == "from the volume");
  ProbeOutcome absent = probe({"no-such-probe-command"});
  CHECK_FALSE(absent.ok);
  CHECK(absent.output == "OCI runtime exec failed: exec failed: unable to start container process: exec: "
                         "\"no-such-probe-command\": executable file not found in $PATH: unknown");
  engine.Signal(*id, SIGKILL);
}

TEST_CASE("process engine: a container has a container runtime's default capabilities, a /dev of its own and a "
          "read-only /sys") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  if (!engine.own_root()) {
    WARN("skipped: " + engine.limitations().back());
    return;
  }
  ContainerLaunch launch = Shell(
      "grep CapBnd /proc/self/status; ls /dev | tr '\\n' ' '; echo; "
      "{ echo x > /sys/kernel/podflow-test; } 2>/dev/null || echo sys read-only; "
      "{ echo 1 > /sys/fs/cgroup/podflow-test; } 2>/dev/null || echo cgroups read-only; "
      "umount /proc 2>/dev/null || echo no umount");
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  REQUIRE(AwaitExit(engine, *id).has_value());
  const std::vector<std::string> lines = Texts(engine.ReadLog("default_p_uid/c", 0));
  REQUIRE(lines.size() == 5);
  // runc's and containerd's default set, as Docker shows it.
  CHECK(lines[0] == "CapBnd:\t00000000a80425fb");
  CHECK(lines[1] == "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero ");
  CHECK(lines[2] == "sys read-only");
  CHECK(lines[3] == "cgroups read-only");
  CHECK(lines[4] == "no umount");
}

TEST_CASE("process engine: a process over its memory limit is OOM-killed") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  if (!engine.limits_memory()) {
    WARN("skipped: " + engine.limitations().back());
    return;
  }
  if (!engine.limits_swap()) {
    WARN("skipped: swap is on and the memory cgroup cannot limit it, so the process would swap instead");
    return;
  }
  // python3 is in the build's dependencies (meson); it holds 200 MiB.
  ContainerLaunch launch = Shell("exec python3 -c 'b = bytearray(200 * 1024 * 1024); print(len(b))'");
  launch.memory_limit_bytes = 64 * 1024 * 1024;
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  const std::optional<ContainerExit> exit = AwaitExit(engine, *id);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 137);
  CHECK(exit->oom_killed);
  // The same under its limit.
  launch.memory_limit_bytes = 512 * 1024 * 1024;
  launch.log_dir = "default_p_uid/big";
  id = engine.Launch(launch);
  REQUIRE(id.ok());
  const std::optional<ContainerExit> fine = AwaitExit(engine, *id);
  REQUIRE(fine.has_value());
  CHECK(fine->exit_code == 0);
  CHECK_FALSE(fine->oom_killed);
}

TEST_CASE("process engine: CPU quota and weight as kubelet computes them") {
  CHECK(CpuQuotaMicros(250) == 25'000);
  CHECK(CpuQuotaMicros(2000) == 200'000);
  CHECK(CpuQuotaMicros(5) == 1000);  // the kernel's floor
  CHECK(CpuQuotaMicros(0) == 0);     // no quota
  CHECK(CpuQuotaMicros(INT64_MAX) > 0);
  CHECK(CpuShares(0) == 2);          // BestEffort
  CHECK(CpuShares(INT64_MAX) == 262'144);
  CHECK(CpuShares(100) == 102);
  CHECK(CpuShares(1000) == 1024);
  CHECK(CpuShares(1) == 2);
  CHECK(CpuWeight(2) == 1);
  CHECK(CpuWeight(1024) == 39);
  CHECK(CpuWeight(262'144) == 10'000);
}

TEST_CASE("process engine: limits.cpu holds a busy process to its quota; requests.cpu sets its weight") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  if (!engine.limits_cpu()) {
    WARN("skipped: " + engine.limitations().back());
    return;
  }
  // Spins for 1 s of wall time and prints the CPU seconds it got.
  ContainerLaunch launch = Shell(
      "exec python3 -c 'import time\nstart = time.monotonic()\nwhile time.monotonic() - start < 1.0: pass\n"
      "print(round(time.process_time(), 2))'");
  launch.cpu_limit_milli = 100;
  launch.cpu_request_milli = 50;
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  const fs::path hierarchy = fs::exists("/sys/fs/cgroup/cgroup.controllers") ? fs::path("/sys/fs/cgroup")
                                                                               : fs::path("/sys/fs/cgroup/cpu");
  const fs::path group = hierarchy / "podflow" / ("test-" + std::to_string(::getpid())) / std::to_string(*id);
  const auto read = [&](const char* file) {
    std::ifstream in(group / file);
    std::string text;
    std::getline(in, text);
    return text;
  };
  if (fs::exists(hierarchy / "cgroup.controllers")) {
    CHECK(read("cpu.max") == "10000 100000");
    CHECK(read("cpu.weight") == std::to_string(CpuWeight(51)));
  } else {
    CHECK(read("cpu.cfs_quota_us") == "10000");
    CHECK(read("cpu.cfs_period_us") == "100000");
    CHECK(read("cpu.shares") == "51");
  }
  const std::optional<ContainerExit> exit = AwaitExit(engine, *id);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 0);
  const std::vector<std::string> lines = Texts(engine.ReadLog("default_p_uid/c", 0));
  REQUIRE(lines.size() == 1);
  // 10% of one CPU for a second: about 0.1 s (unthrottled it would be ~1 s).
  CHECK(std::stod(lines[0]) < 0.4);
}

TEST_CASE("process engine: the destructor kills what still runs and removes its cgroups") {
  TempDir dir;
  std::string group_root;
  {
    ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
    ContainerLaunch launch = Shell("echo $$ > " + (dir.dir() / "pid").string() + "; exec sleep 30");
    launch.mounts = {{dir.dir().string(), "", dir.dir().string(), false}};  // where the test reads it
    if (engine.limits_memory()) launch.memory_limit_bytes = 64 * 1024 * 1024;
    Result<ProcessId> id = engine.Launch(launch);
    REQUIRE(id.ok());
    for (int i = 0; i < 200 && !fs::exists(dir.dir() / "pid"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(fs::exists(dir.dir() / "pid"));
    if (engine.limits_memory()) {
      group_root = (fs::path("/sys/fs/cgroup") / (fs::exists("/sys/fs/cgroup/cgroup.controllers") ? "" : "memory") /
                    "podflow" / ("test-" + std::to_string(::getpid())))
                       .string();
      CHECK(fs::exists(fs::path(group_root) / "1"));  // the container's group, while it runs
    }
  }
  if (!group_root.empty()) CHECK_FALSE(fs::exists(group_root));
  // No child of this process is left, running or a zombie.
  errno = 0;
  CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);
  CHECK(errno == ECHILD);
}

TEST_CASE("CRI log: long lines are split and joined again; files rotate by size and are kept to their number") {
  TempDir dir;
  const std::string path = (dir.dir() / "0.log").string();
  CriLogWriter writer(path, {.max_bytes = 4096, .max_files = 3});
  REQUIRE(writer.Open().ok());
  const auto t0 = std::chrono::system_clock::now();
  const std::string longline(kCriMaxLine + 10, 'x');
  writer.Write("stdout", longline + "\npart", t0);
  writer.Write("stdout", "ial\n", t0);
  writer.Write("stderr", "no newline at the end", t0);
  writer.Flush(t0);
  std::vector<CriLogRecord> records = ReadCriLog(path);
  // The long line made the file rotate: the current file has what came after.
  REQUIRE(records.size() == 2);
  CHECK(records[0].text == "partial");
  CHECK(records[1].text == "no newline at the end");
  CHECK(records[1].stream == "stderr");
  std::vector<std::string> rotated;
  for (const auto& entry : fs::directory_iterator(dir.dir())) {
    if (entry.path().filename() != "0.log") rotated.push_back(entry.path().string());
  }
  REQUIRE(rotated.size() == 1);
  records = ReadCriLog(rotated[0]);
  REQUIRE(records.size() == 1);
  CHECK(records[0].text == longline);
  // Many rotations within one second keep the newest files, in order.
  for (int i = 0; i < 400; ++i) writer.Write("stdout", "line " + std::to_string(i) + "\n", t0);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.dir())) files += entry.path().filename().string().rfind("0.log", 0) == 0;
  CHECK(files == 3);
  records = ReadCriLog(path);
  REQUIRE_FALSE(records.empty());
  CHECK(records.back().text == "line 399");
  std::vector<std::string> kept;
  for (const auto& entry : fs::directory_iterator(dir.dir())) {
    if (entry.path().filename() != "0.log") kept.push_back(entry.path().string());
  }
  std::sort(kept.begin(), kept.end());
  REQUIRE(kept.size() == 2);
  // The rotated files are the two before the current one: their last lines
  // come just before its first.
  const std::vector<CriLogRecord> older = ReadCriLog(kept[0]), newer = ReadCriLog(kept[1]);
  REQUIRE_FALSE(older.empty());
  REQUIRE_FALSE(newer.empty());
  const auto number = [](const std::string& text) { return std::stoi(text.substr(5)); };
  CHECK(number(older.back().text) + 1 == number(newer.front().text));
  CHECK(number(newer.back().text) + 1 == number(records.front().text));
}

}  // namespace podflow::runtime::process

namespace podflow::runtime {

TEST_CASE("process argv: a container's command and args over the image's entrypoint and cmd, as kubelet combines them") {
  model::RegistryConfig registry;
  model::CatalogImage app;
  app.name = "example/app";
  app.entrypoint = {"/entry.sh"};
  app.cmd = {"serve", "--port=80"};
  registry.images.push_back(app);
  registry.images.push_back(model::CatalogImage{.name = "busybox"});
  registry.open = true;
  const model::ImageCatalog catalog(registry);
  const EnvList env = {{"WHO", "world"}};
  const auto argv = [&](std::vector<std::string> command, std::vector<std::string> args,
                        const std::string& image = "example/app:1") {
    api::ContainerT c;
    c.image = image;
    c.command = std::move(command);
    c.args = std::move(args);
    const std::optional<model::ResolvedImage> resolved = catalog.Resolve(image);
    return ProcessArgv(c, resolved ? &*resolved : nullptr, env);
  };
  using V = std::vector<std::string>;
  CHECK(argv({}, {}) == V{"/entry.sh", "serve", "--port=80"});
  CHECK(argv({}, {"check", "$(WHO)"}) == V{"/entry.sh", "check", "world"});
  CHECK(argv({"echo", "hello $(WHO)"}, {}) == V{"echo", "hello world"});
  CHECK(argv({"echo"}, {"a", "$$(WHO)"}) == V{"echo", "a", "$(WHO)"});
  // Listed without a config, and unlisted: the well-known images'.
  CHECK(argv({}, {}, "busybox:1.28") == V{"sh"});
  CHECK(argv({}, {"-c", "echo hi"}, "busybox:1.28") == V{"-c", "echo hi"});
  CHECK(argv({}, {}, "ubuntu:22.04") == V{"bash"});
  CHECK(argv({}, {}, "example/unknown:1").empty());
  api::ContainerT web;
  web.image = "nginx:1.14.2";
  web.ports.push_back(std::make_unique<api::ContainerPortT>());
  web.ports.back()->container_port = 8080;
  const std::vector<std::string> nginx = ProcessArgv(web, nullptr, env);
  REQUIRE(nginx.size() == 4);
  CHECK(nginx[0] == "python3");
  CHECK(nginx[3] == "8080");
}

}  // namespace podflow::runtime

namespace podflow::runtime::process {

TEST_CASE("probes for real: an exec probe's exit and output, its timeout in kubelet's words") {
  ProbeCheck check;
  check.type = ProbeCheck::Type::kExec;
  check.env = {{"PATH", "/usr/bin:/bin"}, {"WORD", "fine"}};
  check.command = {"sh", "-c", "echo $WORD"};
  ProbeResult r = RunExecProbe(check, -1, false, {});
  CHECK(r.ok);
  check.command = {"sh", "-c", "echo not healthy >&2; exit 1"};
  r = RunExecProbe(check, -1, false, {});
  CHECK_FALSE(r.ok);
  CHECK(r.output == "not healthy");
  // Its stdout, then its stderr, whatever the order they were printed in (as kubelet keeps them).
  check.command = {"sh", "-c", "echo first to stderr >&2; sleep 0.1; echo then to stdout"};
  r = RunExecProbe(check, -1, false, {});
  CHECK(r.output == "then to stdout\nfirst to stderr");
  check.command = {"sleep", "5"};
  check.timeout = SimDuration(200);
  const auto before = std::chrono::steady_clock::now();
  r = RunExecProbe(check, -1, false, {});
  CHECK_FALSE(r.ok);
  CHECK(r.output == "command \"sleep 5\" timed out");
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(4));  // it was not waited for
  check.command = {"no-such-probe-command"};
  r = RunExecProbe(check, -1, false, {});
  CHECK_FALSE(r.ok);
  CHECK(r.output.find("exec: \"no-such-probe-command\": executable file not found in $PATH") != std::string::npos);
}

TEST_CASE("probes for real: tcpSocket connects; httpGet takes 200-399, with kubelet's User-Agent and the probe's headers") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  // A server on a free port: it answers /ok 200, /moved 302, /bad 500, /agent 200
  // only to kube-probe, /header 200 only with X-Probe: yes.
  ContainerLaunch server = Shell("");
  server.argv = {"python3", "-c", R"(
import http.server, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = {'/ok': 200, '/moved': 302, '/bad': 500}.get(self.path, 404)
        if self.path == '/agent': code = 200 if self.headers.get('User-Agent', '').startswith('kube-probe/') else 403
        if self.path == '/header': code = 200 if self.headers.get('X-Probe') == 'yes' else 400
        self.send_response(code); self.send_header('Content-Length', '0'); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(('127.0.0.1', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
)"};
  Result<ProcessId> id = engine.Launch(server);
  REQUIRE(id.ok());
  std::vector<ContainerLogLine> lines;
  for (int i = 0; i < 500 && (lines = engine.ReadLog("default_p_uid/c", 0)).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(lines.size() == 1);
  const int port = std::stoi(lines[0].text);

  ProbeCheck tcp;
  tcp.type = ProbeCheck::Type::kTcp;
  tcp.host = "127.0.0.1";
  tcp.port = port;
  CHECK(RunTcpProbe(tcp).ok);
  ProbeCheck http = tcp;
  http.type = ProbeCheck::Type::kHttp;
  const auto get = [&](const std::string& path) {
    http.path = path;
    return RunHttpProbe(http);
  };
  CHECK(get("/ok").ok);
  CHECK(get("/moved").ok);
  CHECK(get("/agent").ok);
  ProbeResult bad = get("/bad");
  CHECK_FALSE(bad.ok);
  CHECK(bad.output == "HTTP probe failed with statuscode: 500");
  CHECK(get("/header").output == "HTTP probe failed with statuscode: 400");
  http.headers = {{"X-Probe", "yes"}};
  CHECK(get("/header").ok);

  engine.Signal(*id, SIGKILL);
  for (int i = 0; i < 500 && engine.TakeExits().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Nothing listens there now.
  ProbeResult refused = RunTcpProbe(tcp);
  CHECK_FALSE(refused.ok);
  CHECK(refused.output == "dial tcp 127.0.0.1:" + std::to_string(port) + ": connect: connection refused");
  http.path = "/healthz";
  refused = RunHttpProbe(http);
  CHECK(refused.output == "Get \"http://127.0.0.1:" + std::to_string(port) +
                              "/healthz\": dial tcp 127.0.0.1:" + std::to_string(port) + ": connect: connection refused");
}

}  // namespace podflow::runtime::process

namespace podflow::runtime::process {

TEST_CASE("probes for real: a probe of a container that has ended has no result; stopping the engine cuts a long probe short") {
  TempDir dir;
  auto engine = std::make_unique<ProcessEngine>(
      EngineOptions{.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  ProbeCheck check;
  check.type = ProbeCheck::Type::kExec;
  check.env = {{"PATH", "/usr/bin:/bin"}};
  check.command = {"true"};
  check.container = 12345;  // never launched
  const uint64_t gone = engine->StartProbe("k", check);
  std::vector<ProbeOutcome> outcomes;
  for (int i = 0; i < 500 && outcomes.empty(); ++i) {
    outcomes = engine->TakeProbeOutcomes();
    if (outcomes.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].probe == gone);
  CHECK(outcomes[0].errored);

  Result<ProcessId> id = engine->Launch(Shell("exec sleep 30"));
  REQUIRE(id.ok());
  check.container = *id;
  check.command = {"sleep", "30"};
  check.timeout = SimDuration(60'000);
  engine->StartProbe("k", check);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // under way
  const auto before = std::chrono::steady_clock::now();
  engine.reset();
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(10));
}

TEST_CASE("probes for real: as root an exec probe runs in its container's PID, mount and UTS namespaces") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  if (!engine.isolated()) {
    WARN("skipped: " + engine.limitations().front());
    return;
  }
  ContainerLaunch launch = Shell("");
  launch.argv = {"sleep", "30"};  // PID 1 from its start (a shell's exec could come after the probe)
  launch.hostname = "web-0";
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  ProbeCheck check;
  check.type = ProbeCheck::Type::kExec;
  check.env = {{"PATH", "/usr/bin:/bin"}};
  check.container = *id;
  // PID 1 of what it sees is the container's command; its own /proc is the container's.
  check.command = {"sh", "-c", "hostname; tr '\\0' ' ' < /proc/1/cmdline; exit 1"};
  check.timeout = SimDuration(5000);
  const uint64_t probe = engine.StartProbe("k", check);
  std::vector<ProbeOutcome> outcomes;
  for (int i = 0; i < 500 && outcomes.empty(); ++i) {
    outcomes = engine.TakeProbeOutcomes();
    if (outcomes.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].probe == probe);
  CHECK_FALSE(outcomes[0].ok);
  CHECK(outcomes[0].output == "web-0\nsleep 30");
}

TEST_CASE("CRI log: a run's file is its own — one left by an earlier runtime is started over") {
  TempDir dir;
  const std::string path = (dir.dir() / "0.log").string();
  {
    std::ofstream old(path);
    old << "2024-05-01T12:00:00.000000000Z stdout F from an earlier runtime\n";
  }
  CriLogWriter writer(path, {});
  REQUIRE(writer.Open().ok());
  writer.Write("stdout", "fresh\n", std::chrono::system_clock::now());
  const std::vector<CriLogRecord> records = ReadCriLog(path);
  REQUIRE(records.size() == 1);
  CHECK(records[0].text == "fresh");
}


namespace {

// The lines of /proc/self/status that tell who a process is, as a
// container's command prints them.
constexpr char kWhoAmI[] = "grep -E '^(Uid|Gid|Groups|CapBnd|CapPrm|CapEff|NoNewPrivs):' /proc/self/status";

// This process's bounding set: what a container started here can have at most.
uint64_t OwnBoundingSet() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapBnd:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  }
  return 0;
}

}  // namespace

TEST_CASE("process engine: a container runs as its securityContext says — user, group, supplemental groups and "
          "fsGroup, capabilities added and dropped, no_new_privs; its exec probes too") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  if (::geteuid() != 0) {
    WARN("skipped: not root, a container runs as this user");
    return;
  }
  constexpr uint64_t kWanted = 0xa80425fbull | (1ull << 12) | (1ull << 25);  // the defaults, NET_ADMIN, SYS_TIME
  if ((OwnBoundingSet() & kWanted) != kWanted) {
    WARN("skipped: this process lacks capabilities the test gives a container (its CapBnd is "
         << std::hex << OwnBoundingSet() << ")");
    return;
  }
  // A uid this machine's passwd does not know: its primary group is the one asked for.
  ContainerLaunch launch = Shell(std::string(kWhoAmI) + "; sleep 30");
  launch.security.run_as_user = 4242;
  launch.security.run_as_group = 3000;
  launch.security.supplemental_groups = {4000, 2000};
  launch.security.add_capabilities = {"NET_ADMIN", "SYS_TIME", "CAP_SYS_ADMIN"};  // the last is no name
  launch.security.drop_capabilities = {"net_raw"};
  launch.security.no_new_privileges = true;
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  std::vector<std::string> lines;
  for (int i = 0; i < 500 && lines.size() < 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lines = Texts(engine.ReadLog("default_p_uid/c", 0));
  }
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == "Uid:\t4242\t4242\t4242\t4242");
  CHECK(lines[1] == "Gid:\t3000\t3000\t3000\t3000");
  CHECK(lines[2] == "Groups:\t2000 3000 4000 ");
  // The defaults (a80425fb) with NET_ADMIN (bit 12) and SYS_TIME (25) and
  // without NET_RAW (13); a user other than root keeps none after its exec.
  CHECK(lines[3] == "CapPrm:\t0000000000000000");
  CHECK(lines[4] == "CapEff:\t0000000000000000");
  CHECK(lines[5] == "CapBnd:\t00000000aa0415fb");
  CHECK(lines[6] == "NoNewPrivs:\t1");

  ProbeCheck check;
  check.container = *id;
  check.command = {"sh", "-c", "id -u; id -g"};
  check.env = launch.env;
  check.timeout = SimDuration(5000);
  const uint64_t n = engine.StartProbe("k", check);
  std::optional<ProbeOutcome> outcome;
  for (int i = 0; i < 1000 && !outcome; ++i) {
    for (ProbeOutcome& o : engine.TakeProbeOutcomes()) {
      if (o.probe == n) outcome = o;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(outcome.has_value());
  CHECK(outcome->output == "4242\n3000");
  engine.Signal(*id, SIGKILL);
  REQUIRE(AwaitExit(engine, *id).has_value());
}

TEST_CASE("process engine: root's capabilities as the securityContext makes them — drop ALL then add, privileged "
          "— and the node's ulimits") {
  TempDir dir;
  const std::vector<ResourceLimit> limits = {{RLIMIT_NOFILE, 1000, 2000}};
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid()), .limits = limits});
  if (::geteuid() != 0) {
    WARN("skipped: not root, a container runs as this user");
    return;
  }
  const auto run = [&](const ContainerSecurity& security, const std::string& log_dir) {
    ContainerLaunch launch = Shell(std::string(kWhoAmI) + "; ulimit -Sn; ulimit -Hn", log_dir);
    launch.security = security;
    Result<ProcessId> id = engine.Launch(launch);
    REQUIRE(id.ok());
    REQUIRE(AwaitExit(engine, *id).has_value());
    return Texts(engine.ReadLog(log_dir, 0));
  };
  ContainerSecurity only_bind;
  only_bind.drop_capabilities = {"ALL"};
  only_bind.add_capabilities = {"NET_BIND_SERVICE"};
  std::vector<std::string> lines = run(only_bind, "default_p_uid/a");
  REQUIRE(lines.size() == 9);
  CHECK(lines[0] == "Uid:\t0\t0\t0\t0");
  CHECK(lines[3] == "CapPrm:\t0000000000000400");
  CHECK(lines[4] == "CapEff:\t0000000000000400");
  CHECK(lines[5] == "CapBnd:\t0000000000000400");
  CHECK(lines[6] == "NoNewPrivs:\t0");
  CHECK(lines[7] == "1000");
  CHECK(lines[8] == "2000");

  ContainerSecurity privileged;
  privileged.privileged = true;
  privileged.drop_capabilities = {"ALL"};  // privileged has them all whatever else is said
  lines = run(privileged, "default_p_uid/b");
  REQUIRE(lines.size() == 9);
  // Every capability this process has (bounding = permitted = effective).
  CHECK(std::stoull(lines[5].substr(7), nullptr, 16) == OwnBoundingSet());
  CHECK(lines[4].substr(7) == lines[3].substr(7));
  CHECK(lines[5].substr(7) == lines[3].substr(7));
}

TEST_CASE("process engine: readOnlyRootFilesystem — the root and the machine's mounts refuse writes, the "
          "container's volumes and /dev/shm take them") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  if (!engine.own_root()) {
    WARN("skipped: " + engine.limitations().back());
    return;
  }
  const std::filesystem::path volume = dir.dir() / "scratch", tmp = dir.dir() / "tmp";
  std::filesystem::create_directories(volume);
  std::filesystem::create_directories(tmp);
  const std::string script =
      "touch /podflow-ro-test 2>/dev/null && echo root writable || echo root read-only; "
      "touch /var/podflow-ro-test 2>/dev/null && echo var writable || echo var read-only; "
      "touch /tmp/x 2>/dev/null && echo tmp writable || echo tmp read-only; "
      "touch /data/x && echo volume writable; touch /dev/shm/x && echo shm writable";
  ContainerLaunch launch = Shell(script);
  launch.mounts.push_back({volume.string(), "", "/data", false});
  launch.security.read_only_root = true;
  Result<ProcessId> id = engine.Launch(launch);
  REQUIRE(id.ok());
  REQUIRE(AwaitExit(engine, *id).has_value());
  CHECK(Texts(engine.ReadLog("default_p_uid/c", 0)) ==
        std::vector<std::string>{"root read-only", "var read-only", "tmp read-only", "volume writable",
                                 "shm writable"});
  CHECK(std::filesystem::exists(volume / "x"));
  // The docs' pattern: an emptyDir at /tmp beside a read-only root stays writable
  // (whether or not this machine's /tmp is a mount of its own).
  ContainerLaunch with_tmp = Shell(script, "default_p_uid/t");
  with_tmp.mounts.push_back({volume.string(), "", "/data", false});
  with_tmp.mounts.push_back({tmp.string(), "", "/tmp", false});
  with_tmp.security.read_only_root = true;
  id = engine.Launch(with_tmp);
  REQUIRE(id.ok());
  REQUIRE(AwaitExit(engine, *id).has_value());
  CHECK(Texts(engine.ReadLog("default_p_uid/t", 0)) ==
        std::vector<std::string>{"root read-only", "var read-only", "tmp writable", "volume writable",
                                 "shm writable"});
  CHECK(std::filesystem::exists(tmp / "x"));
}

TEST_CASE("process engine: agnhost's subcommands the docs run — netexec answers on its port, pause ends at SIGTERM") {
  TempDir dir;
  ProcessEngine engine({.log_root = dir.dir().string(), .owner = "test-" + std::to_string(::getpid())});
  const int port = podflow::testing::FreePort();
  const auto launch_of = [](const std::string& image, std::vector<std::string> args, const std::string& log_dir) {
    api::ContainerT c;
    c.image = image;
    c.args = std::move(args);
    ContainerLaunch launch = Shell("", log_dir);
    launch.argv = ProcessArgv(c, nullptr, launch.env);
    return launch;
  };
  const auto await_line = [&](const std::string& log_dir, const std::string& line) {
    for (int i = 0; i < 1000; ++i) {
      const std::vector<std::string> lines = Texts(engine.ReadLog(log_dir, 0));
      if (std::find(lines.begin(), lines.end(), line) != lines.end()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  Result<ProcessId> netexec = engine.Launch(launch_of("registry.k8s.io/e2e-test-images/agnhost:2.40",
                                                      {"netexec", "--http-port=" + std::to_string(port)},
                                                      "default_p_uid/netexec"));
  REQUIRE(netexec.ok());
  REQUIRE(await_line("default_p_uid/netexec", "Started HTTP server on port " + std::to_string(port)));
  ProbeCheck http;
  http.type = ProbeCheck::Type::kHttp;
  http.host = "127.0.0.1";
  http.port = port;
  http.path = "/healthz";
  CHECK(RunHttpProbe(http).ok);
  ProbeCheck get;
  get.command = {"python3", "-c",
                 "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:" + std::to_string(port) +
                     "/echo?msg=hello').read().decode(), end='')"};
  get.env = {{"PATH", "/usr/bin:/bin"}};
  get.timeout = SimDuration(5000);
  const ProbeResult echoed = RunExecProbe(get, -1, false, {});
  CHECK(echoed.ok);
  CHECK(echoed.output == "hello");
  engine.Signal(*netexec, SIGTERM);
  std::optional<ContainerExit> exit = AwaitExit(engine, *netexec);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 0);

  Result<ProcessId> pause = engine.Launch(launch_of("registry.k8s.io/pause:3.9", {}, "default_p_uid/pause"));
  REQUIRE(pause.ok());
  REQUIRE(await_line("default_p_uid/pause", "Paused"));
  engine.Signal(*pause, SIGTERM);
  exit = AwaitExit(engine, *pause);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 0);

  // An unknown subcommand fails as agnhost's does.
  Result<ProcessId> unknown = engine.Launch(launch_of("registry.k8s.io/e2e-test-images/agnhost:2.40", {"no-such"},
                                                      "default_p_uid/unknown"));
  REQUIRE(unknown.ok());
  exit = AwaitExit(engine, *unknown);
  REQUIRE(exit.has_value());
  CHECK(exit->exit_code == 1);
  CHECK(Texts(engine.ReadLog("default_p_uid/unknown", 0)) ==
        std::vector<std::string>{"Error: unknown command \"no-such\" for \"agnhost\""});
}

}  // namespace podflow::runtime::process
