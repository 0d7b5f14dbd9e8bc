// The TypeScript SDK's transport without a server: what it sends where, and that it gives up.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';

import { Cordon } from '../index.js';

test('an https URL speaks TLS and never sends the token in clear', async () => {
  // a TLS proxy in front of cordon serve is what SECURITY.md advises
  let first = null;
  const srv = net.createServer((c) => {
    c.once('data', (d) => {
      first = d;
      c.destroy();
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  const cordon = new Cordon({ url: `https://127.0.0.1:${port}`, token: 's3cr3t-token' });
  await assert.rejects(cordon.host());
  srv.close();
  assert.ok(first, 'nothing was sent');
  assert.ok(!first.toString('latin1').includes('s3cr3t-token'), 'the token went out in clear');
  assert.equal(first[0], 0x16, 'a TLS handshake record');
});

test('an unknown scheme is refused', () => {
  assert.throws(() => new Cordon({ url: 'ftp://127.0.0.1:21', token: 'x' }), /url/);
});

test('events give up when the server is gone', async () => {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r)); // nothing listens there
  const cordon = new Cordon({ url: `http://127.0.0.1:${port}`, token: 'x' });
  const it = cordon.events('/v1/sandboxes/0123456789abcdef/events');
  await assert.rejects(
    (async () => {
      for await (const _ of it);
    })(),
    /ECONNREFUSED/,
  );
});

test('a path in the url prefixes every route', async () => {
  // behind a reverse proxy that serves the API under /cordon: every call, streams too
  const seen = [];
  const srv = http.createServer((req, res) => {
    seen.push(req.url);
    if (req.url.includes('/events')) {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.end('{"seq": 1, "type": "created"}\n');
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok": true}');
    }
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  try {
    for (const url of [`http://127.0.0.1:${port}/cordon`, `http://127.0.0.1:${port}/cordon/`]) {
      const cordon = new Cordon({ url, token: 'x' });
      assert.deepEqual(await cordon.host(), { ok: true });
      const seqs = [];
      for await (const ev of cordon.events('/v1/sandboxes/0123456789abcdef/events')) seqs.push(ev.seq);
      assert.deepEqual(seqs, [1]);
    }
    await new Cordon({ url: `http://127.0.0.1:${port}`, token: 'x' }).host();
  } finally {
    srv.close();
  }
  const ev = '/cordon/v1/sandboxes/0123456789abcdef/events?afterSequence=0';
  assert.deepEqual(seen, ['/cordon/v1/host', ev, '/cordon/v1/host', ev, '/v1/host']);
});

test('ids stay one segment of their route', async () => {
  // an id from elsewhere (a tenant, a log) can name no other route
  const seen = [];
  const srv = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok": true}');
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  try {
    const cordon = new Cordon({ url: `http://127.0.0.1:${port}`, token: 'x' });
    const sb = await cordon.sandboxes.get('../host?x=1');
    await sb.runs.get('r1/cancel');
    await sb.approvals.deny('q1/../../x');
  } finally {
    srv.close();
  }
  const p = '/v1/sandboxes/..%2Fhost%3Fx%3D1';
  assert.deepEqual(seen, [`GET ${p}`, `GET ${p}/runs/r1%2Fcancel`, `POST ${p}/approvals/q1%2F..%2F..%2Fx/deny`]);
});

test('a reply that is not its JSON rejects', async () => {
  const srv = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('<html>a proxy page</html>');
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  try {
    await assert.rejects(new Cordon({ url: `http://127.0.0.1:${port}`, token: 'x' }).host(), SyntaxError);
  } finally {
    srv.close();
  }
});

test('a query in the url is refused', () => {
  assert.throws(() => new Cordon({ url: 'http://127.0.0.1:8700/cordon?x=1', token: 'x' }), /url/);
});

test("the HTTP layer's HTML errors are CordonErrors", async () => {
  // libmicrohttpd answers 431 (a header block over 64 KiB) itself, with HTML
  const srv = http.createServer((req, res) => {
    res.writeHead(431);
    res.end('<html><head><title>Request too big</title></head></html>');
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  try {
    const cordon = new Cordon({ url: `http://127.0.0.1:${port}`, token: 'x' });
    const calls = [
      () => cordon.host(),
      async () => {
        for await (const _ of cordon.events('/v1/sandboxes/0123456789abcdef/events'));
      },
    ];
    for (const call of calls)
      await assert.rejects(call(), (e) => e.status === 431 && e.code === 'http_431' && /Request too big/.test(e.message));
  } finally {
    srv.close();
  }
});
