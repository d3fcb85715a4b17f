// Update, patch and delete of a stored object, decided as kube-apiserver's
// registry decides them.
#include "admission_fixture.h"
#include "model/labels.h"

namespace podflow::admission {
namespace {

using testing::AdmitOne;
using testing::TestAdmission;

constexpr std::string_view kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - {name: web, image: "nginx:1.25", ports: [{containerPort: 80}]}
  tolerations: [{key: a, operator: Exists}]
)";

StoredObject Stored(std::string_view manifest, int64_t revision = 7) {
  AdmissionOutcome out = AdmitOne(manifest);
  INFO(out.status.message);
  REQUIRE(out.admitted());
  return {out.key, out.bytes, revision};
}

std::unique_ptr<api::PodT> PodOf(const ChangeOutcome& out) {
  INFO(out.status.message);
  REQUIRE(out.ok());
  return model::Unpack<api::Pod>(out.bytes);
}

ChangeOutcome PatchPod(const StoredObject& stored, std::string_view type, std::string_view patch,
                       std::string_view subresource = {}) {
  Admission admission = TestAdmission();
  return admission.Patch(model::Kind("Pod"), "default", "web", subresource, *model::ParsePatchType(type), patch,
                         stored);
}

TEST_CASE("An update with a stale resourceVersion is 409 Conflict in kube-apiserver's words") {
  const StoredObject stored = Stored(kPod);
  Admission admission = TestAdmission();
  // The object as a client read it (a PUT of the bare manifest would drop
  // what admission added, which a pod may not), at revision 6.
  std::string manifest = model::ToJson(model::Kind("Pod"), stored.bytes, 0);
  manifest.replace(manifest.find("\"labels\":"), 0, "\"resourceVersion\":\"6\",");
  ChangeOutcome out = admission.Update(model::Kind("Pod"), "default", "web", "", manifest, stored);
  CHECK(out.status.code == 409);
  CHECK(out.status.reason == "Conflict");
  CHECK(out.status.message ==
        "Operation cannot be fulfilled on pods \"web\": the object has been modified; please apply your changes to "
        "the latest version and try again");
  CHECK(out.write == ChangeOutcome::Write::kNone);
  // The current one goes through; the server's fields carry over.
  manifest.replace(manifest.find("\"6\""), 3, "\"7\"");
  manifest.replace(manifest.find("\"app\":\"web\""), 11, "\"app\":\"web\",\"tier\":\"front\"");
  out = admission.Update(model::Kind("Pod"), "default", "web", "", manifest, stored);
  auto pod = PodOf(out);
  CHECK(out.write == ChangeOutcome::Write::kPut);
  auto was = model::Unpack<api::Pod>(stored.bytes);
  CHECK(pod->metadata->uid == was->metadata->uid);
  CHECK(pod->metadata->creation_timestamp == was->metadata->creation_timestamp);
  CHECK(pod->metadata->resource_version.empty());
  CHECK(pod->metadata->labels.size() == 2);
  REQUIRE(pod->status != nullptr);
  CHECK(pod->status->qos_class == was->status->qos_class);
}

TEST_CASE("A pod update may change only what kube-apiserver lets it") {
  const StoredObject stored = Stored(kPod);
  SECTION("the image: allowed") {
    ChangeOutcome out = PatchPod(stored, "strategic", R"({"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}})");
    CHECK(PodOf(out)->spec->containers[0]->image == "nginx:1.26");
    CHECK(out.write == ChangeOutcome::Write::kPut);
  }
  SECTION("an added toleration: allowed; a removed one: forbidden") {
    ChangeOutcome out = PatchPod(stored, "json", R"([{"op":"add","path":"/spec/tolerations/-","value":{"key":"b","operator":"Exists"}}])");
    const size_t had = model::Unpack<api::Pod>(stored.bytes)->spec->tolerations.size();
    CHECK(PodOf(out)->spec->tolerations.size() == had + 1);
    out = PatchPod(stored, "json", R"([{"op":"remove","path":"/spec/tolerations/0"}])");
    CHECK(out.status.code == 422);
    CHECK(out.status.message.starts_with(
        "Pod \"web\" is invalid: spec: Forbidden: pod updates may not change fields other than "
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
        "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if "
        "it was previously negative)"));
  }
  SECTION("a container's ports: forbidden") {
    ChangeOutcome out = PatchPod(stored, "merge", R"({"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}})");
    CHECK(out.status.code == 422);
    CHECK(out.status.details.causes.size() == 1);
    CHECK(out.status.details.causes[0].field == "spec");
  }
  SECTION("labels and annotations: allowed; nothing changed: nothing written") {
    ChangeOutcome out = PatchPod(stored, "merge", R"({"metadata":{"annotations":{"note":"x"}}})");
    CHECK(out.write == ChangeOutcome::Write::kPut);
    out = PatchPod(stored, "merge", R"({"metadata":{"labels":{"app":"web"}}})");
    CHECK(out.ok());
    CHECK(out.write == ChangeOutcome::Write::kNone);
  }
  SECTION("scheduling gates may be removed, never added") {
    const StoredObject gated = Stored(R"(apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  schedulingGates: [{name: example.com/a}, {name: example.com/b}]
  containers: [{name: web, image: nginx}]
)");
    ChangeOutcome out = PatchPod(gated, "json", R"([{"op":"remove","path":"/spec/schedulingGates/0"}])");
    CHECK(PodOf(out)->spec->scheduling_gates.size() == 1);
    out = PatchPod(gated, "strategic", R"({"spec":{"schedulingGates":[{"name":"example.com/c"}]}})");
    CHECK(out.status.message ==
          "Pod \"web\" is invalid: spec.schedulingGates: Forbidden: only deletion is allowed, but found new "
          "scheduling gate 'example.com/c'");
  }
}

TEST_CASE("The status subresource changes the status only; the main resource keeps it") {
  const StoredObject stored = Stored(kPod);
  ChangeOutcome out = PatchPod(stored, "merge", R"({"status":{"phase":"Running"},"metadata":{"labels":{"x":"y"}}})",
                               "status");
  auto pod = PodOf(out);
  CHECK(pod->status->phase == api::PodPhase::Running);
  CHECK(pod->metadata->labels.size() == 1);
  out = PatchPod(stored, "merge", R"({"status":{"phase":"Running"}})");
  CHECK(PodOf(out)->status->phase == api::PodPhase::Pending);
  CHECK(out.write == ChangeOutcome::Write::kNone);
}

TEST_CASE("generation counts spec changes of the kinds that have it") {
  const StoredObject stored = Stored(testing::ReadManifest("deployment.yaml"));
  auto was = model::Unpack<api::Deployment>(stored.bytes);
  REQUIRE(was->metadata->generation == 1);
  Admission admission = TestAdmission();
  ChangeOutcome out = admission.Patch(model::Kind("Deployment"), "default", was->metadata->name, "",
                                      model::PatchType::kMerge, R"({"spec":{"replicas":5}})", stored);
  INFO(out.status.message);
  REQUIRE(out.ok());
  CHECK(model::Unpack<api::Deployment>(out.bytes)->metadata->generation == 2);
  const StoredObject second{stored.key, out.bytes, 12};
  out = admission.Patch(model::Kind("Deployment"), "default", was->metadata->name, "", model::PatchType::kMerge,
                        R"({"metadata":{"labels":{"x":"y"}}})", second);
  REQUIRE(out.ok());
  CHECK(model::Unpack<api::Deployment>(out.bytes)->metadata->generation == 2);
  // A Deployment's annotations count too, but not when its status carries
  // them (the deployment controller writes its revision so).
  const StoredObject third{stored.key, out.bytes, 13};
  out = admission.Patch(model::Kind("Deployment"), "default", was->metadata->name, "", model::PatchType::kMerge,
                        R"({"metadata":{"annotations":{"team":"web"}}})", third);
  REQUIRE(out.ok());
  CHECK(model::Unpack<api::Deployment>(out.bytes)->metadata->generation == 3);
  const StoredObject fourth{stored.key, out.bytes, 14};
  out = admission.Patch(model::Kind("Deployment"), "default", was->metadata->name, "status", model::PatchType::kMerge,
                        R"({"metadata":{"annotations":{"deployment.kubernetes.io/revision":"1"},"labels":{"z":"1"}},)"
                        R"("status":{"observedGeneration":2}})",
                        fourth);
  REQUIRE(out.ok());
  auto status_written = model::Unpack<api::Deployment>(out.bytes);
  CHECK(status_written->metadata->generation == 3);
  CHECK(status_written->status->observed_generation == 2);
  CHECK(model::LabelsFromNative(status_written->metadata->annotations) ==
        model::Labels{{"deployment.kubernetes.io/revision", "1"}, {"team", "web"}});
  CHECK(model::LabelsFromNative(status_written->metadata->labels) ==
        model::LabelsFromNative(model::Unpack<api::Deployment>(fourth.bytes)->metadata->labels));
  // The selector is fixed once created.
  out = admission.Patch(model::Kind("Deployment"), "default", was->metadata->name, "", model::PatchType::kMerge,
                        R"({"spec":{"selector":{"matchLabels":{"app":"other"}},"template":{"metadata":{"labels":{"app":"other"}}}}})",
                        stored);
  CHECK(out.status.message ==
        "Deployment.apps \"" + was->metadata->name +
            "\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":"
            "\"other\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable");
}

TEST_CASE("An immutable ConfigMap keeps its data") {
  const StoredObject stored = Stored(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
immutable: true
data: {a: "1"}
)");
  Admission admission = TestAdmission();
  ChangeOutcome out = admission.Patch(model::Kind("ConfigMap"), "default", "cfg", "", model::PatchType::kMerge,
                                      R"({"data":{"a":"2"}})", stored);
  CHECK(out.status.message ==
        "ConfigMap \"cfg\" is invalid: data: Forbidden: field is immutable when `immutable` is set");
}

TEST_CASE("A Service keeps its cluster IP when an update leaves it out, and may not change it") {
  AdmissionOutcome created = AdmitOne(R"(apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
)");
  REQUIRE(created.admitted());
  const StoredObject stored{created.key, created.bytes, 3};
  const std::string ip = model::Unpack<api::Service>(created.bytes)->spec->cluster_ip;
  Admission admission = TestAdmission();
  ChangeOutcome out = admission.Update(model::Kind("Service"), "default", "web", "", R"(apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web2}, ports: [{port: 80}]}
)", stored);
  INFO(out.status.message);
  REQUIRE(out.ok());
  CHECK(model::Unpack<api::Service>(out.bytes)->spec->cluster_ip == ip);
  out = admission.Patch(model::Kind("Service"), "default", "web", "", model::PatchType::kMerge,
                        R"({"spec":{"clusterIP":"10.96.0.99","clusterIPs":["10.96.0.99"]}})", stored);
  CHECK(out.status.message ==
        "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.99\"}: may not change once set");
}

TEST_CASE("The URL names the object: a body naming another is a BadRequest") {
  const StoredObject stored = Stored(kPod);
  Admission admission = TestAdmission();
  std::string other(kPod);
  other.replace(other.find("name: web,"), 10, "name: api,");
  ChangeOutcome out = admission.Update(model::Kind("Pod"), "default", "web", "", other, stored);
  CHECK(out.status.code == 400);
  CHECK(out.status.message == "the name of the object (api) does not match the name on the URL (web)");
  out = PatchPod(stored, "json", R"([{"op":"test","path":"/metadata/name","value":"nope"}])");
  CHECK(out.status.code == 422);
  CHECK(out.status.message == "testing value /metadata/name failed: test failed");
}

TEST_CASE("Deleting a pod on a node is graceful; an unscheduled one goes at once") {
  Admission admission = TestAdmission();
  const StoredObject pending = Stored(kPod);
  ChangeOutcome out = admission.Delete(model::Kind("Pod"), pending, {});
  CHECK(out.ok());
  CHECK(out.write == ChangeOutcome::Write::kDelete);

  const StoredObject bound = Stored(std::string(kPod) + "  nodeName: node-1\n  terminationGracePeriodSeconds: 20\n");
  out = admission.Delete(model::Kind("Pod"), bound, {});
  auto pod = PodOf(out);
  CHECK(out.write == ChangeOutcome::Write::kPut);
  CHECK(pod->metadata->deletion_grace_period_seconds == 20);
  CHECK(pod->metadata->deletion_timestamp == "2026-11-21T14:00:20Z");
  // Asked again with a shorter period: shortened; with a longer one: unchanged.
  const StoredObject deleting{bound.key, out.bytes, 9};
  out = admission.Delete(model::Kind("Pod"), deleting, DeleteOptions{5, ""});
  CHECK(PodOf(out)->metadata->deletion_grace_period_seconds == 5);
  out = admission.Delete(model::Kind("Pod"), deleting, DeleteOptions{60, ""});
  CHECK(out.write == ChangeOutcome::Write::kNone);
  // Shortened from when it was asked for: 14:00:00 + 5 s.
  CHECK(PodOf(admission.Delete(model::Kind("Pod"), deleting, DeleteOptions{5, ""}))->metadata->deletion_timestamp ==
        "2026-11-21T14:00:05Z");
  // Marked deleting with no grace period left (held by a finalizer): a
  // second delete never gives it one again.
  std::unique_ptr<api::PodT> held = model::Unpack<api::Pod>(deleting.bytes);
  held->metadata->deletion_grace_period_seconds = 0;
  held->metadata->finalizers = {"example.com/hold"};
  out = admission.Delete(model::Kind("Pod"), {bound.key, model::Pack(*held), 10}, {});
  CHECK(PodOf(out)->metadata->deletion_grace_period_seconds == 0);
  CHECK(PodOf(out)->metadata->deletion_timestamp == "2026-11-21T14:00:20Z");
  held->metadata->finalizers.clear();
  out = admission.Delete(model::Kind("Pod"), {bound.key, model::Pack(*held), 10}, {});
  CHECK(out.write == ChangeOutcome::Write::kDelete);
  // --grace-period=0 removes it at once.
  out = admission.Delete(model::Kind("Pod"), bound, DeleteOptions{0, ""});
  CHECK(out.write == ChangeOutcome::Write::kDelete);
  // A negative period is the shortest one.
  out = admission.Delete(model::Kind("Pod"), bound, DeleteOptions{-5, ""});
  CHECK(PodOf(out)->metadata->deletion_grace_period_seconds == 1);
  out = admission.Delete(model::Kind("Pod"), bound, DeleteOptions{std::nullopt, "Sideways"});
  CHECK(out.status.message ==
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported "
        "values: \"Foreground\", \"Background\", \"Orphan\"");
}

TEST_CASE("Finalizers hold an object until the last one is removed") {
  Admission admission = TestAdmission();
  const StoredObject stored = Stored(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: held, finalizers: [example.com/hold]}
data: {a: "1"}
)");
  ChangeOutcome out = admission.Delete(model::Kind("ConfigMap"), stored, DeleteOptions{std::nullopt, "Foreground"});
  INFO(out.status.message);
  REQUIRE(out.ok());
  CHECK(out.write == ChangeOutcome::Write::kPut);
  auto cm = model::Unpack<api::ConfigMap>(out.bytes);
  CHECK(cm->metadata->deletion_timestamp == "2026-11-21T14:00:00Z");
  // Foreground is the garbage collector's finalizer, after the others.
  CHECK(cm->metadata->finalizers == std::vector<std::string>{"example.com/hold", "foregroundDeletion"});
  // Background takes it off again; example.com/hold still holds it.
  out = admission.Delete(model::Kind("ConfigMap"), {stored.key, out.bytes, 8}, DeleteOptions{std::nullopt, "Background"});
  REQUIRE(out.write == ChangeOutcome::Write::kPut);
  cm = model::Unpack<api::ConfigMap>(out.bytes);
  CHECK(cm->metadata->finalizers == std::vector<std::string>{"example.com/hold"});
  const StoredObject deleting{stored.key, out.bytes, 8};
  // No finalizer may be added now.
  out = admission.Patch(model::Kind("ConfigMap"), "default", "held", "", model::PatchType::kStrategic,
                        R"({"metadata":{"finalizers":["example.com/more"]}})", deleting);
  CHECK(out.status.message ==
        "ConfigMap \"held\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object "
        "is being deleted, found new finalizers []string{\"example.com/more\"}");
  // Removing one keeps it; removing the last deletes it.
  out = admission.Patch(model::Kind("ConfigMap"), "default", "held", "", model::PatchType::kStrategic,
                        R"({"metadata":{"labels":{"a":"b"}}})", deleting);
  CHECK(out.write == ChangeOutcome::Write::kPut);
  out = admission.Patch(model::Kind("ConfigMap"), "default", "held", "", model::PatchType::kMerge,
                        R"({"metadata":{"finalizers":null}})", deleting);
  CHECK(out.write == ChangeOutcome::Write::kDelete);
}

TEST_CASE("propagationPolicy leaves the garbage collector's finalizer: Foreground, Orphan, or the kind's default") {
  Admission admission = TestAdmission();
  const StoredObject cm = Stored("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n");
  auto finalizers_after = [&](const StoredObject& stored, const model::KindInfo& kind, const std::string& policy) {
    ChangeOutcome out = admission.Delete(kind, stored, DeleteOptions{std::nullopt, policy});
    INFO(out.status.message);
    REQUIRE(out.ok());
    if (out.write == ChangeOutcome::Write::kDelete) return std::optional<std::vector<std::string>>();
    const model::Value object = model::ToValue(kind, out.bytes);
    const model::Value* meta = object.Find("metadata");
    REQUIRE(meta != nullptr);
    CHECK(meta->Find("deletionTimestamp") != nullptr);
    std::vector<std::string> list;
    if (const model::Value* f = meta->Find("finalizers")) {
      for (const model::Value& v : f->items()) list.push_back(v.string_value());
    }
    return std::optional<std::vector<std::string>>(list);
  };
  using List = std::vector<std::string>;
  // None held: Background (and no policy) removes it at once.
  CHECK_FALSE(finalizers_after(cm, model::Kind("ConfigMap"), "Background").has_value());
  CHECK_FALSE(finalizers_after(cm, model::Kind("ConfigMap"), "").has_value());
  CHECK(finalizers_after(cm, model::Kind("ConfigMap"), "Foreground") == List{"foregroundDeletion"});
  CHECK(finalizers_after(cm, model::Kind("ConfigMap"), "Orphan") == List{"orphan"});
  // Held by one already (no deletionTimestamp): without a policy it stays
  // as the object asks; a policy replaces it.
  const StoredObject marked =
      Stored("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, finalizers: [orphan]}\n");
  CHECK(finalizers_after(marked, model::Kind("ConfigMap"), "") == List{"orphan"});
  CHECK(finalizers_after(marked, model::Kind("ConfigMap"), "Foreground") == List{"foregroundDeletion"});
  CHECK_FALSE(finalizers_after(marked, model::Kind("ConfigMap"), "Background").has_value());
  // A batch/v1 Job orphans its pods unless told otherwise.
  const StoredObject job = Stored(R"(apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: "perl:5.34.0"}]
)");
  CHECK(finalizers_after(job, model::Kind("Job"), "") == List{"orphan"});
  CHECK_FALSE(finalizers_after(job, model::Kind("Job"), "Background").has_value());
  // A pod whose graceful deletion is under way keeps its finalizers.
  const StoredObject bound = Stored(std::string(kPod) + "  nodeName: node-1\n");
  ChangeOutcome out = admission.Delete(model::Kind("Pod"), bound, {});
  REQUIRE(out.write == ChangeOutcome::Write::kPut);
  const StoredObject terminating{bound.key, out.bytes, 9};
  out = admission.Delete(model::Kind("Pod"), terminating, DeleteOptions{std::nullopt, "Orphan"});
  CHECK(out.write == ChangeOutcome::Write::kNone);
  CHECK(PodOf(out)->metadata->finalizers.empty());
}

TEST_CASE("A delete's preconditions: another uid or resourceVersion is 409 in kube-apiserver's words") {
  Admission admission = TestAdmission();
  const StoredObject cm = Stored("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n", 12);
  const std::string uid = model::Unpack<api::ConfigMap>(cm.bytes)->metadata->uid;
  DeleteOptions options;
  options.precondition_uid = "0000-other";
  ChangeOutcome out = admission.Delete(model::Kind("ConfigMap"), cm, options);
  CHECK(out.status.code == 409);
  CHECK(out.status.reason == "Conflict");
  CHECK(out.status.message ==
        "Operation cannot be fulfilled on ConfigMap \"cfg\": the UID in the precondition (0000-other) does not "
        "match the UID in record (" + uid + "). The object might have been deleted and then recreated");
  CHECK(out.write == ChangeOutcome::Write::kNone);
  options.precondition_uid = uid;
  options.precondition_resource_version = "11";
  out = admission.Delete(model::Kind("ConfigMap"), cm, options);
  CHECK(out.status.message ==
        "Operation cannot be fulfilled on ConfigMap \"cfg\": the ResourceVersion in the precondition (11) does "
        "not match the ResourceVersion in record (12). The object might have been modified");
  options.precondition_resource_version = "12";
  out = admission.Delete(model::Kind("ConfigMap"), cm, options);
  CHECK(out.ok());
  CHECK(out.write == ChangeOutcome::Write::kDelete);
}

TEST_CASE("A deleted namespace is Terminating until its own finalizer goes; updates keep it") {
  Admission admission = TestAdmission();
  const StoredObject stored = Stored("apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n");
  ChangeOutcome out = admission.Delete(model::Kind("Namespace"), stored, {});
  INFO(out.status.message);
  REQUIRE(out.ok());
  CHECK(out.write == ChangeOutcome::Write::kPut);
  auto ns = model::Unpack<api::Namespace>(out.bytes);
  CHECK(ns->status->phase == api::NamespacePhase::Terminating);
  CHECK_FALSE(ns->metadata->deletion_timestamp.empty());
  const StoredObject terminating{stored.key, out.bytes, 9};
  out = admission.Patch(model::Kind("Namespace"), "", "team", "", model::PatchType::kMerge,
                        R"({"metadata":{"labels":{"x":"y"}}})", terminating);
  CHECK(out.write == ChangeOutcome::Write::kPut);
}

TEST_CASE("A JSON patch of more than 10000 operations is refused whole") {
  const StoredObject stored = Stored(kPod);
  std::string ops = "[";
  for (int i = 0; i <= 10000; ++i) ops += std::string(i ? "," : "") + R"({"op":"test","path":"/kind","value":"Pod"})";
  ops += "]";
  ChangeOutcome out = PatchPod(stored, "json", ops);
  CHECK(out.status.code == 413);
  CHECK(out.status.message ==
        "Request entity too large: The allowed count of operations in a JSON patch is 10000, while the request has "
        "10001");
}

}  // namespace
}  // namespace podflow::admission
