// Validates api/fronts/openapi.json against the official OpenAPI 3.1 JSON schema
// (@seriousme/openapi-schema-validator, offline) and checks that every
// $ref resolves. Prints TAP; exits non-zero on any failure.
import { Validator } from "@seriousme/openapi-schema-validator";
import { readFileSync } from "node:fs";
import { exit } from "node:process";

const file = process.argv[2];
const validator = new Validator();
let failed = 0;
let n = 0;
function check(ok, name, info) {
    n++;
    console.log(`${ok ? "ok" : "not ok"} ${n} - ${name}`);
    if (!ok) {
        failed++;
        if (info) console.log("# " + JSON.stringify(info, null, 1).replace(/\n/g, "\n# "));
    }
}

const doc = JSON.parse(readFileSync(file, "utf8"));
const res = await validator.validate(doc);
check(res.valid, "openapi.json matches the OpenAPI " + validator.version + " schema", res.errors);
check(validator.version === "3.1", "openapi.json is OpenAPI 3.1", validator.version);
let resolved = true;
let err;
try {
    validator.resolveRefs();
} catch (e) {
    resolved = false;
    err = String(e);
}
check(resolved, "every $ref resolves", err);
console.log(`1..${n}`);
exit(failed ? 1 : 0);
