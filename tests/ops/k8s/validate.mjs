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
//     container's port, the port named "probe" when ATTND_PROBE_PORT is set
//     (and the Service never on it), requests and limits for CPU and memory, a non-root
//     user, a read-only root file system, no privilege escalation, every
//     capability dropped, no connection cap per address and a trusted
//     proxy list of private networks (everything comes through a proxy);
//     the Service, the autoscaler and the disruption budget point at the
//     Deployment's pods.
//  5. The KServe InferenceService (inferenceservice.yaml), whose CRD has no
//     schema in kubernetes-models: its structure (serving.kserve.io/v1beta1,
//     spec.predictor with KServe's fields only, one custom container), the
//     predictor's pod fields against the core v1 PodSpec schema (types and
//     unknown fields, as above), Knative's limits (one port named http1,
//     h2c or nothing; no lifecycle hooks), and the same image, port,
//     probes, resources, security context and settings as the Deployment.
// Prints TAP; exits 1 when a check fails.
//   usage: node validate.mjs DIR   (every *.yaml in DIR)
import fs from "node:fs";
import net from "node:net";
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

// --- KServe's InferenceService, by structure --------------------------

// The fields of KServe's v1beta1 PredictorSpec besides the inlined core v1
// PodSpec (pkg/apis/serving/v1beta1/predictor.go and component.go):
// the model and framework predictors, and ComponentExtensionSpec.
const KSERVE_IMPLEMENTATIONS = ["sklearn", "xgboost", "tensorflow", "pytorch",
    "triton", "onnx", "huggingface", "pmml", "lightgbm", "paddle", "model"];
const KSERVE_PREDICTOR_OTHER = ["storageUris", "workerSpec"];
const KSERVE_EXTENSION = {
    minReplicas: "integer", maxReplicas: "integer", scaleTarget: "integer",
    scaleMetric: ["cpu", "memory", "concurrency", "rps"],
    containerConcurrency: "integer", timeout: "integer",
    canaryTrafficPercent: "integer", logger: "object", batcher: "object",
    labels: "object", annotations: "object", deploymentStrategy: "object",
};
const KSERVE_SPEC = ["predictor", "transformer", "explainer"];
const declOf = (module) => path.join(
    path.dirname(require.resolve("kubernetes-models/package.json")),
    module.slice("kubernetes-models/".length) + ".d.ts");
const OBJECT_META = path.join(
    path.dirname(require.resolve("@kubernetes-models/apimachinery/package.json")),
    "apis/meta/v1/ObjectMeta.d.ts");

// The predictor split into its pod part (checked as a core v1 PodSpec) and
// KServe's own fields.
function predictorParts(pred) {
    const pod = {};
    const own = {};
    for (const [k, v] of Object.entries(pred ?? {})) {
        if (k in KSERVE_EXTENSION || KSERVE_IMPLEMENTATIONS.includes(k) ||
                KSERVE_PREDICTOR_OTHER.includes(k))
            own[k] = v;
        else
            pod[k] = v;
    }
    return { pod, own };
}

async function checkInferenceServiceShape(file, obj) {
    const e = [];
    if (obj.apiVersion !== "serving.kserve.io/v1beta1")
        e.push(`apiVersion ${obj.apiVersion}, expected serving.kserve.io/v1beta1`);
    for (const k of Object.keys(obj))
        if (!["apiVersion", "kind", "metadata", "spec"].includes(k))
            e.push(`/${k}: unknown field`);
    // KServe's rule for names: a DNS label that starts with a letter
    if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(obj.metadata?.name ?? ""))
        e.push(`metadata.name "${obj.metadata?.name}" is not a DNS label starting with a letter`);
    e.push(...unknownFields(obj.metadata ?? {}, OBJECT_META, "/metadata"));
    for (const k of Object.keys(obj.spec ?? {}))
        if (!KSERVE_SPEC.includes(k)) e.push(`/spec/${k}: unknown field`);
    const pred = obj.spec?.predictor;
    if (!pred || typeof pred !== "object") e.push("no spec.predictor");
    const { own } = predictorParts(pred);
    const impls = KSERVE_IMPLEMENTATIONS.filter((k) => k in own);
    if (!(pred?.containers?.length > 0))
        e.push("spec.predictor.containers is empty: a custom predictor needs its container");
    if (impls.length > 0)
        e.push(`spec.predictor has ${impls.join(", ")} besides containers: KServe wants exactly one implementation`);
    for (const [k, type] of Object.entries(KSERVE_EXTENSION)) {
        if (!(k in own)) continue;
        const v = own[k];
        if (Array.isArray(type) ? !type.includes(v)
            : type === "integer" ? !Number.isInteger(v)
            : (v === null || typeof v !== "object"))
            e.push(`/spec/predictor/${k} must be ${Array.isArray(type) ? "one of " + type.join(", ") : type}`);
    }
    if ("protocolVersion" in (pred ?? {}))
        e.push("/spec/predictor/protocolVersion: unknown field (it belongs to spec.predictor.model; a custom container sets the env PROTOCOL)");
    check(`${file}: ${obj.apiVersion} ${obj.kind} "${obj.metadata?.name}" has KServe's structure (one custom predictor container)`, e);

    // the pod part, by the core API's schema and declarations
    const { pod } = predictorParts(pred);
    const errors = [];
    const { PodSpec } = await import("kubernetes-models/v1/PodSpec");
    try {
        new PodSpec(pod).validate();
    } catch (err) {
        errors.push(...String(err.message).split(", "));
    }
    errors.push(...unknownFields(pod, declOf("kubernetes-models/v1/PodSpec"), "/spec/predictor")
        .filter((x) => !/^\/spec\/predictor\/protocolVersion:/.test(x)));
    check(`${file}: spec.predictor's pod fields match the core v1 PodSpec schema, no unknown field`, errors);
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
    if (obj?.kind === "InferenceService") {
        await checkInferenceServiceShape(file, obj);
        byKind[obj.kind] = obj;
        continue;
    }
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
const isvc = byKind.InferenceService;
for (const [kind, obj] of Object.entries({ Deployment: dep, Service: svc,
        HorizontalPodAutoscaler: hpa, PodDisruptionBudget: pdb,
        InferenceService: isvc }))
    check(`a${/^[AEIOU]/.test(kind) ? "n" : ""} ${kind} is among the manifests`, obj ? [] : [`no ${kind}`]);
if (!dep || !svc || !hpa || !pdb || !isvc) {
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
// the probe listener (ATTND_PROBE_PORT; docs/operations.md "The probe
// port"): a container port named "probe", apart from ATTND_PORT, which the
// kubelet's probes use so that load on the main port cannot fail them
const probePort = env.ATTND_PROBE_PORT !== undefined && env.ATTND_PROBE_PORT !== "0"
    ? ports.find((p) => p.name === "probe") : undefined;
const onProbePort = (p) => probePort !== undefined &&
    (p === "probe" || p === probePort.containerPort);
if (env.ATTND_PROBE_PORT !== undefined && env.ATTND_PROBE_PORT !== "0") {
    const e = [];
    if (!probePort) e.push('no container port named "probe"');
    else if (String(probePort.containerPort) !== env.ATTND_PROBE_PORT)
        e.push(`container port "probe" is ${probePort.containerPort}, ATTND_PROBE_PORT ${env.ATTND_PROBE_PORT}`);
    if (env.ATTND_PROBE_PORT === (env.ATTND_PORT ?? "8080"))
        e.push(`ATTND_PROBE_PORT ${env.ATTND_PROBE_PORT} is ATTND_PORT: attnd refuses to start`);
    check(`Deployment: the probe listener on container port "probe" (ATTND_PROBE_PORT ${env.ATTND_PROBE_PORT})`, e);
}
for (const [probe, route] of [["readinessProbe", "/v2/health/ready"],
        ["livenessProbe", "/v2/health/live"]]) {
    const p = c[probe];
    const e = [];
    if (!p?.httpGet) e.push(`no ${probe}.httpGet`);
    else {
        if (p.httpGet.path !== route) e.push(`path ${p.httpGet.path}, expected ${route}`);
        if (!resolves(p.httpGet.port)) e.push(`port ${p.httpGet.port} is not a container port`);
        else if (probePort !== undefined && !onProbePort(p.httpGet.port))
            e.push(`port ${p.httpGet.port}, expected the probe port (probe, ${probePort.containerPort}): the main port's load could fail it`);
    }
    check(`Deployment: ${probe} GET ${route} on the ${probePort ? "probe" : "container's"} port`, e);
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
// A trusted-proxy list as attnd reads it (comma-separated addresses and
// CIDR networks, at most 32), each entry inside a private or loopback
// range: trusting a public network would let anyone there name any client.
function trustedProxyErrors(list) {
    const e = [];
    if (typeof list !== "string" || list.trim() === "")
        return ["ATTND_TRUSTED_PROXY is not set (nginx or the ingress is every client's peer)"];
    const entries = list.split(",").map((x) => x.trim());
    if (entries.length > 32) e.push(`${entries.length} entries, attnd takes at most 32`);
    const private4 = [["10.0.0.0", 8], ["172.16.0.0", 12], ["192.168.0.0", 16], ["127.0.0.0", 8]];
    const v4 = (a) => a.split(".").reduce((n, o) => n * 256 + Number(o), 0);
    for (const x of entries) {
        const [addr, bits, extra] = x.split("/");
        const family = net.isIP(addr);
        const max = family === 4 ? 32 : 128;
        const prefix = bits === undefined ? max : Number(bits);
        if (family === 0 || extra !== undefined || !Number.isInteger(prefix) ||
                prefix < 0 || prefix > max || (bits !== undefined && !/^[0-9]+$/.test(bits))) {
            e.push(`"${x}" is not an address or CIDR network`);
            continue;
        }
        const inside = family === 4
            ? private4.some(([n, p]) => prefix >= p &&
                Math.floor(v4(addr) / 2 ** (32 - p)) === Math.floor(v4(n) / 2 ** (32 - p)))
            : (addr === "::1" && prefix === 128) || (/^f[cd]/i.test(addr) && prefix >= 7);
        if (!inside) e.push(`"${x}" is not inside a private or loopback range`);
    }
    return e;
}

{
    const e = [];
    if (env.ATTND_MAX_CONNECTIONS_PER_ADDRESS !== "0")
        e.push(`ATTND_MAX_CONNECTIONS_PER_ADDRESS is ${env.ATTND_MAX_CONNECTIONS_PER_ADDRESS}, expected "0" (the ingress is every client's peer)`);
    e.push(...trustedProxyErrors(env.ATTND_TRUSTED_PROXY));
    check(`Deployment: behind a proxy: no connection cap per address, ATTND_TRUSTED_PROXY ${env.ATTND_TRUSTED_PROXY} (private networks)`, e);
}
{
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    const pre = c.lifecycle?.preStop?.exec?.command;
    const sleep = pre && pre[0] === "sleep" ? Number(pre[1]) : 0;
    const drain = Number(env.ATTND_SHUTDOWN_GRACE ?? 8);
    const e = [];
    // endpoints are removed while the pod already terminates: a pause
    // before SIGTERM keeps it serving until the Service has let go of it
    if (!(sleep >= 1))
        e.push(`no preStop pause (lifecycle.preStop.exec ["sleep", N]): ${JSON.stringify(pre ?? null)}`);
    if (!(grace > sleep + drain)) e.push("the kubelet would kill attnd before it drains");
    check(`Deployment: a preStop pause of ${sleep} s before SIGTERM; terminationGracePeriodSeconds ${grace} covers it + --shutdown-grace ${drain} s`, e);
}
{
    const e = [];
    if (!selects(svc.spec.selector) || Object.keys(svc.spec.selector ?? {}).length === 0)
        e.push("the selector does not match the pod labels");
    for (const p of svc.spec.ports ?? []) {
        if (!resolves(p.targetPort ?? p.port)) e.push(`targetPort ${p.targetPort} is not a container port`);
        if (onProbePort(p.targetPort ?? p.port))
            e.push(`targetPort ${p.targetPort ?? p.port} is the probe port, which stays off the Service`);
    }
    check("Service: selects the pods, targets the container's port (not the probe port)", e);
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

// --- the InferenceService against the Deployment ------------------------

{
    const pred = isvc.spec?.predictor ?? {};
    const ic = (pred.containers ?? []).find((x) => x.name === "kserve-container");
    const ienv = Object.fromEntries((ic?.env ?? []).map((x) => [x.name, x.value]));
    const iports = ic?.ports ?? [];
    {
        const e = [];
        if (!ic) e.push("no container named kserve-container (KServe's predictor container)");
        else {
            if (ic.image !== c.image) e.push(`image ${ic.image}, the Deployment runs ${c.image}`);
            if (ienv.PROTOCOL !== "v2")
                e.push(`env PROTOCOL is ${ienv.PROTOCOL}, expected v2 (how KServe learns a custom container's protocol)`);
        }
        check(`InferenceService: container kserve-container runs the Deployment's image (${c.image}), PROTOCOL=v2`, e);
    }
    if (ic) {
        {
            const e = [];
            if (iports.length !== 1) e.push(`${iports.length} ports; Knative allows exactly one`);
            const p0 = iports[0] ?? {};
            if (String(p0.containerPort) !== (ienv.ATTND_PORT ?? "8080") ||
                    p0.containerPort !== port?.containerPort)
                e.push(`containerPort ${p0.containerPort}, attnd serves ${ienv.ATTND_PORT} (the Deployment ${port?.containerPort})`);
            if (!["", "http1", "h2c", undefined].includes(p0.name))
                e.push(`port name "${p0.name}": Knative allows only http1, h2c or none`);
            if (ienv.ATTND_BIND !== "0.0.0.0") e.push("ATTND_BIND must be 0.0.0.0");
            check(`InferenceService: one port, ${p0.containerPort}, named for Knative (${p0.name ?? "none"}), attnd on all addresses`, e);
        }
        const iresolves = (p) => iports.some((x) => (x.name && x.name === p) || x.containerPort === p);
        for (const [probe, route] of [["readinessProbe", "/v2/health/ready"],
                ["livenessProbe", "/v2/health/live"]]) {
            const p = ic[probe];
            const e = [];
            if (!p?.httpGet) e.push(`no ${probe}.httpGet`);
            else {
                if (p.httpGet.path !== route) e.push(`path ${p.httpGet.path}, expected ${route}`);
                if (!iresolves(p.httpGet.port)) e.push(`port ${p.httpGet.port} is not the container port`);
            }
            check(`InferenceService: ${probe} GET ${route} on the container's port`, e);
        }
        // JSON with the keys sorted: the same object whatever their order
        const canon = (v) => JSON.stringify(v, (k, x) => x && typeof x === "object" &&
            !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x);
        check("InferenceService: the Deployment's resources (requests and limits)",
            canon(ic.resources ?? {}) === canon(c.resources ?? {})
                ? [] : [`${JSON.stringify(ic.resources)} against ${JSON.stringify(c.resources)}`]);
        {
            // the effective settings: the container's, else the pod's
            const eff = (podSc, cSc) => {
                const ps = podSc ?? {};
                const cs = cSc ?? {};
                return {
                    runAsNonRoot: cs.runAsNonRoot ?? ps.runAsNonRoot,
                    runAsUser: cs.runAsUser ?? ps.runAsUser,
                    runAsGroup: cs.runAsGroup ?? ps.runAsGroup,
                    seccompProfile: (cs.seccompProfile ?? ps.seccompProfile)?.type,
                    readOnlyRootFilesystem: cs.readOnlyRootFilesystem,
                    allowPrivilegeEscalation: cs.allowPrivilegeEscalation,
                    drop: [...(cs.capabilities?.drop ?? [])].sort().join(","),
                    add: [...(cs.capabilities?.add ?? [])].sort().join(","),
                    privileged: cs.privileged ?? false,
                };
            };
            const want = eff(pod.securityContext, c.securityContext);
            const got = eff(pred.securityContext, ic.securityContext);
            const e = [];
            for (const k of Object.keys(want))
                if (JSON.stringify(got[k]) !== JSON.stringify(want[k]))
                    e.push(`${k}: ${JSON.stringify(got[k])}, the Deployment has ${JSON.stringify(want[k])}`);
            check("InferenceService: the Deployment's security context (non-root 10001, read-only, no escalation, no capability, RuntimeDefault seccomp)", e);
        }
        {
            const e = [];
            for (const [k, v] of Object.entries(env)) {
                if (k === "ATTND_PROBE_PORT") {
                    // Knative: one port, probes on it; no probe listener
                    if (ienv[k] !== undefined && ienv[k] !== "0")
                        e.push(`${k} is ${ienv[k]}: Knative probes the one port, so it would go unused`);
                } else if (k === "ATTND_TRUSTED_PROXY") {
                    const mine = (ienv[k] ?? "").split(",").map((x) => x.trim());
                    for (const x of v.split(",").map((y) => y.trim()))
                        if (!mine.includes(x)) e.push(`ATTND_TRUSTED_PROXY lacks the Deployment's ${x}`);
                } else if (ienv[k] !== v) {
                    e.push(`${k} is ${ienv[k]}, the Deployment sets ${v}`);
                }
            }
            e.push(...trustedProxyErrors(ienv.ATTND_TRUSTED_PROXY));
            const threads = Number(ienv.ATTND_THREADS);
            const cpu = (q) => String(q).endsWith("m") ? parseFloat(q) / 1000 : parseFloat(q);
            if (!(threads >= 1 && threads <= Math.ceil(cpu(ic.resources?.limits?.cpu))))
                e.push(`ATTND_THREADS ${ienv.ATTND_THREADS} should be 1 .. the CPU limit`);
            check("InferenceService: the Deployment's ATTND_* settings (trusted proxies: the Deployment's and more)", e);
        }
        {
            const e = [];
            if (ic.lifecycle) e.push("lifecycle hooks: Knative refuses them (queue-proxy drains the pod)");
            if (pred.containers.length !== 1) e.push(`${pred.containers.length} containers; one is enough`);
            if (pred.securityContext && Object.keys(pred.securityContext).length > 0)
                e.push("a pod securityContext: Knative takes it only behind a feature flag; set it on the container");
            const min = pred.minReplicas ?? 1;
            if (!(min >= 1 && (pred.maxReplicas === undefined || min <= pred.maxReplicas)))
                e.push(`minReplicas ${pred.minReplicas} must be 1 .. maxReplicas ${pred.maxReplicas}`);
            check(`InferenceService: within Knative's limits (no lifecycle hook, no pod securityContext), ${min} .. ${pred.maxReplicas ?? "any"} replicas`, e);
        }
        {
            // the plain Service and the budget must not take its pods
            const labels = { ...(isvc.metadata?.labels ?? {}), ...(pred.labels ?? {}) };
            const takes = (sel) => Object.keys(sel ?? {}).length > 0 &&
                Object.entries(sel).every(([k, v]) => labels[k] === v);
            check("InferenceService: its pods are not selected by service.yaml or pdb.yaml",
                takes(svc.spec.selector) || takes(pdb.spec.selector?.matchLabels)
                    ? ["its labels match the Deployment's selector"] : []);
        }
    }
}

console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
