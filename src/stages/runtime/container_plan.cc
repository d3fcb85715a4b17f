#include "stages/runtime/container_plan.h"

#include <algorithm>

namespace podflow::runtime {
namespace {

using model::kNever;

constexpr size_t kMaxExpansionBytes = 1024 * 1024;  // one expanded value

const std::string* Annotation(const api::PodT& pod, std::string_view key) {
  if (pod.metadata == nullptr) return nullptr;
  for (const auto& a : pod.metadata->annotations) {
    if (a && a->key == key) return &a->value;
  }
  return nullptr;
}

// The file an exec probe looks at: `cat F`, `test -e F`, `[ -f F ]`,
// `ls F`, directly or through `sh -c`; empty when it is not such a probe.
struct ProbedFile {
  std::string path;
  std::string tool;  // "cat", "ls", "test"
};

std::optional<ProbedFile> FileOfExec(const std::vector<std::string>& command) {
  std::vector<std::string> words = command;
  if (words.size() == 3 &&
      (words[0] == "sh" || words[0] == "/bin/sh" || words[0] == "bash" ||
       words[0] == "/bin/bash") &&
      words[1] == "-c") {
    std::vector<std::string> split;
    std::string w;
    for (char ch : words[2]) {
      if (ch == ' ' || ch == '\t') {
        if (!w.empty()) split.push_back(std::move(w));
        w.clear();
      } else {
        w += ch;
      }
    }
    if (!w.empty()) split.push_back(std::move(w));
    words = std::move(split);
  }
  if (words.empty()) return std::nullopt;
  std::string tool = words[0];
  if (const size_t slash = tool.rfind('/'); slash != std::string::npos)
    tool = tool.substr(slash + 1);
  if ((tool == "cat" || tool == "ls") && words.size() == 2) return ProbedFile{words[1], tool};
  if (tool == "test" && words.size() == 3 && words[1].size() == 2 && words[1][0] == '-') {
    return ProbedFile{words[2], "test"};
  }
  if (tool == "[" && words.size() == 4 && words[3] == "]" && words[1].size() == 2 &&
      words[1][0] == '-') {
    return ProbedFile{words[2], "test"};
  }
  return std::nullopt;
}

// The spans in which `path` is absent, from the script's reading.
std::vector<FailSpan> AbsentSpans(const ScriptReading& reading, const std::string& path) {
  std::vector<FailSpan> out;
  bool absent = false;
  SimDuration absent_since{0};
  bool seen = false;
  for (const ScriptFile& f : reading.files) {
    if (f.path != path) continue;
    if (!seen && f.exists) absent = true;  // created by the script: absent from the start
    seen = true;
    if (!f.exists && !absent) {
      absent = true;
      absent_since = f.at;
    }
    if (f.exists && absent) {
      if (f.at > absent_since) out.push_back({absent_since, f.at, true});
      absent = false;
    }
  }
  if (absent) out.push_back({absent_since, kNever, true});
  return out;
}

SimDuration Plus(SimDuration a, SimDuration b) { return a >= kNever - b ? kNever : a + b; }

int32_t ProbePort(const api::IntOrStringT* port, const api::ContainerT& c) {
  if (port == nullptr) return 0;
  if (port->type != api::IntOrStringType::String) return port->int_val;
  for (const auto& p : c.ports) {
    if (p && p->name == port->str_val) return p->container_port;
  }
  return 0;
}

}  // namespace

std::optional<HookRun> PostStartHook(const ContainerPlan& plan, const api::ContainerT& c, const EnvList& env) {
  const api::LifecycleHandlerT* hook = c.lifecycle ? c.lifecycle->post_start.get() : nullptr;
  if (hook == nullptr) return std::nullopt;
  HookRun run;
  if (hook->sleep) {
    run.takes = SimDuration(std::clamp<int64_t>(hook->sleep->seconds, 0, 1'000'000'000) * 1000);
  } else if (hook->exec) {
    const ScriptReading r = ReadCommand(hook->exec->command, env);
    run.takes = r.behavior.exit_after.value_or(SimDuration(0));
    run.failed = r.behavior.exit_code.value_or(0) != 0;
  } else if (hook->http_get) {
    // Refused while the container does not listen yet; kubelet takes any
    // answer, whatever its status code.
    run.failed = plan.behavior.ready_after && plan.behavior.ready_after->count() > 0;
  }
  return run;
}

const char* ProbeName(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kStartup:
      return "Startup";
    case ProbeKind::kLiveness:
      return "Liveness";
    case ProbeKind::kReadiness:
      return "Readiness";
  }
  return "";
}

std::string ExpandKubeVars(std::string_view text, const EnvList& env) {
  std::string out;
  if (text.find('$') == std::string_view::npos) return std::string(text);
  for (size_t i = 0; i < text.size(); ++i) {
    if (out.size() > kMaxExpansionBytes) return std::string(text);  // kept as written
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[i + 1];
    if (next == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (next == '(') {
      const size_t close = text.find(')', i + 2);
      if (close == std::string_view::npos) {
        out += "$(";
        ++i;
        continue;
      }
      const std::string_view name = text.substr(i + 2, close - i - 2);
      auto it =
          std::find_if(env.rbegin(), env.rend(), [&](const auto& e) { return e.first == name; });
      out += it == env.rend() ? "$(" + std::string(name) + ")" : it->second;
      i = close;
      continue;
    }
    out += '$';
  }
  return out;
}

EnvList ContainerEnv(const api::PodT& pod, const EnvList& kubelet_env) {
  const std::string hostname = pod.spec && !pod.spec->hostname.empty() ? pod.spec->hostname
                               : pod.metadata                           ? pod.metadata->name
                                                                        : "";
  EnvList env = {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                 {"HOSTNAME", hostname},
                 {"HOME", "/root"}};
  env.insert(env.end(), kubelet_env.begin(), kubelet_env.end());
  return env;
}

ContainerPlan PlanContainer(const api::PodT& pod, const api::ContainerT& c,
                            const model::ResolvedImage* image, const EnvList& kubelet_env) {
  ContainerPlan plan;
  const EnvList env = ContainerEnv(pod, kubelet_env);
  std::vector<std::string> argv;
  for (const auto& s : c.command) argv.push_back(ExpandKubeVars(s, kubelet_env));
  for (const auto& s : c.args) argv.push_back(ExpandKubeVars(s, kubelet_env));
  // Args without a command go to the image's entrypoint: a shell image's
  // is the shell (busybox's `sh`), which then runs them as a command line.
  if (c.command.empty() && !argv.empty() && argv[0] != "-c") {
    plan.reading = ReadCommand(argv, env);
  } else if (!c.command.empty()) {
    plan.reading = ReadCommand(argv, env);
  }
  if (image != nullptr && image->behavior != nullptr) {
    // The image's own behaviour describes its entrypoint: a command of the
    // pod's own that the runtime could read replaces it.
    if (plan.reading.behavior.exit_after) {
      model::SimBehavior from_image = *image->behavior;
      from_image.exit_after.reset();
      from_image.exit_code.reset();
      from_image.logs.reset();
      plan.behavior = from_image;
      plan.behavior.Overlay(plan.reading.behavior);
    } else {
      plan.behavior = plan.reading.behavior;
      plan.behavior.Overlay(*image->behavior);
    }
  } else {
    plan.behavior = plan.reading.behavior;
  }
  const std::string container_key = std::string(model::kContainerBehaviorPrefix) + c.name;
  for (const std::string& key : {std::string(model::kPodBehaviorAnnotation), container_key}) {
    const std::string* text = Annotation(pod, key);
    if (text == nullptr) continue;
    Result<model::SimBehavior> over = model::ParseSimBehaviorText(*text, key);
    if (!over.ok()) {
      plan.config_error = over.status().message();
      break;
    }
    plan.behavior.Overlay(*over);
  }
  if (plan.behavior.logs) {
    const bool own = plan.reading.behavior.logs == plan.behavior.logs;
    plan.log_at = own ? std::move(plan.reading.log_at) : std::vector<SimDuration>(plan.behavior.logs->size(), SimDuration(0));
  }
  return plan;
}

std::vector<FailSpan> FailSpans(const ContainerPlan& plan, ProbeKind kind,
                                const api::ProbeT& probe) {
  const model::SimBehavior& b = plan.behavior;
  std::vector<FailSpan> spans;
  if (kind != ProbeKind::kLiveness && b.ready_after && b.ready_after->count() > 0) {
    spans.push_back({SimDuration(0), *b.ready_after, false});
  }
  if (kind == ProbeKind::kReadiness && b.unready_after && *b.unready_after != kNever) {
    const SimDuration length = b.unready_for.value_or(kNever);
    if (length.count() > 0)
      spans.push_back({*b.unready_after, Plus(*b.unready_after, length), true});
  }
  if (kind == ProbeKind::kLiveness && b.liveness_fail_after && *b.liveness_fail_after != kNever) {
    spans.push_back({*b.liveness_fail_after, kNever, true});
  }
  if (probe.exec) {
    if (std::optional<ProbedFile> file = FileOfExec(probe.exec->command);
        file && plan.reading.Tracks(file->path)) {
      std::vector<FailSpan> absent = AbsentSpans(plan.reading, file->path);
      spans.insert(spans.end(), absent.begin(), absent.end());
    }
  }
  std::sort(spans.begin(), spans.end(),
            [](const FailSpan& a, const FailSpan& b) { return a.from < b.from; });
  return spans;
}

std::string ProbeFailureOutput(const api::ProbeT& probe, const api::ContainerT& c,
                               const FailSpan& span, const std::string& pod_ip) {
  if (probe.exec) {
    std::optional<ProbedFile> file = FileOfExec(probe.exec->command);
    if (!file) return "";
    if (file->tool == "cat")
      return "cat: can't open '" + file->path + "': No such file or directory";
    if (file->tool == "ls") return "ls: " + file->path + ": No such file or directory";
    return "";
  }
  if (probe.http_get) {
    const api::HTTPGetActionT& get = *probe.http_get;
    const std::string host = get.host.empty() ? pod_ip : get.host;
    const std::string hostport = host + ":" + std::to_string(ProbePort(get.port.get(), c));
    if (!span.listening) {
      const std::string scheme = get.scheme == api::URIScheme::HTTPS ? "https" : "http";
      const std::string path = get.path.empty() ? "/" : get.path;
      return "Get \"" + scheme + "://" + hostport + path + "\": dial tcp " + hostport +
             ": connect: connection refused";
    }
    return "HTTP probe failed with statuscode: 500";
  }
  if (probe.tcp_socket) {
    const std::string host = probe.tcp_socket->host.empty() ? pod_ip : probe.tcp_socket->host;
    return "dial tcp " + host + ":" + std::to_string(ProbePort(probe.tcp_socket->port.get(), c)) +
           ": connect: connection refused";
  }
  if (probe.grpc) {
    if (!span.listening) {
      return "timeout: failed to connect service \"" + pod_ip + ":" +
             std::to_string(probe.grpc->port) + "\" within 1s";
    }
    return "service unhealthy (responded with \"NOT_SERVING\")";
  }
  return "";
}

std::optional<ProbeCheck> RealProbeCheck(const api::ProbeT& probe, const api::ContainerT& c,
                                         const std::string& pod_ip, const EnvList& env) {
  ProbeCheck check;
  check.timeout = SimDuration(int64_t{probe.timeout_seconds > 0 ? probe.timeout_seconds : 1} * 1000);
  if (probe.exec) {
    check.type = ProbeCheck::Type::kExec;
    // kubelet expands $(VAR) in a probe's command against the container's
    // own env values only (one from a source counts as empty).
    EnvList statics;
    for (const auto& e : c.env) {
      if (e) statics.emplace_back(e->name, e->value_from ? std::string() : e->value);
    }
    for (const std::string& word : probe.exec->command) check.command.push_back(ExpandKubeVars(word, statics));
    check.env = env;
    check.working_dir = c.working_dir;
    return check;
  }
  if (probe.tcp_socket) {
    check.type = ProbeCheck::Type::kTcp;
    check.host = probe.tcp_socket->host.empty() ? pod_ip : probe.tcp_socket->host;
    check.port = ProbePort(probe.tcp_socket->port.get(), c);
    return check;
  }
  if (probe.http_get && probe.http_get->scheme != api::URIScheme::HTTPS) {
    const api::HTTPGetActionT& get = *probe.http_get;
    check.type = ProbeCheck::Type::kHttp;
    check.host = get.host.empty() ? pod_ip : get.host;
    check.port = ProbePort(get.port.get(), c);
    check.path = get.path.empty() ? "/" : get.path;
    for (const auto& h : get.http_headers) {
      if (h) check.headers.emplace_back(h->name, h->value);
    }
    return check;
  }
  return std::nullopt;
}

}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

// nginx's welcome page, from a server python3 (which the build needs) runs.
constexpr char kWelcomeServer[] =
    "import http.server, sys\n"
    "page = b'<!DOCTYPE html>\\n<html>\\n<head>\\n<title>Welcome to nginx!</title>\\n</head>\\n<body>\\n"
    "<h1>Welcome to nginx!</h1>\\n</body>\\n</html>\\n'\n"
    "class Welcome(http.server.BaseHTTPRequestHandler):\n"
    "    server_version = 'nginx'\n"
    "    def do_GET(self):\n"
    "        self.send_response(200)\n"
    "        self.send_header('Content-Type', 'text/html')\n"
    "        self.send_header('Content-Length', str(len(page)))\n"
    "        self.end_headers()\n"
    "        self.wfile.write(page)\n"
    "    def log_message(self, fmt, *args):\n"
    "        sys.stdout.write('%s - - [%s] \"%s\"\\n' % (self.address_string(), self.log_date_time_string(), self.requestline))\n"
    "        sys.stdout.flush()\n"
    "http.server.ThreadingHTTPServer(('0.0.0.0', int(sys.argv[1])), Welcome).serve_forever()\n";

// The e2e-test-images agnhost, whose subcommands the Kubernetes docs' and
// tests' manifests run as args: liveness (8080: /healthz answers 200 for
// the first 10 s, then 500), serve-hostname (9376: the hostname), netexec
// (--http-port, 8080: /hostname, /echo?msg=, /clientip, /exit?code=,
// /healthz, /), pause (until SIGTERM or SIGINT). Run by python3.
constexpr char kAgnhost[] = R"py(import http.server, os, signal, socket, sys, time, urllib.parse
def flag(name, default):
    for a in sys.argv[2:]:
        if a.startswith('--' + name + '='):
            return a.split('=', 1)[1]
    return default
def serve(port, answer):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            url = urllib.parse.urlparse(self.path)
            code, body = answer(url.path, urllib.parse.parse_qs(url.query), self.client_address)
            data = body.encode()
            self.send_response(code)
            self.send_header('Content-Type', 'text/plain; charset=utf-8')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        def log_message(self, fmt, *args):
            pass
    server = http.server.ThreadingHTTPServer(('0.0.0.0', port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print('Started HTTP server on port %d' % port, flush=True)
    server.serve_forever()
started = time.time()
def liveness(path, query, client):
    if path == '/healthz':
        elapsed = time.time() - started
        if elapsed > 10:
            return 500, 'error: %s' % elapsed
        return 200, 'ok'
    return 404, '404 page not found\n'
def netexec(path, query, client):
    if path in ('/hostname', '/hostName'):
        return 200, socket.gethostname()
    if path == '/echo':
        return 200, query.get('msg', [''])[0]
    if path == '/clientip':
        return 200, '%s:%d' % client
    if path == '/exit':
        os._exit(int(query.get('code', ['0'])[0]))
    if path == '/healthz':
        return 200, ''
    return 200, 'NOW: %s' % time.strftime('%Y-%m-%d %H:%M:%S')
command = sys.argv[1] if len(sys.argv) > 1 else ''
if command == 'liveness':
    serve(8080, liveness)
elif command == 'serve-hostname':
    serve(int(flag('port', '9376')), lambda *_: (200, socket.gethostname()))
elif command == 'netexec':
    serve(int(flag('http-port', '8080')), netexec)
elif command == 'pause':
    print('Paused', flush=True)
    def stop(sig, _):
        print('Shutting down after receiving signal: %s.' % signal.Signals(sig).name, flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        signal.pause()
else:
    sys.stderr.write('Error: unknown command "%s" for "agnhost"\n' % command)
    sys.exit(1)
)py";

struct WellKnown {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
};

WellKnown WellKnownImage(const std::string& repository, const api::ContainerT& c) {
  const auto is = [&](std::string_view name) {
    return repository == "docker.io/library/" + std::string(name) || repository.ends_with("/" + std::string(name));
  };
  if (is("busybox")) return {{}, {"sh"}};
  if (is("alpine")) return {{}, {"/bin/sh"}};
  if (is("debian") || is("ubuntu")) return {{}, {"bash"}};
  if (is("nginx") || is("nginx-unprivileged")) {
    int32_t port = 80;
    if (!c.ports.empty() && c.ports[0] && c.ports[0]->container_port > 0) port = c.ports[0]->container_port;
    return {{}, {"python3", "-c", kWelcomeServer, std::to_string(port)}};
  }
  // agnhost's entrypoint runs the subcommand its args name.
  if (is("agnhost")) return {{"python3", "-c", kAgnhost}, {}};
  // The pause image waits for its end.
  if (is("pause")) return {{"python3", "-c", kAgnhost, "pause"}, {}};
  return {};
}

}  // namespace

std::vector<std::string> ProcessArgv(const api::ContainerT& c, const model::ResolvedImage* image,
                                     const EnvList& env) {
  WellKnown config;
  if (image != nullptr && image->listed != nullptr &&
      (!image->listed->entrypoint.empty() || !image->listed->cmd.empty())) {
    config = {image->listed->entrypoint, image->listed->cmd};
  } else {
    config = WellKnownImage(model::NormalizeImageReference(c.image).repository, c);
  }
  std::vector<std::string> argv;
  const auto add = [&](const std::vector<std::string>& from, bool expand) {
    for (const std::string& a : from) argv.push_back(expand ? ExpandKubeVars(a, env) : a);
  };
  if (!c.command.empty()) {
    add(c.command, true);
  } else {
    add(config.entrypoint, false);
  }
  if (!c.args.empty()) {
    add(c.args, true);
  } else if (c.command.empty()) {
    add(config.cmd, false);
  }
  return argv;
}

}  // namespace podflow::runtime
