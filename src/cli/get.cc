// `podflow get` and `podflow describe`: kubectl's read commands over the api
// channel. The printing is in printers.h and describe.h (pure functions);
// this file parses the command line, fetches, and chooses the output.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <utility>
#include <memory>


#include "base/clock.h"
#include "cli/api_session.h"
#include "cli/commands.h"
#include "cli/describe.h"
#include "cli/jsonpath.h"
#include "cli/print_util.h"
#include "cli/printers.h"
#include "model/fields.h"
#include "model/labels.h"
#include "model/objects.h"
#include "model/quantity.h"
#include "pipeline/config.h"
#include "pipeline/credentials.h"
#include "pod_generated.h"
#include "scheduler/scheduler.h"
#include "client/client.h"

namespace podflow::cli {
namespace {

constexpr std::chrono::milliseconds kReadTimeout{5000};

struct ReadOptions {
  std::vector<std::string> args;  // TYPE [NAME...] or TYPE/NAME...
  std::string namespace_ = "default";
  bool all_namespaces = false;
  std::string output;  // "", wide, yaml, json, name, jsonpath=TEMPLATE
  std::string sort_by;  // --sort-by: a JSONPath (`.metadata.name` or `{.metadata.name}`)
  std::string label_selector;  // -l: kubectl's label selector text
  std::string field_selector;  // --field-selector
  std::string config;
  std::string server;
  std::string data_dir;
  std::string token;  // bearer token (default: the data dir's admin token)
  bool watch = false;                // -w: list, then print every change
  bool watch_only = false;           // --watch-only: only the changes
  bool output_watch_events = false;  // --output-watch-events: an EVENT column (or WatchEvent objects)
  std::string request_timeout = "0";  // --request-timeout: a watch ends after it ("0": never)
};

// A resource and the names asked for, from `pods a b` or `pod/a pod/b`.
struct Target {
  const model::KindInfo* kind = nullptr;
  std::vector<std::string> names;
  // TYPE1,TYPE2,... or `all`: every type named, in order (kind is the first).
  std::vector<const model::KindInfo*> kinds;
};

// kubectl's `all` category: the workloads and what serves them.
constexpr std::string_view kAllCategory[] = {"pods",         "services",     "daemonsets", "deployments",
                                             "replicasets", "statefulsets", "jobs",       "cronjobs"};

Result<Target> ParseTarget(const std::vector<std::string>& args) {
  Target t;
  if (args.empty()) {
    return Status::Invalid("You must specify the type of resource to get.");
  }
  auto find = [](std::string_view name) -> Result<const model::KindInfo*> {
    const model::KindInfo* kind = model::FindResource(Lower(name));
    if (kind == nullptr) {
      return Status::NotFound("the server doesn't have a resource type \"" + std::string(name) + "\"");
    }
    return kind;
  };
  if (args[0].find('/') == std::string::npos) {
    std::vector<std::string> types;
    for (size_t start = 0;;) {
      const size_t comma = args[0].find(',', start);
      types.push_back(args[0].substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    for (const std::string& type : types) {
      if (Lower(type) == "all") {
        for (std::string_view resource : kAllCategory) t.kinds.push_back(model::FindResource(resource));
        continue;
      }
      auto kind = find(type);
      if (!kind.ok()) return kind.status();
      t.kinds.push_back(*kind);
    }
    t.kind = t.kinds.front();
    if (t.kinds.size() == 1) t.kinds.clear();
    t.names.assign(args.begin() + 1, args.end());
    if (!t.kinds.empty() && !t.names.empty()) {
      return Status::Invalid("podflow get takes names with one resource type at a time");
    }
    return t;
  }
  for (const std::string& arg : args) {
    size_t slash = arg.find('/');
    if (slash == std::string::npos) {
      return Status::Invalid("there is no need to specify a resource type as a separate argument "
                             "when passing arguments in resource/name form");
    }
    auto kind = find(arg.substr(0, slash));
    if (!kind.ok()) return kind.status();
    if (t.kind != nullptr && t.kind != *kind) {
      return Status::Invalid("podflow get takes one resource type at a time");
    }
    t.kind = *kind;
    t.names.push_back(arg.substr(slash + 1));
  }
  return t;
}

// Reads objects over the api channel with the API client, in kubectl's
// words when the server cannot be reached. Not copyable (owns a socket).
class ApiReader {
 public:
  // The config names the endpoint (unless --server does) and the data dir
  // whose keys the reader speaks with.
  static Result<std::unique_ptr<ApiReader>> Open(const ReadOptions& options) {
    auto config = pipeline::LoadConfig(options.config);
    if (!config.ok()) return config.status();
    if (!options.data_dir.empty()) config->data_dir = options.data_dir;
    std::string endpoint = options.server.empty() ? config->Endpoint("api") : options.server;
    std::unique_ptr<ApiReader> reader(new ApiReader);
    PODFLOW_RETURN_IF_ERROR(pipeline::SecureTool(reader->context_, config->data_dir));
    reader->client_ = std::make_unique<client::ApiClient>(reader->context_, endpoint);
    // Objects are read through the API, so that its authorization covers
    // them; the scheduler's decision records (not an API kind) from the log.
    Result<ToolEndpoints> api = ResolveEndpoints(options.config, options.data_dir, "", "", "", options.token);
    if (!api.ok()) return api.status();
    Result<std::unique_ptr<ApiSession>> session = ApiSession::Open(*api);
    if (!session.ok()) return session.status();
    reader->session_ = std::move(*session);
    return reader;
  }

  // The objects of `kind` in `namespace_` ("": every namespace), page by
  // page. A stored value that is not a valid object of `kind` is reported
  // on stderr with its key and skipped.
  // `revision`, when given, gets the revision the list was read at.
  Result<std::vector<KeyValue>> List(const model::KindInfo& kind, const std::string& namespace_,
                                     int64_t* revision = nullptr) {
    ApiCall call;
    call.resource = ResourceArg(kind);
    call.namespace_ = namespace_;
    Result<ApiResponse> all = session_->ListAll(call);
    if (!all.ok()) return Unreachable(all.status());
    if (!all->status.success()) return Refused(all->status);
    if (revision != nullptr) *revision = all->revision;
    std::vector<KeyValue> valid;
    for (KeyValue& kv : all->objects) {
      if (Status s = Verify(kind, kv); !s.ok()) {
        std::fprintf(stderr, "error: %s\n", s.message().c_str());
        continue;
      }
      valid.push_back(std::move(kv));
    }
    return valid;
  }

  // A watch of `call` (resource, namespace, selectors, revision).
  Result<std::unique_ptr<ApiWatchStream>> Watch(const ApiCall& call) {
    Result<std::unique_ptr<ApiWatchStream>> stream = session_->Watch(call);
    if (!stream.ok()) return Unreachable(stream.status());
    return stream;
  }

  // The value at one key, or nullopt when there is none; not verified.
  Result<std::optional<KeyValue>> GetKey(const std::string& key) {
    Result<std::optional<KeyValue>> kv = client_->Get(key, kReadTimeout);
    if (!kv.ok()) return Unreachable(kv.status());
    return kv;
  }

  // One object, NotFound in kubectl's words, or Corruption naming the key
  // when the stored value is not a valid object of `kind`.
  Result<KeyValue> Get(const model::KindInfo& kind, const std::string& ns, const std::string& name) {
    ApiCall call;
    call.verb = "get";
    call.resource = ResourceArg(kind);
    call.namespace_ = kind.namespaced ? ns : "";
    call.name = name;
    Result<ApiResponse> got = session_->Call(call);
    if (!got.ok()) return Unreachable(got.status());
    if (got->status.code == 404) return Status::NotFound(got->status.message);
    if (!got->status.success() || got->objects.empty()) return Refused(got->status);
    if (Status s = Verify(kind, got->objects[0]); !s.ok()) return s;
    return std::move(got->objects[0]);
  }

 private:
  ApiReader() = default;

  static Status Verify(const model::KindInfo& kind, const KeyValue& kv) {
    if (model::VerifyObject(kind, kv.value).ok()) return Status::Ok();
    return Status::Corruption("the value stored at " + kv.key + " is not a valid " +
                              std::string(kind.kind) + "; skipped it");
  }

  Status Unreachable(const Status& s) const {
    return Status(s.code(), "Unable to connect to the server at " + client_->endpoint() + ": " + s.ToString());
  }
  // The server said no: kubectl's line for it.
  static Status Refused(const model::ApiStatusInfo& status) {
    return Status::Forbidden(model::KubectlMessage(status));
  }

  bus::Context context_;
  std::unique_ptr<client::ApiClient> client_;
  std::unique_ptr<ApiSession> session_;
};

// kubectl's error line for a failed request.
void PrintError(const Status& s) {
  if (s.message().starts_with("Error from server") || s.message().starts_with("error: ")) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
  } else if (s.code() == Code::kNotFound && s.message().find("not found") != std::string::npos &&
      s.message().find("resource type") == std::string::npos) {
    std::fprintf(stderr, "Error from server (NotFound): %s\n", s.message().c_str());
  } else {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
  }
}

// The object as -o yaml/json shows it: metadata.resourceVersion is the kv's
// mod_revision (stored objects do not carry it), in its schema place.
model::Value OutputValue(const model::KindInfo& kind, const KeyValue& kv) {
  model::Value stored = model::ToValue(kind, kv.value);
  model::Value out = model::Value::Object();
  if (stored.Find("apiVersion") == nullptr) out.Set("apiVersion", model::Value::String(std::string(kind.api_version)));
  if (stored.Find("kind") == nullptr) out.Set("kind", model::Value::String(std::string(kind.kind)));
  static const std::vector<std::string_view> kAfterVersion = {
      "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
      "labels", "annotations", "ownerReferences", "finalizers", "managedFields"};
  const model::Value rv = model::Value::String(std::to_string(kv.mod_revision.value()));
  for (const auto& [key, value] : stored.members()) {
    if (key != "metadata") {
      out.Set(key, value);
      continue;
    }
    model::Value meta = model::Value::Object();
    bool placed = false;
    for (const auto& [mkey, mvalue] : value.members()) {
      if (mkey == "resourceVersion") continue;
      if (!placed && std::find(kAfterVersion.begin(), kAfterVersion.end(), mkey) != kAfterVersion.end()) {
        meta.Set("resourceVersion", rv);
        placed = true;
      }
      meta.Set(mkey, mvalue);
    }
    if (!placed) meta.Set("resourceVersion", rv);
    out.Set("metadata", std::move(meta));
  }
  return out;
}

std::string Serialize(const model::Value& v, const std::string& output) {
  if (output == "json") return model::ToJson(v, 4) + "\n";
  return model::ToYaml(v);
}

// kubectl's `kind: List` wrapper of -o yaml/json lists.
model::Value ListValue(const model::KindInfo& kind, const std::vector<KeyValue>& kvs) {
  model::Value items = model::Value::Array();
  for (const KeyValue& kv : kvs) items.Append(OutputValue(kind, kv));
  model::Value meta = model::Value::Object();
  meta.Set("resourceVersion", model::Value::String(""));
  model::Value list = model::Value::Object();
  list.Set("apiVersion", model::Value::String("v1"));
  list.Set("items", std::move(items));
  list.Set("kind", model::Value::String("List"));
  list.Set("metadata", std::move(meta));
  return list;
}

// kubectl's -o name of the object at `key`: the kind qualified by its
// group ("deployment.apps/web").
std::string NameOutput(const model::KindInfo& kind, const std::string& key) {
  const std::string group(model::ApiGroup(kind));
  return Lower(kind.kind) + (group.empty() ? "" : "." + group) + "/" + key.substr(key.rfind('/') + 1);
}

bool ValidOutput(const std::string& output) {
  return output.empty() || output == "wide" || output == "yaml" || output == "json" || output == "name" ||
         output.starts_with("jsonpath=");
}

// A JSONPath as --sort-by and -o jsonpath take it. --sort-by is relaxed as
// kubectl relaxes it: `metadata.name`, `.metadata.name` and
// `{metadata.name}` all mean `{.metadata.name}`.
std::string RelaxedPath(std::string text) {
  if (text.starts_with("{") && text.ends_with("}")) text = text.substr(1, text.size() - 2);
  if (!text.starts_with(".") && !text.starts_with("$")) text = "." + text;
  return "{" + text + "}";
}

Result<JsonPath> ParseTemplate(const std::string& text, bool relaxed) {
  return JsonPath::Parse(relaxed ? RelaxedPath(text) : text);
}

// Natural order, as kubectl sorts strings: runs of digits compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i;
      size_t je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string_view x = std::string_view(a).substr(i, ie - i);
      std::string_view y = std::string_view(b).substr(j, je - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

// Whether `a` sorts before `b` for --sort-by: numbers by value, strings
// in natural order; an object without the field first.
bool SortLess(const std::vector<const model::Value*>& a, const std::vector<const model::Value*>& b) {
  if (a.empty() || b.empty()) return a.empty() && !b.empty();
  const model::Value& x = *a[0];
  const model::Value& y = *b[0];
  if (NumberOf(x) && NumberOf(y)) return *NumberOf(x) < *NumberOf(y);
  if (x.kind() == model::Value::Kind::kString && y.kind() == model::Value::Kind::kString) {
    // Quantities by their amount (100Mi before 1Gi), other text naturally.
    Result<model::Quantity> qx = model::Quantity::Parse(x.string_value());
    Result<model::Quantity> qy = model::Quantity::Parse(y.string_value());
    if (qx.ok() && qy.ok()) return *qx < *qy;
    return NaturalLess(x.string_value(), y.string_value());
  }
  return model::ToJson(x) < model::ToJson(y);
}

// Sorts the objects by the value --sort-by names (a stable sort); as
// kubectl, an error when no object has that field.
Status SortBy(const model::KindInfo& kind, const std::string& text, const JsonPath& path, std::vector<KeyValue>& kvs) {
  std::vector<std::pair<model::Value, size_t>> keyed;
  for (size_t i = 0; i < kvs.size(); ++i) keyed.emplace_back(OutputValue(kind, kvs[i]), i);
  if (!keyed.empty() && std::none_of(keyed.begin(), keyed.end(), [&](const auto& k) { return !path.Values(k.first).empty(); })) {
    return Status::Invalid("couldn't find any field with path \"" + text + "\" in the list of objects");
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return SortLess(path.Values(a.first), path.Values(b.first));
  });
  std::vector<KeyValue> sorted;
  for (const auto& [value, i] : keyed) sorted.push_back(std::move(kvs[i]));
  kvs = std::move(sorted);
  return Status::Ok();
}

// The objects `options` select with -l and --field-selector, in the words
// kubectl prints for a selector the server refuses.
struct Selection {
  model::LabelSelector labels = model::LabelSelector::Everything();
  model::FieldSelector fields;
  bool everything = true;
};

Result<Selection> ParseSelection(const model::KindInfo& kind, const ReadOptions& options) {
  Selection out;
  Result<model::LabelSelector> labels = model::ParseLabelSelector(options.label_selector);
  if (!labels.ok()) return labels.status();
  Result<model::FieldSelector> fields = model::FieldSelector::Parse(kind, options.field_selector);
  if (!fields.ok()) {
    const std::string group(model::ApiGroup(kind));
    const std::string version(kind.api_version.substr(kind.api_version.rfind('/') + 1));
    return Status::Invalid("Error from server (BadRequest): Unable to find \"" + group + "/" + version +
                           ", Resource=" + std::string(kind.resource) + "\" that match label selector \"" +
                           options.label_selector + "\", field selector \"" + options.field_selector +
                           "\": " + fields.status().message());
  }
  out.labels = std::move(*labels);
  out.fields = std::move(*fields);
  out.everything = out.labels.MatchesEverything() && out.fields.empty();
  return out;
}

// Keeps the objects the selection selects.
void Select(const model::KindInfo& kind, const Selection& selection, std::vector<KeyValue>& kvs) {
  if (selection.everything) return;
  std::erase_if(kvs, [&](const KeyValue& kv) {
    model::Value object = model::ToValue(kind, kv.value);
    return !selection.labels.Matches(model::LabelsOf(object)) || !selection.fields.Matches(object);
  });
}

// A selector error: kubectl's "Error from server" lines already carry
// their prefix.
void PrintSelectionError(const Status& s) {
  if (s.message().starts_with("Error from server")) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
  } else {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
  }
}

// --request-timeout as kubectl takes it: "0" (never), a number of seconds,
// or a duration with its unit ("5s", "2m", "1h30m").
Result<std::chrono::seconds> ParseRequestTimeout(const std::string& text) {
  std::optional<SimDuration> d;
  if (!text.empty() && text.size() <= 9 && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    d = std::chrono::seconds(std::stoll(text));
  } else {
    d = ParseGoDuration(text);
  }
  if (!d) {
    return Status::Invalid(
        "Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a "
        "corresponding time unit (e.g. 1s | 2m | 3h)");
  }
  // A part of a second still ends the watch: rounded up.
  return std::chrono::ceil<std::chrono::seconds>(*d);
}

// How `get -w` prints what it sees: the objects it starts from, then one
// row (or document) per change, as kubectl does: the header once, each
// change's row in the columns of the rows before (a column widens for a
// wider cell and stays so), YAML documents separated by `---`, with
// --output-watch-events an EVENT column (or WatchEvent objects, which a
// JSONPath template then reads).
class WatchPrinter {
 public:
  WatchPrinter(const model::KindInfo& kind, const ReadOptions& options, bool all, const std::optional<JsonPath>& jsonpath)
      : kind_(kind), options_(options), all_(all), jsonpath_(jsonpath) {}

  // The starting objects, each as an ADDED: one table.
  Status PrintInitial(const std::vector<KeyValue>& kvs) {
    if (Table() && !kvs.empty()) {
      std::vector<std::string> objects;
      for (const KeyValue& kv : kvs) objects.push_back(kv.value);
      PrintRows(objects, "ADDED");
      return Status::Ok();
    }
    for (const KeyValue& kv : kvs) PODFLOW_RETURN_IF_ERROR(Print("ADDED", kv));
    return Status::Ok();
  }

  Status Print(std::string_view type, const KeyValue& kv) {
    if (Table()) {
      PrintRows({kv.value}, type);
      return Status::Ok();
    }
    if (options_.output == "name") {
      std::printf("%s\n", NameOutput(kind_, kv.key).c_str());
      return Status::Ok();
    }
    model::Value object = OutputValue(kind_, kv);
    if (options_.output_watch_events) {
      model::Value event = model::Value::Object();
      event.Set("type", model::Value::String(std::string(type)));
      event.Set("object", std::move(object));
      object = std::move(event);
    }
    if (jsonpath_) {
      Result<std::string> text = jsonpath_->Execute(object);
      if (!text.ok()) return text.status();
      std::fputs(text->c_str(), stdout);
      return Status::Ok();
    }
    if (options_.output == "yaml" && printed_ > 0) std::fputs("---\n", stdout);
    std::fputs(Serialize(object, options_.output).c_str(), stdout);
    ++printed_;
    return Status::Ok();
  }

 private:
  bool Table() const { return options_.output.empty() || options_.output == "wide"; }

  void PrintRows(const std::vector<std::string>& objects, std::string_view type) {
    PrintOptions print;
    print.wide = options_.output == "wide";
    print.all_namespaces = all_;
    podflow::cli::Table table = BuildTable(kind_, objects, print, std::chrono::system_clock::now());
    if (options_.output_watch_events) {
      table.header.insert(table.header.begin(), "EVENT");
      for (auto& row : table.rows) row.insert(row.begin(), std::string(type));
    }
    WriteTable(writer_, table, !header_printed_);
    std::fputs(writer_.Take().c_str(), stdout);
    header_printed_ = true;
  }

  const model::KindInfo& kind_;
  const ReadOptions& options_;
  const bool all_;
  const std::optional<JsonPath>& jsonpath_;
  bool header_printed_ = false;
  size_t printed_ = 0;
  // kubectl's watch writer: columns keep their widths across rows.
  TabWriter writer_{/*min_width=*/6, /*padding=*/3, /*remember_widths=*/true};
};

// How long a watch may stay silent (the server sends a bookmark every
// second while nothing changes) before it is taken as lost.
constexpr std::chrono::seconds kWatchSilence{10};

// kubectl get -w after the objects were read at `revision`: every change
// after it, until the watch ends (--request-timeout), fails or is
// interrupted.
// kubectl's watch ends with success whatever ended it once it ran (an
// ERROR event, the server gone, the timeout); a watch refused at its start,
// or whose output cannot be printed, fails.
int WatchChanges(ApiReader& reader, const model::KindInfo& kind, const ReadOptions& options, const Target& target,
                 int64_t revision, bool all, WatchPrinter& printer, std::chrono::seconds timeout) {
  ApiCall call;
  call.resource = ResourceArg(kind);
  call.namespace_ = !kind.namespaced || all ? "" : options.namespace_;
  // One object is watched from "0", as kubectl does (the revision it was
  // read at may be older than the history kept): the watch starts with the
  // object as an ADDED, which was printed already.
  bool skip_first_added = false;
  if (!target.names.empty()) {
    call.name = target.names[0];
    revision = 0;
    skip_first_added = true;
  }
  call.label_selector = options.label_selector;
  call.field_selector = options.field_selector;
  call.resource_version = std::to_string(revision);
  call.allow_watch_bookmarks = true;
  call.timeout_seconds = timeout.count();
  Result<std::unique_ptr<ApiWatchStream>> stream = reader.Watch(call);
  if (!stream.ok()) {
    PrintError(stream.status());
    return 1;
  }
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_word = Clock::now();
  bool started = false;  // a frame other than a refusal came: the watch runs
  while (true) {
    Result<std::optional<ApiWatchStream::Frame>> frame = (*stream)->Next(std::chrono::milliseconds(500));
    if (!frame.ok()) {
      PrintError(frame.status());
      return 1;
    }
    if (!frame->has_value()) {
      if (Clock::now() - last_word > kWatchSilence) {
        // A watch whose server went away: kubectl's ends quietly.
        std::fprintf(stderr, "the watch went silent for %llds: is the pipeline running?\n",
                     static_cast<long long>(kWatchSilence.count()));
        return 0;
      }
      continue;
    }
    last_word = Clock::now();
    for (const ApiWatchEvent& event : (*frame)->events) {
      if (event.type == "BOOKMARK") {
        started = true;
        continue;
      }
      if (event.type == "ERROR") {
        // Refused at its start (as kubectl's watch request is refused, 403,
        // ...): a failure. Ended later: kubectl's watch just ends.
        std::fflush(stdout);
        std::fprintf(stderr, "%s\n", model::KubectlMessage(event.status).c_str());
        return started ? 0 : 1;
      }
      started = true;
      if (std::exchange(skip_first_added, false) && event.type == "ADDED") continue;
      if (!model::VerifyObject(kind, event.object.value).ok()) {
        std::fprintf(stderr, "error: the value stored at %s is not a valid %s; skipped it\n",
                     event.object.key.c_str(), std::string(kind.kind).c_str());
        continue;
      }
      if (Status printed = printer.Print(event.type, event.object); !printed.ok()) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: %s\n", printed.message().c_str());
        return 1;
      }
    }
    std::fflush(stdout);
    if ((*frame)->end) return 0;
  }
}

// kubectl get TYPE1,TYPE2,... (or all): the types in turn, each type with
// objects as a table of its own (names led by their kind,
// "deployment.apps/web"), a blank line between; -o name lines; -o
// yaml/json one List of them all.
int RunGetKinds(const ReadOptions& options, const std::vector<const model::KindInfo*>& kinds) {
  if (options.watch || options.watch_only) {
    std::fprintf(stderr, "error: you may only specify a single resource type\n");
    return 1;
  }
  if (options.output.starts_with("jsonpath=") || !options.sort_by.empty()) {
    std::fprintf(stderr, "error: podflow get takes -o jsonpath and --sort-by with one resource type at a time\n");
    return 1;
  }
  auto reader = ApiReader::Open(options);
  if (!reader.ok()) {
    PrintError(reader.status());
    return 1;
  }
  const bool all = options.all_namespaces;
  model::Value items = model::Value::Array();
  std::string printed;
  for (const model::KindInfo* kind : kinds) {
    Result<Selection> selection = ParseSelection(*kind, options);
    if (!selection.ok()) {
      PrintSelectionError(selection.status());
      return 1;
    }
    auto listed = (*reader)->List(*kind, all ? "" : options.namespace_);
    if (!listed.ok()) {
      PrintError(listed.status());
      return 1;
    }
    std::vector<KeyValue> kvs = std::move(*listed);
    Select(*kind, *selection, kvs);
    if (options.output == "yaml" || options.output == "json") {
      for (const KeyValue& kv : kvs) items.Append(OutputValue(*kind, kv));
      continue;
    }
    if (kvs.empty()) continue;
    if (options.output == "name") {
      for (const KeyValue& kv : kvs) printed += NameOutput(*kind, kv.key) + "\n";
      continue;
    }
    std::vector<std::string> objects;
    std::vector<std::string> names;
    for (KeyValue& kv : kvs) {
      names.push_back(NameOutput(*kind, kv.key));
      objects.push_back(std::move(kv.value));
    }
    PrintOptions print;
    print.wide = options.output == "wide";
    print.all_namespaces = all;
    Table table = BuildTable(*kind, objects, print, std::chrono::system_clock::now());
    const size_t name_column = all && kind->namespaced ? 1 : 0;
    for (size_t i = 0; i < table.rows.size() && i < names.size(); ++i) table.rows[i][name_column] = names[i];
    printed += (printed.empty() ? "" : "\n") + RenderTable(table);
  }
  if (options.output == "yaml" || options.output == "json") {
    model::Value list = ListValue(*kinds.front(), {});
    if (model::Value* at = list.Find("items")) *at = std::move(items);
    std::fputs(Serialize(list, options.output).c_str(), stdout);
  } else if (printed.empty()) {
    std::fprintf(stderr, "%s\n", NoResourcesMessage(*kinds.front(), options.namespace_, all).c_str());
  } else {
    std::fputs(printed.c_str(), stdout);
  }
  std::fflush(stdout);
  return 0;
}

int RunGet(const ReadOptions& options) {
  if (!ValidOutput(options.output)) {
    std::fprintf(stderr,
                 "error: unable to match a printer suitable for the output format \"%s\", "
                 "allowed formats are: json,jsonpath,name,wide,yaml\n",
                 options.output.c_str());
    return 1;
  }
  Result<Target> target = ParseTarget(options.args);
  if (!target.ok()) {
    PrintError(target.status());
    return 1;
  }
  if (!target->kinds.empty()) return RunGetKinds(options, target->kinds);
  const model::KindInfo& kind = *target->kind;
  Result<Selection> selection = ParseSelection(kind, options);
  if (!selection.ok()) {
    PrintSelectionError(selection.status());
    return 1;
  }
  std::optional<JsonPath> jsonpath;
  if (options.output.starts_with("jsonpath=")) {
    Result<JsonPath> parsed = ParseTemplate(options.output.substr(9), false);
    if (!parsed.ok()) {
      std::fprintf(stderr, "error: %s\n", parsed.status().message().c_str());
      return 1;
    }
    jsonpath = std::move(*parsed);
  }
  std::optional<JsonPath> sort_by;
  if (!options.sort_by.empty()) {
    Result<JsonPath> parsed = ParseTemplate(options.sort_by, true);
    if (!parsed.ok()) {
      std::fprintf(stderr, "error: %s\n", parsed.status().message().c_str());
      return 1;
    }
    sort_by = std::move(*parsed);
  }
  if (!selection->everything && !target->names.empty()) {
    std::fprintf(stderr, "error: name cannot be provided when a selector is specified\n");
    return 1;
  }
  const bool watch = options.watch || options.watch_only;
  Result<std::chrono::seconds> timeout = ParseRequestTimeout(options.request_timeout);
  if (!timeout.ok()) {
    std::fprintf(stderr, "error: %s\n", timeout.status().message().c_str());
    return 1;
  }
  if (watch && target->names.size() > 1) {
    std::fprintf(stderr,
                 "error: watch is only supported on individual resources and resource collections, but %zu "
                 "resources were found\n",
                 target->names.size());
    return 1;
  }
  if (watch && sort_by) {
    std::fprintf(stderr, options.watch ? "warning: --watch requested, --sort-by will be ignored for watch events received\n"
                                       : "warning: --watch-only requested, --sort-by will be ignored\n");
  }
  auto reader = ApiReader::Open(options);
  if (!reader.ok()) {
    PrintError(reader.status());
    return 1;
  }

  const bool all = options.all_namespaces && target->names.empty();
  std::vector<KeyValue> kvs;
  int exit_code = 0;
  int64_t revision = 0;  // what was read is as of this revision
  std::vector<Status> missing;
  if (target->names.empty()) {
    auto listed = (*reader)->List(kind, all ? "" : options.namespace_, &revision);
    if (!listed.ok()) {
      PrintError(listed.status());
      return 1;
    }
    kvs = std::move(*listed);
    Select(kind, *selection, kvs);
  } else {
    for (const std::string& name : target->names) {
      auto kv = (*reader)->Get(kind, options.namespace_, name);
      if (kv.ok()) {
        revision = std::max(revision, kv->mod_revision.value());
        kvs.push_back(std::move(*kv));
      } else if (kv.status().code() == Code::kNotFound || kv.status().code() == Code::kCorruption) {
        missing.push_back(kv.status());
      } else {
        PrintError(kv.status());
        return 1;
      }
    }
    exit_code = missing.empty() ? 0 : 1;
  }
  if (sort_by) {
    if (Status sorted = SortBy(kind, RelaxedPath(options.sort_by), *sort_by, kvs); !sorted.ok()) {
      std::fprintf(stderr, "error: %s\n", sorted.message().c_str());
      return 1;
    }
  }
  if (watch) {
    if (!missing.empty()) {
      for (const Status& s : missing) PrintError(s);
      return 1;
    }
    WatchPrinter printer(kind, options, all, jsonpath);
    if (!options.watch_only) {
      if (Status printed = printer.PrintInitial(kvs); !printed.ok()) {
        std::fprintf(stderr, "error: %s\n", printed.message().c_str());
        return 1;
      }
      std::fflush(stdout);
    }
    return WatchChanges(**reader, kind, options, *target, revision, all, printer, *timeout);
  }

  if (jsonpath) {
    // One object named: the template runs on it; otherwise on the List.
    const model::Value root = target->names.size() == 1 && kvs.size() == 1 ? OutputValue(kind, kvs[0])
                                                                            : ListValue(kind, kvs);
    Result<std::string> text = jsonpath->Execute(root);
    if (!text.ok()) {
      std::fprintf(stderr, "error: %s\n", text.status().message().c_str());
      return 1;
    }
    std::fputs(text->c_str(), stdout);
  } else if (options.output == "yaml" || options.output == "json") {
    if (target->names.size() == 1 && kvs.size() == 1) {
      std::fputs(Serialize(OutputValue(kind, kvs[0]), options.output).c_str(), stdout);
    } else if (!kvs.empty() || target->names.empty()) {
      std::fputs(Serialize(ListValue(kind, kvs), options.output).c_str(), stdout);
    }
  } else if (kvs.empty()) {
    if (target->names.empty()) {
      std::fprintf(stderr, "%s\n", NoResourcesMessage(kind, options.namespace_, all).c_str());
    }
  } else if (options.output == "name") {
    for (const KeyValue& kv : kvs) std::printf("%s\n", NameOutput(kind, kv.key).c_str());
  } else {
    std::vector<std::string> objects;
    for (KeyValue& kv : kvs) objects.push_back(std::move(kv.value));
    PrintOptions print;
    print.wide = options.output == "wide";
    print.all_namespaces = all;
    Table table = BuildTable(kind, objects, print, std::chrono::system_clock::now());
    std::fputs(RenderTable(table).c_str(), stdout);
  }
  std::fflush(stdout);
  for (const Status& s : missing) PrintError(s);
  return exit_code;
}

// describe pod's Scheduling section: the scheduler's stored decision for
// this pod (the same uid), or nothing when there is none (not scheduled by
// podflow's scheduler, or expired with the events).
PodDescribeExtras SchedulingExtras(ApiReader& api, const KeyValue& pod) {
  PodDescribeExtras extras;
  auto stored = api.GetKey(scheduler::DecisionKeyOfPod(pod.key));
  if (!stored.ok() || !stored->has_value()) return extras;
  auto record = scheduler::ReadDecisionRecord((*stored)->value);
  if (!record.ok() || !model::VerifyObject(model::Kind("Pod"), pod.value).ok()) return extras;
  const api::Pod* object = flatbuffers::GetRoot<api::Pod>(pod.value.data());
  const std::string uid =
      object->metadata() && object->metadata()->uid() ? object->metadata()->uid()->str() : "";
  const std::string recorded_uid = (*record)->pod_uid() ? (*record)->pod_uid()->str() : "";
  if (uid != recorded_uid) return extras;
  extras.scheduling = DescribeSchedulingSection(**record);
  return extras;
}

int RunDescribe(const ReadOptions& options) {
  Result<Target> target = ParseTarget(options.args);
  if (!target.ok()) {
    PrintError(target.status());
    return 1;
  }
  const model::KindInfo& kind = *target->kind;
  static constexpr std::string_view kDescribed[] = {"Pod",        "Node",      "Service", "Deployment",
                                                    "ReplicaSet", "DaemonSet", "Job"};
  if (std::find(std::begin(kDescribed), std::end(kDescribed), kind.kind) == std::end(kDescribed)) {
    std::fprintf(stderr,
                 "error: podflow describe supports pods, nodes, services, deployments, replicasets, daemonsets "
                 "and jobs, not %s\n",
                 std::string(kind.resource).c_str());
    return 1;
  }
  auto reader = ApiReader::Open(options);
  if (!reader.ok()) {
    PrintError(reader.status());
    return 1;
  }
  ApiReader& api = **reader;
  const bool all = options.all_namespaces && target->names.empty();

  std::vector<KeyValue> objects;
  std::vector<Status> missing;
  if (target->names.empty()) {
    auto listed = api.List(kind, all ? "" : options.namespace_);
    if (!listed.ok()) {
      PrintError(listed.status());
      return 1;
    }
    objects = std::move(*listed);
    if (objects.empty()) {
      std::fprintf(stderr, "%s\n", NoResourcesMessage(kind, options.namespace_, all).c_str());
      return 0;
    }
  } else {
    for (const std::string& name : target->names) {
      auto kv = api.Get(kind, options.namespace_, name);
      if (kv.ok()) {
        objects.push_back(std::move(*kv));
      } else if (kv.status().code() == Code::kNotFound || kv.status().code() == Code::kCorruption) {
        missing.push_back(kv.status());
      } else {
        PrintError(kv.status());
        return 1;
      }
    }
  }

  // Events (and, for nodes, pods) once for every object described.
  auto values = [](std::vector<KeyValue> kvs) {
    std::vector<std::string> out;
    for (KeyValue& kv : kvs) out.push_back(std::move(kv.value));
    return out;
  };
  const bool cluster_wide = all || !kind.namespaced;
  auto events = api.List(model::Kind("Event"), cluster_wide ? "" : options.namespace_);
  if (!events.ok()) {
    PrintError(events.status());
    return 1;
  }
  std::vector<std::string> event_bytes = values(std::move(*events));
  // What the description reads beside the object: every pod for a node;
  // the namespace's pods for a ReplicaSet or DaemonSet (their phases);
  // its ReplicaSets for a Deployment.
  std::vector<std::string> related;
  const model::KindInfo* related_kind = nullptr;
  if (kind.kind == "Node" || kind.kind == "ReplicaSet" || kind.kind == "DaemonSet") related_kind = &model::Kind("Pod");
  if (kind.kind == "Deployment") related_kind = &model::Kind("ReplicaSet");
  if (related_kind != nullptr) {
    auto listed = api.List(*related_kind, cluster_wide ? "" : options.namespace_);
    if (!listed.ok()) {
      PrintError(listed.status());
      return 1;
    }
    related = values(std::move(*listed));
  }

  const TimePoint now = std::chrono::system_clock::now();
  bool first = true;
  for (const KeyValue& kv : objects) {
    std::string text;
    if (kind.kind == "Pod") {
      text = DescribePod(kv.value, event_bytes, now, SchedulingExtras(api, kv));
    } else if (kind.kind == "Node") {
      // kubectl reads the node's lease beside it; none (or an unreadable
      // one) leaves the section out.
      const std::string name = kv.key.substr(kv.key.rfind('/') + 1);
      auto lease = api.Get(model::Kind("Lease"), "kube-node-lease", name);
      const bool has_lease = lease.ok() && model::VerifyObject(model::Kind("Lease"), lease->value).ok();
      text = DescribeNode(kv.value, related, event_bytes, now, has_lease ? std::string_view(lease->value) : "");
    } else if (kind.kind == "Deployment") {
      text = DescribeDeployment(kv.value, related, event_bytes, now);
    } else if (kind.kind == "ReplicaSet") {
      text = DescribeReplicaSet(kv.value, related, event_bytes, now);
    } else if (kind.kind == "DaemonSet") {
      text = DescribeDaemonSet(kv.value, related, event_bytes, now);
    } else if (kind.kind == "Job") {
      text = DescribeJob(kv.value, event_bytes, now);
    } else {
      const std::string name = kv.key.substr(kv.key.rfind('/') + 1);
      const std::string ns = kv.key.substr(0, kv.key.rfind('/'));
      auto ep = api.Get(model::Kind("Endpoints"), ns.substr(ns.rfind('/') + 1), name);
      if (!ep.ok() && ep.status().code() == Code::kCorruption) {
        PrintError(ep.status());
      } else if (!ep.ok() && ep.status().code() != Code::kNotFound) {
        PrintError(ep.status());
        return 1;
      }
      text = DescribeService(kv.value, ep.ok() ? std::string_view(ep->value) : std::string_view(),
                             event_bytes, now);
    }
    std::fputs(first ? text.c_str() : ("\n\n" + text).c_str(), stdout);
    first = false;
  }
  std::fflush(stdout);
  for (const Status& s : missing) PrintError(s);
  return missing.empty() ? 0 : 1;
}

void AddReadOptions(CLI::App* cmd, ReadOptions* options) {
  cmd->add_option("-n,--namespace", options->namespace_, "The namespace")->capture_default_str();
  cmd->add_flag("-A,--all-namespaces", options->all_namespaces,
                "List the requested object(s) across all namespaces");
  cmd->add_option("--config", options->config, "Cluster configuration (default: the embedded one)");
  cmd->add_option("--data-dir", options->data_dir,
                  "The pipeline's data dir, whose keys are used (default: the config's storage.dataDir)");
  cmd->add_option("--server", options->server,
                  "The api channel endpoint (default: the config's pipeline, tcp://127.0.0.1:7711)");
  cmd->add_option("--token", options->token, "Bearer token (default: the data dir's admin token)");
}

}  // namespace

void AddGetCommands(CLI::App& app, CommandAction& action) {
  auto get = std::make_shared<ReadOptions>();
  CLI::App* get_cmd = app.add_subcommand(
      "get", "Display one or many resources of any kind podflow stores, as kubectl get");
  get_cmd->add_option("args", get->args, "TYPE [NAME...] or TYPE/NAME...")->required();
  AddReadOptions(get_cmd, get.get());
  get_cmd->add_option("-o,--output", get->output,
                      "Output format: wide, yaml, json, name or jsonpath=TEMPLATE ({.metadata.name}, "
                      "{range .items[*]}...{end})");
  get_cmd->add_option("--sort-by", get->sort_by, "Sort list types by a JSONPath field (.metadata.name)");
  get_cmd->add_option("-l,--selector", get->label_selector,
                      "Selector (label query) to filter on: key=value, key!=value, key in (a,b), key, !key");
  get_cmd->add_option("--field-selector", get->field_selector,
                      "Selector (field query) to filter on: metadata.name=x, spec.nodeName=n, "
                      "involvedObject.name=p (events), ...");
  get_cmd->add_flag("-w,--watch", get->watch,
                    "After listing/getting the requested object, watch for changes");
  get_cmd->add_flag("--watch-only", get->watch_only,
                    "Watch for changes to the requested object(s), without listing/getting first");
  get_cmd->add_flag("--output-watch-events", get->output_watch_events,
                    "Output watch event objects when --watch or --watch-only is used");
  get_cmd->add_option("--request-timeout", get->request_timeout,
                      "How long a watch lasts before it ends (1s, 2m, 3h; 0: no end)")
      ->capture_default_str();
  get_cmd->callback([&action, get] { action = [get] { return RunGet(*get); }; });

  auto describe = std::make_shared<ReadOptions>();
  CLI::App* describe_cmd = app.add_subcommand(
      "describe",
      "Show details of a pod, node, service, deployment, replica set, daemon set or job and its events, as kubectl "
      "describe");
  describe_cmd->add_option("args", describe->args, "TYPE [NAME...] or TYPE/NAME...")->required();
  AddReadOptions(describe_cmd, describe.get());
  describe_cmd->callback([&action, describe] { action = [describe] { return RunDescribe(*describe); }; });
}

}  // namespace podflow::cli
