// The Priority plugin: pods resolve their PriorityClass (by name, the
// globalDefault, the built-in classes), refusals in kube-apiserver's words,
// PriorityClass checks, classes admitted earlier in a request, and what is
// read from the log.
#include "stages/admission/priority.h"

#include "admission_fixture.h"

namespace podflow::admission {
namespace {

// A PriorityClass manifest.
std::string Class(std::string_view name, int64_t value, std::string_view extra = {}) {
  std::string out = "{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: " +
                    std::string(name) + "}, value: " + std::to_string(value);
  if (!extra.empty()) out += ", " + std::string(extra);
  return out + "}";
}

// A pod manifest; `spec` is extra spec fields ("priorityClassName: high").
std::string Pod(std::string_view spec, std::string_view metadata = "name: p") {
  std::string out = "{apiVersion: v1, kind: Pod, metadata: {" + std::string(metadata) +
                    "}, spec: {containers: [{name: a, image: nginx}]";
  if (!spec.empty()) out += ", " + std::string(spec);
  return out + "}}";
}

const std::string kHigh = Class("high", 1000);
const std::string kBatch = Class("batch-high", 100000, "preemptionPolicy: Never");
const std::string kDefault = Class("default", 5, "globalDefault: true, preemptionPolicy: Never");

TEST_CASE("Priority: a pod gets the priority and preemption policy of its class",
          "[admission][priority]") {
  struct Case {
    std::string name;
    std::vector<std::string> stored;
    std::string pod_spec;
    int32_t priority;
    std::string class_name;  // spec.priorityClassName afterwards
    api::PreemptionPolicy policy;
  };
  const auto lower = api::PreemptionPolicy::PreemptLowerPriority;
  const auto never = api::PreemptionPolicy::Never;
  const std::vector<Case> cases = {
      {"by name", {kHigh, kBatch}, "priorityClassName: high", 1000, "high", lower},
      {"the class's preemptionPolicy",
       {kHigh, kBatch},
       "priorityClassName: batch-high",
       100000,
       "batch-high",
       never},
      {"the pod's own preemptionPolicy, the same as the class's",
       {kBatch},
       "priorityClassName: batch-high, preemptionPolicy: Never",
       100000,
       "batch-high",
       never},
      {"the pod's own priority, the same as the class's",
       {kHigh},
       "priorityClassName: high, priority: 1000",
       1000,
       "high",
       lower},
      {"no class and no default: 0", {kHigh}, "", 0, "", lower},
      {"no classes stored at all", {}, "", 0, "", lower},
      {"no class: the globalDefault, named in the spec",
       {kHigh, kDefault},
       "",
       5,
       "default",
       never},
      {"two globalDefaults (a race): the lower value",
       {Class("d7", 7, "globalDefault: true"), Class("d3", 3, "globalDefault: true")},
       "",
       3,
       "d3",
       lower},
      {"a named class over the default",
       {kHigh, kDefault},
       "priorityClassName: high",
       1000,
       "high",
       lower},
      {"system-cluster-critical, built in",
       {},
       "priorityClassName: system-cluster-critical",
       2000000000,
       "system-cluster-critical",
       lower},
      {"system-node-critical, built in",
       {kDefault},
       "priorityClassName: system-node-critical",
       2000001000,
       "system-node-critical",
       lower},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto pod = testing::AdmittedObject<api::Pod>(
          testing::AdmitOne(Pod(c.pod_spec), {}, testing::StoredPriorityClasses(c.stored)));
      CHECK(pod->spec->priority.value() == c.priority);
      CHECK(pod->spec->priority_class_name == c.class_name);
      CHECK(pod->spec->preemption_policy == c.policy);
    }
  }
}

TEST_CASE("Priority: refusals read as kube-apiserver's", "[admission][priority]") {
  struct Case {
    std::string name;
    std::string manifest;
    std::string kubectl;
    std::string details_name;
  };
  const std::vector<Case> cases = {
      {"an unknown class", Pod("priorityClassName: missing"),
       "Error from server (Forbidden): pods \"p\" is forbidden: no PriorityClass with name "
       "missing was found",
       "p"},
      {"a priority that differs from the class's", Pod("priorityClassName: high, priority: 7"),
       "Error from server (Forbidden): pods \"p\" is forbidden: the integer value of priority (7) "
       "must not be provided in pod spec; priority admission controller computed 1000 from the "
       "given PriorityClass name",
       "p"},
      {"a priority without a class", Pod("priority: 7"),
       "Error from server (Forbidden): pods \"p\" is forbidden: the integer value of priority (7) "
       "must not be provided in pod spec; priority admission controller computed 0 from the given "
       "PriorityClass name",
       "p"},
      {"a preemptionPolicy that differs from the class's",
       Pod("priorityClassName: high, preemptionPolicy: Never"),
       "Error from server (Forbidden): pods \"p\" is forbidden: the string value of "
       "PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller "
       "computed PreemptLowerPriority from the given PriorityClass name",
       "p"},
      {"a pod with generateName is named by it",
       Pod("priorityClassName: missing", "generateName: web-"),
       "Error from server (Forbidden): pods \"web-\" is forbidden: no PriorityClass with name "
       "missing was found",
       "web-"},
      {"the plugin refuses before field validation",
       "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {priorityClassName: missing, "
       "containers: [{name: a}]}}",
       "Error from server (Forbidden): pods \"p\" is forbidden: no PriorityClass with name "
       "missing was found",
       "p"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      AdmissionOutcome out =
          testing::AdmitOne(c.manifest, {}, testing::StoredPriorityClasses({kHigh}));
      REQUIRE_FALSE(out.admitted());
      CHECK(out.status.code == 403);
      CHECK(out.status.reason == "Forbidden");
      CHECK(KubectlMessage(out.status) == c.kubectl);
      CHECK(out.status.details.kind == "pods");
      CHECK(out.status.details.name == c.details_name);
      CHECK(out.bytes.empty());
    }
  }
}

TEST_CASE("Priority: PriorityClass checks", "[admission][priority]") {
  struct Case {
    std::string name;
    std::vector<std::string> stored;
    std::string manifest;
    int32_t code;  // 201 when admitted
    std::string message;
  };
  const std::string invalid = "PriorityClass.scheduling.k8s.io ";
  const std::string reserved =
      ": metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
      "system use only. error: ";
  const std::vector<Case> cases = {
      {"the highest user value",
       {},
       Class("top", 1000000000),
       201,
       "priorityclass.scheduling.k8s.io/top created"},
      {"a negative value",
       {},
       Class("low", -2147483648LL),
       201,
       "priorityclass.scheduling.k8s.io/low created"},
      {"above the highest user value",
       {},
       Class("too-high", 1000000001),
       422,
       invalid + "\"too-high\" is invalid: value: Forbidden: maximum allowed value of a user "
                 "defined priority is 1000000000"},
      {"an unknown system- name",
       {},
       Class("system-foo", 10),
       422,
       invalid + "\"system-foo\" is invalid" + reserved +
           "system-foo is not a known system priority class"},
      {"a built-in name with another value",
       {},
       Class("system-node-critical", 5),
       422,
       invalid + "\"system-node-critical\" is invalid" + reserved +
           "value of system-node-critical PriorityClass must be 2000001000"},
      {"a built-in name as globalDefault",
       {},
       Class("system-cluster-critical", 2000000000, "globalDefault: true"),
       422,
       invalid + "\"system-cluster-critical\" is invalid" + reserved +
           "globalDefault of system-cluster-critical PriorityClass must be false"},
      {"a built-in class exactly: it exists",
       {},
       Class("system-cluster-critical", 2000000000),
       409,
       "priorityclasses.scheduling.k8s.io \"system-cluster-critical\" already exists"},
      {"a first globalDefault",
       {kHigh},
       Class("other", 1, "globalDefault: true"),
       201,
       "priorityclass.scheduling.k8s.io/other created"},
      {"a second globalDefault",
       {kDefault},
       Class("other", 1, "globalDefault: true"),
       403,
       "priorityclasses.scheduling.k8s.io \"other\" is forbidden: PriorityClass default is "
       "already marked as default. Only one default can exist"},
      {"not a default beside one",
       {kDefault},
       Class("other", 1),
       201,
       "priorityclass.scheduling.k8s.io/other created"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      AdmissionOutcome out =
          testing::AdmitOne(c.manifest, {}, testing::StoredPriorityClasses(c.stored));
      CHECK(out.status.code == c.code);
      CHECK(out.status.message == c.message);
      CHECK(out.admitted() == (c.code == 201));
    }
  }
  SECTION("preemptionPolicy defaults to PreemptLowerPriority") {
    auto pc = testing::AdmittedObject<api::PriorityClass>(testing::AdmitOne(kHigh));
    CHECK(pc->preemption_policy == api::PreemptionPolicy::PreemptLowerPriority);
  }
  SECTION("an unsupported preemptionPolicy is Invalid") {
    AdmissionOutcome out = testing::AdmitOne(Class("x", 1, "preemptionPolicy: Sometimes"));
    CHECK(out.status.code == 422);
    REQUIRE(out.status.details.causes.size() == 1);
    CHECK(out.status.details.causes[0].field == "preemptionPolicy");
    CHECK(out.status.details.causes[0].Reason() == "FieldValueNotSupported");
    CHECK(out.status.message.starts_with(invalid + "\"x\" is invalid: preemptionPolicy: "
                                                   "Unsupported value: \"Sometimes\""));
  }
}

TEST_CASE("Priority: classes admitted earlier in a request count", "[admission][priority]") {
  Admission admission = testing::TestAdmission();
  auto admit = [&](const std::vector<std::string>& documents,
                   const std::vector<std::string>& stored) {
    std::string manifest;
    for (const std::string& d : documents) manifest += "---\n" + d + "\n";
    AdmitReply reply =
        admission.Admit(testing::kAdminToken, manifest, {.priority_classes = testing::StoredPriorityClasses(stored)});
    REQUIRE_FALSE(reply.failure.has_value());
    REQUIRE(reply.results.size() == documents.size());
    return std::move(reply.results);
  };
  SECTION("a class, then a pod naming it") {
    auto results = admit({kBatch, Pod("priorityClassName: batch-high")}, {});
    auto pod = testing::AdmittedObject<api::Pod>(results[1]);
    CHECK(pod->spec->priority.value() == 100000);
    CHECK(pod->spec->preemption_policy == api::PreemptionPolicy::Never);
  }
  SECTION("a default class, then a pod naming none") {
    auto results = admit({kDefault, Pod("")}, {});
    auto pod = testing::AdmittedObject<api::Pod>(results[1]);
    CHECK(pod->spec->priority_class_name == "default");
    CHECK(pod->spec->priority.value() == 5);
  }
  SECTION("a pod before the class it names is refused") {
    auto results = admit({Pod("priorityClassName: batch-high"), kBatch}, {});
    CHECK(results[0].status.code == 403);
    CHECK(results[1].admitted());
  }
  SECTION("two defaults in one request: the second is refused") {
    auto results = admit({kDefault, Class("other", 1, "globalDefault: true")}, {});
    CHECK(results[0].admitted());
    CHECK(results[1].status.code == 403);
  }
  SECTION("a stored class wins over one of the same name in the request") {
    // The request's copy fails AlreadyExists when written.
    auto results = admit({Class("high", 7), Pod("priorityClassName: high")}, {kHigh});
    auto pod = testing::AdmittedObject<api::Pod>(results[1]);
    CHECK(pod->spec->priority.value() == 1000);
  }
  SECTION("a refused class does not count") {
    auto results = admit({Class("huge", 2000000000), Pod("priorityClassName: huge")}, {});
    CHECK(results[0].status.code == 422);
    CHECK(results[1].status.code == 403);
  }
}

TEST_CASE("Priority: the stored classes are listed once, only when needed",
          "[admission][priority]") {
  int calls = 0;
  PriorityClassLister counting = [&]() -> Result<std::vector<PriorityClassInfo>> {
    ++calls;
    return std::vector<PriorityClassInfo>{};
  };
  Admission admission = testing::TestAdmission();
  SECTION("not for a request without pods or classes") {
    AdmitReply reply = admission.Admit(testing::kAdminToken,
                                       testing::ReadManifest("namespace.yaml"), {.priority_classes = counting});
    CHECK(reply.results.at(0).admitted());
    CHECK(calls == 0);
  }
  SECTION("once for many pods") {
    AdmitReply reply = admission.Admit(
        testing::kAdminToken,
        Pod("", "name: a") + "\n---\n" + Pod("", "name: b") + "\n---\n" + kHigh, {.priority_classes = counting});
    REQUIRE(reply.results.size() == 3);
    for (const AdmissionOutcome& out : reply.results) CHECK(out.admitted());
    CHECK(calls == 1);
  }
  SECTION("a failed listing fails the pod with 500") {
    PriorityClassLister failing = []() -> Result<std::vector<PriorityClassInfo>> {
      return Status::Unavailable("persistence did not answer");
    };
    AdmissionOutcome out = testing::AdmitOne(Pod(""), {}, failing);
    CHECK(out.status.code == 500);
    CHECK(out.status.message ==
          "Internal error occurred: failed to get default priority class: persistence did not "
          "answer");
  }
}

TEST_CASE("Priority: PriorityClasses read from the log", "[admission][priority]") {
  SECTION("the admitted bytes read back") {
    AdmissionOutcome out = testing::AdmitOne(kDefault);
    Result<PriorityClassInfo> pc = ReadStoredPriorityClass(out.bytes);
    REQUIRE(pc.ok());
    CHECK(*pc == PriorityClassInfo{"default", 5, true, api::PreemptionPolicy::Never});
  }
  SECTION("an unset preemptionPolicy reads as PreemptLowerPriority") {
    api::PriorityClassT native;
    native.metadata = std::make_unique<api::ObjectMetaT>();
    native.metadata->name = "old";
    native.value = 3;
    Result<PriorityClassInfo> pc = ReadStoredPriorityClass(model::Pack(native));
    REQUIRE(pc.ok());
    CHECK(pc->preemption_policy == api::PreemptionPolicy::PreemptLowerPriority);
  }
  SECTION("bytes that are not a PriorityClass are Corruption") {
    Result<PriorityClassInfo> pc = ReadStoredPriorityClass("not a flatbuffer");
    REQUIRE_FALSE(pc.ok());
    CHECK(pc.status().code() == Code::kCorruption);
  }
  SECTION("a class without a name is Corruption") {
    api::PriorityClassT native;
    native.value = 3;
    Result<PriorityClassInfo> pc = ReadStoredPriorityClass(model::Pack(native));
    REQUIRE_FALSE(pc.ok());
    CHECK(pc.status().code() == Code::kCorruption);
  }
}

}  // namespace
}  // namespace podflow::admission
