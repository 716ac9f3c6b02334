#!/usr/bin/env node
// Ops validation, called by the Java tests in src/test/java/dev/llmsidecar/ops (bin/test):
//   node validate.mjs dashboards <dir>        every *.json against @grafana/schema's Dashboard type (tsc, strict,
//                                              excess-property checks) plus the bundle's own rules (variables,
//                                              exemplars on latency panels, unique ids, grid inside 24 columns)
//   node validate.mjs k8s <file.yaml>...       every YAML document as a Kubernetes object with kubernetes-models
//                                              (core + prometheus-operator CRDs); unknown kinds fail
//   node validate.mjs rules <rules.yml> <rules_test.yml> <runbooks.md>
//                                              every alert: severity critical|warning, summary, description, a runbook_url
//                                              whose anchor is a "## <Alert>" section of runbooks.md, and promtool
//                                              unit tests where it fires and where it stays silent
//   node validate.mjs rules-sync <rules.yml> <file>...
//                                              the rule groups in each file (plain, or a PrometheusRule's spec, e.g.
//                                              helm/kustomize output) equal rules.yml's (runbook base URL aside)
//   node validate.mjs selects <file.yaml>...   every ServiceMonitor / PodMonitor selects objects of these files: a
//                                              ServiceMonitor Services that have its endpoint ports and select pod
//                                              templates with the target ports; a PodMonitor pod templates with its
//                                              ports (prints what each one selects)
//   node validate.mjs configmap-files <file.yaml> <configmap> <dir>
//                                              the ConfigMap's data is exactly dir's *.json files, byte for byte
//   node validate.mjs json <file.yaml>         prints the YAML documents as one JSON array (for structural asserts)
// Exit 0 when everything is valid; otherwise prints every problem and exits 1.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

// JSON cannot name a TypeScript string enum member (ThresholdsMode.Absolute): map enums to their string values,
// keep everything else (required fields, excess-property checks) as the schema declares it.
const JSONIFY = `type Json<T> = T extends string ? \`\${T}\` : T extends number | boolean | null | undefined ? T
  : T extends Array<infer U> ? Array<Json<U>> : { [K in keyof T]: Json<T[K]> };`;
const here = dirname(fileURLToPath(import.meta.url));
const problems = [];

async function dashboards(dir) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  if (files.length === 0) problems.push(`no dashboards in ${dir}`);
  const work = join(here, 'build', 'dashboards');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const d = JSON.parse(text);
    writeFileSync(join(work, basename(f, '.json') + '.check.ts'),
      `import type { Dashboard } from '@grafana/schema';\n${JSONIFY}\nexport const dashboard: Json<Dashboard> = ${text};\n`);
    const vars = (d.templating?.list ?? []).map((v) => v.name);
    for (const v of ['datasource', 'namespace', 'pod', 'model', 'slo_class']) {
      if (!vars.includes(v)) problems.push(`${f}: template variable ${v} missing`);
    }
    const ids = new Set();
    for (const p of d.panels ?? []) {
      if (ids.has(p.id)) problems.push(`${f}: duplicate panel id ${p.id}`);
      ids.add(p.id);
      const g = p.gridPos;
      if (!g || g.x + g.w > 24) problems.push(`${f}: panel "${p.title}" outside the 24-column grid`);
      if (!p.targets?.length) problems.push(`${f}: panel "${p.title}" has no query`);
      for (const t of p.targets ?? []) {
        if (!t.expr?.trim()) problems.push(`${f}: panel "${p.title}" has an empty query`);
        if (t.datasource?.uid !== '${datasource}') problems.push(`${f}: panel "${p.title}" does not use $datasource`);
        const latency = /histogram_quantile|_seconds_bucket/.test(t.expr) && p.fieldConfig?.defaults?.unit === 's';
        if (latency && t.exemplar !== true) problems.push(`${f}: latency panel "${p.title}" without exemplars`);
      }
    }
  }
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext',
      target: 'es2022', skipLibCheck: true, types: [], typeRoots: [join(here, 'node_modules', '@types')] },
    include: ['*.check.ts'],
  }, null, 2));
  const tsc = join(here, 'node_modules', '.bin', 'tsc');
  const r = spawnSync(tsc, ['-p', join(work, 'tsconfig.json')], { encoding: 'utf8', cwd: here });
  if (r.status !== 0) problems.push(`@grafana/schema type check failed:\n${r.stdout}${r.stderr}${r.error ?? ''}`);
  console.log(`dashboards: ${files.length} checked against @grafana/schema`);
}

async function k8s(files) {
  const core = await import('kubernetes-models');
  const promOp = await import('@kubernetes-models/prometheus-operator');
  let count = 0;
  for (const file of files) {
    const docs = parseAllDocuments(readFileSync(file, 'utf8'));
    for (const doc of docs) {
      if (doc.errors.length) { problems.push(`${file}: YAML: ${doc.errors.map(String).join('; ')}`); continue; }
      const obj = doc.toJS();
      if (obj == null) continue;
      const where = `${file}: ${obj.kind}/${obj.metadata?.name}`;
      const [group, version] = obj.apiVersion?.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
      const mod = group === 'monitoring.coreos.com' ? promOp : core;
      const ns = group === '' ? mod[version] : mod[groupKey(group)]?.[version];
      const Cls = ns?.[obj.kind];
      if (!Cls) { problems.push(`${where}: unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`); continue; }
      try {
        new Cls(obj).validate();
        count++;
      } catch (e) {
        problems.push(`${where}: ${e.message}`);
      }
    }
  }
  console.log(`k8s: ${count} objects valid`);
}

// kubernetes-models exports groups as camelCase names: apps -> apps, monitoring.coreos.com -> monitoringCoreosCom
function groupKey(group) {
  return group.split('.').map((p, i) => (i === 0 ? p : p[0].toUpperCase() + p.slice(1))).join('')
    .replace(/[-.]([a-z])/g, (_, c) => c.toUpperCase());
}

function loadDocs(file) {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
    if (d.errors.length) problems.push(`${file}: YAML: ${d.errors.map(String).join('; ')}`);
    return d.toJS();
  }).filter((d) => d != null);
}

function rules(rulesFile, testFile, runbookFile) {
  const [doc] = loadDocs(rulesFile);
  const alerts = doc.groups.flatMap((g) => g.rules).filter((r) => r.alert);
  const [tests] = loadDocs(testFile);
  const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
  const runbook = readFileSync(runbookFile, 'utf8');
  const sections = new Set([...runbook.matchAll(/^## (\w+)\s*$/gm)].map((m) => m[1]));
  for (const a of alerts) {
    const name = a.alert;
    if (!['critical', 'warning'].includes(a.labels?.severity)) problems.push(`${name}: severity must be critical (pages) or warning (tickets)`);
    if (!a.annotations?.summary || !a.annotations?.description) problems.push(`${name}: summary/description missing`);
    const url = a.annotations?.runbook_url ?? '';
    if (!url.endsWith(`runbooks.md#${name.toLowerCase()}`)) problems.push(`${name}: runbook_url ${url} is not runbooks.md#${name.toLowerCase()}`);
    if (!sections.has(name)) problems.push(`${name}: no "## ${name}" section in ${runbookFile}`);
    const mine = cases.filter((c) => c.alertname === name);
    if (!mine.some((c) => (c.exp_alerts ?? []).length > 0)) problems.push(`${name}: no promtool test where it fires`);
    if (!mine.some((c) => (c.exp_alerts ?? []).length === 0)) problems.push(`${name}: no promtool test where it stays silent`);
  }
  for (const s of sections) {
    if (/^LLMSidecar/.test(s) && !alerts.some((a) => a.alert === s)) problems.push(`runbook section ${s} has no alert`);
  }
  console.log(`rules: ${alerts.length} alerts with runbooks and firing/silent tests`);
}

function groupsOf(file) {
  const out = [];
  for (const d of loadDocs(file)) {
    if (d.kind === 'PrometheusRule') out.push(d.spec?.groups);
    else if (d.groups) out.push(d.groups);
  }
  if (out.length !== 1) problems.push(`${file}: expected exactly one rule-group set, found ${out.length}`);
  return JSON.stringify(canonical(out[0])).replaceAll(/https?:\/\/[^"#]*runbooks\.md#/g, 'RUNBOOK#');
}

// key order does not matter in YAML maps (kustomize and helm sort them)
function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
  return v;
}

function rulesSync(source, files) {
  const want = groupsOf(source);
  for (const f of files) {
    if (groupsOf(f) !== want) problems.push(`${f}: rule groups differ from ${source} (run deploy/prometheus/sync.sh)`);
  }
  console.log(`rules-sync: ${files.length} copies compared`);
}

// matchLabels only: the manifests select by labels, and an unsupported selector must not pass unnoticed
function matches(selector, labels, where) {
  if (!selector || selector.matchExpressions) problems.push(`${where}: selector without matchLabels or with matchExpressions`);
  const want = selector?.matchLabels ?? selector ?? {};
  if (Object.keys(want).length === 0) problems.push(`${where}: empty selector`);
  return Object.entries(want).every(([k, v]) => labels?.[k] === v);
}

function selects(files) {
  const docs = files.flatMap((f) => loadDocs(f));
  const ns = (o) => o.metadata?.namespace ?? '';
  const workloads = docs.filter((d) => ['Deployment', 'StatefulSet', 'DaemonSet'].includes(d.kind));
  const containerPorts = (w) => (w.spec.template.spec.containers ?? []).flatMap((c) => c.ports ?? []);
  const monitors = docs.filter((d) => ['ServiceMonitor', 'PodMonitor'].includes(d.kind));
  if (monitors.length === 0) problems.push(`no ServiceMonitor or PodMonitor in ${files.join(', ')}`);
  for (const m of monitors) {
    const where = `${m.kind}/${m.metadata.name}`;
    const endpoints = m.kind === 'ServiceMonitor' ? m.spec.endpoints : m.spec.podMetricsEndpoints;
    const ports = (endpoints ?? []).map((e) => e.port);
    if (ports.length === 0 || ports.some((p) => !p)) problems.push(`${where}: every endpoint needs a port name`);
    if (m.kind === 'PodMonitor') {
      const pods = workloads.filter((w) => ns(w) === ns(m) && matches(m.spec.selector, w.spec.template.metadata?.labels, where));
      if (pods.length === 0) problems.push(`${where}: selects no pod template`);
      for (const w of pods) {
        for (const p of ports) {
          if (!containerPorts(w).some((c) => c.name === p)) problems.push(`${where}: ${w.kind}/${w.metadata.name} has no container port ${p}`);
          console.log(`${where} -> ${w.kind}/${w.metadata.name} port ${p}`);
        }
      }
      continue;
    }
    const services = docs.filter((d) => d.kind === 'Service' && ns(d) === ns(m) && matches(m.spec.selector, d.metadata?.labels, where));
    if (services.length === 0) problems.push(`${where}: selects no Service`);
    for (const s of services) {
      for (const p of ports) {
        const sp = (s.spec.ports ?? []).find((x) => x.name === p);
        if (!sp) { problems.push(`${where}: Service/${s.metadata.name} has no port ${p}`); continue; }
        const pods = workloads.filter((w) => ns(w) === ns(s) && matches({ matchLabels: s.spec.selector }, w.spec.template.metadata?.labels, `Service/${s.metadata.name}`));
        if (pods.length === 0) problems.push(`${where}: Service/${s.metadata.name} selects no pod template`);
        for (const w of pods) {
          const target = sp.targetPort ?? sp.port;
          if (!containerPorts(w).some((c) => c.name === target || c.containerPort === target)) {
            problems.push(`${where}: ${w.kind}/${w.metadata.name} has no container port ${target} (Service/${s.metadata.name})`);
          }
          console.log(`${where} -> Service/${s.metadata.name} port ${p} -> ${w.kind}/${w.metadata.name} port ${target}`);
        }
      }
    }
  }
}

function configmapFiles(file, name, dir) {
  const cm = loadDocs(file).find((d) => d.kind === 'ConfigMap' && d.metadata?.name === name);
  if (!cm) { problems.push(`${file}: no ConfigMap ${name}`); return; }
  const want = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const have = Object.keys(cm.data ?? {}).sort();
  if (JSON.stringify(want) !== JSON.stringify(have)) problems.push(`ConfigMap ${name} has ${have.join(', ')}; ${dir} has ${want.join(', ')}`);
  for (const f of want) {
    if (cm.data?.[f] !== undefined && cm.data[f] !== readFileSync(join(dir, f), 'utf8')) problems.push(`ConfigMap ${name}: ${f} differs from ${join(dir, f)}`);
  }
  if (want.length === 0) problems.push(`no *.json in ${dir}`);
  console.log(`configmap-files: ${have.length} files in ConfigMap ${name} compared with ${dir}`);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'dashboards') await dashboards(resolve(args[0]));
else if (cmd === 'k8s') await k8s(args.map((a) => resolve(a)));
else if (cmd === 'rules') rules(...args.map((a) => resolve(a)));
else if (cmd === 'rules-sync') rulesSync(resolve(args[0]), args.slice(1).map((a) => resolve(a)));
else if (cmd === 'selects') selects(args.map((a) => resolve(a)));
else if (cmd === 'json') console.log(JSON.stringify(loadDocs(resolve(args[0]))));
else if (cmd === 'configmap-files') configmapFiles(resolve(args[0]), args[1], resolve(args[2]));
else { console.error('usage: node validate.mjs dashboards <dir> | k8s <file.yaml>... | rules <rules> <tests> <runbooks> | rules-sync <rules> <file>... | selects <file.yaml>... | configmap-files <file.yaml> <configmap> <dir> | json <file.yaml>'); process.exit(2); }
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
