#!/usr/bin/env python3
# Writes the hand-made preemption snapshots of testdata/kubebench (run it
# there): preemption-basic.json, preemption-chain.json and the seeded
# preemption-random.json. kube answers: hack/kubebench -preemption.
import json,sys
def node(name, cpu="4", zone=None):
    labels={"kubernetes.io/hostname":name}
    if zone: labels["topology.kubernetes.io/zone"]=zone
    cap={"cpu":cpu,"memory":"16Gi","pods":"110"}
    return {"apiVersion":"v1","kind":"Node","metadata":{"name":name,"labels":labels},
            "status":{"capacity":cap,"allocatable":cap,"conditions":[{"type":"Ready","status":"True"}]}}
def pod(name, cpu, prio, node=None, start=None, created=0, labels=None, never=False, ns="default", selector=None):
    p={"apiVersion":"v1","kind":"Pod","metadata":{"name":name,"namespace":ns,"creationTimestamp":"2026-01-01T00:%02d:%02dZ"%(created//60,created%60)},
       "spec":{"priority":prio,"containers":[{"name":"c","image":"pause","resources":{"requests":{"cpu":cpu,"memory":"100Mi"}}}]},
       "status":{}}
    if labels: p["metadata"]["labels"]=labels
    if never: p["spec"]["preemptionPolicy"]="Never"
    if selector: p["spec"]["nodeSelector"]=selector
    if node:
        p["spec"]["nodeName"]=node
        p["status"]={"phase":"Running","startTime":"2026-01-01T00:00:%02dZ"%start}
    else:
        p["status"]={"phase":"Pending"}
    return p
def pdb(name, match, allowed, ns="default"):
    return {"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":name,"namespace":ns},
            "spec":{"selector":{"matchLabels":match}},"status":{"disruptionsAllowed":allowed,"currentHealthy":2,"desiredHealthy":2,"expectedPods":2}}
def out(fn, items):
    json.dump({"apiVersion":"v1","kind":"List","items":items}, open(fn,"w"), indent=1)

basic=[node("node-a"),node("node-b"),node("node-c"),node("node-d"),
  pod("web-1","2",10,"node-a",1,labels={"app":"web"}),
  pod("web-2","2",10,"node-a",2,labels={"app":"web"}),
  pod("mid-1","3",50,"node-b",3),
  pod("batch-1","1",0,"node-c",4),
  pod("batch-2","1",0,"node-c",5),
  pod("batch-3","2",0,"node-c",6),
  pod("sys-1","4",1000,"node-d",7),
  pdb("web",{"app":"web"},0),
  pod("critical","3",100,created=1),
  pod("polite","4",100,created=2,never=True),
  pod("nowhere","1",100,created=3,selector={"disk":"ssd"}),
  pod("filler","1",5,created=4),
  pod("peer","4",0,created=5),
]
out("preemption-basic.json", basic)
chain=[node("n1"),node("n2"),node("n3"),
  pod("a1","1",1,"n1",1), pod("a2","1",1,"n1",2), pod("a3","2",1,"n1",3),
  pod("b1","2",2,"n2",4), pod("b2","2",1,"n2",5),
  pod("c1","4",3,"n3",6),
  pod("p-high","2",100,created=1), pod("p-mid","2",50,created=2), pod("p-low","3",20,created=3),
]
out("preemption-chain.json", chain)

import random
r=random.Random(6)
items=[]
for i in range(20):
    items.append(node("w-%02d"%i, cpu=str(r.choice([4,8])), zone="z%d"%(i%3)))
start=0
prios=[0,10,100,1000]
apps=["web","db","batch","cache"]
for i in range(20):
    used=0
    cap=int(items[i]["status"]["capacity"]["cpu"])*1000
    j=0
    while True:
        c=r.choice([500,1000,1500,2000])
        if used+c>cap: break
        used+=c; start+=1
        app=r.choice(apps)
        items.append(pod("run-%02d-%d"%(i,j), "%dm"%c, r.choice(prios), "w-%02d"%i, 0, labels={"app":app}))
        items[-1]["status"]["startTime"]="2026-01-01T%02d:%02d:%02dZ"%(start//3600,(start//60)%60,start%60)
        j+=1
items.append(pdb("web",{"app":"web"},1))
items.append(pdb("db",{"app":"db"},0))
for k in range(30):
    c=r.choice([500,1000,2000,3000])
    p=pod("new-%02d"%k,"%dm"%c,r.choice([0,10,100,1000,5000]),created=10+k,labels={"app":r.choice(apps)},never=(k%7==3))
    items.append(p)
out("preemption-random.json", items)
