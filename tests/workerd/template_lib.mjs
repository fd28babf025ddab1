// The E2B template routes as the SDK calls them (POST /v3/templates, the
// files' upload URL, POST /v2/templates/{id}/builds/{bid}, GET .../status with
// logsOffset), for one workspace's key: the workerd template tests' client.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { api, eventually } from '../lib/corral.mjs';
import { docker } from './helpers.mjs';

// A gzip tar of dir's entries, as the SDK uploads a COPY's files; its hash
// is the layer's filesHash.
export function tarOf(dir, entries) {
  const tgz = execFileSync('tar', ['-czf', '-', '-C', dir, ...entries]);
  return { tgz, hash: createHash('sha256').update(tgz).digest('hex') };
}

export function templateClient(ws, BUILD_MS) {
  const e2b = (method, path, body) => api(method, path, { key: ws.member, body });

  async function newTemplate(alias) {
    const r = await e2b('POST', '/v3/templates', { alias, cpuCount: 1, memoryMB: 512 });
    assert.equal(r.status, 202, `POST /v3/templates: ${r.status} ${r.raw}`);
    assert.match(r.body.templateID, /^tpl-[0-9a-f]{20}$/);
    assert.match(r.body.buildID, /^bld-[0-9a-f]{20}$/);
    return r.body;
  }

  async function upload(tpl, { tgz, hash }) {
    const r = await e2b('GET', `/templates/${tpl.templateID}/files/${hash}`);
    assert.ok(r.status === 200 || r.status === 201, `files/${hash}: ${r.status} ${r.raw}`);
    if (r.body.present) return hash;
    assert.ok(r.body.url, `an upload URL: ${r.raw}`);
    const put = await fetch(r.body.url, { method: 'PUT', body: tgz, headers: r.body.headers || {} });
    assert.ok(put.status >= 200 && put.status < 300, `upload: ${put.status} ${await put.text()}`);
    return hash;
  }

  async function startBuild(tpl, body) {
    const r = await e2b('POST', `/v2/templates/${tpl.templateID}/builds/${tpl.buildID}`, body);
    assert.equal(r.status, 202, `start build: ${r.status} ${r.raw}`);
  }

  // Follows the build's status (logsOffset, as the SDK does) until it ends.
  async function waitBuild(tpl) {
    const logs = [];
    let info;
    await eventually(async () => {
      const r = await e2b('GET', `/templates/${tpl.templateID}/builds/${tpl.buildID}/status?logsOffset=${logs.length}`);
      assert.equal(r.status, 200, `status: ${r.status} ${r.raw}`);
      info = r.body;
      logs.push(...(info.logEntries || []).map((e) => e.message));
      return info.status === 'ready' || info.status === 'error';
    }, { timeout: BUILD_MS, every: 500, what: `build ${tpl.buildID}` });
    return { ...info, messages: logs };
  }

  async function createFrom(alias) {
    return api('POST', '/sandboxes', { key: ws.member, body: { templateID: alias, timeout: 300, secure: true } });
  }
  return { e2b, newTemplate, upload, startBuild, waitBuild, createFrom };
}

// The layers and images a worker's build sandboxes committed (they carry its label).
export async function removeWorkerImages(wid) {
  const f = encodeURIComponent(JSON.stringify({ label: [`corral.worker=${wid}`] }));
  for (const img of (await docker('GET', `/images/json?filters=${f}`)).body || []) {
    await docker('DELETE', `/images/${img.Id}?force=1`);
  }
}
