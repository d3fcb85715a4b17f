// The kinds beyond pods and services: every example manifest admitted, the
// scheme's defaults, and validation in kube-apiserver's words.
#include "admission_fixture.h"
#include "bad_manifests.h"

namespace podflow::admission {
namespace {

using testing::AdmitOne;
using testing::AdmittedObject;
using testing::ReadManifest;
using testing::RejectOne;

std::string Label(const std::vector<std::unique_ptr<api::StringEntryT>>& labels, std::string_view key) {
  for (const auto& e : labels) {
    if (e->key == key) return e->value;
  }
  return "<absent>";
}

TEST_CASE("Every example manifest of the new kinds is admitted", "[admission][kinds]") {
  for (const char* file : {"deployment.yaml", "replicaset.yaml", "daemonset.yaml", "statefulset.yaml", "jobs.yaml",
                           "config-and-secrets.yaml", "rbac.yaml", "cluster-objects.yaml"}) {
    Admission admission = testing::TestAdmission();
    AdmitReply reply = admission.Admit(testing::kAdminToken, ReadManifest(file));
    REQUIRE_FALSE(reply.failure.has_value());
    for (const AdmissionOutcome& out : reply.results) {
      INFO(file << ": " << out.name << ": " << out.status.message);
      CHECK(out.admitted());
      CHECK(out.status.code == 201);
    }
  }
}

TEST_CASE("Workloads get the scheme's defaults, and their templates the pod spec's", "[admission][kinds]") {
  auto d = AdmittedObject<api::Deployment>(AdmitOne(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.25"}]
)"));
  const api::DeploymentSpecT& spec = *d->spec;
  CHECK(spec.replicas == 1);
  CHECK(spec.revision_history_limit == 10);
  CHECK(spec.progress_deadline_seconds == 600);
  REQUIRE(spec.strategy);
  CHECK(spec.strategy->type == api::DeploymentStrategyType::RollingUpdate);
  CHECK(spec.strategy->rolling_update->max_surge->str_val == "25%");
  CHECK(spec.strategy->rolling_update->max_unavailable->str_val == "25%");
  const api::PodSpecT& pod = *spec.template_->spec;
  CHECK(pod.restart_policy == api::RestartPolicy::Always);
  CHECK(pod.dns_policy == api::DNSPolicy::ClusterFirst);
  CHECK(pod.scheduler_name == "default-scheduler");
  CHECK(pod.termination_grace_period_seconds == 30);
  CHECK(pod.containers[0]->image_pull_policy == api::PullPolicy::IfNotPresent);
  // What only a pod gets (admission plugins, status) stays out of templates.
  CHECK(pod.service_account_name.empty());
  CHECK(pod.tolerations.empty());
  CHECK_FALSE(d->status);
  CHECK(d->metadata->generation == 1);

  auto ds = AdmittedObject<api::DaemonSet>(AdmitOne(ReadManifest("daemonset.yaml")));
  CHECK(ds->spec->update_strategy->rolling_update->max_surge->int_val == 0);
  CHECK(ds->spec->revision_history_limit == 10);

  auto sts = AdmittedObject<api::StatefulSet>(AdmitOne(ReadManifest("statefulset.yaml")));
  CHECK(sts->spec->update_strategy->type == api::StatefulSetUpdateStrategyType::RollingUpdate);
  CHECK(sts->spec->update_strategy->rolling_update->partition == 0);
  CHECK(sts->spec->persistent_volume_claim_retention_policy->when_deleted ==
        api::PersistentVolumeClaimRetentionPolicyType::Retain);
  CHECK(sts->spec->volume_claim_templates[0]->spec->volume_mode == api::PersistentVolumeMode::Filesystem);
}

TEST_CASE("A Job selects its pods by its uid, and is labelled as its template", "[admission][kinds]") {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, ReadManifest("jobs.yaml"));
  REQUIRE(reply.results.size() == 2);
  auto job = AdmittedObject<api::Job>(reply.results[0]);
  const std::string& uid = job->metadata->uid;
  REQUIRE_FALSE(uid.empty());
  CHECK(job->spec->completions == 1);
  CHECK(job->spec->parallelism == 1);
  CHECK(job->spec->backoff_limit == 4);
  CHECK(job->spec->completion_mode == api::CompletionMode::NonIndexed);
  CHECK(job->spec->suspend == false);
  CHECK(Label(job->spec->selector->match_labels, "batch.kubernetes.io/controller-uid") == uid);
  const auto& labels = job->spec->template_->metadata->labels;
  CHECK(Label(labels, "batch.kubernetes.io/job-name") == "pi");
  CHECK(Label(labels, "job-name") == "pi");
  CHECK(Label(labels, "controller-uid") == uid);
  CHECK(Label(job->metadata->labels, "job-name") == "pi");

  auto cj = AdmittedObject<api::CronJob>(reply.results[1]);
  CHECK(cj->spec->concurrency_policy == api::ConcurrencyPolicy::Allow);
  CHECK(cj->spec->successful_jobs_history_limit == 3);
  CHECK(cj->spec->failed_jobs_history_limit == 1);
  CHECK(cj->spec->job_template->spec->template_->spec->dns_policy == api::DNSPolicy::ClusterFirst);
}

TEST_CASE("A Secret's stringData is folded into data; bad base64 is a BadRequest", "[admission][kinds]") {
  auto secret = AdmittedObject<api::Secret>(AdmitOne(R"(apiVersion: v1
kind: Secret
metadata: {name: s}
data: {username: YWRtaW4=, password: b2xk}
stringData: {password: t0p-Secret}
)"));
  CHECK(secret->type == "Opaque");
  CHECK(secret->string_data.empty());
  CHECK(Label(secret->data, "username") == "YWRtaW4=");
  CHECK(Label(secret->data, "password") == "dDBwLVNlY3JldA==");

  AdmissionOutcome bad = AdmitOne("{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {k: 'abc$'}}");
  CHECK(bad.status.code == 400);
  CHECK(bad.status.message ==
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3");
  CHECK(bad.bytes.empty());
}

TEST_CASE("Validation of the new kinds, in kube-apiserver's words", "[admission][kinds]") {
  for (const testing::BadManifest& c : testing::GroupBadManifests()) {
    SECTION(c.name) {
      AdmissionOutcome out = AdmitOne(c.manifest);
      CHECK_FALSE(out.admitted());
      CHECK(out.bytes.empty());
      CHECK(out.status.code == c.code);
      CHECK(out.status.message == c.message);
    }
  }
}

TEST_CASE("Bindings name the RBAC group for users and groups by default", "[admission][kinds]") {
  auto rb = AdmittedObject<api::RoleBinding>(AdmitOne(R"(apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: b}
subjects: [{kind: User, name: jane}, {kind: ServiceAccount, name: robot, namespace: default}]
roleRef: {kind: Role, name: pod-reader}
)"));
  CHECK(rb->subjects[0]->api_group == "rbac.authorization.k8s.io");
  CHECK(rb->subjects[1]->api_group.empty());
  CHECK(rb->role_ref->api_group == "rbac.authorization.k8s.io");
}

}  // namespace
}  // namespace podflow::admission
