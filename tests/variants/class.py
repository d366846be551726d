"""A small class of variants for tests/integration/d_variants.sh: each
student's handout answered by attnd itself (right), another's right answer
(a copy), that copy perturbed within rtol (1e-6 relative), the answer
without 1/sqrt(d) (dot.no_scale, on the student's own variant), a slip
(one entry off by 0.1), and a group member answering the group's variant.

    python3 class.py ATTND HANDOUTS OUT_DIR
writes OUT_DIR/subs.ndjson ({"id", "answer"}, as attnd grade --question
takes them; a group member also gives "group"), OUT_DIR/truth.json ({id:
[kind, source]}).
"""
import json
import random
import subprocess
import sys

attnd, handouts, out = sys.argv[1:4]
rng = random.Random(7)


def dot(request):
    run = subprocess.run([attnd, "run", "/attention/dot"], check=True,
                         input=json.dumps(request).encode(), capture_output=True)
    got = json.loads(run.stdout)
    return {"output": got["output"], "weights": got["weights"]}


def perturbed(x):
    if isinstance(x, list):
        return [perturbed(v) for v in x]
    return x * (1 + rng.uniform(-1, 1) * 1e-6)


lines = [json.loads(l) for l in open(handouts)]
right = {l["student"]: dot(l["request"]) for l in lines}
kinds = ["right", "copy", "perturbed", "no_scale", "slip", "right", "copy",
         "right", "right", "perturbed"]
subs, truth = [], {}
for i, l in enumerate(lines):
    who = l["student"]
    kind = kinds[i % len(kinds)] if "group" not in l else "right"
    source = None
    answer = right[who]
    if kind in ("copy", "perturbed"):
        source = lines[(i + 3) % len(lines)]["student"]
        if "group" in lines[(i + 3) % len(lines)]:
            source = lines[0]["student"]
        answer = right[source]
        if kind == "perturbed":
            answer = {k: perturbed(v) for k, v in answer.items()}
    elif kind == "no_scale":
        answer = dot(dict(l["request"], scale=1))
    elif kind == "slip":
        answer = json.loads(json.dumps(answer))
        answer["output"][0][0][0] += 0.1
    sub = {"id": who, "answer": answer}
    if "group" in l:
        sub["group"] = l["group"]
    subs.append(sub)
    truth[who] = [kind, source]
with open(out + "/subs.ndjson", "w") as f:
    for s in subs:
        f.write(json.dumps(s) + "\n")
json.dump(truth, open(out + "/truth.json", "w"))
