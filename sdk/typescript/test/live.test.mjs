// The TypeScript SDK against a live `cordon serve` (CORDON_API_SOCKET names its unix socket;
// tests/integration/api.sh starts one). Skipped without it.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';

import { Cordon, CordonError } from '../index.js';

const SOCK = process.env.CORDON_API_SOCKET;
const skip = SOCK ? false : 'CORDON_API_SOCKET is not set (no live server)';

test('the mission shape: create, write, exec, stream, terminate', { skip }, async () => {
  const cordon = new Cordon({ socketPath: SOCK });
  const sb = await cordon.sandboxes.create({ ttlMs: 120000, requestedIsolation: 'standard' });
  try {
    assert.match(sb.id, /^[0-9a-f]{16}$/);
    assert.equal(sb.isolation.tier, 'standard');
    await sb.files.write({ path: '/tmp/hi.sh', contentBase64: Buffer.from('echo hi $1\n').toString('base64') });
    const r = await sb.exec({ argv: ['sh', '/tmp/hi.sh', 'node'], timeoutMs: 10000 });
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, 'hi node\n');
    assert.equal((await sb.files.read('/tmp/hi.sh')).toString(), 'echo hi $1\n');
    const runId = await sb.runs.start({ argv: ['sh', '-c', 'for i in 1 2 3 4; do echo n$i; done'] });
    const events = [];
    for await (const ev of sb.runs.events(runId, { afterSequence: 0 })) events.push(ev);
    assert.equal(events.at(-1).type, 'run_exited');
    assert.deepEqual(events.filter((e) => e.type === 'output').map((e) => e.text), ['n1', 'n2', 'n3', 'n4']);
    // resumed from the middle: the rest, each once
    const rest = [];
    for await (const ev of sb.runs.events(runId, { afterSequence: events[1].seq })) rest.push(ev.seq);
    assert.deepEqual(rest, events.slice(2).map((e) => e.seq));
  } finally {
    await sb.terminate();
  }
  await assert.rejects(sb.inspect(), (e) => e instanceof CordonError && e.status === 404 && e.code === 'not_found');
});

test('snapshot and restore', { skip }, async () => {
  const cordon = new Cordon({ socketPath: SOCK });
  const sb = await cordon.sandboxes.create({ ttlMs: 120000 });
  try {
    await sb.exec({ argv: ['sh', '-c', 'echo kept > /root/kept'] });
    const { archive, digest } = await sb.snapshot();
    assert.match(digest, /^sha256:[0-9a-f]{64}$/);
    const sb2 = await cordon.sandboxes.create({
      ttlMs: 120000,
      fromSnapshot: { archiveBase64: archive.toString('base64'), digest },
    });
    try {
      assert.equal((await sb2.exec({ argv: ['cat', '/root/kept'] })).stdout, 'kept\n');
    } finally {
      await sb2.terminate();
    }
  } finally {
    await sb.terminate();
  }
});

test('large files stream both ways', { skip }, async () => {
  const cordon = new Cordon({ socketPath: SOCK });
  const sb = await cordon.sandboxes.create({ ttlMs: 120000 });
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'cordon-sdk-'));
  try {
    const data = crypto.randomBytes(12 << 20); // over the JSON body's limit: streamed with PUT
    await fs.promises.writeFile(path.join(dir, 'src'), data);
    assert.deepEqual(await sb.files.upload('/tmp/big', path.join(dir, 'src'), { mode: 0o600 }), {
      path: '/tmp/big',
      size: data.length,
    });
    const sum = crypto.createHash('sha256').update(data).digest('hex');
    assert.equal((await sb.exec({ argv: ['sha256sum', '/tmp/big'] })).stdout.split(' ')[0], sum);
    assert.equal((await sb.files.download('/tmp/big', path.join(dir, 'dst'))).size, data.length);
    assert.ok(data.equals(await fs.promises.readFile(path.join(dir, 'dst'))));
    assert.equal((await sb.files.write({ path: '/tmp/w', content: data.subarray(0, 3 << 20) })).size, 3 << 20);
    assert.deepEqual((await sb.files.list('/tmp/big')).map((e) => e.mode), [0o600]);
    // a stream that goes on past its size: exactly size bytes are sent
    const more = new PassThrough();
    more.end(Buffer.from('0123456789 and more'));
    assert.equal((await sb.files.upload('/tmp/ten', more, { size: 10 })).size, 10);
    assert.equal((await sb.files.read('/tmp/ten')).toString(), '0123456789');
    // a download that fails leaves no file behind
    await assert.rejects(sb.files.download('/tmp/missing', path.join(dir, 'missing')), (e) => e.status === 404);
    assert.equal(fs.existsSync(path.join(dir, 'missing')), false);
    // an upload aborted midway (a stream that stalls after 1 MiB of its 12) lands nothing
    const ac = new AbortController();
    const src = new PassThrough();
    src.write(data.subarray(0, 1 << 20));
    const up = sb.files.upload('/tmp/aborted', src, { size: data.length, signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    await assert.rejects(up, (e) => e.name === 'AbortError');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual((await sb.files.list('/tmp')).map((e) => e.name).sort(), ['big', 'ten', 'w']);
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
    await sb.terminate();
  }
});

test('an aborted exec has its run cancelled', { skip }, async () => {
  const cordon = new Cordon({ socketPath: SOCK });
  const sb = await cordon.sandboxes.create({ ttlMs: 120000 });
  try {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    await assert.rejects(sb.exec({ argv: ['sleep', '30'] }, { signal: ac.signal }), (e) => e.name === 'AbortError');
    let status;
    for (let i = 0; i < 100 && status !== 'cancelled'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await sb.runs.get('r1')).status;
    }
    assert.equal(status, 'cancelled');
    assert.deepEqual((await sb.processes.list()).filter((p) => p.command.includes('sleep')), []);
    // an aborted event stream ends with an AbortError, and its run goes on
    const run = await sb.runs.start({ argv: ['sleep', '30'] });
    const ac2 = new AbortController();
    setTimeout(() => ac2.abort(), 300);
    await assert.rejects(
      (async () => {
        for await (const _ of sb.runs.events(run, { signal: ac2.signal }));
      })(),
      (e) => e.name === 'AbortError',
    );
    assert.equal((await sb.runs.get(run)).status, 'running');
  } finally {
    await sb.terminate();
  }
});

test('errors carry the status, code and field', { skip }, async () => {
  const cordon = new Cordon({ socketPath: SOCK });
  await assert.rejects(cordon.sandboxes.create({ colour: 'blue' }), (e) => e.status === 400 && e.field === 'colour');
  const host = await cordon.host();
  assert.ok(Array.isArray(host.tiers));
});

const URL_ = process.env.CORDON_API_URL;
const TOKEN = process.env.CORDON_API_TOKEN;
const skipTcp = URL_ && TOKEN ? false : 'CORDON_API_URL and CORDON_API_TOKEN are not set (no TCP server)';

test('over TCP a sandbox token acts on its sandbox only', { skip: skipTcp }, async () => {
  const admin = new Cordon({ url: URL_, token: TOKEN });
  const a = await admin.sandboxes.create({ ttlMs: 120000 });
  const b = await admin.sandboxes.create({ ttlMs: 120000 });
  try {
    const scoped = new Cordon({ url: URL_, token: a.token });
    const mine = await scoped.sandboxes.get(a.id);
    assert.equal((await mine.exec({ argv: ['echo', 'tcp'] })).stdout, 'tcp\n');
    assert.deepEqual((await scoped.sandboxes.list()).map((s) => s.id), [a.id]);
    await assert.rejects(scoped.sandboxes.get(b.id), (e) => e.status === 404);
    await assert.rejects(new Cordon({ url: URL_, token: 'not-the-token' }).host(), (e) => e.status === 401);
  } finally {
    await a.terminate();
    await b.terminate();
  }
});

// one GET with node:http (a refused or cut connection rejects)
const get = (url) =>
  new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });

test('processes and ports', { skip }, async () => {
  const cordon = new Cordon({ socketPath: SOCK });
  const sb = await cordon.sandboxes.create({ ttlMs: 120000, requestedIsolation: 'standard' });
  try {
    await sb.runs.start({ argv: ['sh', '-c', 'echo ts-page >/tmp/index.html && exec python3 -m http.server 3001 --bind 127.0.0.1 --directory /tmp'] });
    const p = await sb.ports.expose(3001);
    assert.match(p.listen, /^127\.0\.0\.1:\d+$/);
    let text = '';
    for (let i = 0; i < 100 && !text; i++) {
      try {
        text = await get(`http://${p.listen}/index.html`);
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.equal(text, 'ts-page\n');
    assert.deepEqual((await sb.ports.list()).map((x) => x.port), [3001]);
    const server = (await sb.processes.list()).filter((x) => x.command.includes('http.server'));
    assert.equal(server.length, 1);
    await sb.processes.signal(server[0].pid, 'KILL');
    await assert.rejects(sb.processes.signal(999999, 'KILL'), (e) => e.status === 404);
    await assert.rejects(sb.ports.expose(3001), (e) => e.status === 409);
    await sb.ports.close(3001);
    assert.deepEqual(await sb.ports.list(), []);
  } finally {
    await sb.terminate();
  }
});
