#!/usr/bin/env python3
"""Tests tools/check_deps on small trees written to a temp dir: one with a
violation of each rule (and, beside each, an include the rule allows), one
with none.

Ends with the summary line Catch2 prints, which tools/check counts:
"All tests passed (A assertions in C test cases)" or
"test cases: C | P passed | F failed".

  tests/tools/check_deps_test.py [path/to/check_deps]
"""

import pathlib
import subprocess
import sys
import tempfile

CHECK_DEPS = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                          pathlib.Path(__file__).resolve().parents[2] / "tools/check_deps")

# Allowed everywhere the rules look: nothing here is a violation.
CLEAN = {
    "src/bus/bus.h": "#include <zmq.hpp>\n",
    "src/stages/scheduling/meson.build": "scheduling_dep = declare_dependency()\n",
    "src/stages/scheduling/core.cc": '#include "stages/scheduling/core.h"\n#include "scheduler/scheduler.h"\n',
    "src/scheduler/plugins/p/p.cc": ('#include "p.h"\n#include "model/objects.h"\n#include "base/status.h"\n'
                                     '#include "scheduler/framework/plugin.h"\n#include "pod_generated.h"\n'
                                     "#include <vector>\n"),
    "src/scheduler/plugins/p/p.h": "#include <string>\n",
    "src/replay/history.cc": '#include "replay/replay.h"\n#include "log/log.h"\n',
    "src/replay/meson.build": "replay_dep = declare_dependency(dependencies: [log_dep, model_dep])\n",
    "tools/replay/meson.build": "replay_deps = [replay_dep, scheduler_dep]  # not bus_dep\n",
    "tests/unit/bus/bus_test.cc": '#include "zmq.hpp"\n',
    "src/netns/pod_network.cc": '#include "netns/pod_network.h"\n#include "base/status.h"\n#include <sched.h>\n',
}

# One violation of each rule, and the line check_deps reports for it.
VIOLATIONS = {
    "src/cli/get.cc": ("#include <zmq.hpp>\n", "src/cli/get.cc:1: zmq outside the bus: <zmq.hpp>"),
    "tools/bench/b.cc": ('\n#include "zmq_addon.hpp"\n', 'tools/bench/b.cc:2: zmq outside the bus: "zmq_addon.hpp"'),
    "tests/e2e/f.h": ("#include <zmq.h>\n", "tests/e2e/f.h:1: zmq outside the bus: <zmq.h>"),
    "src/stages/status/fold.h": ('#include "stages/runtime/report.h"\n',
                                 'src/stages/status/fold.h:1: stage includes another stage: "stages/runtime/report.h"'),
    "src/scheduler/framework/x.cc": ('#include "log/log.h"\n',
                                     'src/scheduler/framework/x.cc:1: scheduler reaches beyond base and model: "log/log.h"'),
    "src/replay/verify.cc": ('#include "stages/scheduling/core.h"\n',
                             "src/replay/verify.cc:1: replay includes a stage, the bus or the pipeline: "
                             '"stages/scheduling/core.h"'),
    "tools/replay/meson.build": ("deps = [replay_dep,\n  pipeline_dep]\n",
                                 "tools/replay/meson.build:2: replay links a stage, the bus or the pipeline: "
                                 "pipeline_dep"),
    "src/netns/command.cc": ('#include "model/objects.h"\n',
                             'src/netns/command.cc:1: netns reaches beyond base: "model/objects.h"'),
    "src/replay/meson.build": ("replay_dep = declare_dependency(dependencies: [scheduling_dep])\n",
                               "src/replay/meson.build:1: replay links a stage, the bus or the pipeline: "
                               "scheduling_dep"),
}


def write_tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run(root, *flags):
    return subprocess.run([sys.executable, str(CHECK_DEPS), "--root", str(root), *flags],
                          capture_output=True, text=True)


class Results:
    def __init__(self):
        self.cases = self.failed_cases = self.assertions = 0
        self.case_failed = False

    def case(self, name, body):
        self.cases += 1
        self.case_failed = False
        body(self)
        if self.case_failed:
            self.failed_cases += 1
            print(f"FAILED: {name}")

    def check(self, ok, message):
        self.assertions += 1
        if not ok:
            self.case_failed = True
            print(f"  {message}")


def clean_tree(r):
    with tempfile.TemporaryDirectory() as d:
        write_tree(pathlib.Path(d), CLEAN)
        out = run(d)
        r.check(out.returncode == 0, f"exit {out.returncode}, output:\n{out.stdout}{out.stderr}")
        r.check(out.stdout == "", f"output:\n{out.stdout}")


def one_violation_of_each_rule(r):
    with tempfile.TemporaryDirectory() as d:
        write_tree(pathlib.Path(d), CLEAN)
        write_tree(pathlib.Path(d), {name: text for name, (text, _) in VIOLATIONS.items()})
        out = run(d)
        r.check(out.returncode == 1, f"exit {out.returncode}")
        want = sorted(line for _, line in VIOLATIONS.values())
        got = sorted(out.stdout.splitlines())
        r.check(got == want, "output:\n" + "\n".join(got) + "\nwanted:\n" + "\n".join(want))
        listed = run(d, "--list")
        r.check(listed.returncode == 0, f"--list exit {listed.returncode}")
        r.check(listed.stdout == out.stdout, "--list prints what a check prints")


def every_rule_is_described(r):
    out = run(pathlib.Path(tempfile.gettempdir()), "--rules")
    r.check(out.returncode == 0, f"exit {out.returncode}")
    r.check(len(out.stdout.splitlines()) == 6, f"rules:\n{out.stdout}")


def main():
    r = Results()
    r.case("a clean tree passes", clean_tree)
    r.case("one violation of each rule is reported", one_violation_of_each_rule)
    r.case("--rules lists every rule", every_rule_is_described)
    if r.failed_cases == 0:
        print(f"All tests passed ({r.assertions} assertions in {r.cases} test cases)")
        return 0
    passed = r.cases - r.failed_cases
    print(f"test cases: {r.cases} | {passed} passed | {r.failed_cases} failed")
    return 1


if __name__ == "__main__":
    sys.exit(main())
