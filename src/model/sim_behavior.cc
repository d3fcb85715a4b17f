#include "model/sim_behavior.h"

#include <functional>
#include <map>

#include "base/yaml_reader.h"
#include "model/quantity.h"

namespace podflow::model {
namespace {

constexpr size_t kMaxLogBytes = 1024 * 1024;

template <typename T>
void Take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

Result<std::string> Text(const YAML::Node& node, const std::string& path) {
  return yaml::Scalar<std::string>(node, path, "must be a string");
}

Status ReadDuration(const YAML::Node& node, const std::string& path, bool never_allowed,
                    std::optional<SimDuration>* out) {
  Result<std::string> text = Text(node, path);
  if (!text.ok()) return text.status();
  if (never_allowed && *text == "never") {
    *out = kNever;
    return Status::Ok();
  }
  std::optional<SimDuration> d = ParseGoDuration(*text);
  if (!d) {
    return Status::Invalid(path + ": must be a duration such as \"30s\", \"1m30s\" or \"500ms\"" +
                           std::string(never_allowed ? " (or \"never\")" : "") + ", got \"" +
                           *text + "\"");
  }
  *out = *d;
  return Status::Ok();
}

}  // namespace

void SimBehavior::Overlay(const SimBehavior& over) {
  Take(exit_after, over.exit_after);
  Take(exit_code, over.exit_code);
  Take(logs, over.logs);
  Take(memory_bytes, over.memory_bytes);
  Take(memory_after, over.memory_after);
  Take(start_delay, over.start_delay);
  Take(ready_after, over.ready_after);
  Take(unready_after, over.unready_after);
  Take(unready_for, over.unready_for);
  Take(liveness_fail_after, over.liveness_fail_after);
  Take(termination_message, over.termination_message);
  Take(stop_after, over.stop_after);
}

bool SimBehavior::empty() const {
  return !exit_after && !exit_code && !logs && !memory_bytes && !memory_after && !start_delay &&
         !ready_after && !unready_after && !unready_for && !liveness_fail_after &&
         !termination_message && !stop_after;
}

Result<SimBehavior> ParseSimBehavior(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) return Status::Invalid(path + ": must be a map");
  SimBehavior b;
  using Reader = std::function<Status(const YAML::Node&, const std::string&)>;
  auto duration = [&b](std::optional<SimDuration> SimBehavior::*field, bool never) -> Reader {
    return [&b, field, never](const YAML::Node& n, const std::string& p) {
      return ReadDuration(n, p, never, &(b.*field));
    };
  };
  const std::map<std::string, Reader> readers = {
      {"exitAfter", duration(&SimBehavior::exit_after, true)},
      {"exitCode",
       [&b](const YAML::Node& n, const std::string& p) {
         Result<int32_t> code = yaml::Scalar<int32_t>(n, p, "must be an integer 0..255");
         if (!code.ok()) return code.status();
         if (*code < 0 || *code > 255) return Status::Invalid(p + ": must be an integer 0..255");
         b.exit_code = *code;
         return Status::Ok();
       }},
      {"logs",
       [&b](const YAML::Node& n, const std::string& p) {
         if (!n.IsSequence()) return Status::Invalid(p + ": must be a list of strings");
         std::vector<std::string> lines;
         size_t bytes = 0;
         for (size_t i = 0; i < n.size(); ++i) {
           Result<std::string> line = Text(n[i], yaml::Index(p, i));
           if (!line.ok()) return line.status();
           // Aliases can repeat one long line many times over: bounded.
           bytes += line->size() + 1;
           if (bytes > kMaxLogBytes) return Status::Invalid(p + ": must not be more than 1 MiB of lines");
           lines.push_back(std::move(*line));
         }
         b.logs = std::move(lines);
         return Status::Ok();
       }},
      {"memory",
       [&b](const YAML::Node& n, const std::string& p) {
         Result<std::string> text = Text(n, p);
         if (!text.ok()) return text.status();
         Result<Quantity> q = Quantity::Parse(*text);
         if (!q.ok() || q->Value() < 0) {
           return Status::Invalid(p + ": must be a quantity such as \"250Mi\", got \"" + *text +
                                  "\"");
         }
         b.memory_bytes = q->Value();
         return Status::Ok();
       }},
      {"memoryAfter", duration(&SimBehavior::memory_after, false)},
      {"startDelay", duration(&SimBehavior::start_delay, false)},
      {"readyAfter", duration(&SimBehavior::ready_after, false)},
      {"unreadyAfter", duration(&SimBehavior::unready_after, true)},
      {"unreadyFor", duration(&SimBehavior::unready_for, true)},
      {"livenessFailAfter", duration(&SimBehavior::liveness_fail_after, true)},
      {"terminationMessage",
       [&b](const YAML::Node& n, const std::string& p) {
         Result<std::string> text = Text(n, p);
         if (!text.ok()) return text.status();
         b.termination_message = std::move(*text);
         return Status::Ok();
       }},
      {"stopAfter", duration(&SimBehavior::stop_after, true)},
  };
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    auto it = readers.find(key);
    if (it == readers.end()) return Status::Invalid(yaml::Child(path, key) + ": unknown key");
    PODFLOW_RETURN_IF_ERROR(it->second(entry.second, yaml::Child(path, key)));
  }
  return b;
}

Result<SimBehavior> ParseSimBehaviorText(std::string_view text, const std::string& annotation_key) {
  const std::string path = "metadata.annotations[" + annotation_key + "]";
  Result<YAML::Node> node = yaml::Load(std::string(text));
  if (!node.ok()) return Status::Invalid(path + ": " + node.status().message());
  Result<SimBehavior> out = Status::Invalid(path + ": must be a map");
  PODFLOW_RETURN_IF_ERROR(yaml::Guard(
      [&] {
        out = ParseSimBehavior(*node, path);
        return Status::Ok();
      },
      [&](const yaml::Failure& f) { return Status::Invalid(path + ": " + f.what); }));
  return out;
}

}  // namespace podflow::model
