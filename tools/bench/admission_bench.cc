// build/podflow-bench admission: kube-apiserver's front half on one core —
// requests decoded, defaulted, run through the plugin chain, validated and
// packed per second, for the docs' nginx pod and a pod of 30 containers;
// and strategic merge patches decided on a stored pod per second.
// (--quick: half a second per figure instead of three.)
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "bench.h"
#include "model/objects.h"
#include "stages/admission/admission.h"

namespace podflow::bench {
namespace {

constexpr std::string_view kToken = "bench-token";

// The nginx pod of config/manifests/, the docs' first pod.
std::string NginxPod() {
  std::ifstream in(std::string(PODFLOW_SOURCE_DIR) + "/config/manifests/nginx-pod.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// 30 containers, each with ports, env, resources, a probe and a mount.
std::string ThirtyContainers() {
  std::string m = "apiVersion: v1\nkind: Pod\nmetadata: {name: big, labels: {app: big, tier: batch}}\nspec:\n"
                  "  volumes: [{name: data, emptyDir: {}}]\n  containers:\n";
  for (int i = 0; i < 30; ++i) {
    const std::string n = std::to_string(i);
    m += "  - name: c" + n + "\n    image: registry.example.com/team/app-" + n + ":1." + n + "\n" +
         "    ports: [{name: http" + n + ", containerPort: " + std::to_string(8000 + i) + "}]\n" +
         "    env: [{name: MODE, value: fast}, {name: INDEX, value: \"" + n + "\"}]\n" +
         "    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m, memory: 128Mi}}\n" +
         "    readinessProbe: {httpGet: {path: /ready, port: " + std::to_string(8000 + i) + "}}\n" +
         "    volumeMounts: [{name: data, mountPath: /data/c" + n + "}]\n";
  }
  return m;
}

admission::Admission MakeAdmission() {
  admission::AdmissionConfig config;
  auto authn = admission::TokenAuthenticator::Create({{std::string(kToken), {"bench", "1", {"system:masters"}}}});
  config.authenticator = std::move(*authn);
  return admission::Admission(std::move(config), [] { return std::chrono::system_clock::now(); },
                              std::mt19937_64(1));
}

// Runs `once` for about `seconds`; how many times per second it ran, or 0
// when it ever failed.
template <typename F>
double PerSecond(double seconds, F once) {
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  int64_t n = 0;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 50; ++i, ++n) {
      if (!once()) return 0;
    }
  }
  return static_cast<double>(n) / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int RunAdmissionBench(const std::vector<std::string>& args) {
  double seconds = 3;
  if (!args.empty() && args[0] == "--quick") seconds = 0.5;
  admission::Admission admission = MakeAdmission();
  auto admit = [&](std::string_view manifest) {
    admission::AdmitReply reply = admission.Admit(kToken, manifest);
    return !reply.failure && reply.results.size() == 1 && reply.results[0].admitted();
  };
  const std::string nginx = NginxPod();
  if (!admit(nginx) || !admit(ThirtyContainers())) {
    std::fprintf(stderr, "admission bench: a benchmark manifest was refused\n");
    return 1;
  }
  Emit("admission_nginx_pods_per_s", PerSecond(seconds, [&] { return admit(nginx); }));
  const std::string big = ThirtyContainers();
  Emit("admission_30_container_pods_per_s", PerSecond(seconds, [&] { return admit(big); }));

  admission::AdmitReply stored = admission.Admit(kToken, nginx);
  const admission::StoredObject pod{stored.results[0].key, stored.results[0].bytes, 2};
  const std::string patch = R"({"spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}})";
  Emit("admission_patches_per_s", PerSecond(seconds, [&] {
         admission::ChangeOutcome out = admission.Patch(model::Kind("Pod"), "default", "nginx-pod", "",
                                                        model::PatchType::kStrategic, patch, pod);
         return out.ok() && out.write == admission::ChangeOutcome::Write::kPut;
       }));
  return 0;
}

}  // namespace podflow::bench
