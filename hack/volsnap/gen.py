#!/usr/bin/env python3
"""Writes testdata/kubebench/volumes-cluster.yaml: a small cluster exercising
the volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
VolumeZone). Run: python3 hack/volsnap/gen.py > testdata/kubebench/volumes-cluster.yaml"""
import json

docs = []
def add(o): docs.append(o)

ZONES = {"n-a1": "zone-a", "n-a2": "zone-a", "n-b1": "zone-b", "n-b2": "zone-b", "n-c1": "zone-c", "n-c2": "zone-c"}
for n, z in ZONES.items():
    add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {
        "kubernetes.io/hostname": n, "topology.kubernetes.io/zone": z, "topology.kubernetes.io/region": "region-1"}},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}})

# CSINodes: csi.example.com everywhere but n-c2 (which has no driver at all);
# n-a1 attaches at most 1 volume of it; n-a2 has the EBS plugin migrated.
for n in ZONES:
    drivers = []
    if n != "n-c2":
        drivers.append({"name": "csi.example.com", "nodeID": n, "allocatable": {"count": 1 if n == "n-a1" else 8}})
        drivers.append({"name": "cap.csi.example.com", "nodeID": n})
    meta = {"name": n}
    if n == "n-a2":
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}
        drivers.append({"name": "ebs.csi.aws.com", "nodeID": n, "allocatable": {"count": 1}})
    add({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}})

add({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
     "spec": {"preventPodSchedulingIfMissing": True}})
add({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "cap.csi.example.com"},
     "spec": {"storageCapacity": True}})

def sc(name, prov, mode, topo=None):
    o = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
         "provisioner": prov, "volumeBindingMode": mode, "reclaimPolicy": "Delete"}
    if topo:
        o["allowedTopologies"] = [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": topo}]}]
    add(o)
sc("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
sc("csi-wffc", "csi.example.com", "WaitForFirstConsumer", ["zone-a", "zone-b"])
sc("cap-wffc", "cap.csi.example.com", "WaitForFirstConsumer")
sc("immediate", "csi.example.com", "Immediate")
sc("csi-wffc-d", "csi.example.com", "WaitForFirstConsumer", ["zone-d"])

# Capacities of cap.csi.example.com: one per node, disjoint.
for n, size in [("n-a1", "20Gi"), ("n-a2", "10Gi"), ("n-b1", "1Gi")]:
    add({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
         "metadata": {"name": "cap-" + n, "namespace": "kube-system"}, "storageClassName": "cap-wffc",
         "capacity": size, "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": n}}})
# n-b2: plenty of capacity, but no volume above 2Gi.
add({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
     "metadata": {"name": "cap-n-b2", "namespace": "kube-system"}, "storageClassName": "cap-wffc",
     "capacity": "100Gi", "maximumVolumeSize": "2Gi", "nodeTopology": {"matchLabels": {"kubernetes.io/hostname": "n-b2"}}})

def pv(name, size, cls, *, node=None, zone=None, labels=None, claim=None, csi=True, ebs=None, modes=("ReadWriteOnce",), phase="Available"):
    spec = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
            "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}
    if ebs:
        spec["awsElasticBlockStore"] = {"volumeID": ebs, "fsType": "ext4"}
    elif node:
        spec["local"] = {"path": "/mnt/" + name}
    elif csi:
        spec["csi"] = {"driver": "csi.example.com", "volumeHandle": "h-" + name}
    key, vals = None, None
    if node:
        key, vals = "kubernetes.io/hostname", [node]
    elif zone:
        key, vals = "topology.kubernetes.io/zone", [zone]
    if key:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": vals}]}]}}
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": "default", "name": claim}
        phase = "Bound"
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    add({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": phase}})

def pvc(name, size, cls, *, volume=None, modes=("ReadWriteOnce",), phase=None, selector=None):
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, "volumeMode": "Filesystem"}
    if cls is not None:
        spec["storageClassName"] = cls
    meta = {"name": name, "namespace": "default"}
    if volume:
        spec["volumeName"] = volume
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
    if selector:
        spec["selector"] = {"matchLabels": selector}
    st = {"phase": phase or ("Bound" if volume else "Pending")}
    add({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": st})

# Local PVs (WaitForFirstConsumer, no provisioner): static binding only.
pv("local-a1", "10Gi", "local", node="n-a1")
pv("local-b1", "20Gi", "local", node="n-b1")
pv("local-b2", "5Gi", "local", node="n-b2")
pv("local-c1", "50Gi", "local", node="n-c1", labels={"tier": "slow"})
pv("local-c2", "6Gi", "local", node="n-c2", modes=("ReadOnlyMany",))
pvc("local-claim-1", "8Gi", "local")
pvc("local-claim-2", "5Gi", "local")
pvc("local-claim-3", "4Gi", "local")
pvc("local-claim-big", "100Gi", "local")
pvc("local-slow", "1Gi", "local", selector={"tier": "slow"})
pvc("local-rox", "1Gi", "local", modes=("ReadOnlyMany",))
# Dynamic provisioning.
pvc("dyn-1", "1Gi", "csi-wffc")
pvc("dyn-2", "1Gi", "csi-wffc")
pvc("dyn-pinned", "1Gi", "csi-wffc")
pvc("cap-5", "5Gi", "cap-wffc")
pvc("cap-15", "15Gi", "cap-wffc")
pvc("cap-50", "50Gi", "cap-wffc")
# Bound claims.
pv("pv-zone-c", "10Gi", "immediate", claim="zonal-c", labels={"topology.kubernetes.io/zone": "zone-c"})
pvc("zonal-c", "10Gi", "immediate", volume="pv-zone-c")
pv("pv-affine-b", "10Gi", "immediate", zone="zone-b", claim="affine-b")
pvc("affine-b", "10Gi", "immediate", volume="pv-affine-b")
pv("pv-ebs", "10Gi", "immediate", zone="zone-a", claim="ebs-a", ebs="vol-0abc")
pvc("ebs-a", "10Gi", "immediate", volume="pv-ebs")
pv("pv-used-a1", "1Gi", "immediate", claim="used-a1")
pvc("used-a1", "1Gi", "immediate", volume="pv-used-a1")
pvc("ghost", "1Gi", "immediate", volume="pv-ghost")
pvc("lost", "1Gi", "immediate", volume="pv-lost", phase="Lost")
pv("pv-rwop", "1Gi", "immediate", claim="rwop-used", modes=("ReadWriteOncePod",))
pvc("rwop-used", "1Gi", "immediate", volume="pv-rwop", modes=("ReadWriteOncePod",))
pv("pv-rwop2", "1Gi", "immediate", claim="rwop-free", modes=("ReadWriteOncePod",))
pvc("rwop-free", "1Gi", "immediate", volume="pv-rwop2", modes=("ReadWriteOncePod",))
# Bound PVs that fit nowhere or only elsewhere: node affinity to a zone
# without nodes, a zone label without nodes, a local PV on n-c2 (VolumeBinding's
# PreFilterResult names that node only), two CSI volumes (n-a1 attaches 1).
pv("pv-affine-d", "1Gi", "immediate", zone="zone-d", claim="affine-d")
pvc("affine-d", "1Gi", "immediate", volume="pv-affine-d")
pv("pv-zone-d", "1Gi", "immediate", claim="zonal-d", labels={"topology.kubernetes.io/zone": "zone-d"})
pvc("zonal-d", "1Gi", "immediate", volume="pv-zone-d")
pv("pv-local-bound", "1Gi", "local", node="n-c2", claim="local-bound")
pvc("local-bound", "1Gi", "local", volume="pv-local-bound")
pv("pv-csi-x", "1Gi", "immediate", claim="csi-x")
pvc("csi-x", "1Gi", "immediate", volume="pv-csi-x")
pv("pv-csi-y", "1Gi", "immediate", claim="csi-y")
pvc("csi-y", "1Gi", "immediate", volume="pv-csi-y")
pvc("dyn-d", "1Gi", "csi-wffc-d")
pvc("dyn-3", "1Gi", "csi-wffc")
# Second batch (p41-p52): edge cases of binding, limits and zones.
pv("pv-prebound-b2", "2Gi", "local", node="n-b2")
pvc("prebound", "1Gi", "local", volume="pv-prebound-b2", phase="Pending")
pvc("prebound-imm", "1Gi", "immediate", volume="pv-prebound-imm", phase="Pending")
pv("pv-prebound-imm", "1Gi", "immediate", zone="zone-c")
pv("pv-claimref-c1", "3Gi", "local", node="n-c1")
docs[-1]["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": "default", "name": "claimref-only"}
pvc("claimref-only", "1Gi", "local")
pvc("selected-b1", "1Gi", "csi-wffc")
docs[-1]["metadata"]["annotations"] = {"volume.kubernetes.io/selected-node": "n-b1"}
pvc("p44-eph-own-scratch", "1Gi", "csi-wffc")
docs[-1]["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p44-eph-own", "uid": "uid-p44", "controller": True}]
pvc("p45-eph-scratch", "1Gi", "csi-wffc")
docs[-1]["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "someone-else", "uid": "uid-other", "controller": True}]
pvc("no-class", "1Gi", None)
docs[-1]["spec"]["storageClassName"] = ""
pvc("cap-3", "3Gi", "cap-wffc")
pv("pv-multizone", "1Gi", "immediate", claim="multizone", labels={"topology.kubernetes.io/zone": "zone-a__zone-b"})
pvc("multizone", "1Gi", "immediate", volume="pv-multizone")
pv("pv-beta-zone-c", "1Gi", "immediate", claim="beta-zone-c", labels={"failure-domain.beta.kubernetes.io/zone": "zone-c"})
pvc("beta-zone-c", "1Gi", "immediate", volume="pv-beta-zone-c")
pv("pv-region-2", "1Gi", "immediate", claim="region-2", labels={"topology.kubernetes.io/region": "region-2"})
pvc("region-2", "1Gi", "immediate", volume="pv-region-2")
# Unbound immediate, unknown class, no class.
pvc("imm-unbound", "1Gi", "immediate")
pvc("no-such-class", "1Gi", "nope")

t = [0]
def pod(name, *claims, node=None, cpu="500m", selector=None, gce=None, ephemeral=None, prio=None, uid=None, ebs=()):
    t[0] += 1
    vols = [{"name": "v%d" % i, "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    if gce:
        vols.append({"name": "pd", "gcePersistentDisk": {"pdName": gce}})
    for i, e in enumerate(ebs):
        vols.append({"name": "ebs%d" % i, "awsElasticBlockStore": {"volumeID": e, "fsType": "ext4"}})
    if ephemeral:
        vols.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": "csi-wffc", "resources": {"requests": {"storage": "1Gi"}}}}}})
    spec = {"schedulerName": "default-scheduler", "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}], "volumes": vols}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = {"kubernetes.io/hostname": selector}
    if prio is not None:
        spec["priority"] = prio
    st = {"phase": "Running" if node else "Pending"}
    meta = {"name": name, "namespace": "default", "creationTimestamp": "2026-01-01T00:%02d:%02dZ" % (t[0] // 60, t[0] % 60)}
    if uid:
        meta["uid"] = uid
    add({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": st})

# Running pods.
pod("run-csi-a1", "used-a1", node="n-a1", cpu="1")
pod("run-rwop", "rwop-used", node="n-b2")
pod("run-pd", node="n-c1", gce="disk-1")
pod("run-busy-b1", node="n-b1", cpu="3")
# Pending pods, in queue order.
pod("p01-local-1", "local-claim-1")
pod("p02-local-2", "local-claim-2")
pod("p03-local-1-again", "local-claim-1")
pod("p04-local-3", "local-claim-3")
pod("p05-local-big", "local-claim-big")
pod("p06-local-slow", "local-slow")
pod("p07-local-rox", "local-rox")
pod("p08-dyn-1", "dyn-1")
pod("p09-dyn-1-again", "dyn-1")
pod("p10-dyn-pinned-a1", "dyn-pinned", selector="n-a1")
pod("p11-dyn-2-c2", "dyn-2", selector="n-c2")
pod("p12-cap-5", "cap-5")
pod("p13-cap-15", "cap-15")
pod("p14-cap-50", "cap-50")
pod("p15-zonal-c", "zonal-c")
pod("p16-affine-b", "affine-b")
pod("p17-ebs", "ebs-a")
pod("p18-ghost", "ghost")
pod("p19-lost", "lost")
pod("p20-rwop-used", "rwop-used")
pod("p21-rwop-free", "rwop-free")
pod("p22-rwop-free-again", "rwop-free")
pod("p23-imm-unbound", "imm-unbound")
pod("p24-no-such-class", "no-such-class")
pod("p25-missing", "does-not-exist")
pod("p26-ephemeral", ephemeral="scratch")
pod("p27-pd-c1", selector="n-c1", gce="disk-1")
pod("p28-pd", gce="disk-1")
pod("p29-two-claims", "local-claim-3", "dyn-2")
pod("p30-plain")
# Unschedulable volume cases checked filter by filter (explain).
pod("p31-affine-d", "affine-d")                      # PV node affinity: zone-d, no such node
pod("p32-affine-b-on-a1", "affine-b", selector="n-a1")  # PV node affinity zone-b, pod pinned to zone-a
pod("p33-zonal-d", "zonal-d")                        # VolumeZone: PV in zone-d
pod("p34-zonal-c-on-a1", "zonal-c", selector="n-a1")  # VolumeZone and NodeAffinity on n-a1
pod("p35-dyn-d", "dyn-d")                            # WaitForFirstConsumer, class topology zone-d only
pod("p36-dyn-on-c1", "dyn-3", selector="n-c1")        # WaitForFirstConsumer, class zones a/b, pinned to c
pod("p37-local-bound-on-a1", "local-bound", selector="n-a1")  # PreFilterResult {n-c2}, pinned elsewhere
pod("p38-two-csi", "csi-x", "csi-y")                 # 2 CSI volumes: n-a1 exceeds its limit, n-c2 has no driver
pod("p39-rwop-and-limit", "rwop-used", selector="n-a1")  # ReadWriteOncePod in use; pinned
pod("p40-missing-and-pinned", "does-not-exist-2", selector="n-b1")  # PreFilter: claim not found
pod("p41-prebound-wffc", "prebound")                 # claim names a PV (on n-b2) that is not bound to it yet
pod("p42-prebound-immediate", "prebound-imm")        # the same for an Immediate class
pod("p43-claimref-only", "claimref-only")            # a PV (on n-c1) whose claimRef names the claim
pod("p44-selected-b1", "selected-b1")                # provisioning already started for n-b1
pod("p44-eph-own", ephemeral="scratch", uid="uid-p44")    # ephemeral claim that exists and is the pod's
pod("p45-eph", ephemeral="scratch", uid="uid-p45")        # ephemeral claim owned by another pod
pod("p46-used-a1-again", "used-a1", selector="n-a1")  # a volume already attached on n-a1: no new attachment
pod("p47-two-ebs-a2", selector="n-a2", ebs=("vol-1", "vol-2"))  # inline EBS, migrated on n-a2, limit 1
pod("p48-no-class", "no-class")                      # storageClassName "": immediate, nothing to bind
pod("p49-cap-3", "cap-3")                            # n-b2 has the capacity but not the maximum volume size
pod("p50-multizone", "multizone")                    # PV in zone-a__zone-b
pod("p51-beta-zone-c", "beta-zone-c")                # PV with the beta zone label, nodes with the GA one
pod("p52-region-2", "region-2")                      # PV in another region

out = []
for d in docs:
    out.append(json.dumps(d, sort_keys=False))
print("# Generated by hack/volsnap/gen.py: volume scheduling cases for the kubebench comparison.")
print("\n---\n".join(out))
