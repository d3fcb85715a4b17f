#include "stages/runtime/shell_script.h"

#include <catch2/catch.hpp>

namespace podflow::runtime {
namespace {

using model::kNever;
using Argv = std::vector<std::string>;

SimDuration Sec(int64_t s) { return SimDuration(s * 1000); }

TEST_CASE("sleep N exits 0 after N seconds; sleep infinity never ends") {
  ScriptReading r = ReadCommand({"sleep", "3600"}, {});
  CHECK(r.behavior.exit_after == Sec(3600));
  CHECK(r.behavior.exit_code == 0);
  CHECK(r.behavior.stop_after == kNever);  // sleep as PID 1 ignores SIGTERM
  CHECK(ReadCommand({"sleep", "infinity"}, {}).behavior.exit_after == kNever);
  CHECK(ReadCommand({"/bin/sleep", "1m", "30"}, {}).behavior.exit_after == Sec(90));
  CHECK(ParseSleep("1.5") == SimDuration(1500));
  CHECK(ParseSleep("2h") == Sec(7200));
  CHECK(ParseSleep("1d") == Sec(86400));
  CHECK_FALSE(ParseSleep("soon"));
  CHECK_FALSE(ParseSleep("-1"));
  CHECK_FALSE(ParseSleep(""));
}

TEST_CASE("shell one-liners from the documentation") {
  SECTION("echo, then sleep") {
    ScriptReading r = ReadCommand({"sh", "-c", "echo The app is running! && sleep 3600"}, {});
    CHECK(r.behavior.logs == std::vector<std::string>{"The app is running!"});
    CHECK(r.behavior.exit_after == Sec(3600));
  }
  SECTION("exit with a code") {
    ScriptReading r = ReadCommand({"/bin/sh", "-c", "echo failing; sleep 2; exit 3"}, {});
    CHECK(r.behavior.exit_after == Sec(2));
    CHECK(r.behavior.exit_code == 3);
    CHECK(r.behavior.logs == std::vector<std::string>{"failing"});
  }
  SECTION("ls lists and exits; a name removed before is an error") {
    ScriptReading r = ReadCommand({"/bin/sh", "-c", "ls /etc/config/"}, {});
    CHECK(r.behavior.exit_after == Sec(0));
    CHECK(r.behavior.exit_code.value_or(0) == 0);
    r = ReadCommand({"sh", "-c", "rm /tmp/x; ls -l /tmp/x"}, {});
    CHECK(r.behavior.exit_code == 1);
    CHECK(r.behavior.logs == std::vector<std::string>{"ls: /tmp/x: No such file or directory"});
  }
  SECTION("the liveness-exec example's file") {
    ScriptReading r = ReadCommand(
        {"/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"}, {});
    CHECK(r.behavior.exit_after == Sec(630));
    CHECK(r.Tracks("/tmp/healthy"));
    CHECK(r.FileExists("/tmp/healthy", Sec(0)));
    CHECK(r.FileExists("/tmp/healthy", Sec(29)));
    CHECK_FALSE(r.FileExists("/tmp/healthy", Sec(30)));
    CHECK_FALSE(r.Tracks("/etc/hosts"));
    CHECK(r.FileExists("/etc/hosts", Sec(5)));  // not the script's: from the image
  }
  SECTION("a file made later is absent before") {
    ScriptReading r = ReadCommand({"sh", "-c", "sleep 20; echo ok > /tmp/ready; sleep 3600"}, {});
    CHECK_FALSE(r.FileExists("/tmp/ready", Sec(19)));
    CHECK(r.FileExists("/tmp/ready", Sec(20)));
    CHECK_FALSE(r.behavior.logs);  // the echo went to the file
  }
  SECTION("&& stops at a failure, || runs on one") {
    CHECK(ReadCommand({"sh", "-c", "false && sleep 10"}, {}).behavior.exit_after == Sec(0));
    CHECK(ReadCommand({"sh", "-c", "false && sleep 10"}, {}).behavior.exit_code == 1);
    ScriptReading r = ReadCommand({"sh", "-c", "test -f /nope || exit 7"}, {});
    CHECK(r.behavior.exit_code == 0);  // a file the script never removed exists
    r = ReadCommand({"sh", "-c", "rm /tmp/x; test -f /tmp/x || exit 7"}, {});
    CHECK(r.behavior.exit_code == 7);
  }
  SECTION("quotes, variables and comments") {
    ScriptReading r = ReadCommand(
        {"sh", "-c",
         "GREETING='Hello  there'; echo \"$GREETING, ${NAME}\" '$NAME' # done\nsleep 1"},
        {{"NAME", "Kubernetes"}});
    CHECK(r.behavior.logs == std::vector<std::string>{"Hello  there, Kubernetes $NAME"});
    CHECK(r.behavior.exit_after == Sec(1));
  }
}

TEST_CASE("set -e ends the script at a failure outside && and || lists") {
  CHECK(ReadCommand({"sh", "-ec", "false; sleep 10"}, {}).behavior.exit_after == Sec(0));
  CHECK(ReadCommand({"sh", "-ec", "false; sleep 10"}, {}).behavior.exit_code == 1);
  CHECK(ReadCommand({"sh", "-e", "-c", "sleep 1; false; sleep 10"}, {}).behavior.exit_after == Sec(1));
  CHECK(ReadCommand({"sh", "-c", "set -eu; false; sleep 10"}, {}).behavior.exit_code == 1);
  CHECK(ReadCommand({"sh", "-c", "set -o errexit; false; sleep 10"}, {}).behavior.exit_code == 1);
  // A failure that an && list goes on from does not end it.
  ScriptReading r = ReadCommand({"sh", "-ec", "false && echo no; sleep 2"}, {});
  CHECK(r.behavior.exit_after == Sec(2));
  CHECK(r.behavior.exit_code == 0);
  CHECK(ReadCommand({"sh", "-c", "false; sleep 10"}, {}).behavior.exit_after == Sec(10));
}

TEST_CASE("hostile command lines cost bounded work") {
  // Doubling a variable forty times.
  std::string script = "A=xxxxxxxxxxxxxxxx";
  for (int i = 0; i < 40; ++i) script += "; A=$A$A";
  script += "; echo $A; sleep 1";
  ScriptReading doubled = ReadCommand({"sh", "-c", script}, {});
  CHECK_FALSE(doubled.behavior.exit_after);  // not read past the bound
  // Sleeps that add up past any clock.
  std::string sleeps = "sleep";
  for (int i = 0; i < 200; ++i) sleeps += " 999999999d";
  CHECK(ReadCommand({"sh", "-c", sleeps}, {}).behavior.exit_after == kNever);
  CHECK(ParseSleep("1e300") == kNever);
  // Past 64 KiB a command line is not read at all.
  std::string echoes;
  for (int i = 0; i < 100'000; ++i) echoes += "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;";
  CHECK(ReadCommand({"sh", "-c", echoes}, {}).behavior.empty());
  std::string some;
  for (int i = 0; i < 1000; ++i) some += "echo " + std::string(50, 'a') + ";";
  CHECK(ReadCommand({"sh", "-c", some}, {}).behavior.logs->size() == 1000);
}

TEST_CASE("printenv prints the environment") {
  const EnvList env = {{"HOSTNAME", "demo"}, {"DEMO_GREETING", "Hello from the environment"}};
  ScriptReading all = ReadCommand({"printenv"}, env);
  CHECK(all.behavior.logs ==
        std::vector<std::string>{"HOSTNAME=demo", "DEMO_GREETING=Hello from the environment"});
  CHECK(all.behavior.exit_after == Sec(0));
  ScriptReading some = ReadCommand({"printenv", "DEMO_GREETING", "MISSING"}, env);
  CHECK(some.behavior.logs == std::vector<std::string>{"Hello from the environment"});
  CHECK(some.behavior.exit_code == 1);
}

TEST_CASE("what the reading cannot know it leaves open") {
  // The image's own server: when it ends is not the command's to say.
  ScriptReading nginx = ReadCommand({"nginx", "-g", "daemon off;"}, {});
  CHECK_FALSE(nginx.behavior.exit_after);
  CHECK_FALSE(nginx.behavior.stop_after);
  // A program before others finishes; the last one runs.
  ScriptReading wget =
      ReadCommand({"sh", "-c", "wget -O /work/index.html http://info.cern.ch; sleep 5"}, {});
  CHECK(wget.behavior.exit_after == Sec(5));
  CHECK_FALSE(
      ReadCommand({"sh", "-c", "sleep 5; exec python3 -m http.server 80"}, {}).behavior.exit_after);
  // Loops run until stopped.
  CHECK(ReadCommand({"sh", "-c", "while true; do echo hello; sleep 10; done"}, {})
            .behavior.exit_after == kNever);
  CHECK(ReadCommand({"sh", "-c", "until nslookup myservice; do sleep 2; done"}, {})
            .behavior.exit_after == kNever);
  // Pipes and substitutions are not read.
  CHECK_FALSE(ReadCommand({"sh", "-c", "cat /etc/os-release | head -1"}, {}).behavior.exit_after);
  CHECK_FALSE(ReadCommand({"sh", "-c", "echo $(date)"}, {}).behavior.exit_after);
  // An interactive shell, or no command at all.
  CHECK(ReadCommand({"sh"}, {}).behavior.empty());
  CHECK(ReadCommand({}, {}).behavior.empty());
  // An unterminated quote.
  CHECK_FALSE(ReadCommand({"sh", "-c", "echo 'oops"}, {}).behavior.exit_after);
}

}  // namespace
}  // namespace podflow::runtime
