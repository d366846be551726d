// tap.mjs — the Test Anything Protocol lines the browser tests print:
// ok(cond, name, ...why) prints "ok N - name", or "not ok N - name" and
// each why as a "#   " comment; tally() says how many ran and failed.
let n = 0;
let failures = 0;

export function ok(cond, name, ...why) {
  n++;
  if (cond) {
    console.log(`ok ${n} - ${name}`);
  } else {
    failures++;
    console.log(`not ok ${n} - ${name}`);
    for (const w of why) console.log(`#   ${String(w).split('\n').join('\n#   ')}`);
  }
  return cond;
}

export function tally() {
  return { n, failures };
}
