// `podflow scale` and `podflow rollout status|history|undo|restart|pause|
// resume`: kubectl's commands for a Deployment's rollout, over the API. As
// kubectl does, they are clients of the controller: undo patches the
// template of an earlier ReplicaSet back in, restart stamps the template,
// status reads the Deployment's status until it is rolled out.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <thread>

#include "apps_generated.h"
#include "cli/api_session.h"
#include "cli/commands.h"
#include "cli/print_util.h"
#include "cli/tabwriter.h"
#include "model/api_status.h"
#include "model/codec.h"
#include "model/labels.h"
#include "model/objects.h"
#include "model/pod_template.h"

namespace podflow::cli {
namespace {

constexpr std::string_view kRevision = "deployment.kubernetes.io/revision";
constexpr std::string_view kChangeCause = "kubernetes.io/change-cause";
// The annotations a rollback keeps of the Deployment, as kubectl does (the
// rest come from the ReplicaSet rolled back to).
constexpr std::string_view kKeptOnRollback[] = {"kubectl.kubernetes.io/last-applied-configuration", kRevision,
                                                "deployment.kubernetes.io/revision-history",
                                                "deployment.kubernetes.io/desired-replicas",
                                                "deployment.kubernetes.io/max-replicas",
                                                "deprecated.deployment.rollback.to"};

struct RolloutOptions : ConnectionFlags {
  std::vector<std::string> args;  // TYPE/NAME or TYPE NAME
  std::string namespace_;
  int replicas = -1;           // scale --replicas
  int current_replicas = -1;   // scale --current-replicas
  int64_t to_revision = 0;     // undo --to-revision
  bool watch = true;           // status --watch
  int64_t timeout_seconds = 0;  // status --timeout (0: forever)
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

// The object the arguments name: TYPE/NAME or TYPE NAME.
struct Named {
  const model::KindInfo* kind = nullptr;
  std::string namespace_, name;
};

Result<Named> Resolve(const RolloutOptions& options) {
  std::string type, name;
  if (options.args.size() == 1 && options.args[0].find('/') != std::string::npos) {
    type = options.args[0].substr(0, options.args[0].find('/'));
    name = options.args[0].substr(options.args[0].find('/') + 1);
  } else if (options.args.size() == 2) {
    type = options.args[0];
    name = options.args[1];
  } else {
    return Status::Invalid("required resource not specified");
  }
  const model::KindInfo* kind = model::FindResource(Lower(type));
  if (kind == nullptr) return Status::NotFound("the server doesn't have a resource type \"" + type + "\"");
  if (name.empty()) return Status::Invalid("resource name may not be empty");
  return Named{kind, options.namespace_.empty() ? "default" : options.namespace_, name};
}

ApiCall On(const Named& n, std::string verb) {
  ApiCall call;
  call.verb = std::move(verb);
  call.resource = ResourceArg(*n.kind);
  call.namespace_ = n.namespace_;
  call.name = n.name;
  return call;
}

// The stored object, or kubectl's message for why there is none.
Result<KeyValue> Get(ApiSession& api, const Named& n) {
  Result<ApiResponse> got = api.Call(On(n, "get"));
  if (!got.ok()) return got.status();
  if (!got->status.success()) return Status::Invalid(model::KubectlMessage(got->status));
  if (got->objects.empty()) return Status::Internal("the server returned no object");
  return got->objects[0];
}

// A patch; kubectl's message when refused.
Status Patch(ApiSession& api, const Named& n, std::string type, std::string body) {
  ApiCall call = On(n, "patch");
  call.patch_type = std::move(type);
  call.body = std::move(body);
  Result<ApiResponse> patched = api.Call(call);
  if (!patched.ok()) return patched.status();
  if (!patched->status.success()) return Status::Invalid(model::KubectlMessage(patched->status));
  return Status::Ok();
}

Result<std::unique_ptr<ApiSession>> Open(const RolloutOptions& options, Named* named) {
  Result<Named> n = Resolve(options);
  if (!n.ok()) return n.status();
  *named = *n;
  return Connect(options);
}

// ---- scale

int RunScale(const RolloutOptions& options) {
  if (options.replicas < 0) return Fail("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0");
  Named n;
  Result<std::unique_ptr<ApiSession>> api = Open(options, &n);
  if (!api.ok()) return Fail(api.status().message());
  const std::string_view kind = n.kind->kind;
  if (kind != "Deployment" && kind != "ReplicaSet" && kind != "StatefulSet") {
    return Fail("cannot scale " + Lower(kind) + ": no scale subresource");
  }
  Result<KeyValue> stored = Get(**api, n);
  if (!stored.ok()) return Fail(stored.status().message());
  const model::Value object = model::ToValue(*n.kind, stored->value);
  const model::Value* spec = object.Find("spec");
  const model::Value* replicas = spec != nullptr ? spec->Find("replicas") : nullptr;
  const int64_t current = replicas != nullptr && replicas->kind() == model::Value::Kind::kInt ? replicas->int_value() : 1;
  if (options.current_replicas >= 0 && current != options.current_replicas) {
    return Fail("Expected replicas to be " + std::to_string(options.current_replicas) + ", was " +
                std::to_string(current));
  }
  // Guarded by the revision read, as kubectl's precondition is.
  const std::string body = R"({"metadata":{"resourceVersion":")" + std::to_string(stored->mod_revision.value()) +
                           R"("},"spec":{"replicas":)" + std::to_string(options.replicas) + "}}";
  if (Status patched = Patch(**api, n, "merge", body); !patched.ok()) return Fail(patched.message());
  std::printf("%s scaled\n", ObjectName(*n.kind, n.name).c_str());
  return 0;
}

// ---- rollout

Result<std::unique_ptr<api::DeploymentT>> GetDeployment(ApiSession& api, const Named& n) {
  if (n.kind->kind != "Deployment") {
    return Status::Invalid("no rollout support for " + Lower(n.kind->kind) + " here; only deployments");
  }
  Result<KeyValue> stored = Get(api, n);
  if (!stored.ok()) return stored.status();
  return model::Unpack<api::Deployment>(stored->value);
}

// The Deployment's ReplicaSets by revision.
Result<std::map<int64_t, KeyValue>> Revisions(ApiSession& api, const api::DeploymentT& d) {
  ApiCall list;
  list.verb = "list";
  list.resource = ResourceArg(model::Kind("ReplicaSet"));
  list.namespace_ = d.metadata->namespace_;
  Result<ApiResponse> listed = api.ListAll(list);
  if (!listed.ok()) return listed.status();
  if (!listed->status.success()) return Status::Invalid(model::KubectlMessage(listed->status));
  std::map<int64_t, KeyValue> out;
  for (const KeyValue& kv : listed->objects) {
    const api::ReplicaSet* rs = flatbuffers::GetRoot<api::ReplicaSet>(kv.value.data());
    const api::ObjectMeta* meta = rs->metadata();
    if (meta == nullptr || meta->owner_references() == nullptr) continue;
    const bool ours = std::any_of(meta->owner_references()->begin(), meta->owner_references()->end(),
                                  [&](const api::OwnerReference* ref) {
                                    return ref->controller().value_or(false) && ref->uid() != nullptr &&
                                           ref->uid()->str() == d.metadata->uid;
                                  });
    if (!ours) continue;
    const model::Labels annotations = model::LabelsFromEntries(meta->annotations());
    const std::string* revision = model::FindLabel(annotations, kRevision);
    if (revision == nullptr) continue;
    try {
      out[std::stoll(*revision)] = kv;
    } catch (const std::exception&) {
    }
  }
  return out;
}

// kubectl's deployment status viewer: the line to print and whether the
// rollout is done; an error once the deadline is exceeded.
Result<std::pair<std::string, bool>> StatusLine(const api::DeploymentT& d) {
  const std::string name = "\"" + d.metadata->name + "\"";
  const api::DeploymentStatusT* s = d.status.get();
  if (s == nullptr || d.metadata->generation > s->observed_generation) {
    return std::make_pair(std::string("Waiting for deployment spec update to be observed...\n"), false);
  }
  for (const auto& c : s->conditions) {
    if (c->type == "Progressing" && c->reason == "ProgressDeadlineExceeded") {
      return Status::Invalid("deployment " + name + " exceeded its progress deadline");
    }
  }
  const int32_t desired = d.spec && d.spec->replicas ? *d.spec->replicas : 1;
  const std::string waiting = "Waiting for deployment " + name + " rollout to finish: ";
  if (s->updated_replicas < desired) {
    return std::make_pair(waiting + std::to_string(s->updated_replicas) + " out of " + std::to_string(desired) +
                              " new replicas have been updated...\n",
                          false);
  }
  if (s->replicas > s->updated_replicas) {
    return std::make_pair(
        waiting + std::to_string(s->replicas - s->updated_replicas) + " old replicas are pending termination...\n",
        false);
  }
  if (s->available_replicas < s->updated_replicas) {
    return std::make_pair(waiting + std::to_string(s->available_replicas) + " of " +
                              std::to_string(s->updated_replicas) + " updated replicas are available...\n",
                          false);
  }
  return std::make_pair("deployment " + name + " successfully rolled out\n", true);
}

int RunStatus(const RolloutOptions& options) {
  Named n;
  Result<std::unique_ptr<ApiSession>> api = Open(options, &n);
  if (!api.ok()) return Fail(api.status().message());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_seconds);
  std::string last;
  while (true) {
    Result<std::unique_ptr<api::DeploymentT>> d = GetDeployment(**api, n);
    if (!d.ok()) return Fail(d.status().message());
    Result<std::pair<std::string, bool>> line = StatusLine(**d);
    if (!line.ok()) return Fail(line.status().message());
    if (line->first != last) {
      std::fputs(line->first.c_str(), stdout);
      std::fflush(stdout);
      last = line->first;
    }
    if (line->second || !options.watch) return 0;
    if (options.timeout_seconds > 0 && std::chrono::steady_clock::now() >= deadline) {
      return Fail("timed out waiting for the condition");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int RunHistory(const RolloutOptions& options) {
  Named n;
  Result<std::unique_ptr<ApiSession>> api = Open(options, &n);
  if (!api.ok()) return Fail(api.status().message());
  Result<std::unique_ptr<api::DeploymentT>> d = GetDeployment(**api, n);
  if (!d.ok()) return Fail(d.status().message());
  Result<std::map<int64_t, KeyValue>> revisions = Revisions(**api, **d);
  if (!revisions.ok()) return Fail(revisions.status().message());
  if (revisions->empty()) {
    std::printf("No rollout history found.\n");
    return 0;
  }
  TabWriter table(/*min_width=*/0, /*padding=*/2);
  table.Write("REVISION\tCHANGE-CAUSE\n");
  for (const auto& [revision, kv] : *revisions) {
    const model::Labels annotations =
        model::LabelsFromEntries(flatbuffers::GetRoot<api::ReplicaSet>(kv.value.data())->metadata()->annotations());
    const std::string* cause = model::FindLabel(annotations, kChangeCause);
    table.Write(std::to_string(revision) + "\t" + (cause != nullptr ? *cause : "<none>") + "\n");
  }
  std::printf("%s \n%s\n", ObjectName(*n.kind, n.name).c_str(), table.String().c_str());
  return 0;
}

int RunUndo(const RolloutOptions& options) {
  Named n;
  Result<std::unique_ptr<ApiSession>> api = Open(options, &n);
  if (!api.ok()) return Fail(api.status().message());
  Result<KeyValue> stored = n.kind->kind == "Deployment" ? Get(**api, n)
                                                          : Result<KeyValue>(Status::Invalid("no rollback support"));
  if (!stored.ok()) return Fail(stored.status().message());
  std::unique_ptr<api::DeploymentT> d = model::Unpack<api::Deployment>(stored->value);
  if (d->spec && d->spec->paused) {
    return Fail("you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume deployment/" +
                n.name + "' and try again");
  }
  Result<std::map<int64_t, KeyValue>> revisions = Revisions(**api, *d);
  if (!revisions.ok()) return Fail(revisions.status().message());
  int64_t to = options.to_revision;
  if (to == 0) {
    if (revisions->size() < 2) return Fail("no rollout history found for deployment \"" + n.name + "\"");
    to = std::prev(revisions->end(), 2)->first;  // the one before the latest
  }
  auto target = revisions->find(to);
  if (target == revisions->end()) return Fail("unable to find specified revision " + std::to_string(to) + " in history");
  const model::Value rs = model::ToValue(model::Kind("ReplicaSet"), target->second.value);
  const model::Value deployment = model::ToValue(model::Kind("Deployment"), stored->value);
  const model::Value tmpl = model::PodTemplateWithoutHash(rs);
  if (tmpl == model::PodTemplateWithoutHash(deployment)) {
    std::printf("%s skipped rollback (current template already matches revision %lld)\n",
                ObjectName(*n.kind, n.name).c_str(), static_cast<long long>(options.to_revision));
    return 0;
  }
  // The Deployment's own annotations, the ReplicaSet's others.
  model::Value annotations = model::Value::Object();
  for (const auto& [key, value] : d->metadata ? model::LabelsFromNative(d->metadata->annotations) : model::Labels{}) {
    if (std::ranges::find(kKeptOnRollback, key) != std::end(kKeptOnRollback)) {
      annotations.Set(key, model::Value::String(value));
    }
  }
  for (const auto& [key, value] : model::LabelsFromEntries(
           flatbuffers::GetRoot<api::ReplicaSet>(target->second.value.data())->metadata()->annotations())) {
    if (std::ranges::find(kKeptOnRollback, key) == std::end(kKeptOnRollback)) {
      annotations.Set(key, model::Value::String(value));
    }
  }
  model::Value ops = model::Value::Array();
  for (auto [path, value] : {std::pair{"/spec/template", tmpl}, std::pair{"/metadata/annotations", annotations}}) {
    model::Value op = model::Value::Object();
    op.Set("op", model::Value::String("replace"));
    op.Set("path", model::Value::String(path));
    op.Set("value", std::move(value));
    ops.Append(std::move(op));
  }
  if (Status patched = Patch(**api, n, "json", model::ToJson(ops)); !patched.ok()) return Fail(patched.message());
  std::printf("%s rolled back\n", ObjectName(*n.kind, n.name).c_str());
  return 0;
}

// restart, pause, resume: one strategic merge patch of the Deployment.
int RunSimplePatch(const RolloutOptions& options, const std::string& verb) {
  Named n;
  Result<std::unique_ptr<ApiSession>> api = Open(options, &n);
  if (!api.ok()) return Fail(api.status().message());
  Result<std::unique_ptr<api::DeploymentT>> d = GetDeployment(**api, n);
  if (!d.ok()) return Fail(d.status().message());
  const bool paused = (*d)->spec && (*d)->spec->paused;
  std::string body;
  if (verb == "restarted") {
    if (paused) return Fail("can't restart paused deployment (run rollout resume first)");
    // kubectl stamps the local time with its offset.
    char stamp[64];
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", &local);
    std::string text = stamp;
    if (text.size() >= 5) text.insert(text.size() - 2, ":");  // +0000 -> +00:00, as Go's RFC 3339
    if (text.ends_with("+00:00")) text = text.substr(0, text.size() - 6) + "Z";
    body = R"({"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":")" + text +
           R"("}}}}})";
  } else {
    const bool pause = verb == "paused";
    if (pause == paused) {
      return Fail(ObjectName(*n.kind, n.name) + " is " + (pause ? "already paused" : "not paused"));
    }
    body = std::string(R"({"spec":{"paused":)") + (pause ? "true" : "false") + "}}";
  }
  if (Status patched = Patch(**api, n, "strategic", body); !patched.ok()) return Fail(patched.message());
  std::printf("%s %s\n", ObjectName(*n.kind, n.name).c_str(), verb.c_str());
  return 0;
}

}  // namespace

void AddRolloutCommands(CLI::App& app, CommandAction& action) {
  auto scale = std::make_shared<RolloutOptions>();
  CLI::App* scale_cmd = app.add_subcommand("scale", "Set a new size for a deployment or replica set, as kubectl scale");
  scale_cmd->add_option("args", scale->args, "TYPE NAME or TYPE/NAME")->required();
  scale_cmd->add_option("--replicas", scale->replicas, "The new number of replicas")->required();
  scale_cmd->add_option("--current-replicas", scale->current_replicas,
                        "Precondition for the current size (-1: none)");
  scale_cmd->add_option("-n,--namespace", scale->namespace_, "The namespace");
  AddConnectionFlags(scale_cmd, scale.get());
  scale_cmd->callback([&action, scale] { action = [scale] { return RunScale(*scale); }; });

  CLI::App* rollout = app.add_subcommand("rollout", "Manage the rollout of a deployment, as kubectl rollout");
  rollout->require_subcommand(1);
  struct Verb {
    const char* name;
    const char* help;
    std::function<int(const RolloutOptions&)> run;
  };
  const Verb verbs[] = {
      {"status", "Show the status of the rollout", RunStatus},
      {"history", "View the rollout history", RunHistory},
      {"undo", "Roll back to a previous rollout", RunUndo},
      {"restart", "Restart the pods of a deployment",
       [](const RolloutOptions& o) { return RunSimplePatch(o, "restarted"); }},
      {"pause", "Mark a deployment as paused", [](const RolloutOptions& o) { return RunSimplePatch(o, "paused"); }},
      {"resume", "Resume a paused deployment", [](const RolloutOptions& o) { return RunSimplePatch(o, "resumed"); }},
  };
  for (const Verb& verb : verbs) {
    auto options = std::make_shared<RolloutOptions>();
    CLI::App* cmd = rollout->add_subcommand(verb.name, verb.help);
    cmd->add_option("args", options->args, "TYPE NAME or TYPE/NAME")->required();
    cmd->add_option("-n,--namespace", options->namespace_, "The namespace");
    if (std::string_view(verb.name) == "undo") {
      cmd->add_option("--to-revision", options->to_revision, "The revision to roll back to (0: the one before)");
    }
    if (std::string_view(verb.name) == "status") {
      cmd->add_option("-w,--watch", options->watch, "Watch the status of the rollout until it's done");
      cmd->add_option("--timeout", options->timeout_seconds, "How long to wait, in seconds (0: forever)");
    }
    AddConnectionFlags(cmd, options.get());
    cmd->callback([&action, options, run = verb.run] { action = [options, run] { return run(*options); }; });
  }
}

}  // namespace podflow::cli
