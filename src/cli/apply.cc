// `podflow apply`, `create`, `delete` and `patch`: kubectl's writing
// commands over the API (api_session.h). apply is kubectl's client-side
// apply: get; absent -> create with the last-applied annotation; present ->
// the three-way strategic merge patch of the last applied configuration,
// the manifest and the live object.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/api_session.h"
#include "cli/commands.h"
#include "cli/print_util.h"
#include "model/codec.h"
#include "model/objects.h"
#include "model/patch.h"

namespace podflow::cli {
namespace {

constexpr std::string_view kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

struct WriteOptions : ConnectionFlags {
  std::vector<std::string> files;  // -f
  std::vector<std::string> args;   // delete: TYPE [NAME...] or TYPE/NAME...
  std::string namespace_;          // -n ("" : the object's, else default)
  std::string dry_run = "none";    // none, server
  std::string selector;            // delete -l
  bool all = false;                // delete --all
  int64_t grace_period = -1;       // delete --grace-period (-1: the object's own)
  bool force = false;              // delete --force: with --grace-period=0, at once
  std::string cascade = "background";
  bool wait = true;                // delete --wait
  int timeout_seconds = 60;        // delete --timeout
  std::string patch;               // patch -p
  std::string patch_type = "strategic";  // patch --type
  std::string subresource;         // patch --subresource
};

// `pod "web"`, `deployment.apps "web"`: how kubectl delete names it.
std::string Quoted(const model::KindInfo& kind, std::string_view name) {
  const std::string group(model::ApiGroup(kind));
  return Lower(kind.kind) + (group.empty() ? "" : "." + group) + " \"" + std::string(name) + "\"";
}


// `object` with `value` set at metadata.annotations[key].
model::Value WithAnnotation(const model::Value& object, const std::string& key, const std::string& value) {
  model::Value out = model::Value::Object();
  bool has_metadata = false;
  for (const auto& [k, member] : object.members()) {
    if (k != "metadata" || member.kind() != model::Value::Kind::kObject) {
      out.Set(k, member);
      continue;
    }
    has_metadata = true;
    model::Value meta = model::Value::Object();
    bool placed = false;
    for (const auto& [mk, mv] : member.members()) {
      if (mk != "annotations" || mv.kind() != model::Value::Kind::kObject) {
        meta.Set(mk, mv);
        continue;
      }
      model::Value annotations = model::Value::Object();
      for (const auto& [ak, av] : mv.members()) {
        if (ak != key) annotations.Set(ak, av);
      }
      annotations.Set(key, model::Value::String(value));
      meta.Set(mk, std::move(annotations));
      placed = true;
    }
    if (!placed) {
      model::Value annotations = model::Value::Object();
      annotations.Set(key, model::Value::String(value));
      meta.Set("annotations", std::move(annotations));
    }
    out.Set(k, std::move(meta));
  }
  if (!has_metadata) {
    model::Value meta = model::Value::Object();
    model::Value annotations = model::Value::Object();
    annotations.Set(key, model::Value::String(value));
    meta.Set("annotations", std::move(annotations));
    out.Set("metadata", std::move(meta));
  }
  return out;
}

std::string StringAt(const model::Value& v, std::initializer_list<std::string_view> path) {
  const model::Value* at = &v;
  for (std::string_view p : path) {
    if (at->kind() != model::Value::Kind::kObject || (at = at->Find(p)) == nullptr) return "";
  }
  return at->kind() == model::Value::Kind::kString ? at->string_value() : "";
}

// One document of a -f input, with what kubectl works out before asking.
struct Document {
  const model::KindInfo* kind = nullptr;
  std::string namespace_, name;
  model::Value object;
};

// The documents of one file (`kind: List` items each a document), or the
// error kubectl prints for the file.
Result<std::vector<Document>> ReadDocuments(const std::string& file, const WriteOptions& options) {
  Result<std::string> text = ReadInput(file);
  if (!text.ok()) return text.status();
  Result<std::vector<model::Value>> values = model::ParseYaml(*text);
  if (!values.ok()) return Status::Invalid("error parsing " + file + ": " + values.status().message());
  std::vector<model::Value> flat;
  for (model::Value& v : *values) {
    if (v.kind() == model::Value::Kind::kNull) continue;
    const model::Value* items = v.kind() == model::Value::Kind::kObject ? v.Find("items") : nullptr;
    if (StringAt(v, {"kind"}).ends_with("List") && items != nullptr && items->kind() == model::Value::Kind::kArray) {
      for (const model::Value& item : items->items()) flat.push_back(item);
    } else {
      flat.push_back(std::move(v));
    }
  }
  std::vector<Document> docs;
  for (model::Value& v : flat) {
    Document d;
    const std::string api_version = StringAt(v, {"apiVersion"});
    const std::string kind = StringAt(v, {"kind"});
    d.kind = model::FindKind(api_version, kind);
    d.name = StringAt(v, {"metadata", "name"});
    if (d.kind == nullptr) {
      return Status::NotFound("resource mapping not found for name: \"" + d.name + "\" namespace: \"" +
                              StringAt(v, {"metadata", "namespace"}) + "\" from \"" + file + "\": no matches for kind \"" +
                              kind + "\" in version \"" + api_version + "\"\nensure CRDs are installed first");
    }
    if (d.kind->namespaced) {
      d.namespace_ = StringAt(v, {"metadata", "namespace"});
      if (!options.namespace_.empty() && !d.namespace_.empty() && d.namespace_ != options.namespace_) {
        return Status::Invalid("the namespace from the provided object \"" + d.namespace_ +
                               "\" does not match the namespace \"" + options.namespace_ +
                               "\". You must pass '--namespace=" + d.namespace_ + "' to perform this operation.");
      }
      if (d.namespace_.empty()) d.namespace_ = options.namespace_.empty() ? "default" : options.namespace_;
    }
    d.object = std::move(v);
    docs.push_back(std::move(d));
  }
  return docs;
}

std::string DryRunSuffix(const WriteOptions& options) {
  return options.dry_run == "server" ? " (server dry run)" : "";
}

// apply (or create, when `create_only`) one document; returns whether it
// went through.
bool ApplyOne(ApiSession& api, const Document& d, const std::string& file, const WriteOptions& options,
              bool create_only, bool* created_it = nullptr) {
  ApiCall call;
  call.resource = ResourceArg(*d.kind);
  call.namespace_ = d.namespace_;
  call.name = d.name;
  call.dry_run = options.dry_run == "server";
  // The manifest as applied, keys sorted, minus the annotation itself.
  const model::Value modified =
      create_only ? d.object
                  : WithAnnotation(d.object, std::string(kLastApplied), model::ToJson(KeysSorted(d.object)) + "\n");
  auto fail = [&](const model::ApiStatusInfo& status, bool creating) {
    std::fprintf(stderr, "%s\n", model::KubectlMessage(status, creating ? file : "").c_str());
    return false;
  };
  auto unreachable = [&](const Status& s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return false;
  };
  if (!create_only && !d.name.empty()) {
    call.verb = "get";
    Result<ApiResponse> got = api.Call(call);
    if (!got.ok()) return unreachable(got.status());
    if (got->status.success() && !got->objects.empty()) {
      const model::Value current = model::ToValue(*d.kind, got->objects[0].value);
      model::Value original = model::Value::Object();
      const std::string last = [&] {
        const model::Value* meta = current.Find("metadata");
        const model::Value* annotations = meta ? meta->Find("annotations") : nullptr;
        const model::Value* v = annotations ? annotations->Find(kLastApplied) : nullptr;
        return v && v->kind() == model::Value::Kind::kString ? v->string_value() : std::string();
      }();
      if (last.empty()) {
        std::fprintf(stderr,
                     "Warning: resource %s/%s is missing the %s annotation which is required by podflow apply. "
                     "podflow apply should only be used on resources created declaratively by either podflow "
                     "create --save-config or podflow apply. The missing annotation will be patched "
                     "automatically.\n",
                     std::string(d.kind->resource).c_str(), d.name.c_str(), std::string(kLastApplied).c_str());
      } else if (Result<std::vector<model::Value>> parsed = model::ParseYaml(last); parsed.ok() && parsed->size() == 1) {
        original = (*parsed)[0];
      }
      const model::Value patch = model::ThreeWayMergePatch(*d.kind, original, modified, current);
      if (patch.members().empty()) {
        std::printf("%s unchanged%s\n", ObjectName(*d.kind, d.name).c_str(), DryRunSuffix(options).c_str());
        return true;
      }
      call.verb = "patch";
      call.patch_type = "strategic";
      call.body = model::ToJson(patch);
      Result<ApiResponse> patched = api.Call(call);
      if (!patched.ok()) return unreachable(patched.status());
      if (!patched->status.success()) return fail(patched->status, false);
      std::printf("%s configured%s\n", ObjectName(*d.kind, d.name).c_str(), DryRunSuffix(options).c_str());
      return true;
    }
    if (got->status.code != 404 || got->status.details.kind != d.kind->resource) return fail(got->status, false);
  }
  call.verb = "create";
  call.body = model::ToJson(modified);
  Result<ApiResponse> created = api.Call(call);
  if (!created.ok()) return unreachable(created.status());
  if (!created->status.success()) return fail(created->status, true);
  std::printf("%s created%s\n", ObjectName(*d.kind, d.name).c_str(), DryRunSuffix(options).c_str());
  if (created_it != nullptr) *created_it = !call.dry_run;
  return true;
}

// Applies (or creates) every document of `files`, printing each outcome;
// how many failed. `applied` gets "namespace/name" of each pod created.
int ApplyDocuments(ApiSession& api, const std::vector<std::string>& files, const WriteOptions& options,
                   bool create_only, std::vector<std::string>* applied) {
  int failed = 0;
  for (const std::string& file : files) {
    Result<std::vector<Document>> docs = ReadDocuments(file, options);
    if (!docs.ok()) {
      std::fprintf(stderr, "error: %s\n", docs.status().message().c_str());
      ++failed;
      continue;
    }
    for (const Document& d : *docs) {
      bool created = false;
      if (!ApplyOne(api, d, file, options, create_only, &created)) {
        ++failed;
      } else if (created && applied != nullptr && d.kind->kind == "Pod") {
        applied->push_back(d.namespace_ + "/" + d.name);
      }
    }
  }
  return failed;
}

// `create namespace NAME`, kubectl's generator for the one kind the docs
// make that way.
int CreateNamespace(const WriteOptions& options) {
  if (options.args.size() != 2 || (options.args[0] != "namespace" && options.args[0] != "ns")) {
    std::fprintf(stderr, "error: podflow create takes -f FILE, or namespace NAME\n");
    return 1;
  }
  model::Value meta = model::Value::Object();
  meta.Set("name", model::Value::String(options.args[1]));
  model::Value object = model::Value::Object();
  object.Set("apiVersion", model::Value::String("v1"));
  object.Set("kind", model::Value::String("Namespace"));
  object.Set("metadata", std::move(meta));
  Result<std::unique_ptr<ApiSession>> api = Connect(options);
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return 1;
  }
  Document d{&model::Kind("Namespace"), "", options.args[1], std::move(object)};
  return ApplyOne(**api, d, "", options, true) ? 0 : 1;
}

int RunApply(const WriteOptions& options, bool create_only) {
  if (create_only && options.files.empty() && !options.args.empty()) return CreateNamespace(options);
  if (options.files.empty()) {
    std::fprintf(stderr, "error: must specify one of -f and -k\n");
    return 1;
  }
  if (options.dry_run != "none" && options.dry_run != "server") {
    std::fprintf(stderr, "error: Invalid dry-run value (%s). Must be \"none\" or \"server\".\n",
                 options.dry_run.c_str());
    return 1;
  }
  Result<std::vector<std::string>> files = ExpandFiles(options.files);
  if (!files.ok()) {
    std::fprintf(stderr, "error: %s\n", files.status().message().c_str());
    return 1;
  }
  Result<std::unique_ptr<ApiSession>> api = Connect(options);
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return 1;
  }
  return ApplyDocuments(**api, *files, options, create_only, nullptr) == 0 ? 0 : 1;
}

// What a delete names: objects by kind and name.
struct Target {
  const model::KindInfo* kind;
  std::string namespace_, name;
};

Result<std::vector<Target>> DeleteTargets(ApiSession& api, const WriteOptions& options) {
  std::vector<Target> targets;
  const std::string ns = options.namespace_.empty() ? "default" : options.namespace_;
  if (!options.files.empty()) {
    Result<std::vector<std::string>> files = ExpandFiles(options.files);
    if (!files.ok()) return files.status();
    for (const std::string& file : *files) {
      Result<std::vector<Document>> docs = ReadDocuments(file, options);
      if (!docs.ok()) return docs.status();
      for (const Document& d : *docs) targets.push_back({d.kind, d.namespace_, d.name});
    }
    return targets;
  }
  if (options.args.empty()) {
    return Status::Invalid("You must provide one or more resources by argument or filename.");
  }
  auto find = [](std::string_view name) -> Result<const model::KindInfo*> {
    const model::KindInfo* kind = model::FindResource(Lower(name));
    if (kind == nullptr) {
      return Status::NotFound("the server doesn't have a resource type \"" + std::string(name) + "\"");
    }
    return kind;
  };
  if (options.args[0].find('/') != std::string::npos) {
    for (const std::string& arg : options.args) {
      const size_t slash = arg.find('/');
      if (slash == std::string::npos) {
        return Status::Invalid("there is no need to specify a resource type as a separate argument when passing "
                               "arguments in resource/name form (e.g. 'podflow delete resource/<resource_name>' "
                               "instead of 'podflow delete resource resource/<resource_name>'");
      }
      Result<const model::KindInfo*> kind = find(arg.substr(0, slash));
      if (!kind.ok()) return kind.status();
      targets.push_back({*kind, (*kind)->namespaced ? ns : "", arg.substr(slash + 1)});
    }
    return targets;
  }
  Result<const model::KindInfo*> kind = find(options.args[0]);
  if (!kind.ok()) return kind.status();
  const std::string target_ns = (*kind)->namespaced ? ns : "";
  if (options.args.size() > 1) {
    for (size_t i = 1; i < options.args.size(); ++i) targets.push_back({*kind, target_ns, options.args[i]});
    return targets;
  }
  if (options.selector.empty() && !options.all) {
    return Status::Invalid("resource(s) were provided, but no name was specified");
  }
  ApiCall list;
  list.resource = ResourceArg(**kind);
  list.namespace_ = target_ns;
  list.label_selector = options.selector;
  Result<ApiResponse> listed = api.ListAll(list);
  if (!listed.ok()) return listed.status();
  if (!listed->status.success()) return Status::Invalid(model::KubectlMessage(listed->status));
  for (const KeyValue& kv : listed->objects) targets.push_back({*kind, target_ns, kv.key.substr(kv.key.rfind('/') + 1)});
  if (targets.empty()) std::printf("No resources found\n");
  return targets;
}

// A request of `verb` on one named object.
ApiCall CallOn(const Target& t, std::string verb, const WriteOptions& options) {
  ApiCall call;
  call.verb = std::move(verb);
  call.resource = ResourceArg(*t.kind);
  call.namespace_ = t.namespace_;
  call.name = t.name;
  call.dry_run = options.dry_run == "server";
  return call;
}

enum class Outcome { kDone, kRefused, kUnreachable };

// What a call came to; kubectl's line for a failure is printed.
Outcome Check(const Result<ApiResponse>& reply) {
  if (!reply.ok()) {
    std::fprintf(stderr, "error: %s\n", reply.status().message().c_str());
    return Outcome::kUnreachable;
  }
  if (!reply->status.success()) {
    std::fprintf(stderr, "%s\n", model::KubectlMessage(reply->status).c_str());
    return Outcome::kRefused;
  }
  return Outcome::kDone;
}

int RunDelete(const WriteOptions& options) {
  if (options.cascade != "background" && options.cascade != "foreground" && options.cascade != "orphan") {
    std::fprintf(stderr, "error: Invalid cascade value (%s). Must be \"background\", \"foreground\", or \"orphan\".\n",
                 options.cascade.c_str());
    return 1;
  }
  Result<std::unique_ptr<ApiSession>> api = Connect(options);
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return 1;
  }
  Result<std::vector<Target>> targets = DeleteTargets(**api, options);
  if (!targets.ok()) {
    std::fprintf(stderr, "error: %s\n", targets.status().message().c_str());
    return 1;
  }
  // kubectl: --force only with --grace-period=0 (or none) removes at once.
  const bool force = options.force && options.grace_period <= 0;
  if (options.force && !force) std::fprintf(stderr, "warning: --force is ignored because --grace-period is not 0.\n");
  if (force) {
    std::fprintf(stderr,
                 "Warning: Immediate deletion does not wait for confirmation that the running resource has been "
                 "terminated. The resource may continue to run on the cluster indefinitely.\n");
  }
  int failed = 0;
  std::vector<Target> deleted;
  for (const Target& t : *targets) {
    ApiCall call = CallOn(t, "delete", options);
    // kubectl: --grace-period=0 means 1 s unless --force asks for at once.
    if (options.grace_period >= 0) call.grace_period_seconds = options.grace_period;
    if (options.grace_period == 0 && !force) call.grace_period_seconds = 1;
    if (force) call.grace_period_seconds = 0;
    std::string policy = options.cascade;
    policy[0] = static_cast<char>(policy[0] - 'a' + 'A');
    call.propagation_policy = policy;
    Result<ApiResponse> reply = (*api)->Call(call);
    if (const Outcome o = Check(reply); o != Outcome::kDone) {
      if (o == Outcome::kUnreachable) return 1;
      ++failed;
      continue;
    }
    std::printf("%s %sdeleted%s\n", Quoted(*t.kind, t.name).c_str(), force ? "force " : "",
                DryRunSuffix(options).c_str());
    deleted.push_back(t);
  }
  // --wait: until every deleted object is gone, as kubectl waits.
  if (options.wait && options.dry_run == "none") {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_seconds);
    for (const Target& t : deleted) {
      while (true) {
        ApiCall get = CallOn(t, "get", options);
        get.dry_run = false;
        Result<ApiResponse> reply = (*api)->Call(get);
        if (reply.ok() && reply->status.code == 404) break;
        if (std::chrono::steady_clock::now() > deadline) {
          std::fprintf(stderr, "error: timed out waiting for the condition on %s\n",
                       (std::string(t.kind->resource) + "/" + t.name).c_str());
          return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }
  return failed == 0 ? 0 : 1;
}

// kubectl patch: one object by KIND NAME or KIND/NAME.
int RunPatch(const WriteOptions& options) {
  Result<std::unique_ptr<ApiSession>> api = Connect(options);
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return 1;
  }
  if (Result<model::PatchType> type = model::ParsePatchType(options.patch_type); !type.ok()) {
    std::fprintf(stderr, "error: %s\n", type.status().message().c_str());
    return 1;
  }
  if (options.patch.empty()) {
    std::fprintf(stderr, "error: must specify -p to patch\n");
    return 1;
  }
  WriteOptions named = options;
  named.selector.clear();
  named.all = false;
  Result<std::vector<Target>> targets = DeleteTargets(**api, named);
  if (!targets.ok()) {
    std::fprintf(stderr, "error: %s\n", targets.status().message().c_str());
    return 1;
  }
  int failed = 0;
  for (const Target& t : *targets) {
    ApiCall call = CallOn(t, "patch", options);
    call.subresource = options.subresource;
    call.body = options.patch;
    call.patch_type = options.patch_type;
    // The revision before, as kubectl compares the object before and after
    // to tell a patch that changed nothing apart.
    ApiCall get = call;
    get.verb = "get";
    get.body.clear();
    Result<ApiResponse> before = (*api)->Call(get);
    Result<ApiResponse> reply = before.ok() && before->status.success() ? (*api)->Call(call) : before;
    if (const Outcome o = Check(reply); o != Outcome::kDone) {
      if (o == Outcome::kUnreachable) return 1;
      ++failed;
      continue;
    }
    const bool changed = !call.dry_run && !reply->objects.empty() && !before->objects.empty() &&
                         reply->objects[0].mod_revision != before->objects[0].mod_revision;
    std::printf("%s patched%s%s\n", ObjectName(*t.kind, t.name).c_str(), changed || call.dry_run ? "" : " (no change)",
                DryRunSuffix(options).c_str());
  }
  return failed == 0 ? 0 : 1;
}

void AddConnectionOptions(CLI::App* cmd, WriteOptions* options) {
  cmd->add_option("-n,--namespace", options->namespace_, "The namespace (default: the object's, else default)");
  AddConnectionFlags(cmd, options);
  cmd->add_option("--dry-run", options->dry_run,
                  "\"server\": the server runs the whole request and writes nothing; \"none\" (default)");
}

}  // namespace

void AddWriteCommands(CLI::App& app, CommandAction& action) {
  auto apply = std::make_shared<WriteOptions>();
  CLI::App* apply_cmd = app.add_subcommand(
      "apply", "Apply a configuration to a resource by file name or stdin, as kubectl apply (client-side)");
  apply_cmd->add_option("-f,--filename", apply->files, "Files, directories or - (stdin)");
  AddConnectionOptions(apply_cmd, apply.get());
  apply_cmd->callback([&action, apply] { action = [apply] { return RunApply(*apply, false); }; });

  auto create = std::make_shared<WriteOptions>();
  CLI::App* create_cmd = app.add_subcommand("create", "Create resources from a file or stdin, as kubectl create");
  create_cmd->add_option("-f,--filename", create->files, "Files, directories or - (stdin)");
  create_cmd->add_option("args", create->args, "namespace NAME: create a namespace");
  AddConnectionOptions(create_cmd, create.get());
  create_cmd->callback([&action, create] { action = [create] { return RunApply(*create, true); }; });

  auto del = std::make_shared<WriteOptions>();
  CLI::App* delete_cmd = app.add_subcommand(
      "delete", "Delete resources by file names, stdin, resources and names, or by resources and label selector");
  delete_cmd->add_option("args", del->args, "TYPE [NAME...] or TYPE/NAME...");
  delete_cmd->add_option("-f,--filename", del->files, "Files, directories or - (stdin)");
  delete_cmd->add_option("-l,--selector", del->selector, "Selector (label query) to filter on");
  delete_cmd->add_flag("--all", del->all, "Delete every resource of the type in the namespace");
  delete_cmd->add_option("--grace-period", del->grace_period,
                         "Seconds given to the resource to terminate gracefully (-1: its own; 0: at once)");
  delete_cmd->add_flag("--force", del->force, "With --grace-period=0: remove at once, without waiting for the kubelet");
  delete_cmd->add_option("--cascade", del->cascade, "background (default), foreground or orphan");
  delete_cmd->add_option("--wait", del->wait, "Wait for the resources to be gone before returning (default true)");
  delete_cmd->add_option("--timeout", del->timeout_seconds, "How long --wait waits, in seconds");
  AddConnectionOptions(delete_cmd, del.get());
  delete_cmd->callback([&action, del] { action = [del] { return RunDelete(*del); }; });

  auto patch = std::make_shared<WriteOptions>();
  CLI::App* patch_cmd = app.add_subcommand("patch", "Update fields of a resource, as kubectl patch");
  patch_cmd->add_option("args", patch->args, "TYPE NAME or TYPE/NAME")->required();
  patch_cmd->add_option("-p,--patch", patch->patch, "The patch, JSON or YAML")->required();
  patch_cmd->add_option("--type", patch->patch_type, "strategic (default), merge or json");
  patch_cmd->add_option("--subresource", patch->subresource, "status, to patch the status only");
  AddConnectionOptions(patch_cmd, patch.get());
  patch_cmd->callback([&action, patch] { action = [patch] { return RunPatch(*patch); }; });
}

int ApplyFiles(ApiSession& api, const std::vector<std::string>& files, std::vector<std::string>* applied) {
  WriteOptions options;
  return ApplyDocuments(api, files, options, false, applied);
}

}  // namespace podflow::cli
