// validate.mjs — check attnd's Kubernetes manifests without a cluster.
//
//  1. YAML: every document parses strictly (no duplicate keys, no tabs).
//  2. Schema: each object is validated by kubernetes-models, whose
//     validators are generated from the Kubernetes API's OpenAPI schemas
//     (types, required fields, enums, formats such as quantities).
//  3. Unknown fields: those validators let any extra key through, so every
//     key is also looked up in the model's TypeScript declarations (the
//     same schemas), field by field down the object: a misspelt
//     "readinesProbe" is an error here, as with kubectl --validate=strict.
//  4. attnd's rules: probes on /v2/health/ready and /v2/health/live at the
//     container's port, requests and limits for CPU and memory, a non-root
//     user, a read-only root file system, no privilege escalation, every
//     capability dropped; the Service, the autoscaler and the disruption
//     budget point at the Deployment's pods.
// Prints TAP; exits 1 when a check fails.
//   usage: node validate.mjs DIR   (every *.yaml in DIR)
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const dir = process.argv[2];
if (!dir) {
    console.error("usage: node validate.mjs DIR");
    process.exit(2);
}

let n = 0;
let failed = 0;
function check(what, errors) {
    n++;
    if (errors.length === 0) {
        console.log(`ok ${n} - ${what}`);
    } else {
        failed++;
        console.log(`not ok ${n} - ${what}`);
        for (const e of errors.slice(0, 10)) console.log(`#   ${e}`);
    }
}

// kind -> [apiVersion, module path in kubernetes-models]
const MODELS = {
    Deployment: ["apps/v1", "kubernetes-models/apps/v1/Deployment"],
    Service: ["v1", "kubernetes-models/v1/Service"],
    HorizontalPodAutoscaler: [
        "autoscaling/v2",
        "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler",
    ],
    PodDisruptionBudget: [
        "policy/v1",
        "kubernetes-models/policy/v1/PodDisruptionBudget",
    ],
};

// --- unknown fields, from the models' declaration files -----------------

const declCache = new Map();

// The top-level properties of the interface declared in a .d.ts file:
// name -> {type (the text after the colon), map (an object of free keys)},
// plus the file's imports (type name -> .d.ts path). null for files that
// declare a plain type (Quantity, IntOrString, Time).
function readDecl(file) {
    if (declCache.has(file)) return declCache.get(file);
    const text = fs.readFileSync(file, "utf8");
    const imports = new Map();
    for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
        const spec = m[2];
        let target;
        if (spec.startsWith(".")) {
            target = path.resolve(path.dirname(file), spec.replace(/\.js$/, ".d.ts"));
        } else {
            const pkg = spec.split("/").slice(0, 2).join("/");
            const root = path.dirname(require.resolve(`${pkg}/package.json`));
            target = path.join(root, spec.slice(pkg.length + 1) + ".d.ts");
        }
        imports.set(m[1], target);
    }
    const body = text.match(/^export interface I\w+(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/m);
    let decl = null;
    if (body) {
        const props = new Map();
        for (const m of body[1].matchAll(/^ {4}"([^"]+)"\??: (.*)$/gm)) {
            const type = m[2].replace(/;$/, "");
            props.set(m[1], { type, map: type.trim() === "{" });
        }
        decl = { props, imports };
    }
    declCache.set(file, decl);
    return decl;
}

// Every key of value that the declaration in file does not know, as
// JSON-pointer-like paths.
function unknownFields(value, file, where) {
    const decl = readDecl(file);
    if (decl === null || value === null || typeof value !== "object") return [];
    const out = [];
    for (const [key, v] of Object.entries(value)) {
        const prop = decl.props.get(key);
        if (!prop) {
            out.push(`${where}/${key}: unknown field`);
            continue;
        }
        if (prop.map) continue; // labels, annotations, resource lists
        const ref = prop.type.match(/\b(I\w+)\b/);
        if (!ref || !decl.imports.has(ref[1])) continue; // scalars, enums
        const target = decl.imports.get(ref[1]);
        if (Array.isArray(v)) {
            v.forEach((item, i) =>
                out.push(...unknownFields(item, target, `${where}/${key}/${i}`)));
        } else {
            out.push(...unknownFields(v, target, `${where}/${key}`));
        }
    }
    return out;
}

// --- the manifests ------------------------------------------------------

const files = fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort();
const objects = [];
for (const f of files) {
    const text = fs.readFileSync(path.join(dir, f), "utf8");
    const errors = [];
    const docs = YAML.parseAllDocuments(text, { uniqueKeys: true, strict: true });
    for (const d of docs) {
        for (const e of [...d.errors, ...d.warnings]) errors.push(e.message);
        if (d.errors.length === 0 && d.contents !== null)
            objects.push({ file: f, obj: d.toJS() });
    }
    check(`${f}: YAML parses (strict, unique keys)`, errors);
}

const byKind = {};
for (const { file, obj } of objects) {
    const errors = [];
    const model = MODELS[obj?.kind];
    if (!model) {
        check(`${file}: a kind this check knows (${obj?.kind})`, [
            `kind ${obj?.kind} is not one of ${Object.keys(MODELS).join(", ")}`,
        ]);
        continue;
    }
    if (obj.apiVersion !== model[0])
        errors.push(`apiVersion ${obj.apiVersion}, expected ${model[0]}`);
    const mod = await import(model[1]);
    try {
        new mod[obj.kind](obj).validate();
    } catch (e) {
        errors.push(...String(e.message).split(", "));
    }
    check(`${file}: ${obj.apiVersion} ${obj.kind} "${obj.metadata?.name}" matches the API schema`, errors);
    const decl = path.join(
        path.dirname(require.resolve("kubernetes-models/package.json")),
        model[1].slice("kubernetes-models/".length) + ".d.ts");
    check(`${file}: no unknown field`, unknownFields(obj, decl, ""));
    byKind[obj.kind] = obj;
}

// --- attnd's rules ------------------------------------------------------

const dep = byKind.Deployment;
const svc = byKind.Service;
const hpa = byKind.HorizontalPodAutoscaler;
const pdb = byKind.PodDisruptionBudget;
for (const [kind, obj] of Object.entries({ Deployment: dep, Service: svc,
        HorizontalPodAutoscaler: hpa, PodDisruptionBudget: pdb }))
    check(`a ${kind} is among the manifests`, obj ? [] : [`no ${kind}`]);
if (!dep || !svc || !hpa || !pdb) {
    console.log(`1..${n}`);
    process.exit(1);
}

const pod = dep.spec.template.spec;
const podLabels = dep.spec.template.metadata?.labels ?? {};
const c = pod.containers.find((x) => x.name === "attnd") ?? pod.containers[0];
const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
const ports = c.ports ?? [];
const port = ports.find((p) => p.name === "http");
const selects = (sel) => Object.entries(sel ?? {}).every(([k, v]) => podLabels[k] === v);
// a probe or target port: a name of a container port or its number
const resolves = (p) => ports.some((x) => x.name === p || x.containerPort === p);

{
    const e = [];
    if (!selects(dep.spec.selector.matchLabels))
        e.push("spec.selector does not select the pod template's labels");
    if (!port || String(port.containerPort) !== (env.ATTND_PORT ?? "8080"))
        e.push(`container port "http" must be ATTND_PORT (${env.ATTND_PORT})`);
    if (env.ATTND_BIND !== "0.0.0.0")
        e.push("ATTND_BIND must be 0.0.0.0 (attnd listens on 127.0.0.1 by default)");
    check("Deployment: pods selected, attnd listening on all addresses at port http", e);
}
for (const [probe, route] of [["readinessProbe", "/v2/health/ready"],
        ["livenessProbe", "/v2/health/live"]]) {
    const p = c[probe];
    const e = [];
    if (!p?.httpGet) e.push(`no ${probe}.httpGet`);
    else {
        if (p.httpGet.path !== route) e.push(`path ${p.httpGet.path}, expected ${route}`);
        if (!resolves(p.httpGet.port)) e.push(`port ${p.httpGet.port} is not a container port`);
    }
    check(`Deployment: ${probe} GET ${route} on the container's port`, e);
}
{
    const r = c.resources ?? {};
    const e = [];
    for (const kind of ["requests", "limits"])
        for (const res of ["cpu", "memory"])
            if (r[kind]?.[res] === undefined) e.push(`no resources.${kind}.${res}`);
    const cpu = (q) => String(q).endsWith("m") ? parseFloat(q) / 1000 : parseFloat(q);
    const mem = (q) => {
        const m = String(q).match(/^([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/);
        const mul = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3,
            M: 1e6, G: 1e9, T: 1e12 };
        return m ? parseFloat(m[1]) * (mul[m[2]] ?? 1) : NaN;
    };
    if (e.length === 0) {
        if (!(cpu(r.requests.cpu) <= cpu(r.limits.cpu))) e.push("cpu request above its limit");
        if (!(mem(r.requests.memory) <= mem(r.limits.memory))) e.push("memory request above its limit");
        const threads = Number(env.ATTND_THREADS);
        if (!(threads >= 1 && threads <= Math.ceil(cpu(r.limits.cpu))))
            e.push(`ATTND_THREADS ${env.ATTND_THREADS} should be 1 .. the CPU limit`);
    }
    check("Deployment: CPU and memory requests and limits, requests within limits", e);
}
{
    const ps = pod.securityContext ?? {};
    const cs = c.securityContext ?? {};
    const e = [];
    if (!(cs.runAsNonRoot ?? ps.runAsNonRoot)) e.push("runAsNonRoot is not true");
    const uid = cs.runAsUser ?? ps.runAsUser;
    if (uid === undefined || uid === 0) e.push("runAsUser must be set and not 0");
    if (cs.readOnlyRootFilesystem !== true) e.push("readOnlyRootFilesystem is not true");
    if (cs.allowPrivilegeEscalation !== false) e.push("allowPrivilegeEscalation is not false");
    if (!(cs.capabilities?.drop ?? []).includes("ALL")) e.push("capabilities.drop lacks ALL");
    if ((cs.capabilities?.add ?? []).length > 0) e.push("capabilities.add is not empty");
    if (cs.privileged) e.push("privileged");
    check("Deployment: non-root, read-only root file system, no escalation, every capability dropped", e);
}
{
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    const pre = c.lifecycle?.preStop?.exec?.command;
    const sleep = pre && pre[0] === "sleep" ? Number(pre[1]) : 0;
    const drain = Number(env.ATTND_SHUTDOWN_GRACE ?? 8);
    check(`Deployment: terminationGracePeriodSeconds ${grace} covers preStop ${sleep} s + --shutdown-grace ${drain} s`,
        grace > sleep + drain ? [] : ["the kubelet would kill attnd before it drains"]);
}
{
    const e = [];
    if (!selects(svc.spec.selector) || Object.keys(svc.spec.selector ?? {}).length === 0)
        e.push("the selector does not match the pod labels");
    for (const p of svc.spec.ports ?? [])
        if (!resolves(p.targetPort ?? p.port)) e.push(`targetPort ${p.targetPort} is not a container port`);
    check("Service: selects the pods, targets the container's port", e);
}
{
    const e = [];
    const t = hpa.spec.scaleTargetRef;
    if (t.kind !== "Deployment" || t.name !== dep.metadata.name || t.apiVersion !== "apps/v1")
        e.push(`scaleTargetRef ${JSON.stringify(t)} is not the Deployment`);
    if (!(hpa.spec.minReplicas >= 1 && hpa.spec.minReplicas <= hpa.spec.maxReplicas))
        e.push("minReplicas must be 1 .. maxReplicas");
    for (const m of hpa.spec.metrics ?? [])
        if (m.type === "Resource" && m.resource.target.type === "Utilization" &&
            c.resources?.requests?.[m.resource.name] === undefined)
            e.push(`utilization of ${m.resource.name} needs a request for it`);
    check("HorizontalPodAutoscaler (autoscaling/v2): scales the Deployment on what it requests", e);
}
check("PodDisruptionBudget: selects the pods, keeps fewer than the autoscaler's minimum",
    selects(pdb.spec.selector?.matchLabels) && pdb.spec.minAvailable < hpa.spec.minReplicas
        ? [] : ["selector or minAvailable"]);

console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
