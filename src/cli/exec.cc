// podflow exec: kubectl exec — a command run in a running container, through
// the API's pods/exec subresource (the apiserver asks the node's kubelet,
// the runtime stage, which runs it beside the container on a process node).
// The stream is a session of turns: this side's input in, the command's
// output out, until it has ended; its exit code becomes this one's, with
// kubectl's "command terminated with exit code N".
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>

#include "cli/api_session.h"
#include "cli/commands.h"
#include "cli/pod_target.h"
#include "pod_generated.h"

namespace podflow::cli {
namespace {

struct ExecFlags : ConnectionFlags {
  std::string target;  // POD or pod/POD
  std::vector<std::string> command;
  std::string container;
  bool with_stdin = false;
  bool tty = false;
  std::string namespace_ = "default";
};

// How much input one turn carries at most.
constexpr size_t kInputPerTurn = 64 * 1024;
// While neither side has anything to say, turns are spaced out up to this
// (input typed meanwhile goes at once): an idle session holds the API's and
// the kubelet's threads for a fraction of the time only.
constexpr std::chrono::milliseconds kMaxIdleGap{250};

std::atomic<bool> resized{false};
void OnResize(int) { resized = true; }

// The terminal as it was before raw mode, for a signal's handler too.
termios saved_terminal{};
volatile sig_atomic_t terminal_raw = 0;

// A signal that ends this process (SIGTERM, SIGHUP, SIGPIPE, ...) puts the
// terminal back first; tcsetattr is async-signal-safe.
void RestoreAndDie(int signal) {
  if (terminal_raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_terminal);
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

// The terminal put in raw mode while the command has it, and put back.
class RawTerminal {
 public:
  RawTerminal() {
    if (::tcgetattr(STDIN_FILENO, &saved_terminal) != 0) return;
    for (int signal : {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGPIPE}) ::signal(signal, RestoreAndDie);
    termios raw = saved_terminal;
    ::cfmakeraw(&raw);
    terminal_raw = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (terminal_raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_terminal);
    terminal_raw = 0;
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
};

// The terminal's size, or 0 x 0 when there is none.
std::pair<uint16_t, uint16_t> TerminalSize() {
  winsize size{};
  for (int fd : {STDOUT_FILENO, STDIN_FILENO}) {
    if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_row > 0) return {size.ws_row, size.ws_col};
  }
  return {0, 0};
}

void WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader went away
    done += static_cast<size_t>(n);
  }
}

// What is on stdin now (up to one turn's worth); sets `ended` at its end.
std::string ReadAvailableInput(bool& ended) {
  std::string input;
  char buf[16384];
  while (input.size() < kInputPerTurn) {
    pollfd in{STDIN_FILENO, POLLIN, 0};
    if (::poll(&in, 1, 0) <= 0) break;
    if ((in.revents & POLLNVAL) != 0) {  // no stdin at all: its end
      ended = true;
      break;
    }
    const ssize_t n = ::read(STDIN_FILENO, buf, std::min(sizeof buf, kInputPerTurn - input.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ended = true;
      break;
    }
    input.append(buf, static_cast<size_t>(n));
  }
  return input;
}

// The refusal as kubectl prints it.
void PrintRefusal(const ApiResponse& reply) {
  if (!reply.exec.error.empty()) {
    std::fprintf(stderr, "error: %s\n", reply.exec.error.c_str());
  } else {
    std::fprintf(stderr, "%s\n", model::KubectlMessage(reply.status).c_str());
  }
}

int RunExec(ExecFlags flags, int args_after_dash) {
  const std::string name = PodName(flags.target);
  if (name.empty()) {
    std::fprintf(stderr, "error: pod, type/name or --filename must be specified\n");
    return 1;
  }
  // The command comes after "--" only (kubectl 1.31 dropped the old form).
  if (!flags.command.empty() && args_after_dash != static_cast<int>(flags.command.size())) {
    std::fprintf(stderr,
                 "error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\n"
                 "See 'podflow exec -h' for help and examples\n");
    return 1;
  }
  if (flags.command.empty()) {
    std::fprintf(stderr, "error: you must specify at least one command for the container\n");
    return 1;
  }
  Result<std::unique_ptr<ApiSession>> api = Connect(flags);
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return 1;
  }
  std::optional<KeyValue> read = ReadPod(**api, flags.namespace_, name);
  if (!read) return 1;
  const api::Pod& stored = *flatbuffers::GetRoot<api::Pod>(read->value.data());
  const api::PodPhase phase = stored.status() ? stored.status()->phase() : api::PodPhase::Pending;
  if (phase == api::PodPhase::Succeeded || phase == api::PodPhase::Failed) {
    std::fprintf(stderr, "error: cannot exec into a container in a completed pod; current phase is %s\n",
                 api::EnumNamePodPhase(phase));
    return 1;
  }
  // kubectl: a terminal only for input that comes from one.
  if (flags.tty && !flags.with_stdin) flags.tty = false;
  if (flags.tty && !::isatty(STDIN_FILENO)) {
    std::fprintf(stderr, "Unable to use a TTY - input is not a terminal or the right kind of file\n");
    flags.tty = false;
  }

  ApiCall call;
  call.verb = "create";
  call.resource = "pods";
  call.subresource = "exec";
  call.namespace_ = flags.namespace_;
  call.name = name;
  ApiCall::ExecOptions& start = call.exec.emplace();
  start.container = flags.container.empty() ? DefaultContainer(stored) : flags.container;
  start.command = flags.command;
  start.with_stdin = flags.with_stdin;
  start.tty = flags.tty;
  if (flags.tty) std::tie(start.rows, start.cols) = TerminalSize();
  Result<ApiResponse> reply = (*api)->Call(call);
  if (!reply.ok()) {
    std::fprintf(stderr, "error: %s\n", reply.status().message().c_str());
    return 1;
  }
  if (!reply->status.success()) {
    PrintRefusal(*reply);
    return 1;
  }

  std::optional<RawTerminal> raw;
  if (flags.tty) {
    raw.emplace();
    ::signal(SIGWINCH, OnResize);
  }
  call.exec.reset();
  ApiCall::ExecInput& turn = call.exec_input.emplace();
  turn.session = reply->exec.session;
  bool input_ended = !flags.with_stdin, input_closed = !flags.with_stdin;
  uint64_t input_waiting = 0;  // sent, not taken by the command yet: no more until it is
  std::chrono::milliseconds idle_gap{0};
  while (true) {
    if (idle_gap.count() > 0) {
      // Input typed meanwhile ends the wait, when it can be sent.
      pollfd in{input_ended || input_waiting > 0 ? -1 : STDIN_FILENO, POLLIN, 0};
      ::poll(&in, 1, static_cast<int>(idle_gap.count()));
    }
    turn.data = input_ended || input_waiting > 0 ? std::string() : ReadAvailableInput(input_ended);
    turn.close_stdin = input_ended && !input_closed;
    input_closed = input_ended;
    turn.rows = turn.cols = 0;
    if (resized.exchange(false)) std::tie(turn.rows, turn.cols) = TerminalSize();
    reply = (*api)->Call(call);
    if (!reply.ok()) {
      raw.reset();
      std::fprintf(stderr, "error: %s\n", reply.status().message().c_str());
      return 1;
    }
    if (!reply->status.success()) {
      raw.reset();
      PrintRefusal(*reply);
      return 1;
    }
    WriteAll(STDOUT_FILENO, reply->exec.out);
    WriteAll(STDERR_FILENO, reply->exec.err);
    if (reply->exec.exited) break;
    input_waiting = reply->exec.input_waiting;
    const bool quiet = reply->exec.out.empty() && reply->exec.err.empty() && turn.data.empty();
    idle_gap = quiet ? std::min(idle_gap + std::chrono::milliseconds(50), kMaxIdleGap) : std::chrono::milliseconds(0);
  }
  raw.reset();
  const int code = reply->exec.exit_code;
  if (code != 0) std::fprintf(stderr, "command terminated with exit code %d\n", code);
  return code;
}

}  // namespace

void AddExecCommand(CLI::App& app, CommandAction& action, int args_after_dash) {
  auto flags = std::make_shared<ExecFlags>();
  CLI::App* cmd = app.add_subcommand("exec", "Run a command in a container, as kubectl exec: podflow exec POD -- CMD ...");
  cmd->add_option("pod", flags->target, "POD or pod/POD")->required();
  cmd->add_option("command", flags->command, "The command and its arguments, after --");
  cmd->add_option("-c,--container", flags->container, "The container (default: the pod's only or first one)");
  cmd->add_flag("-i,--stdin", flags->with_stdin, "Pass stdin to the command");
  cmd->add_flag("-t,--tty", flags->tty, "Give the command a terminal (with -i, when stdin is one)");
  cmd->add_option("-n,--namespace", flags->namespace_, "The pod's namespace");
  AddConnectionFlags(cmd, flags.get());
  cmd->callback([&action, flags, args_after_dash] {
    action = [flags, args_after_dash] { return RunExec(*flags, args_after_dash); };
  });
}

}  // namespace podflow::cli
