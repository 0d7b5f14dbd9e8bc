// Types of cordon's sandbox API client (index.js).

export declare const DEFAULT_SOCKET: string;

export interface ApiError {
  code: string;
  message: string;
  field: string | null;
  [k: string]: unknown;
}

export declare class CordonError extends Error {
  status: number;
  code: string;
  field: string | null;
  error: ApiError;
}

export type Tier = 'standard' | 'hardened' | 'maximum';

export interface CreateSpec {
  source?: { kind: 'template' | 'snapshot'; path: string; digest?: string };
  limits?: Record<string, number | 'unlimited'>;
  filesystem?: Record<string, unknown>;
  networkPolicy?: { mode: 'deny' | 'allow-listed'; rules?: { host: string; port: number; reason: string }[] };
  env?: Record<string, string>;
  expiresAt?: string;
  requestedIsolation?: Tier;
  ttlMs?: number;
  idempotencyKey?: string;
  /** a snapshot to restore: what snapshot() returned (archive in base64); the policy is this spec's, not the archive's */
  fromSnapshot?: { archiveBase64: string; digest: string };
  [k: string]: unknown;
}

export interface ExecSpec {
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  stdinBase64?: string;
  /** exec: a closed connection (an abort) cancels the run; exec({...}, { signal }) asks for it */
  cancelOnDisconnect?: boolean;
  /** exec: "base64" gives stdoutBase64 and stderrBase64 (the bytes as written) in place of stdout and stderr */
  outputEncoding?: 'text' | 'base64';
}

export interface ExecResult {
  runId: string;
  exitCode: number;
  signal: number | null;
  /** absent with outputEncoding "base64" */
  stdout?: string;
  stderr?: string;
  /** with outputEncoding "base64" */
  stdoutBase64?: string;
  stderrBase64?: string;
  truncated: boolean;
  timedOut: boolean;
}

export interface SandboxEvent {
  seq: number;
  type: string;
  time: string;
  run?: string;
  [k: string]: unknown;
}

export interface EventOptions {
  afterSequence?: number;
  follow?: boolean;
  /** ends the stream (the reading only: a run goes on) */
  signal?: AbortSignal;
}

export declare class Sandbox {
  id: string;
  token: string | null;
  isolation: { tier: Tier; layers: string[] } | null;
  expiresAt: string | null;
  info: Record<string, unknown>;
  files: {
    /** content goes as it is (PUT, any size); contentBase64 in JSON (at most ~750 KB) */
    write(spec: { path: string; contentBase64?: string; content?: Uint8Array | string; mode?: number }): Promise<{ path: string; size: number }>;
    /** a local file (its path), bytes, or a Readable of size bytes, streamed: it lands whole or not at all */
    upload(
      path: string,
      source: string | Uint8Array | NodeJS.ReadableStream,
      opts?: { mode?: number; size?: number; signal?: AbortSignal },
    ): Promise<{ path: string; size: number }>;
    /** streamed into a local file (its path; removed if the download fails) or a Writable */
    download(path: string, dest: string | NodeJS.WritableStream, opts?: { signal?: AbortSignal }): Promise<{ path: string; size: number }>;
    /** the whole file in memory (download streams it) */
    read(path: string, opts?: { signal?: AbortSignal }): Promise<Buffer>;
    list(path: string): Promise<{ name: string; type: string; size: number; mode: number }[]>;
  };
  runs: {
    start(spec: ExecSpec & { idempotencyKey?: string }, opts?: { signal?: AbortSignal }): Promise<string>;
    get(runId: string): Promise<Record<string, unknown>>;
    cancel(runId: string): Promise<{ runId: string; cancelled: boolean }>;
    events(runId: string, opts?: EventOptions): AsyncGenerator<SandboxEvent>;
  };
  approvals: {
    list(): Promise<Record<string, unknown>[]>;
    /** The operator's decision: needs the admin token (or the unix socket); a sandbox's own token gets 403. */
    approve(request: string, opts?: { remember?: boolean }): Promise<Record<string, unknown>>;
    deny(request: string): Promise<Record<string, unknown>>;
  };
  /** Every process of the sandbox, pids as the sandbox numbers them; a signal to one of them. */
  processes: {
    list(): Promise<Process[]>;
    signal(pid: number, signal?: number | string): Promise<Record<string, unknown>>;
  };
  /** TCP ports the sandbox listens on, exposed at host addresses (default 127.0.0.1, a free port). */
  ports: {
    expose(port: number, opts?: { listen?: string }): Promise<Port>;
    list(): Promise<Port[]>;
    close(port: number): Promise<Record<string, unknown>>;
  };
  inspect(): Promise<Record<string, unknown>>;
  /** signal: aborted, the request's connection closes and the server cancels the run */
  exec(spec: ExecSpec, opts?: { signal?: AbortSignal }): Promise<ExecResult>;
  events(opts?: EventOptions): AsyncGenerator<SandboxEvent>;
  pause(): Promise<{ id: string; status: string }>;
  resume(): Promise<{ id: string; status: string }>;
  snapshot(): Promise<{ archive: Buffer; digest: string }>;
  terminate(): Promise<{ id: string; terminated: boolean }>;
}

export declare class Cordon {
  /**
   * url: http://HOST:PORT or https:// (verified against Node's CAs, or ca); any other scheme throws.
   * A path in it (http://HOST:PORT/cordon, a reverse proxy's prefix) goes before every route.
   */
  constructor(opts?: { socketPath?: string; url?: string; token?: string; ca?: string | Buffer });
  /** reconnects in a row that bring no event before a stream gives up with the error */
  static RECONNECTS: number;
  sandboxes: {
    create(spec?: CreateSpec): Promise<Sandbox>;
    list(): Promise<Sandbox[]>;
    get(id: string): Promise<Sandbox>;
  };
  host(): Promise<Record<string, unknown>>;
  request(
    method: string,
    path: string,
    opts?: {
      body?: unknown;
      raw?: Uint8Array | string | NodeJS.ReadableStream;
      size?: number;
      query?: Record<string, string>;
      signal?: AbortSignal;
    },
  ): Promise<any>;
  events(path: string, opts?: EventOptions & { reconnect?: boolean }): AsyncGenerator<SandboxEvent>;
}

export default Cordon;

export interface Process {
  pid: number;
  ppid: number;
  run: string | null;
  uid: number;
  gid: number;
  state: string;
  startedAt: string;
  cpuSeconds: number;
  memoryBytes: number;
  name: string;
  command: string;
  init?: boolean;
}

export interface Port {
  port: number;
  listen: string;
  accepted: number;
  connections: number;
  warning?: string;
  note?: string;
}
