#include "stages/runtime/process/probes.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "model/field_error.h"
#include "netns/pod_network.h"
#include "stages/runtime/process/spawn.h"

namespace podflow::runtime::process {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// kubelet keeps at most this much of a probe's output.
constexpr size_t kMaxOutput = 10 * 1024;
// The version kubelet names in its probes' User-Agent.
constexpr char kUserAgent[] = "kube-probe/1.32";

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string TrimmedEnd(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string HostPort(const ProbeCheck& check) { return check.host + ":" + std::to_string(check.port); }

// Go's net.Dial words for a failed connect.
std::string DialError(const ProbeCheck& check, const boost::system::error_code& ec) {
  if (ec == asio::error::connection_refused) return "dial tcp " + HostPort(check) + ": connect: connection refused";
  if (ec == asio::error::timed_out || ec == beast::error::timeout || ec == asio::error::operation_aborted) {
    return "dial tcp " + HostPort(check) + ": i/o timeout";
  }
  if (ec.category() == boost::system::system_category()) {
    return "dial tcp " + HostPort(check) + ": connect: " + ErrnoText(ec.value());
  }
  return "dial tcp " + HostPort(check) + ": " + ec.message();
}

// The probe's address: its host as an IP (a name is resolved first).
std::optional<tcp::endpoint> Endpoint(asio::io_context& ioc, const ProbeCheck& check, std::string* error) {
  boost::system::error_code ec;
  const asio::ip::address address = asio::ip::make_address(check.host, ec);
  if (!ec) return tcp::endpoint(address, static_cast<uint16_t>(check.port));
  tcp::resolver resolver(ioc);
  auto found = resolver.resolve(check.host, std::to_string(check.port), ec);
  if (ec || found.empty()) {
    *error = "dial tcp: lookup " + check.host + ": no such host";
    return std::nullopt;
  }
  return found.begin()->endpoint();
}

}  // namespace

ProbeResult RunExecProbe(const ProbeCheck& check, int container_pidfd, bool join, const ProcessIdentity& identity,
                         const std::atomic<bool>* cancel) {
  if (check.command.empty()) return {false, "no command specified"};
  const std::string dir = check.working_dir.empty() ? "/" : check.working_dir;
  // Looked up in the container (its root, its volumes); a failed exec's
  // errno comes back through `fail`.
  const ExecPlan lookup = PlanExec(check.command[0], check.env);
  ExecArgs exec(check.command, check.env);
  // Its stdout and its stderr, each kept (kubelet shows stdout, then stderr).
  int out[2] = {-1, -1}, err[2] = {-1, -1}, fail[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(fail, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int* fd : {&out[0], &out[1], &err[0], &err[1], &fail[0], &fail[1]}) CloseFd(*fd);
    return {false, "pipe: " + ErrnoText(e)};
  }
  int pidfd = -1;
  std::optional<SignalsBlocked> blocked(std::in_place);
  // In the container's PID namespace too, as a CRI runtime's exec runs it.
  const bool beside = join && container_pidfd >= 0;
  const pid_t pid = beside ? CloneInPidNamespaceOf(container_pidfd, &pidfd) : Clone(0, &pidfd);
  if (pid == 0) {
    // Async-signal-safe calls only, as in a container's start. A container
    // whose namespaces cannot be joined (it ended) runs nothing.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::setsid();
    if (beside && ::setns(container_pidfd, CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWNET) != 0) ::_exit(127);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    if (::dup2(fail[1], 3) < 0) ::_exit(127);
    ::syscall(SYS_close_range, 4u, ~0u, 0u);
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    int step = 0;
    if (EnterIdentity(identity, &step) != 0) ::_exit(127);
    ResetSignals();
    ::fcntl(3, F_SETFD, FD_CLOEXEC);
    const int failed = ExecFirst(lookup, exec.argv.data(), exec.envp.data());
    (void)!::write(3, &failed, sizeof failed);
    ::_exit(127);
  }
  const int clone_errno = errno;
  blocked.reset();
  CloseFd(out[1]);
  CloseFd(err[1]);
  CloseFd(fail[1]);
  if (pid < 0) {
    CloseFd(out[0]);
    CloseFd(err[0]);
    CloseFd(fail[0]);
    return {false, "starting the probe: " + ErrnoText(clone_errno)};
  }
  // Its output until it has ended and its output is closed, or the timeout.
  std::string output[2];
  const auto deadline = std::chrono::steady_clock::now() + check.timeout;
  bool timed_out = false, exited = false;
  int fds_open[2] = {out[0], err[0]};
  for (int fd : fds_open) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  // Reads what pipe `i` holds now; closes it at its end.
  const auto drain = [&](int i) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fds_open[i], buf, sizeof buf);
      if (n > 0) {
        const size_t room = kMaxOutput - std::min(kMaxOutput, output[0].size() + output[1].size());
        output[i].append(buf, std::min(static_cast<size_t>(n), room));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) CloseFd(fds_open[i]);
      return;
    }
  };
  bool cancelled = false;
  while (fds_open[0] >= 0 || fds_open[1] >= 0 || !exited) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    cancelled = cancel != nullptr && cancel->load();
    if (left.count() <= 0 || cancelled) {
      timed_out = !exited;
      break;
    }
    pollfd fds[3] = {{fds_open[0], POLLIN, 0}, {fds_open[1], POLLIN, 0}, {exited ? -1 : pidfd, POLLIN, 0}};
    if (::poll(fds, 3, static_cast<int>(std::min<int64_t>(left.count(), 100))) <= 0) continue;
    if (fds[2].revents != 0) exited = true;
    for (int i = 0; i < 2; ++i) {
      if (fds_open[i] >= 0 && (fds[i].revents != 0 || exited)) drain(i);
      // Ended, and what it left holds its output open: done with it.
      if (exited) CloseFd(fds_open[i]);
    }
  }
  for (int& fd : fds_open) CloseFd(fd);
  if (timed_out) ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  // While it is a zombie its pid still names its group: what it left goes too.
  siginfo_t info{};
  ::waitid(P_PIDFD, static_cast<id_t>(pidfd), &info, WEXITED | WNOWAIT);
  ::killpg(pid, SIGKILL);
  ::waitid(P_PIDFD, static_cast<id_t>(pidfd), &info, WEXITED);
  ::close(pidfd);
  // It ended: its end of `fail` is closed, and holds an errno if its exec failed.
  // Non-blocking: a child another thread cloned meanwhile may hold its end
  // open until that child's own exec.
  int exec_errno = 0;
  ::fcntl(fail[0], F_SETFL, O_NONBLOCK);
  const ssize_t told = ::read(fail[0], &exec_errno, sizeof exec_errno);
  CloseFd(fail[0]);
  if (told == sizeof exec_errno) {
    return {false, "OCI runtime exec failed: exec failed: unable to start container process: " +
                       ExecFailure(lookup, exec_errno) + ": unknown"};
  }
  if (cancelled) return {false, "probe cancelled: the runtime is stopping"};
  if (timed_out) return {false, "command " + model::GoQuote(Joined(check.command)) + " timed out"};
  const bool ok = info.si_code == CLD_EXITED && info.si_status == 0;
  return {ok, TrimmedEnd(output[0] + output[1])};
}

// Runs `ioc` until its work is done, `limit` has passed or `cancel` turns true.
static void RunFor(asio::io_context& ioc, SimDuration limit, const std::atomic<bool>* cancel) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ioc.stopped() && std::chrono::steady_clock::now() < deadline && !(cancel && cancel->load())) {
    ioc.run_for(std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(100),
                                                               deadline - std::chrono::steady_clock::now()));
  }
}

ProbeResult RunTcpProbe(const ProbeCheck& check, const std::atomic<bool>* cancel) {
  asio::io_context ioc;
  std::string error;
  const std::optional<tcp::endpoint> endpoint = Endpoint(ioc, check, &error);
  if (!endpoint) return {false, error};
  tcp::socket socket(ioc);
  boost::system::error_code result = asio::error::timed_out;
  socket.async_connect(*endpoint, [&](const boost::system::error_code& ec) { result = ec; });
  RunFor(ioc, check.timeout, cancel);
  if (!result) return {true, ""};
  return {false, DialError(check, result)};
}

ProbeResult RunHttpProbe(const ProbeCheck& check, const std::atomic<bool>* cancel) {
  const std::string target = check.path.starts_with("/") ? check.path : "/" + check.path;
  const std::string url = "http://" + HostPort(check) + target;
  asio::io_context ioc;
  std::string error;
  const std::optional<tcp::endpoint> endpoint = Endpoint(ioc, check, &error);
  if (!endpoint) return {false, "Get \"" + url + "\": " + error};
  beast::tcp_stream stream(ioc);
  stream.expires_after(check.timeout);
  http::request<http::empty_body> request(http::verb::get, target, 11);
  request.set(http::field::host, HostPort(check));
  request.set(http::field::user_agent, kUserAgent);
  request.set(http::field::accept, "*/*");
  // The probe's own win over the defaults; a name given twice is sent twice.
  for (const auto& [name, value] : check.headers) request.erase(name);
  for (const auto& [name, value] : check.headers) {
    if (value.find_first_of("\r\n") != std::string::npos) return {false, "Get \"" + url + "\": invalid header field value for \"" + name + "\""};
    request.insert(name, value);
  }
  request.set(http::field::connection, "close");
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxOutput * 100);
  boost::system::error_code failed;
  bool connected = false;
  stream.async_connect(*endpoint, [&](const boost::system::error_code& ec) {
    if (ec) {
      failed = ec;
      return;
    }
    connected = true;
    http::async_write(stream, request, [&](const boost::system::error_code& wec, size_t) {
      if (wec) {
        failed = wec;
        return;
      }
      // The status decides: the body is not waited for.
      http::async_read_header(stream, buffer, parser, [&](const boost::system::error_code& rec, size_t) { failed = rec; });
    });
  });
  RunFor(ioc, check.timeout + SimDuration(100), cancel);  // the stream's own timer ends it first
  if (!parser.is_header_done()) {
    if (failed == beast::error::timeout) {
      // Go's client words a connect or a response that took too long the same way.
      return {false, "Get \"" + url + "\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"};
    }
    if (!connected) return {false, "Get \"" + url + "\": " + DialError(check, failed)};
    return {false, "Get \"" + url + "\": EOF"};
  }
  const unsigned status = parser.get().result_int();
  if (status >= 200 && status < 400) return {true, ""};
  return {false, "HTTP probe failed with statuscode: " + std::to_string(status)};
}

ProbeWorkers::ProbeWorkers(int threads, uint64_t first_id) : next_id_(first_id) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

ProbeWorkers::~ProbeWorkers() {
  cancel_ = true;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (Job& job : jobs_) {
      if (job.pidfd >= 0) ::close(job.pidfd);
    }
    jobs_.clear();
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

uint64_t ProbeWorkers::Start(std::string pod_key, ProbeCheck check, int container_pidfd, bool join,
                             ProcessIdentity identity, bool errored) {
  std::lock_guard lock(mu_);
  const uint64_t id = next_id_++;
  if (errored) {
    ProbeOutcome outcome{id, std::move(pod_key), false, "", WallClockNow()};
    outcome.errored = true;
    done_.push_back(std::move(outcome));
    return id;
  }
  jobs_.push_back(Job{id, std::move(pod_key), std::move(check), container_pidfd, join, std::move(identity)});
  wake_.notify_one();
  return id;
}

std::vector<ProbeOutcome> ProbeWorkers::Take() {
  std::lock_guard lock(mu_);
  return std::exchange(done_, {});
}

void ProbeWorkers::Work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    ProbeResult result;
    try {
      switch (job.check.type) {
        case ProbeCheck::Type::kExec:
          result = RunExecProbe(job.check, job.pidfd, job.join, job.identity, &cancel_);
          break;
        case ProbeCheck::Type::kTcp:
        case ProbeCheck::Type::kHttp: {
          // From the node's network, where kubelet's prober is: this thread
          // only, for this probe.
          std::optional<netns::ThreadInNamespace> from;
          if (!job.check.network.empty()) from.emplace(job.check.network);
          if (from && !from->status().ok()) {
            result = {false, from->status().message()};
          } else {
            result = job.check.type == ProbeCheck::Type::kTcp ? RunTcpProbe(job.check, &cancel_)
                                                               : RunHttpProbe(job.check, &cancel_);
          }
          break;
        }
      }
    } catch (const std::exception& e) {
      result = {false, std::string("probe failed: ") + e.what()};  // a header Beast refuses, say
    }
    // A container that ended meanwhile: no result (its exit is what counts).
    pollfd ended{job.pidfd, POLLIN, 0};
    const bool gone = job.pidfd >= 0 && ::poll(&ended, 1, 0) > 0;
    if (job.pidfd >= 0) ::close(job.pidfd);
    ProbeOutcome outcome{job.id, std::move(job.pod_key), result.ok, std::move(result.output), WallClockNow()};
    outcome.errored = gone;
    std::lock_guard lock(mu_);
    done_.push_back(std::move(outcome));
  }
}

}  // namespace podflow::runtime::process
