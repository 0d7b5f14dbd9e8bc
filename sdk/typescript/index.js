// A client for cordon's sandbox API (`cordon serve`), for Node 18 or later, with no runtime
// dependencies: node:http over the unix socket (/run/cordon/api.sock) or TCP with a token.
// Types: index.d.ts.
import http from 'node:http';
import https from 'node:https';

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

  /** One call: the parsed JSON reply, or {body: Buffer, headers} for raw replies. */
  request(method, path, { body, raw, query } = {}) {
    if (query) path += '?' + new URLSearchParams(query).toString();
    const data = raw !== undefined ? Buffer.from(raw) : body !== undefined ? Buffer.from(JSON.stringify(body)) : null;
    const headers = {};
    if (data) {
      headers['Content-Type'] = raw !== undefined ? 'application/octet-stream' : 'application/json';
      headers['Content-Length'] = data.length;
    }
    return new Promise((resolve, reject) => {
      const req = this._request(this._options(method, path, headers), (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          const json = (res.headers['content-type'] || '').startsWith('application/json');
          if (res.statusCode >= 400) reject(errorOf(res.statusCode, buf));
          else resolve(json ? JSON.parse(buf.toString()) : { body: buf, headers: res.headers });
        });
      });
      req.on('error', reject);
      if (data) req.write(data);
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
  async *events(path, { afterSequence = 0, follow = false, reconnect = true } = {}) {
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
          const req = this._request(this._options('GET', `${path}?${q}`, { Accept: 'application/x-ndjson' }), resolve);
          req.on('error', reject);
          req.end();
        });
      } catch (e) {
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
    return new Sandbox(this._c, id, await this._c.request('GET', `/v1/sandboxes/${id}`));
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
    this._path = `/v1/sandboxes/${id}`;
    const sb = this;
    this.files = {
      write: (spec) => {
        const body = { ...spec };
        if (body.content !== undefined) {
          body.contentBase64 = Buffer.from(body.content).toString('base64');
          delete body.content;
        }
        return c.request('POST', `${sb._path}/files`, { body });
      },
      read: async (path) => (await c.request('GET', `${sb._path}/files`, { query: { path } })).body,
      list: async (path) => (await c.request('GET', `${sb._path}/files`, { query: { path, list: '1' } })).entries,
    };
    this.runs = {
      start: async (spec) => (await c.request('POST', `${sb._path}/runs`, { body: spec })).runId,
      get: (runId) => c.request('GET', `${sb._path}/runs/${runId}`),
      cancel: (runId) => c.request('POST', `${sb._path}/runs/${runId}/cancel`),
      events: (runId, { afterSequence = 0, follow = true } = {}) =>
        c.events(`${sb._path}/runs/${runId}/events`, { afterSequence, follow }),
    };
    this.approvals = {
      list: async () => (await c.request('GET', `${sb._path}/approvals`)).approvals,
      // the operator's: the admin token (or the unix socket); a sandbox's own token gets 403
      approve: (req, { remember = false } = {}) =>
        c.request('POST', `${sb._path}/approvals/${req}/approve`, { body: { remember } }),
      deny: (req) => c.request('POST', `${sb._path}/approvals/${req}/deny`, { body: {} }),
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

  /** {argv, env, cwd, timeoutMs, stdinBase64}: waits; {runId, exitCode, signal, stdout, stderr, truncated}. */
  exec(spec) {
    return this._c.request('POST', `${this._path}/exec`, { body: spec });
  }

  events({ afterSequence = 0, follow = false } = {}) {
    return this._c.events(`${this._path}/events`, { afterSequence, follow });
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
