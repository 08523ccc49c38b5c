#!/usr/bin/env python3
"""Tests of generate.py without the oracle: determinism, shape, and family coverage.

    python3 tools/differential/generate_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

# A tag of the case name per family; each must appear in a few hundred cases.
FAMILIES = {
    "instancetype present": "instancetype:cluster/present", "instancetype missing": "instancetype:cluster/missing",
    "namespaced instancetype": "instancetype:ns/", "preference": "preference:", "revisionName": ":revision",
    "missing revision": ":revision-missing", "infer pvc": "infer:pvc", "infer datavolume": "infer:dv",
    "infer dataVolumeTemplate + DataSource": "infer:dvt-ds", "infer unlabelled": "/unlabelled",
    "infer missing object": "/missing", "infer Ignore": "/Ignore", "matcher fault": "matcher!",
    "cpu": "cpu", "cpu features fault": "cpu-features!", "dedicated": "dedicated", "memory": "memory",
    "hugepages": "hugepages", "hugepages fault": "hugepages!", "resources": "resources", "disks": "disks",
    "disk fault": "disks!", "volume fault": "volumes!", "network": "net", "interface fault": "interfaces!",
    "network fault": "networks!", "firmware efi": "firmware:efi", "firmware fault": "firmware!",
    "features": "features", "clock": "clock", "machine": "machine", "machine fault": "machine!",
    "run strategy fault": "runstrategy!", "running": "running", "dataVolumeTemplates": "dvt",
    "KubeVirt CR": "kv", "feature gates": "kv+gates", "architecture": "arch:", "update": "update:",
}


class GenerateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cases = generate.generate_cases(7, 400)

    def test_deterministic_for_a_seed(self):
        again = generate.generate_cases(7, 400)
        self.assertEqual(json.dumps(self.cases, sort_keys=True), json.dumps(again, sort_keys=True))
        self.assertNotEqual(json.dumps(self.cases[:20]), json.dumps(generate.generate_cases(8, 20)))

    def test_a_case_does_not_depend_on_count(self):
        self.assertEqual(generate.generate_cases(7, 30), self.cases[:30])

    def test_cases_have_the_acceptance_shape(self):
        for i, case in enumerate(self.cases):
            self.assertEqual(set(case), {"name", "objects", "request"})
            self.assertTrue(case["name"].startswith("gen-7-%d " % i), case["name"])
            request = case["request"]
            self.assertEqual(set(request), {"operation", "namespace", "object", "oldObject"})
            self.assertIn(request["operation"], ("CREATE", "UPDATE"))
            self.assertEqual(request["namespace"], "default")
            obj = request["object"]
            self.assertIn(obj["kind"], ("VirtualMachine", "VirtualMachineInstance"))
            self.assertEqual(obj["apiVersion"], "kubevirt.io/v1")
            self.assertEqual((request["oldObject"] is not None), request["operation"] == "UPDATE", case["name"])
            for o in case["objects"]:
                self.assertIn(o["kind"], ("KubeVirt", "VirtualMachineInstancetype", "VirtualMachineClusterInstancetype",
                                          "VirtualMachinePreference", "VirtualMachineClusterPreference",
                                          "ControllerRevision", "PersistentVolumeClaim", "DataVolume", "DataSource"))
                if o["kind"] != "KubeVirt" and o["kind"] != "ControllerRevision":
                    self.assertIsInstance(o.get("spec"), dict, case["name"])
            json.loads(json.dumps(case))

    def test_no_duplicate_cluster_objects(self):
        for case in self.cases:
            keys = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in case["objects"]]
            self.assertEqual(len(keys), len(set(keys)), case["name"])

    def test_mix(self):
        vms = sum(1 for c in self.cases if c["request"]["object"]["kind"] == "VirtualMachine")
        updates = sum(1 for c in self.cases if c["request"]["operation"] == "UPDATE")
        faulty = sum(1 for c in self.cases if "!" in c["name"])
        self.assertTrue(0.6 < vms / len(self.cases) < 0.8, vms)
        self.assertTrue(0.05 < updates / len(self.cases) < 0.3, updates)
        self.assertTrue(0.25 < faulty / len(self.cases) < 0.55, faulty)

    def test_every_family_is_present(self):
        names = [c["name"] for c in self.cases]
        for family, tag in FAMILIES.items():
            hits = sum(1 for n in names if tag in n)
            self.assertGreater(hits, 0, "family %s (tag %r) missing in 400 cases" % (family, tag))

    def test_combinations_come_from_their_own_random_source(self):
        # Every combination shows up, and a case without one is the case it was before they existed.
        cases = generate.generate_cases(7, 3000)
        for which in generate.COMBINATIONS:
            self.assertTrue(any("combination:" + which in c["name"] for c in cases), which)
        share, generate.COMBINATION_SHARE = generate.COMBINATION_SHARE, 0.0
        try:
            plain = generate.generate_cases(7, 400)
        finally:
            generate.COMBINATION_SHARE = share
        for with_combinations, without in zip(self.cases, plain):
            if "combination:" not in with_combinations["name"]:
                self.assertEqual(with_combinations, without)

    def test_command_line_writes_one_file_per_case(self):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "generate.py"),
                            "--seed", "7", "--count", "12", "--out", out], check=True)
            files = sorted(os.listdir(out))
            self.assertEqual(len(files), 12)
            for i, name in enumerate(files):
                with open(os.path.join(out, name)) as f:
                    self.assertEqual(json.load(f), self.cases[i])


if __name__ == "__main__":
    unittest.main()
