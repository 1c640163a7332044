/**
 * Payload encryption: an AES-256-GCM payload codec, configured on every client and worker, so
 * workflow inputs, results, signals, updates, queries and (with the failure converter below)
 * failure messages reach Temporal only as ciphertext. Each payload names the key that sealed it
 * (`encryption-key-id` metadata), so keys rotate: the first configured key seals, every configured
 * key opens.
 *
 * Keys come from `DURABLE_AGENT_CODEC_KEYS`: `id:base64,id:base64…` (32-byte keys; make one with
 * `openssl rand -base64 32`). Messages name key ids, never key material.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { DefaultFailureConverter } from '@temporalio/common';

/** Environment variables of the codec. */
export const CODEC_ENV = {
  DURABLE_AGENT_CODEC_KEYS:
    'Payload encryption keys, id:base64 (32 bytes) comma-separated; the first encrypts, all decrypt',
} as const;

/** The `encoding` of an encrypted payload. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata key naming the key a payload was sealed with. */
export const KEY_ID_METADATA = 'encryption-key-id';
const CIPHER_METADATA = 'encryption-cipher';
const CIPHER = 'AES-256-GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : undefined);

/** A codec configuration problem, naming the variable and the key id (never the key). */
export class CodecConfigError extends Error {
  override readonly name = 'CodecConfigError';
}

/** Named 32-byte keys; the first seals. */
export interface CodecKeys {
  current: string;
  keys: ReadonlyMap<string, Buffer>;
}

/** Parses `DURABLE_AGENT_CODEC_KEYS`; undefined when it is unset (encryption off). */
export function parseCodecKeys(raw: string | undefined): CodecKeys | undefined {
  if (!raw?.trim()) return undefined;
  const keys = new Map<string, Buffer>();
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    if (!KEY_ID.test(id))
      throw new CodecConfigError(
        'DURABLE_AGENT_CODEC_KEYS: each entry must be id:base64-key with an id of letters, digits, . _ - (e.g. k2026:…)',
      );
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== 32)
      throw new CodecConfigError(
        `DURABLE_AGENT_CODEC_KEYS: key "${id}" must be 32 bytes in base64 (openssl rand -base64 32), got ${key.length}`,
      );
    if (keys.has(id)) throw new CodecConfigError(`DURABLE_AGENT_CODEC_KEYS: key id "${id}" is given twice`);
    keys.set(id, key);
  }
  const current = keys.keys().next().value;
  if (current === undefined) return undefined;
  return { current, keys };
}

/** The payload as JSON bytes (metadata and data base64), the plaintext that is sealed. */
function serialise(p: Payload): Buffer {
  const metadata = Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v ?? new Uint8Array()).toString('base64'),
    ]),
  );
  return Buffer.from(
    JSON.stringify({ metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') }),
  );
}

function deserialise(b: Buffer): Payload {
  const o = JSON.parse(b.toString('utf8')) as { metadata: Record<string, string>; data: string };
  return {
    metadata: Object.fromEntries(Object.entries(o.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(o.data, 'base64'),
  };
}

/** Whether a payload is one this codec sealed. */
export function isEncrypted(p: Payload): boolean {
  return text(p.metadata?.encoding) === ENCRYPTED_ENCODING;
}

/** Seals one payload with the current key. */
export function sealPayload(keys: CodecKeys, p: Payload): Payload {
  const key = keys.keys.get(keys.current) as Buffer;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(serialise(p)), cipher.final()]);
  return {
    metadata: {
      encoding: utf8(ENCRYPTED_ENCODING),
      [KEY_ID_METADATA]: utf8(keys.current),
      [CIPHER_METADATA]: utf8(CIPHER),
    },
    data: Buffer.concat([iv, body, cipher.getAuthTag()]),
  };
}

/** Opens one payload (any configured key); a payload that is not encrypted passes through. */
export function openPayload(keys: CodecKeys, p: Payload): Payload {
  if (!isEncrypted(p)) return p;
  const id = text(p.metadata?.[KEY_ID_METADATA]) ?? '';
  const key = keys.keys.get(id);
  if (!key)
    throw new CodecConfigError(
      `A payload is encrypted with key "${id}", which is not in DURABLE_AGENT_CODEC_KEYS (configured: ${[...keys.keys.keys()].join(', ')}); add it back to read old runs`,
    );
  const data = Buffer.from(p.data ?? new Uint8Array());
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  return deserialise(
    Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]),
  );
}

/** The Temporal payload codec over {@link sealPayload} / {@link openPayload}. */
export class AesGcmCodec implements PayloadCodec {
  constructor(private readonly keys: CodecKeys) {}

  encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(payloads.map((p) => sealPayload(this.keys, p)));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(payloads.map((p) => openPayload(this.keys, p)));
  }
}

/**
 * Failures carry their message and stack in an encoded attributes payload (which the codec then
 * encrypts) instead of in clear fields of history.
 */
export const encodingFailureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });

/** The codec keys of this process's environment, or undefined when encryption is off. */
export function codecKeysFromEnv(env: NodeJS.ProcessEnv = process.env): CodecKeys | undefined {
  return parseCodecKeys(env.DURABLE_AGENT_CODEC_KEYS);
}

/** A client's data converter: the codec and failure converter when keys are configured. */
export function clientDataConverter(keys: CodecKeys | undefined) {
  return keys
    ? { payloadCodecs: [new AesGcmCodec(keys)], failureConverter: encodingFailureConverter }
    : undefined;
}

/** A failure whose message and stack were encoded gets them back from its (now opened) attributes. */
function restoreFailureText(o: Record<string, unknown>): void {
  const attrs = o.encodedAttributes as Payload | null | undefined;
  if (!attrs?.data || isEncrypted(attrs)) return;
  try {
    const { message, stack_trace } = JSON.parse(Buffer.from(attrs.data).toString('utf8')) as {
      message?: unknown;
      stack_trace?: unknown;
    };
    if (typeof message === 'string') o.message = message;
    if (typeof stack_trace === 'string') o.stackTrace = stack_trace;
  } catch {
    // Not the SDK's JSON attributes: leave the failure as recorded.
  }
}

/**
 * Every payload in a history (or any proto object) opened in place, so the debug commands read
 * runs recorded with encryption on. Returns the same object.
 */
export function openHistoryPayloads<T>(value: T, keys: CodecKeys | undefined): T {
  if (!keys) return value;
  const walk = (v: unknown, depth: number): unknown => {
    if (depth > 64 || v === null || typeof v !== 'object' || v instanceof Uint8Array) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i += 1) v[i] = walk(v[i], depth + 1);
      return v;
    }
    const o = v as Record<string, unknown>;
    if ('metadata' in o && 'data' in o && isEncrypted(o)) return openPayload(keys, o);
    for (const k of Object.keys(o)) o[k] = walk(o[k], depth + 1);
    restoreFailureText(o);
    return o;
  };
  return walk(value, 0) as T;
}
