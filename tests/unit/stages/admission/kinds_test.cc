// The kinds beyond pods and services: every example manifest admitted, the
// scheme's defaults, and validation in kube-apiserver's words.
#include "admission_fixture.h"

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
  struct Case {
    std::string name;
    std::string manifest;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"deployment selector does not match its template",
       "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {selector: {matchLabels: {app: a}}, "
       "template: {metadata: {labels: {app: b}}, spec: {containers: [{name: c, image: nginx}]}}}}",
       "Deployment.apps \"d\" is invalid: spec.template.metadata.labels: Invalid value: "
       "map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`"},
      {"deployment without a selector",
       "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {metadata: {labels: {app: "
       "b}}, spec: {containers: [{name: c, image: nginx}]}}}}",
       "Deployment.apps \"d\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid "
       "value: map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`]"},
      {"daemonset with both rolling-update bounds set",
       "{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds}, spec: {selector: {matchLabels: {app: a}}, "
       "updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}, template: {metadata: {labels: {app: "
       "a}}, spec: {containers: [{name: c, image: nginx}]}}}}",
       "DaemonSet.apps \"ds\" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "
       "intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when maxUnavailable is non-zero"},
      {"role names may hold colons but not slashes",
       "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: 'a/b'}, rules: []}",
       "ClusterRole.rbac.authorization.k8s.io \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not "
       "contain '/'"},
      {"replicaset template restarts never",
       "{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: r}, spec: {selector: {matchLabels: {app: a}}, "
       "template: {metadata: {labels: {app: a}}, spec: {restartPolicy: Never, containers: [{name: c, image: "
       "nginx}]}}}}",
       "ReplicaSet.apps \"r\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Never\": "
       "supported values: \"Always\""},
      {"deployment with both rolling-update bounds zero and a bad container",
       "{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {replicas: -1, selector: {matchLabels: "
       "{app: a}}, strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}, template: {metadata: {labels: "
       "{app: a}}, spec: {containers: [{name: c}]}}}}",
       "Deployment.apps \"d\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, "
       "spec.template.spec.containers[0].image: Required value, spec.strategy.rollingUpdate.maxUnavailable: "
       "Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0]"},
      {"job that restarts always",
       "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {template: {spec: {containers: [{name: c, "
       "image: busybox}]}}}}",
       "Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "
       "\"OnFailure\", \"Never\""},
      {"cronjob with a bad schedule",
       "{apiVersion: batch/v1, kind: CronJob, metadata: {name: c}, spec: {schedule: '* * *', jobTemplate: {spec: "
       "{template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}",
       "CronJob.batch \"c\" is invalid: spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found "
       "3: [* * *]"},
      {"cronjob minute out of range",
       "{apiVersion: batch/v1, kind: CronJob, metadata: {name: c}, spec: {schedule: '61 * * * *', jobTemplate: "
       "{spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}",
       "CronJob.batch \"c\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above "
       "maximum (59): 61"},
      {"configmap key",
       "{apiVersion: v1, kind: ConfigMap, metadata: {name: m}, data: {'a b': x}}",
       "ConfigMap \"m\" is invalid: data[a b]: Invalid value: \"a b\": a valid config key must consist of "
       "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used "
       "for validation is '[-._a-zA-Z0-9]+')"},
      {"tls secret without its keys",
       "{apiVersion: v1, kind: Secret, metadata: {name: t}, type: kubernetes.io/tls, data: {tls.crt: YQ==}}",
       "Secret \"t\" is invalid: data[tls.key]: Required value"},
      {"role rule without verbs",
       "{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: r}, rules: [{apiGroups: [''], "
       "resources: [pods]}]}",
       "Role.rbac.authorization.k8s.io \"r\" is invalid: rules[0].verbs: Required value: verbs must contain at "
       "least one value"},
      {"cluster role binding to a Role",
       "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: b}, subjects: "
       "[{kind: ServiceAccount, name: sa}], roleRef: {kind: Role, name: r}}",
       "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: [roleRef.kind: Unsupported value: "
       "\"Role\": supported values: \"ClusterRole\", subjects[0].namespace: Required value]"},
      {"pdb with a bad percentage",
       "{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: p}, spec: {maxUnavailable: 150%}}",
       "PodDisruptionBudget.policy \"p\" is invalid: spec.maxUnavailable: Invalid value: "
       "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      AdmissionOutcome out = AdmitOne(c.manifest);
      CHECK_FALSE(out.admitted());
      CHECK(out.bytes.empty());
      CHECK(out.status.code == 422);
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
