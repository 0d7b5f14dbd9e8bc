// A client for cordon's sandbox API (`cordon serve`), for Node 18 or later, with no runtime
// dependencies: node:http over the unix socket (/run/cordon/api.sock) or TCP with a token.
// Types: index.d.ts.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export const DEFAULT_SOCKET = '/run/cordon/api.sock';

/** An error the API answered with: {"error": {"code", "message", "field"}}. */
export class CordonError extends Error {
  constructor(status, error) {
    const e = error || {};
    super(`${status} ${e.code}: ${e.message}`);
    this.name = 'CordonError';
    this.status = status;
    this.code = e.code;
    this.field = e.field ?? null;
    this.error = e;
  }
}

// The CordonError of an error reply. The HTTP layer's own (libmicrohttpd's 400, 431 and 505,
// answered before a request reaches cordon) have a small HTML body, not the API's JSON: those
// are code `http_<status>` with the body as the message.
function errorOf(status, buf) {
  let err;
  try {
    err = JSON.parse(buf.toString()).error;
  } catch {
    err = undefined;
  }
  if (!err || typeof err !== 'object') err = { code: `http_${status}`, message: buf.toString() };
  return new CordonError(status, err);
}

// A stream's first n bytes: a body never longer than the Content-Length its request said (a
// source that goes on would else send the rest as a next request on the connection).
function limited(stream, n) {
  let left = n;
  const t = new Transform({
    transform(chunk, enc, cb) {
      const c = chunk.subarray(0, left);
      left -= c.length;
      cb(null, c);
      if (left === 0) {
        stream.unpipe(t);
        t.end();
      }
    },
  });
  if (n === 0) t.end();
  else stream.pipe(t);
  return t;
}

// An id in a route, as one segment: whatever it holds (a slash, '..', '?') can name no other
// route (the server refuses an encoded slash or NUL in a path).
const seg = (v) => encodeURIComponent(String(v));

export class Cordon {
  static RECONNECTS = 5;

  /**
   * @param {{socketPath?: string, url?: string, token?: string, ca?: string | Buffer}} [opts]
   * url: http://HOST:PORT, or https:// (a TLS proxy in front), verified against Node's CAs or ca;
   * a path in it (http://HOST:PORT/cordon, a reverse proxy's prefix) goes before every route.
   */
  constructor(opts = {}) {
    this.url = opts.url ? new URL(opts.url) : null;
    // anything else would go out as plain HTTP, the token with it
    if (this.url && this.url.protocol !== 'http:' && this.url.protocol !== 'https:')
      throw new TypeError(`url: expected http:// or https://, not ${opts.url}`);
    // a route appended after a query would be no path at all
    if (this.url && (this.url.search || this.url.hash))
      throw new TypeError(`url: a query or fragment cannot prefix the API's routes: ${opts.url}`);
    // the prefix a reverse proxy serves the API under ('' for none), before every route
    this.prefix = this.url ? this.url.pathname.replace(/\/+$/, '') : '';
    this.ca = opts.ca;
    this.socketPath = opts.socketPath || (this.url ? null : DEFAULT_SOCKET);
    this.token = opts.token || null;
    this.sandboxes = new Sandboxes(this);
  }

  _options(method, path, headers) {
    const o = { method, path: this.prefix + path, headers: { Accept: 'application/json', ...headers } };
    if (this.token) o.headers.Authorization = `Bearer ${this.token}`;
    if (this.url) {
      o.host = this.url.hostname;
      o.port = this.url.port || (this.url.protocol === 'https:' ? 443 : 80);
      if (this.url.protocol === 'https:' && this.ca) o.ca = this.ca;
    } else o.socketPath = this.socketPath;
    return o;
  }

  _request(options, callback) {
    return (this.url && this.url.protocol === 'https:' ? https : http).request(options, callback);
  }

  /**
   * One call: the parsed JSON reply, or {body: Buffer, headers} for raw replies. raw: bytes, or
   * a Readable of size bytes (streamed, never held whole). signal: an AbortSignal that ends the
   * call (its connection closed; the promise rejects with an AbortError).
   */
  request(method, path, { body, raw, size, query, signal } = {}) {
    if (query) path += '?' + new URLSearchParams(query).toString();
    const stream = raw && typeof raw.pipe === 'function' ? raw : null;
    const data = stream
      ? null
      : raw !== undefined
        ? Buffer.from(raw)
        : body !== undefined
          ? Buffer.from(JSON.stringify(body))
          : null;
    const headers = {};
    if (data || stream) {
      headers['Content-Type'] = raw !== undefined ? 'application/octet-stream' : 'application/json';
      headers['Content-Length'] = stream ? size : data.length;
    }
    return new Promise((resolve, reject) => {
      const opts = this._options(method, path, headers);
      if (signal) opts.signal = signal;
      const req = this._request(opts, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          const json = (res.headers['content-type'] || '').startsWith('application/json');
          if (res.statusCode >= 400) return reject(errorOf(res.statusCode, buf));
          // a reply that is not the JSON it says (a proxy's page): a rejection, never a throw
          // from inside the response's handler, which would end the caller's process
          try {
            resolve(json ? JSON.parse(buf.toString()) : { body: buf, headers: res.headers });
          } catch (e) {
            reject(e);
          }
        });
      });
      req.on('error', reject);
      if (stream) {
        // a source that fails midway ends the request short: the server lands nothing
        stream.on('error', (e) => {
          req.destroy(e);
          reject(e);
        });
        limited(stream, size).pipe(req);
        return;
      }
      if (data) req.write(data);
      req.end();
    });
  }

  /** A GET whose reply is streamed: the response once its status is not an error. */
  _open(path, { query, signal } = {}) {
    if (query) path += '?' + new URLSearchParams(query).toString();
    return new Promise((resolve, reject) => {
      const opts = this._options('GET', path, { Accept: 'application/octet-stream' });
      if (signal) opts.signal = signal;
      const req = this._request(opts, async (res) => {
        if (res.statusCode < 400) return resolve(res);
        const chunks = [];
        try {
          for await (const c of res) chunks.push(c);
        } catch (e) {
          return reject(e);
        }
        reject(errorOf(res.statusCode, Buffer.concat(chunks)));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** What `cordon check --json` says, with the tiers this host can give. */
  host() {
    return this.request('GET', '/v1/host');
  }

  /**
   * Events of path after afterSequence, each once, as an async iterator; a stream cut short is
   * resumed from the last seq seen (reconnect).
   */
  async *events(path, { afterSequence = 0, follow = false, reconnect = true, signal } = {}) {
    let after = afterSequence;
    // reconnects in a row that bring nothing (the server gone): then the error, not forever
    let failures = 0;
    for (;;) {
      if (failures) await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** (failures - 1), 2000)));
      const q = new URLSearchParams({ afterSequence: String(after) });
      if (follow) q.set('follow', '1');
      let res;
      try {
        res = await new Promise((resolve, reject) => {
          const opts = this._options('GET', `${path}?${q}`, { Accept: 'application/x-ndjson' });
          if (signal) opts.signal = signal;
          const req = this._request(opts, resolve);
          req.on('error', reject);
          req.end();
        });
      } catch (e) {
        if (signal?.aborted) throw signal.reason ?? e; // an AbortError, as every call's
        if (!reconnect || ++failures > Cordon.RECONNECTS) throw e;
        continue;
      }
      if (res.statusCode >= 400) {
        const chunks = [];
        for await (const c of res) chunks.push(c);
        throw errorOf(res.statusCode, Buffer.concat(chunks));
      }
      let rest = '';
      let cut = false;
      try {
        for await (const chunk of res) {
          rest += chunk.toString();
          let nl;
          while ((nl = rest.indexOf('\n')) >= 0) {
            const line = rest.slice(0, nl).trim();
            rest = rest.slice(nl + 1);
            if (!line) continue;
            const ev = JSON.parse(line);
            after = ev.seq;
            failures = 0;
            yield ev;
          }
        }
      } catch (e) {
        if (signal?.aborted) throw signal.reason ?? e;
        if (!reconnect || ++failures > Cordon.RECONNECTS) throw e;
        cut = true;
      }
      if (!cut) return;
    }
  }
}

class Sandboxes {
  constructor(c) {
    this._c = c;
  }

  /** The policy's fields plus requestedIsolation, ttlMs and idempotencyKey. */
  async create(spec = {}) {
    const d = await this._c.request('POST', '/v1/sandboxes', { body: spec });
    return new Sandbox(this._c, d.id, d);
  }

  async list() {
    const d = await this._c.request('GET', '/v1/sandboxes');
    return d.sandboxes.map((s) => new Sandbox(this._c, s.id, s));
  }

  async get(id) {
    return new Sandbox(this._c, id, await this._c.request('GET', `/v1/sandboxes/${seg(id)}`));
  }
}

export class Sandbox {
  constructor(c, id, info = {}) {
    this._c = c;
    this.id = id;
    this.info = info;
    this.token = info.token ?? null;
    this.isolation = info.isolation ?? null;
    this.expiresAt = info.expiresAt ?? null;
    this._path = `/v1/sandboxes/${seg(id)}`;
    const sb = this;
    const query = (path, mode) => (mode === undefined ? { path } : { path, mode: Number(mode).toString(8) });
    this.files = {
      // content (bytes or a string) goes as it is (PUT, any size); contentBase64 in JSON (at most ~750 KB)
      write: (spec) => {
        const { content, ...body } = spec;
        if (content !== undefined)
          return c.request('PUT', `${sb._path}/files`, { raw: content, query: query(body.path, body.mode) });
        return c.request('POST', `${sb._path}/files`, { body });
      },
      /**
       * A local file (its path), bytes, or a Readable of size bytes streamed into path: it lands
       * whole or not at all.
       */
      upload: async (path, source, { mode, size, signal } = {}) => {
        if (typeof source !== 'string') {
          if (typeof source.pipe === 'function' && !Number.isSafeInteger(size))
            throw new TypeError('upload: a stream needs its size ({ size })');
          return c.request('PUT', `${sb._path}/files`, { raw: source, size, query: query(path, mode), signal });
        }
        const fh = await fs.promises.open(source, 'r');
        try {
          const st = await fh.stat();
          if (!st.isFile()) throw new TypeError(`upload: ${source} is not a regular file`);
          const stream = fh.createReadStream({ autoClose: false, start: 0, end: Math.max(st.size - 1, 0) });
          const raw = st.size ? stream : Buffer.alloc(0);
          return await c.request('PUT', `${sb._path}/files`, { raw, size: st.size, query: query(path, mode), signal });
        } finally {
          await fh.close();
        }
      },
      /**
       * path streamed into dest (a local file's path, or a Writable): {path, size}. A download
       * cut short rejects (and a dest path it made is removed): a file is never taken for whole.
       */
      download: async (path, dest, { signal } = {}) => {
        const res = await c._open(`${sb._path}/files`, { query: { path }, signal });
        let size = 0;
        res.on('data', (chunk) => (size += chunk.length));
        const out = typeof dest === 'string' ? fs.createWriteStream(dest) : dest;
        try {
          await pipeline(res, out, signal ? { signal } : {});
          // the server ends a transfer that failed without its last chunk
          if (!res.complete) throw new Error(`download ${path}: the transfer ended before the file did`);
        } catch (e) {
          res.destroy();
          if (typeof dest === 'string') await fs.promises.rm(dest, { force: true });
          throw e;
        }
        return { path, size };
      },
      /** The whole file in memory (download streams it instead). */
      read: async (path, { signal } = {}) =>
        (await c.request('GET', `${sb._path}/files`, { query: { path }, signal })).body,
      list: async (path) => (await c.request('GET', `${sb._path}/files`, { query: { path, list: '1' } })).entries,
    };
    this.runs = {
      start: async (spec, { signal } = {}) => (await c.request('POST', `${sb._path}/runs`, { body: spec, signal })).runId,
      get: (runId) => c.request('GET', `${sb._path}/runs/${seg(runId)}`),
      cancel: (runId) => c.request('POST', `${sb._path}/runs/${seg(runId)}/cancel`),
      // closing the stream (break, or signal) stops the reading only: the run goes on
      events: (runId, { afterSequence = 0, follow = true, signal } = {}) =>
        c.events(`${sb._path}/runs/${seg(runId)}/events`, { afterSequence, follow, signal }),
    };
    this.approvals = {
      list: async () => (await c.request('GET', `${sb._path}/approvals`)).approvals,
      // the operator's: the admin token (or the unix socket); a sandbox's own token gets 403
      approve: (req, { remember = false } = {}) =>
        c.request('POST', `${sb._path}/approvals/${seg(req)}/approve`, { body: { remember } }),
      deny: (req) => c.request('POST', `${sb._path}/approvals/${seg(req)}/deny`, { body: {} }),
    };
    this.processes = {
      list: async () => (await c.request('GET', `${sb._path}/processes`)).processes,
      signal: (pid, signal = 'TERM') =>
        c.request('POST', `${sb._path}/processes/${Number(pid)}/signal`, { body: { signal } }),
    };
    this.ports = {
      expose: (port, { listen } = {}) =>
        c.request('POST', `${sb._path}/ports`, { body: listen === undefined ? { port } : { port, listen } }),
      list: async () => (await c.request('GET', `${sb._path}/ports`)).ports,
      close: (port) => c.request('DELETE', `${sb._path}/ports/${Number(port)}`),
    };
  }

  inspect() {
    return this._c.request('GET', this._path);
  }

  /**
   * {argv, env, cwd, timeoutMs, stdinBase64}: waits; {runId, exitCode, signal, stdout, stderr,
   * truncated, timedOut}. signal: an AbortSignal; aborted, the run is cancelled on the server
   * (the call asks for cancelOnDisconnect).
   */
  exec(spec, { signal } = {}) {
    const body = signal && spec.cancelOnDisconnect === undefined ? { ...spec, cancelOnDisconnect: true } : spec;
    return this._c.request('POST', `${this._path}/exec`, { body, signal });
  }

  events({ afterSequence = 0, follow = false, signal } = {}) {
    return this._c.events(`${this._path}/events`, { afterSequence, follow, signal });
  }

  pause() {
    return this._c.request('POST', `${this._path}/pause`);
  }

  resume() {
    return this._c.request('POST', `${this._path}/resume`);
  }

  /** The .tar.zst bytes and their digest ("sha256:..."). */
  async snapshot() {
    const r = await this._c.request('POST', `${this._path}/snapshot`);
    return { archive: r.body, digest: r.headers['x-cordon-digest'] };
  }

  terminate() {
    return this._c.request('DELETE', this._path);
  }
}

export default Cordon;
